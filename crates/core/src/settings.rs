//! The settings behind a run, as two plain typed values.
//!
//! [`FingerprintSettings`] is everything that makes two fingerprints
//! comparable: the extractor and its selectors, template suppression,
//! shingling and sketching. Fingerprints made under different ones must not
//! be compared; an index stores them and refuses pages made otherwise, and
//! every report echoes them. [`MatchSettings`] is how fingerprints are
//! compared (thresholds, measure, candidates, cluster size): it can change
//! from one query to the next over the same fingerprints.

use serde::{Deserialize, Serialize};

use crate::candidates::Method;
use crate::shingle::LanguageChoice;
use crate::sketch::SimHashWeighting;
use crate::template::TemplateConfig;
use crate::verify::Measure;

/// The version of [`FingerprintSettings`]' fields; a reader meeting another
/// one knows the fingerprints were made by rules it may not share.
pub const FINGERPRINT_SETTINGS_VERSION: u32 = 1;

/// Everything that makes fingerprints comparable (see the module
/// documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FingerprintSettings {
    /// [`FINGERPRINT_SETTINGS_VERSION`] when made by this webdup.
    pub version: u32,
    /// The main-text extractor (`blocks`, `auto`, `trafilatura`, ...).
    pub extractor: String,
    /// Only the text under elements matching this CSS selector is read.
    pub include_selector: Option<String>,
    /// Text under elements matching this CSS selector is left out.
    pub exclude_selector: Option<String>,
    /// Site-template suppression; `None` when off.
    pub template: Option<TemplateConfig>,
    /// Words per shingle.
    pub shingle_size: usize,
    pub stopwords: bool,
    pub stem: bool,
    /// Per page (`auto`), or the language whose rules apply to every page.
    pub language: LanguageChoice,
    /// MinHash permutations.
    pub permutations: usize,
    /// MinHash seed.
    pub seed: u64,
    pub simhash_weighting: SimHashWeighting,
}

impl FingerprintSettings {
    /// The settings in which `other` differs from these, in field order.
    pub fn differences(&self, other: &FingerprintSettings) -> Vec<Difference> {
        self.pairs()
            .into_iter()
            .zip(other.pairs())
            .filter(|((_, ours), (_, theirs))| ours != theirs)
            .map(|((setting, ours), (_, theirs))| Difference { setting, ours, theirs })
            .collect()
    }

    /// Each setting's name and value, as text (`off` and `none` for absent ones).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let template = match &self.template {
            None => "off".to_string(),
            Some(t) => format!("share {} min_pages {} scope {}", t.share, t.min_pages, t.scope.as_str()),
        };
        let or_none = |s: &Option<String>| s.clone().unwrap_or_else(|| "none".into());
        vec![
            ("version", self.version.to_string()),
            ("extractor", self.extractor.clone()),
            ("include_selector", or_none(&self.include_selector)),
            ("exclude_selector", or_none(&self.exclude_selector)),
            ("template", template),
            ("shingle_size", self.shingle_size.to_string()),
            ("stopwords", self.stopwords.to_string()),
            ("stem", self.stem.to_string()),
            ("language", self.language.to_string()),
            ("permutations", self.permutations.to_string()),
            ("seed", self.seed.to_string()),
            ("simhash_weighting", self.simhash_weighting.as_str().into()),
        ]
    }
}

/// A setting with one value here (`ours`: an index's, a task's) and
/// another there (`theirs`: the one asked for); shown as `name = ours (not
/// theirs)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub setting: &'static str,
    pub ours: String,
    pub theirs: String,
}

impl Difference {
    /// The differences as one line: `a = 1 (not 2), b = x (not y)`.
    pub fn list(differences: &[Difference]) -> String {
        differences.iter().map(Difference::to_string).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {} (not {})", self.setting, self.ours, self.theirs)
    }
}

/// How fingerprints are compared (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchSettings {
    /// Least similarity for two pages (of one site, when
    /// `cross_site_threshold` is set) to be duplicates.
    pub threshold: f64,
    /// Least similarity for two pages of different sites; `None` applies
    /// `threshold` to every pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_site_threshold: Option<f64>,
    pub measure: Measure,
    /// How candidate pairs are found.
    pub method: Method,
    /// SimHash candidates: the most bits two fingerprints may differ in.
    pub max_hamming: u32,
    pub min_cluster_size: usize,
}

impl Default for MatchSettings {
    /// The tool's: Jaccard 0.8 within a site, 0.5 across sites, MinHash
    /// candidates, clusters of two pages or more.
    fn default() -> Self {
        MatchSettings {
            threshold: 0.8,
            cross_site_threshold: Some(0.5),
            measure: Measure::Jaccard,
            method: Method::MinHash,
            max_hamming: 3,
            min_cluster_size: 2,
        }
    }
}

/// Both, as every report's `settings` block echoes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    pub fingerprint: FingerprintSettings,
    #[serde(rename = "match")]
    pub matching: MatchSettings,
}

/// The library's defaults: `blocks`, 5-word shingles, 128 permutations, no
/// template suppression (the `webdup` tool's defaults, `Config::tool` in the
/// facade, turn it on).
impl Default for FingerprintSettings {
    fn default() -> Self {
        FingerprintSettings {
            version: FINGERPRINT_SETTINGS_VERSION,
            extractor: "blocks".into(),
            include_selector: None,
            exclude_selector: None,
            template: None,
            shingle_size: 5,
            stopwords: false,
            stem: false,
            language: LanguageChoice::Auto,
            permutations: 128,
            seed: 42,
            simhash_weighting: SimHashWeighting::Tf,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> FingerprintSettings {
        FingerprintSettings { template: Some(TemplateConfig::default()), ..FingerprintSettings::default() }
    }

    #[test]
    fn settings_survive_serde_and_name_their_differences() {
        let a = settings();
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["version"], FINGERPRINT_SETTINGS_VERSION);
        assert_eq!(json["template"]["scope"], "host-or-directory");
        assert_eq!(serde_json::from_value::<FingerprintSettings>(json).unwrap(), a);
        let b = FingerprintSettings { shingle_size: 4, template: None, ..settings() };
        assert_eq!(
            Difference::list(&a.differences(&b)),
            "template = share 0.5 min_pages 3 scope host-or-directory (not off), shingle_size = 5 (not 4)"
        );
        assert!(a.differences(&a).is_empty());
    }
}
