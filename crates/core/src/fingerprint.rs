//! What webdup keeps about one document after fingerprinting.

use serde::{Deserialize, Serialize};

use crate::doc::DocKey;
use crate::site::{Site, SiteSignals};
use crate::sketch::minhash::Signature;
use crate::sketch::simhash;
use crate::template;

/// The version of [`Fingerprint`]'s serialized form; every serialized
/// fingerprint carries it as `format_version`, and reading another one fails.
/// Version 4 adds `page_digest`, the XXH3-128 of the decoded page; earlier
/// versions are read with it unknown, so their pages are never identical.
/// Version 3 keeps only what matching needs: the page's title, metadata,
/// main text and extractor name left it for its record (`page::PageView`,
/// `page::PageRecord`). Version 2 named the document by its [`DocKey`]
/// (`key`); version 1 called the same number `order`. Both are still read,
/// their page fields passed over.
pub const FINGERPRINT_FORMAT_VERSION: u32 = 4;

/// What matching needs of one document after fingerprinting: its
/// shingles, their sketches and digest, and its size. What the page said
/// (its title, metadata and main text) is its record's, not this.
///
/// Plain serde data: it can be written to a stage file or sent to another
/// process (a dataflow worker) and read back whole. The serialized form
/// carries [`FINGERPRINT_FORMAT_VERSION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Wire", try_from = "Wire")]
pub struct Fingerprint {
    pub id: String,
    /// The document's global key (its input position when one process
    /// reads the inputs).
    pub key: DocKey,
    pub word_count: usize,
    /// Distinct shingle hashes, sorted: what verification compares.
    pub shingles: Vec<u64>,
    /// MD5 of the normalized text: pages with the same text share it.
    pub digest: [u8; 16],
    /// XXH3-128 of the decoded page (its HTML, or its text when it came as
    /// text): pages that are the same bytes share it. Unknown (`None`) for a
    /// page fingerprinted before webdup kept it, which is then never
    /// identical to another.
    pub page_digest: Option<[u8; 16]>,
    pub minhash: Signature,
    pub simhash: u64,
    /// Word hashes and counts, kept until corpus-wide SimHash weighting is
    /// done (TF-IDF only); empty afterwards.
    pub terms: Vec<(u64, u32)>,
    /// Shingles of all the page's text outside its navigation, footer and
    /// other chrome, when the extractor read more than it kept (`blocks`):
    /// template learning compares these across a site's pages, since an
    /// extractor may keep a block (readers' replies, a review widget) on a
    /// thin page and leave it out beside a long article. Empty once the
    /// corpus-wide stages are done; never serialized.
    pub context: Vec<u64>,
    /// Its site, when something other than its id decided it (the address
    /// the page names, its template group: [`crate::site::assign`]); `None`:
    /// the site its id names ([`Fingerprint::site`]).
    pub site: Option<Site>,
    /// What the page showed of its site, until its site is assigned; empty
    /// afterwards, never serialized.
    pub signals: SiteSignals,
    /// Nothing of the page was left once its site's template was dropped,
    /// nor of the rest of its text (its `context`): the page shows only what
    /// every page of its site shows, a thin page ("template only"). It keeps
    /// its shingles, so it can still be compared, but no duplicate verdict is
    /// made on them: that text is its site's, not its own.
    pub template_only: bool,
}

impl Fingerprint {
    /// A fingerprint from parts made earlier (a page stored in an index):
    /// nothing is extracted, shingled or sketched again, so the parts must
    /// come from one fingerprinter run with the settings they are
    /// compared under. `shingles` must be sorted and distinct.
    pub fn from_parts(
        id: String,
        key: DocKey,
        word_count: usize,
        shingles: Vec<u64>,
        digest: [u8; 16],
        minhash: Signature,
        simhash: u64,
    ) -> Fingerprint {
        Fingerprint {
            id,
            key,
            word_count,
            shingles,
            digest,
            page_digest: None,
            minhash,
            simhash,
            terms: Vec::new(),
            context: Vec::new(),
            site: None,
            signals: SiteSignals::default(),
            template_only: false,
        }
    }

    /// The same decoded page as `other`: both page digests known and equal.
    pub fn identical_to(&self, other: &Fingerprint) -> bool {
        self.page_digest.is_some() && self.page_digest == other.page_digest
    }

