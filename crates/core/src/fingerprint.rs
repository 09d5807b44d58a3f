//! What webdup keeps about one document after fingerprinting.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::page::PageMeta;
use crate::sketch::minhash::Signature;
use crate::sketch::simhash;
use crate::template;

/// The version of [`Fingerprint`]'s serialized form; every serialized
/// fingerprint carries it as `format_version`, and reading another one fails.
pub const FINGERPRINT_FORMAT_VERSION: u32 = 1;

/// Everything kept about one document after fingerprinting.
///
/// Plain serde data: it can be written to a stage file or sent to another
/// process (a dataflow worker) and read back whole. The serialized form
/// carries [`FINGERPRINT_FORMAT_VERSION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Wire", try_from = "Wire")]
pub struct Fingerprint {
    pub id: String,
    pub order: usize,
    pub title: Option<String>,
    /// The extractor that produced the text (`none` for plain-text input,
    /// `stored` for a fingerprint read back from an index).
    pub extractor: Cow<'static, str>,
    pub word_count: usize,
    /// Distinct shingle hashes, sorted: what verification compares.
    pub shingles: Vec<u64>,
    /// MD5 of the normalized text.
    pub digest: [u8; 16],
    pub minhash: Signature,
    pub simhash: u64,
    /// What an HTML page says about itself (title, canonical, robots...);
    /// only when the fingerprinter keeps pages (`Config::keep_pages` in webdup).
    pub meta: Option<Box<PageMeta>>,
    /// The extracted main text; only when the fingerprinter keeps pages (`Config::keep_pages` in webdup), or read
    /// back from an index that stored it.
    pub text: Option<String>,
    /// Word hashes and counts, kept until corpus-wide SimHash weighting is
    /// done (TF-IDF only); empty afterwards.
    pub terms: Vec<(u64, u32)>,
}

impl Fingerprint {
    /// A fingerprint from parts made earlier (a page stored in an index):
    /// nothing is extracted, shingled or sketched again, so the parts must
    /// come from one fingerprinter run with the settings they are
    /// compared under. `shingles` must be sorted and distinct.
    pub fn from_parts(
        id: String,
        order: usize,
        word_count: usize,
        shingles: Vec<u64>,
        digest: [u8; 16],
        minhash: Signature,
        simhash: u64,
    ) -> Fingerprint {
        Fingerprint {
            id,
            order,
            title: None,
            extractor: Cow::Borrowed("stored"),
            word_count,
            shingles,
            digest,
            minhash,
            simhash,
            meta: None,
            text: None,
            terms: Vec::new(),
        }
    }

    /// Drops its site's template shingles (sorted), before sketching: a
    /// page that loses some has its SimHash features become its remaining
    /// shingles, so both sketches describe the same text. True when any
    /// were dropped (see [`template::apply`]).
    pub fn drop_template(&mut self, template: &[u64]) -> bool {
        let Some(kept) = template::apply(&self.shingles, template) else { return false };
        self.simhash = simhash::simhash_counted(&kept);
        if !self.terms.is_empty() {
            self.terms = kept.iter().map(|&h| (h, 1)).collect();
        }
        self.shingles = kept;
        true
    }

    /// The digest as 32 lowercase hex digits.
    pub fn digest_hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// [`Fingerprint`]'s serialized form: its fields and the format version.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    format_version: u32,
    id: String,
    order: usize,
    title: Option<String>,
    extractor: Cow<'static, str>,
    word_count: usize,
    shingles: Vec<u64>,
    digest: [u8; 16],
    minhash: Signature,
    simhash: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    meta: Option<Box<PageMeta>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    terms: Vec<(u64, u32)>,
}

impl From<Fingerprint> for Wire {
    fn from(f: Fingerprint) -> Wire {
        Wire {
            format_version: FINGERPRINT_FORMAT_VERSION,
            id: f.id,
            order: f.order,
            title: f.title,
            extractor: f.extractor,
            word_count: f.word_count,
            shingles: f.shingles,
            digest: f.digest,
            minhash: f.minhash,
            simhash: f.simhash,
            meta: f.meta,
            text: f.text,
            terms: f.terms,
        }
    }
}

impl TryFrom<Wire> for Fingerprint {
    type Error = String;

    fn try_from(w: Wire) -> Result<Fingerprint, String> {
        if w.format_version != FINGERPRINT_FORMAT_VERSION {
            return Err(format!(
                "fingerprint format version {} (this webdup reads {FINGERPRINT_FORMAT_VERSION})",
                w.format_version
            ));
        }
        if !w.shingles.is_sorted_by(|a, b| a < b) {
            return Err(format!("fingerprint {}: shingles are not sorted and distinct", w.id));
        }
        Ok(Fingerprint {
            id: w.id,
            order: w.order,
            title: w.title,
            extractor: w.extractor,
            word_count: w.word_count,
            shingles: w.shingles,
            digest: w.digest,
            minhash: w.minhash,
            simhash: w.simhash,
            meta: w.meta,
            text: w.text,
            terms: w.terms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::{ShingleConfig, Shingler};
    use crate::sketch::MinHasher;

    fn fingerprint() -> Fingerprint {
        let text = "the harbour office posts the winter ferry timetable on the board every monday morning";
        let sh = Shingler::new(ShingleConfig::default()).shingle(text);
        let minhash = MinHasher::new(128, 42).sketch(&sh.hashes);
        let mut f =
            Fingerprint::from_parts("https://a.test/ferry".into(), 7, sh.word_count, sh.hashes, sh.digest, minhash, 99);
        f.title = Some("Ferry".into());
        f.text = Some(text.into());
        f.meta = Some(Box::new(PageMeta {
            canonical: Some("https://a.test/f".into()),
            noindex: true,
            ..PageMeta::default()
        }));
        f
    }

    #[test]
    fn a_fingerprint_survives_a_serde_round_trip_with_its_format_version() {
        let f = fingerprint();
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["format_version"], FINGERPRINT_FORMAT_VERSION);
        assert_eq!(json["extractor"], "stored");
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn another_format_version_or_unsorted_shingles_are_refused() {
        let mut json = serde_json::to_value(fingerprint()).unwrap();
        json["format_version"] = (FINGERPRINT_FORMAT_VERSION + 1).into();
        let e = serde_json::from_value::<Fingerprint>(json).unwrap_err().to_string();
        assert!(e.contains("format version"), "{e}");
        let mut json = serde_json::to_value(fingerprint()).unwrap();
        json["shingles"].as_array_mut().unwrap().reverse();
        let e = serde_json::from_value::<Fingerprint>(json).unwrap_err().to_string();
        assert!(e.contains("not sorted"), "{e}");
    }
}
