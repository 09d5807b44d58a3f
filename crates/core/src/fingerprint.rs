//! What webdup keeps about one document after fingerprinting.

use crate::page::PageMeta;
use crate::sketch::minhash::Signature;
use crate::sketch::simhash;
use crate::template;

/// Everything kept about one document after fingerprinting.
#[derive(Debug, Clone)]
pub struct Fingerprint {
    pub id: String,
    pub order: usize,
    pub title: Option<String>,
    /// The extractor that produced the text (`none` for plain-text input,
    /// `stored` for a fingerprint read back from an index).
    pub extractor: &'static str,
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
            extractor: "stored",
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