    /// The same normalized text as `other` without being known to be the
    /// same page (see [`Fingerprint::identical_to`]).
    pub fn same_text_as(&self, other: &Fingerprint) -> bool {
        self.digest == other.digest && !self.identical_to(other)
    }

    /// Its site: the one assigned to it, else the one its id names.
    pub fn site(&self, scope: template::TemplateScope) -> Option<Site> {
        self.site.clone().or_else(|| Site::of_id(&self.id, scope))
    }

    /// Drops its site's template shingles (sorted), before sketching: a
    /// page that loses some has its SimHash features become its remaining
    /// shingles, so both sketches describe the same text. True when any
    /// were dropped (see [`template::apply`]).
    pub fn drop_template(&mut self, template: &[u64]) -> bool {
        if !self.drop_template_shingles(template) {
            return false;
        }
        self.simhash = simhash::simhash_counted(&self.shingles);
        if !self.terms.is_empty() {
            self.terms = self.shingles.iter().map(|&h| (h, 1)).collect();
        }
        true
    }

    /// [`Fingerprint::drop_template`] for the shingles and digest only,
    /// leaving SimHash as it was: for a page only MinHash will describe. A
    /// page left with nothing of its own is marked
    /// [`Fingerprint::template_only`] and keeps its set.
    pub fn drop_template_shingles(&mut self, template: &[u64]) -> bool {
        let context = std::mem::take(&mut self.context);
        if template.is_empty() {
            return false;
        }
        let mut kept: Vec<u64> = self.shingles.iter().copied().filter(|s| template.binary_search(s).is_err()).collect();
        if kept.len() == self.shingles.len() {
            return false;
        }
        // The extractor kept little but the site's template (a thin page
        // whose words sit in a block it judged furniture, as forums put
        // posts in `#comments`): the page's own text is then what all of it
        // has beyond the template, and the digest, taken from template
        // text, says nothing of the page either.
        if kept.len() <= template::CORE_ONLY_SHINGLES {
            let mut own: Vec<u64> = context.into_iter().filter(|s| template.binary_search(s).is_err()).collect();
            if own.len() > kept.len() {
                own.extend_from_slice(&kept);
                own.sort_unstable();
                own.dedup();
                self.digest = crate::shingle::set_digest(&own);
                kept = own;
            }
        }
        // A page that is all template, with nothing else to show, is not an
        // empty document (its set stays), but no copy of anything either:
        // every thin page of the site would otherwise be one text.
        if kept.is_empty() {
            self.template_only = true;
            return false;
        }
        self.shingles = kept;
        true
    }

    /// The digest as 32 lowercase hex digits.
    pub fn digest_hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The sets fingerprints hold themselves ([`Fingerprint::shingles`]).
pub struct InFingerprints<'d>(pub &'d [Fingerprint]);

impl crate::sets::Sets for InFingerprints<'_> {
    type Error = std::convert::Infallible;

    fn len(&self, i: u32) -> usize {
        self.0[i as usize].shingles.len()
    }

    fn get<'a>(&'a self, i: u32, _: &'a mut Vec<u64>) -> Result<&'a [u64], std::convert::Infallible> {
        Ok(&self.0[i as usize].shingles)
    }
}

impl crate::sets::Sketches for InFingerprints<'_> {
    fn signature(&self, i: u32, buf: &mut Vec<u32>) -> Result<(), std::convert::Infallible> {
        buf.clear();
        buf.extend_from_slice(&self.0[i as usize].minhash);
        Ok(())
    }

    fn signatures(
        &self,
        range: std::ops::Range<u32>,
        each: &mut dyn FnMut(u32, &[u32]),
    ) -> Result<(), std::convert::Infallible> {
        for i in range {
            each(i, &self.0[i as usize].minhash);
        }
        Ok(())
    }
}

/// The digest of a decoded page, its [`Fingerprint::page_digest`]: XXH3's
/// 128 bits. Every page's whole markup is hashed, so the hash must be fast
/// (MD5 over the pages took a sixth of `cluster`'s CPU); it tells whether
/// two pages are the same bytes, which no site gains by faking.
pub fn page_digest(decoded: &str) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(decoded.as_bytes()).to_le_bytes()
}

