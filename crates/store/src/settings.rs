//! An index's settings: the fingerprint settings and thresholds kept in its
//! `meta` table, read, recorded and compared.

use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use webdup_core::settings::{Difference, FINGERPRINT_SETTINGS_VERSION, FingerprintSettings};
use webdup_core::sketch::SimHashWeighting;
use webdup_core::template::{self, TemplateConfig};

use crate::{Error, Result};

/// An index's settings, kept in the `meta` table: the fingerprint settings
/// its pages were made with, and the Jaccard thresholds its band table is
/// built for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub fingerprint: FingerprintSettings,
    /// The least Jaccard of two pages of one site that are duplicates.
    pub threshold: f64,
    /// The least Jaccard of two pages of different sites (as
    /// [`template::site_of`] names them) that are duplicates; `None`: the
    /// one threshold for all pairs. An index written before this setting
    /// was recorded has none (its bands were built for `threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_site_threshold: Option<f64>,
    pub bands: usize,
    pub rows: usize,
    /// Settings the file does not record (it was written before they were
    /// recorded), read as today's defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed: Vec<String>,
}

/// The settings rows schema version 1 wrote, and every version since.
pub(crate) const RECORDED_SINCE_V1: [&str; 10] = [
    "shingle_size",
    "stopwords",
    "stem",
    "language",
    "extractor",
    "permutations",
    "seed",
    "threshold",
    "bands",
    "rows",
];

/// The `meta` key of [`Settings::cross_site_threshold`], and its value for none.
pub(crate) const CROSS_SITE: &str = "cross_site_threshold";
pub(crate) const OFF: &str = "off";

/// A configuration that can take an index's settings: `webdup`'s `Config`.
/// The store itself never builds one, so it depends on no extractor.
pub trait ApplySettings: Sized {
    /// `self` with `settings` in place of its fingerprint settings, validated.
    fn apply_settings(self, settings: &Settings) -> Result<Self>;
}

impl Settings {
    /// The settings a validated config fingerprints with (`webdup`'s
    /// `&Config` converts into them).
    pub fn of(config: impl Into<Settings>) -> Settings {
        config.into()
    }

    /// The settings kept in an index's `meta` table.
    pub(crate) fn read(conn: &Connection) -> Result<Settings> {
        let get = |key: &str| -> Result<String> {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::MissingSetting(key.into()))
        };
        fn parse<T: std::str::FromStr>(key: &str, value: String) -> Result<T> {
            value.parse().map_err(|_| Error::BadSettings(format!("{key} = {value:?}")))
        }
        // Recorded since schema version 6, or since the setting was added; a
        // file written before holds today's defaults, named in `assumed`.
        let recorded = |key: &str| -> Result<Option<String>> {
            Ok(conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
        };
        let mut assumed: Vec<String> =
            recorded("assumed")?.unwrap_or_default().split(',').filter(|k| !k.is_empty()).map(str::to_string).collect();
        let template = match get("template")?.as_str() {
            "off" => None,
            json => Some(
                serde_json::from_str::<TemplateConfig>(json)
                    .map_err(|e| Error::BadSettings(format!("template = {json:?}: {e}")))?,
            ),
        };
        let selector = |key: &str| -> Result<Option<String>> { Ok(recorded(key)?.filter(|s| !s.is_empty())) };
        let simhash_weighting = match recorded("simhash_weighting")? {
            None => {
                assumed.push("simhash_weighting".into());
                SimHashWeighting::Tf
            }
            Some(v) => serde_json::from_value(serde_json::Value::String(v.clone()))
                .map_err(|_| Error::BadSettings(format!("simhash_weighting = {v:?}")))?,
        };
        let version = match recorded("fingerprint_settings_version")? {
            None => FINGERPRINT_SETTINGS_VERSION,
            Some(v) => parse("fingerprint_settings_version", v)?,
        };
        if version != FINGERPRINT_SETTINGS_VERSION {
            return Err(Error::BadSettings(format!(
                "fingerprint settings version {version} (this webdup makes version {FINGERPRINT_SETTINGS_VERSION})"
            )));
        }
        Ok(Settings {
            fingerprint: FingerprintSettings {
                version,
                extractor: get("extractor")?,
                include_selector: selector("include_selector")?,
                exclude_selector: selector("exclude_selector")?,
                template,
                shingle_size: parse("shingle_size", get("shingle_size")?)?,
                stopwords: parse("stopwords", get("stopwords")?)?,
                stem: parse("stem", get("stem")?)?,
                language: parse("language", get("language")?)?,
                permutations: parse("permutations", get("permutations")?)?,
                seed: parse("seed", get("seed")?)?,
                simhash_weighting,
            },
            threshold: parse("threshold", get("threshold")?)?,
            cross_site_threshold: match recorded(CROSS_SITE)?.as_deref() {
                None | Some(OFF) => None,
                Some(v) => Some(parse(CROSS_SITE, v.to_string())?),
            },
            bands: parse("bands", get("bands")?)?,
            rows: parse("rows", get("rows")?)?,
            assumed,
        })
    }