/// Where the fingerprint with `key` sits in `docs`: by binary search when
/// `docs` are sorted by key (as webdup keeps them), else by a scan.
pub fn position_of(docs: &[Fingerprint], key: DocKey) -> Option<usize> {
    match docs.binary_search_by_key(&key, |d| d.key) {
        Ok(i) => Some(i),
        Err(_) => docs.iter().position(|d| d.key == key),
    }
}

/// [`Fingerprint`]'s serialized form: its fields and the format version.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    format_version: u32,
    id: String,
    #[serde(alias = "order")]
    key: DocKey,
    word_count: usize,
    shingles: Vec<u64>,
    digest: [u8; 16],
    /// Absent before version 4, and when the page was not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    page_digest: Option<[u8; 16]>,
    minhash: Signature,
    simhash: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    terms: Vec<(u64, u32)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    site: Option<Site>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    template_only: bool,
    /// Versions 1 and 2 carried the page's title, metadata, main text and
    /// extractor name; they are read and passed over.
    #[serde(default, rename = "title", skip_serializing)]
    _title: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "extractor", skip_serializing)]
    _extractor: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "meta", skip_serializing)]
    _meta: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "text", skip_serializing)]
    _text: Option<serde::de::IgnoredAny>,
}

impl From<Fingerprint> for Wire {
    fn from(f: Fingerprint) -> Wire {
        Wire {
            format_version: FINGERPRINT_FORMAT_VERSION,
            id: f.id,
            key: f.key,
            word_count: f.word_count,
            shingles: f.shingles,
            digest: f.digest,
            page_digest: f.page_digest,
            minhash: f.minhash,
            simhash: f.simhash,
            terms: f.terms,
            site: f.site,
            template_only: f.template_only,
            _title: None,
            _extractor: None,
            _meta: None,
            _text: None,
        }
    }
}

impl TryFrom<Wire> for Fingerprint {
    type Error = String;