    /// `base` with these settings in place of its own fingerprint settings
    /// (shingling, extractor, selectors, template suppression, permutations,
    /// seed, threshold), validated: the config under which the index's
    /// fingerprints compare (see [`ApplySettings`]).
    pub fn apply<C: ApplySettings>(&self, base: C) -> Result<C> {
        base.apply_settings(self)
    }

    /// The settings in which `other` differs from these; the banding,
    /// which follows from the threshold and permutations, is left out.
    pub fn differences(&self, other: &Settings) -> Vec<Difference> {
        let mut out = self.fingerprint.differences(&other.fingerprint);
        if self.threshold != other.threshold {
            out.push(Difference {
                setting: "threshold",
                ours: self.threshold.to_string(),
                theirs: other.threshold.to_string(),
            });
        }
        if self.cross_site_threshold != other.cross_site_threshold {
            let show = |t: Option<f64>| t.map_or_else(|| OFF.to_string(), |t| t.to_string());
            out.push(Difference {
                setting: CROSS_SITE,
                ours: show(self.cross_site_threshold),
                theirs: show(other.cross_site_threshold),
            });
        }
        out
    }

    /// The least Jaccard that makes `a` and `b` (page ids: URLs or paths,
    /// read by the index's template scope) duplicates.
    pub fn threshold_between(&self, a: &str, b: &str) -> f64 {
        let Some(cross) = self.cross_site_threshold else { return self.threshold };
        let scope = self.fingerprint.template.as_ref().map_or_else(Default::default, |t| t.scope);
        let (a, b) = (template::site_of(a, scope), template::site_of(b, scope));
        template::pair_threshold(self.threshold, Some(cross), a.as_deref(), b.as_deref())
    }

    /// The `meta` rows: each setting's key and stored value.
    pub(crate) fn pairs(&self) -> Vec<(&'static str, String)> {
        let f = &self.fingerprint;
        let template = match &f.template {
            None => "off".into(),
            Some(t) => serde_json::to_string(t).expect("plain data"),
        };
        vec![
            ("shingle_size", f.shingle_size.to_string()),
            ("stopwords", f.stopwords.to_string()),
            ("stem", f.stem.to_string()),
            ("language", f.language.to_string()),
            ("extractor", f.extractor.clone()),
            ("permutations", f.permutations.to_string()),
            ("seed", f.seed.to_string()),
            ("threshold", self.threshold.to_string()),
            (CROSS_SITE, self.cross_site_threshold.map_or_else(|| OFF.to_string(), |t| t.to_string())),
            ("bands", self.bands.to_string()),
            ("rows", self.rows.to_string()),
            ("template", template),
            ("include_selector", f.include_selector.clone().unwrap_or_default()),
            ("exclude_selector", f.exclude_selector.clone().unwrap_or_default()),
            ("simhash_weighting", f.simhash_weighting.as_str().into()),
            ("fingerprint_settings_version", f.version.to_string()),
        ]
    }
}