    fn try_from(w: Wire) -> Result<Fingerprint, String> {
        if !(1..=FINGERPRINT_FORMAT_VERSION).contains(&w.format_version) {
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
            key: w.key,
            word_count: w.word_count,
            shingles: w.shingles,
            digest: w.digest,
            // Only a version 4 fingerprint says which page it was made of.
            page_digest: if w.format_version >= 4 { w.page_digest } else { None },
            minhash: w.minhash,
            simhash: w.simhash,
            terms: w.terms,
            context: Vec::new(),
            site: w.site,
            signals: SiteSignals::default(),
            template_only: w.template_only,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::{ShingleConfig, Shingler};
    use crate::sketch::MinHasher;
    use crate::verify::Overlap;

    fn fingerprint() -> Fingerprint {
        let text = "the harbour office posts the winter ferry timetable on the board every monday morning";
        let sh = Shingler::new(ShingleConfig::default()).shingle(text);
        let minhash = MinHasher::new(128, 42).sketch(&sh.hashes);
        let mut f = Fingerprint::from_parts(
            "https://a.test/ferry".into(),
            DocKey(7),
            sh.word_count,
            sh.hashes,
            sh.digest,
            minhash,
            99,
        );
        f.terms = vec![(3, 1), (5, 2)];
        f.page_digest = Some(page_digest("<p>the harbour office posts the winter ferry timetable</p>"));
        f
    }

    /// [`fingerprint`] as a version before 4 is read: its page unknown.
    fn fingerprint_before_4() -> Fingerprint {
        Fingerprint { page_digest: None, ..fingerprint() }
    }

    /// A page whose extractor kept only its site's notice, while its own
    /// post sat in a block it left out.
    fn page_of(kept: &str, rest: &str) -> Fingerprint {
        let shingler = Shingler::new(ShingleConfig::default());
        let sh = shingler.shingle(kept);
        let mut f = Fingerprint::from_parts(
            "p".into(),
            DocKey(0),
            sh.word_count,
            sh.hashes,
            sh.digest,
            Signature::default(),
            0,
        );
        let mut context = shingler.shingle(&format!("{kept}\n{rest}")).hashes;
        context.extend_from_slice(&f.shingles);
        context.sort_unstable();
        context.dedup();
        f.context = context;
        f
    }

    const NOTICE: &str = "install the forum app on your phone for push notifications badges and replies";

    #[test]
    fn a_page_that_kept_only_template_is_known_by_the_rest_of_its_text() {
        let template = Shingler::new(ShingleConfig::default()).shingle(NOTICE).hashes;
        let mut a = page_of(NOTICE, "the ferry leaves at nine from the north pier every day");
        let mut b = page_of(NOTICE, "our allotment has a waiting list of two years for new members");
        assert_eq!(a.digest, b.digest, "the extracted texts are the same notice");
        assert!(a.drop_template(&template) && b.drop_template(&template));
        assert_ne!(a.digest, b.digest);
        assert!(!a.shingles.is_empty() && a.shingles.iter().all(|s| template.binary_search(s).is_err()));
        assert_eq!(Overlap::of(&a.shingles, &b.shingles).jaccard(), 0.0);
        assert!(a.context.is_empty(), "the context is spent");
        // Two copies of one thin page are still one text.
        let mut c = page_of(NOTICE, "the ferry leaves at nine from the north pier every day");
        c.drop_template(&template);
        assert_eq!((c.digest, &c.shingles), (a.digest, &a.shingles));
    }

    #[test]
    fn a_page_that_kept_text_of_its_own_or_has_nothing_else_is_left_as_it_was() {
        let template = Shingler::new(ShingleConfig::default()).shingle(NOTICE).hashes;
        let own = "the ferry leaves at nine from the north pier every day and returns at six";
        let rest = "readers comment below on the new timetable for winter";
        let mut a = page_of(&format!("{NOTICE}\n{own}"), rest);
        let digest = a.digest;
        assert!(a.drop_template(&template));
        assert_eq!(a.digest, digest, "its own words were extracted: nothing is taken from the rest");
        let rest = Shingler::new(ShingleConfig::default()).shingle(rest).hashes;
        assert!(a.shingles.len() > template::CORE_ONLY_SHINGLES);
        assert!(a.shingles.iter().all(|s| rest.binary_search(s).is_err()));
        assert!(!a.template_only);
        // All template and nothing else: not an empty page, but template only.
        let mut b = page_of(NOTICE, "");
        let before = b.shingles.clone();
        assert!(!b.drop_template(&template));
        assert_eq!(b.shingles, before);
        assert!(b.template_only);
        let json = serde_json::to_value(&b).unwrap();
        assert_eq!(json["template_only"], true);
        assert!(serde_json::from_value::<Fingerprint>(json).unwrap().template_only);
    }

    #[test]
    fn a_fingerprint_survives_a_serde_round_trip_with_its_format_version() {
        let f = fingerprint();
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["format_version"], FINGERPRINT_FORMAT_VERSION);
        assert_eq!(json["key"], 7);
        assert!(json.get("title").is_none() && json.get("text").is_none());
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn a_version_1_fingerprint_is_read_with_its_order_as_its_key() {
        let mut json = serde_json::to_value(fingerprint()).unwrap();
        let map = json.as_object_mut().unwrap();
        let key = map.remove("key").unwrap();
        map.insert("order".into(), key);
        map.insert("format_version".into(), 1.into());
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, fingerprint_before_4());
    }

    #[test]
    fn a_version_2_fingerprint_is_read_without_its_page_fields() {
        let mut json = serde_json::to_value(fingerprint()).unwrap();
        let map = json.as_object_mut().unwrap();
        map.insert("format_version".into(), 2.into());
        map.insert("title".into(), "Ferry".into());
        map.insert("extractor".into(), "blocks".into());
        map.insert("text".into(), "the ferry".into());
        map.insert("meta".into(), serde_json::json!({"canonical": "https://a.test/f", "noindex": true}));
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, fingerprint_before_4());
    }

    #[test]
    fn a_version_3_fingerprint_is_read_with_its_page_unknown_and_is_never_identical() {
        let mut json = serde_json::to_value(fingerprint()).unwrap();
        json.as_object_mut().unwrap().remove("page_digest");
        json["format_version"] = 3.into();
        let back: Fingerprint = serde_json::from_value(json).unwrap();
        assert_eq!(back, fingerprint_before_4());
        assert!(!back.identical_to(&back.clone()) && back.same_text_as(&fingerprint()));
        assert!(fingerprint().identical_to(&fingerprint()) && !fingerprint().same_text_as(&fingerprint()));
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
