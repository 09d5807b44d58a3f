//! Text normalization, word shingles and the exact-duplicate digest.
//!
//! Text is lowercased (Unicode-aware), punctuation is dropped, and whitespace
//! is folded; optionally stopwords are removed and words stemmed. Each run of
//! `size` consecutive words (a shingle) is hashed to 64 bits. The MD5 digest
//! of the normalized word sequence identifies exact duplicates: pages whose
//! text differs only in case, punctuation or spacing share it.

use std::collections::HashSet;

use md5::{Digest, Md5};
use rust_stemmers::{Algorithm, Stemmer};
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

/// A language for stopwords and stemming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Language {
    /// ISO 639-1 code.
    pub code: &'static str,
    stemmer: Option<Algorithm>,
}

/// Languages with both a Snowball stemmer and a stopword list.
const LANGUAGES: &[(&str, Algorithm, whatlang::Lang)] = &[
    ("ar", Algorithm::Arabic, whatlang::Lang::Ara),
    ("da", Algorithm::Danish, whatlang::Lang::Dan),
    ("nl", Algorithm::Dutch, whatlang::Lang::Nld),
    ("en", Algorithm::English, whatlang::Lang::Eng),
    ("fi", Algorithm::Finnish, whatlang::Lang::Fin),
    ("fr", Algorithm::French, whatlang::Lang::Fra),
    ("de", Algorithm::German, whatlang::Lang::Deu),
    ("el", Algorithm::Greek, whatlang::Lang::Ell),
    ("hu", Algorithm::Hungarian, whatlang::Lang::Hun),
    ("it", Algorithm::Italian, whatlang::Lang::Ita),
    ("no", Algorithm::Norwegian, whatlang::Lang::Nob),
    ("pt", Algorithm::Portuguese, whatlang::Lang::Por),
    ("ro", Algorithm::Romanian, whatlang::Lang::Ron),
    ("ru", Algorithm::Russian, whatlang::Lang::Rus),
    ("es", Algorithm::Spanish, whatlang::Lang::Spa),
    ("sv", Algorithm::Swedish, whatlang::Lang::Swe),
    ("ta", Algorithm::Tamil, whatlang::Lang::Tam),
    ("tr", Algorithm::Turkish, whatlang::Lang::Tur),
];

impl Language {
    /// Looks a language up by its ISO 639-1 code (`en`, `de`, ...).
    pub fn from_code(code: &str) -> Option<Language> {
        LANGUAGES
            .iter()
            .find(|(c, _, _)| c.eq_ignore_ascii_case(code))
            .map(|&(code, alg, _)| Language { code, stemmer: Some(alg) })
    }

    /// Codes accepted by [`Language::from_code`].
    pub fn codes() -> impl Iterator<Item = &'static str> {
        LANGUAGES.iter().map(|(c, _, _)| *c)
    }

    /// Detects the language of `text`; `None` when unsure or unsupported.
    pub fn detect(text: &str) -> Option<Language> {
        let sample = &text[..floor_char_boundary(text, 4096)];
        let info = whatlang::detect(sample)?;
        if !info.is_reliable() {
            return None;
        }
        LANGUAGES
            .iter()
            .find(|(_, _, l)| *l == info.lang())
            .map(|&(code, alg, _)| Language { code, stemmer: Some(alg) })
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Which language's rules (stopwords, stemming) apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LanguageChoice {
    /// Detect per document; documents in other languages are left as they are.
    #[default]
    Auto,
    Fixed(Language),
}

/// A language name that is neither `auto` nor a supported ISO 639-1 code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language '{0}': use auto or one of {codes}", codes = Language::codes().collect::<Vec<_>>().join(", "))]
pub struct UnknownLanguage(pub String);

/// `auto` (any case), or a language code ([`Language::from_code`]).
impl std::str::FromStr for LanguageChoice {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Self, UnknownLanguage> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(LanguageChoice::Auto);
        }
        Language::from_code(s).map(LanguageChoice::Fixed).ok_or_else(|| UnknownLanguage(s.to_string()))
    }
}

/// Written as its name (`auto` or the code), as settings record it.
impl Serialize for LanguageChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for LanguageChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// `auto`, or the language's code: what [`LanguageChoice::from_str`] reads.
impl std::fmt::Display for LanguageChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LanguageChoice::Auto => f.write_str("auto"),
            LanguageChoice::Fixed(l) => f.write_str(l.code),
        }
    }
}

/// How text becomes shingles.
#[derive(Debug, Clone)]
pub struct ShingleConfig {
    /// Words per shingle.
    pub size: usize,
    /// Drop stopwords before shingling.
    pub stopwords: bool,
    /// Reduce words to their stems before shingling.
    pub stem: bool,
    pub language: LanguageChoice,
}

impl Default for ShingleConfig {
    fn default() -> Self {
        ShingleConfig { size: 5, stopwords: false, stem: false, language: LanguageChoice::Auto }
    }
}

/// A document's words, shingles and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shingles {
    /// Words left after normalization (before stopword removal).
    pub word_count: usize,
    /// Distinct shingle hashes, sorted ascending.
    pub hashes: Vec<u64>,
    /// Every shingle occurrence, repeats kept (SimHash features: a shingle
    /// seen twice weighs twice, term-frequency weighting).
    pub occurrences: Vec<u64>,
    /// MD5 of the normalized word sequence.
    pub digest: [u8; 16],
}

/// Normalizes text into lowercase words without punctuation.
///
/// Scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao,
/// Khmer, Myanmar) yield one word per character, so shingles still work.
pub fn words(text: &str, mut each: impl FnMut(&str)) {
    let mut word = String::new();
    let flush = |w: &mut String, each: &mut dyn FnMut(&str)| {
        if !w.is_empty() {
            each(w);
            w.clear();
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                word.push(c.to_ascii_lowercase());
            } else if c != '\'' {
                flush(&mut word, &mut each);
            }
        } else if is_unspaced_script(c) {
            flush(&mut word, &mut each);
            word.push(c);
            flush(&mut word, &mut each);
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !matches!(c, '\u{2019}' | '\u{02BC}' | '\u{00AD}' | '\u{200B}'..='\u{200D}') {
            // Apostrophes, soft hyphens and zero-width joiners sit inside words.
            flush(&mut word, &mut each);
        }
    }
    flush(&mut word, &mut each);
}

fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility
        | 0x20000..=0x2FFFF)
}

/// Prepared per-run state: stemmers and stopword sets are built once.
pub struct Shingler {
    config: ShingleConfig,
    fixed: Option<LanguageRules>,
}

struct LanguageRules {
    stemmer: Option<Stemmer>,
    stopwords: HashSet<&'static str>,
}

impl LanguageRules {
    fn new(lang: Language, config: &ShingleConfig) -> Self {
        let stemmer = if config.stem { lang.stemmer.map(Stemmer::create) } else { None };
        let stopwords = if config.stopwords {
            stop_words::lookup(lang.code).map(|w| w.iter().copied().collect()).unwrap_or_default()
        } else {
            HashSet::new()
        };
        LanguageRules { stemmer, stopwords }
    }
}

impl Shingler {
    pub fn new(config: ShingleConfig) -> Self {
        let fixed = match config.language {
            LanguageChoice::Fixed(lang) if config.stem || config.stopwords => Some(LanguageRules::new(lang, &config)),
            _ => None,
        };
        Shingler { config, fixed }
    }

    pub fn config(&self) -> &ShingleConfig {
        &self.config
    }

    /// Shingles `text`.
    pub fn shingle(&self, text: &str) -> Shingles {
        let mut md5 = Md5::new();
        let (word_count, word_hashes) = self.word_hashes(text, Some(&mut md5));
        let occurrences = shingle_occurrences(&word_hashes, self.config.size);
        let mut hashes = occurrences.clone();
        hashes.sort_unstable();
        hashes.dedup();
        Shingles { word_count, hashes, occurrences, digest: md5.finalize().into() }
    }

    /// The distinct shingle hashes of `text`, sorted: [`Shingler::shingle`]'s
    /// `hashes`, without the work of its digest and occurrences.
    pub fn hashes(&self, text: &str) -> Vec<u64> {
        let (_, word_hashes) = self.word_hashes(text, None);
        shingle_hashes(&word_hashes, self.config.size)
    }

    /// How many words `text` has, and the hash of each word shingles are
    /// made of (stopwords left out and words stemmed when so configured);
    /// the words, a space apart, go into `md5` when given.
    fn word_hashes(&self, text: &str, mut md5: Option<&mut Md5>) -> (usize, Vec<u64>) {
        let detected;
        let rules = match (&self.fixed, self.config.language) {
            (Some(rules), _) => Some(rules),
            (None, LanguageChoice::Auto) if self.config.stem || self.config.stopwords => {
                detected = Language::detect(text).map(|l| LanguageRules::new(l, &self.config));
                detected.as_ref()
            }
            _ => None,
        };
        let mut word_count = 0usize;
        let mut word_hashes: Vec<u64> = Vec::with_capacity(text.len() / 6);
        words(text, |w| {
            word_count += 1;
            if let Some(md5) = md5.as_deref_mut() {
                if word_count > 1 {
                    md5.update(b" ");
                }
                md5.update(w.as_bytes());
            }
            match rules {
                None => word_hashes.push(xxh3_64(w.as_bytes())),
                Some(r) => {
                    if r.stopwords.contains(w) {
                        return;
                    }
                    match &r.stemmer {
                        Some(s) => word_hashes.push(xxh3_64(s.stem(w).as_bytes())),
                        None => word_hashes.push(xxh3_64(w.as_bytes())),
                    }
                }
            }
        });
        (word_count, word_hashes)
    }
}

/// The union of two sorted lists of distinct hashes, sorted and distinct.
pub fn union_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The shingle hash of every window of `size` word hashes, in text order; a
/// text shorter than `size` words gives one shorter shingle.
pub fn shingle_occurrences(word_hashes: &[u64], size: usize) -> Vec<u64> {
    let size = size.max(1);
    if word_hashes.len() < size {
        if word_hashes.is_empty() { Vec::new() } else { vec![combine(word_hashes)] }
    } else {
        word_hashes.windows(size).map(combine).collect()
    }
}

/// Distinct shingle hashes of a word-hash sequence, sorted.
pub fn shingle_hashes(word_hashes: &[u64], size: usize) -> Vec<u64> {
    let mut out = shingle_occurrences(word_hashes, size);
    out.sort_unstable();
    out.dedup();
    out
}

/// Order-sensitive combination of word hashes into one shingle hash.
#[inline]
fn combine(window: &[u64]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = window.len() as u64;
    for &w in window {
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    fmix64(h)
}

/// Hashes a shingle or word hash for a hash map. The keys are already
/// uniform 64-bit hashes, so SipHash's work buys nothing; one multiply keeps
/// low and high bits mixed for hashbrown's control bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShingleHasher(u64);

impl std::hash::Hasher for ShingleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are expected; other writes still hash correctly.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by shingle or word hashes.
pub type ShingleMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<ShingleHasher>>;
/// A set of shingle or word hashes.
pub type ShingleSet = std::collections::HashSet<u64, std::hash::BuildHasherDefault<ShingleHasher>>;

/// MurmurHash3's 64-bit finalizer.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// Distinct hashes (shingles or words) with their counts, sorted by hash.
pub fn term_counts(mut word_hashes: Vec<u64>) -> Vec<(u64, u32)> {
    word_hashes.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::new();
    for h in word_hashes {
        match out.last_mut() {
            Some((last, n)) if *last == h => *n += 1,
            _ => out.push((h, 1)),
        }
    }
    out
}

/// The digest of a set of shingles rather than a text: for a page whose
/// text is known only as shingles (see [`crate::fingerprint::Fingerprint::drop_template`]).
/// Equal sets, equal digests.
pub fn set_digest(hashes: &[u64]) -> [u8; 16] {
    let mut md5 = Md5::new();
    for h in hashes {
        md5.update(h.to_le_bytes());
    }
    md5.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_the_shingles_hashes_and_unions_merge_them() {
        let config = ShingleConfig { stem: true, stopwords: true, ..ShingleConfig::default() };
        for shingler in [Shingler::new(ShingleConfig::default()), Shingler::new(config)] {
            let a = "The ferry leaves the harbour at seven, every morning in winter; the ferries are late.";
            let b = "Every morning in winter the ferry leaves late. Die Fähre fährt um sieben.";
            assert_eq!(shingler.hashes(a), shingler.shingle(a).hashes);
            assert_eq!(shingler.hashes(""), shingler.shingle("").hashes);
            let (a, b) = (shingler.hashes(a), shingler.hashes(b));
            let mut both = [a.clone(), b.clone()].concat();
            both.sort_unstable();
            both.dedup();
            assert_eq!(union_sorted(&a, &b), both);
            assert_eq!(union_sorted(&b, &a), both);
            assert_eq!(union_sorted(&a, &a), a);
            assert_eq!(union_sorted(&[], &b), b);
        }
    }

    fn collect_words(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        words(text, |w| v.push(w.to_string()));
        v
    }

    #[test]
    fn normalization_lowercases_strips_punctuation_and_folds_space() {
        assert_eq!(
            collect_words("Hello,  WORLD!\n\tIt's Ünïcode—déjà vu."),
            ["hello", "world", "its", "ünïcode", "déjà", "vu"]
        );
        assert_eq!(collect_words("東京タワー in 2024"), ["東", "京", "タ", "ワ", "ー", "in", "2024"]);
    }

    #[test]
    fn case_punctuation_and_spacing_do_not_change_the_digest() {
        let s = Shingler::new(ShingleConfig::default());
        let a = s.shingle("The cat sat on the mat, happily.");
        let b = s.shingle("the CAT   sat on the mat happily");
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.hashes, b.hashes);
        assert_ne!(a.digest, s.shingle("the dog sat on the mat happily").digest);
    }

    #[test]
    fn shingle_count_and_short_texts() {
        let s = Shingler::new(ShingleConfig { size: 3, ..Default::default() });
        assert_eq!(s.shingle("a b c d e").hashes.len(), 3);
        assert_eq!(s.shingle("a b").hashes.len(), 1);
        assert!(s.shingle(" .,; ").hashes.is_empty());
        // Order matters: a shingle is a sequence, not a bag.
        assert_ne!(s.shingle("a b c").hashes, s.shingle("c b a").hashes);
    }

    #[test]
    fn stopwords_and_stemming_for_a_fixed_language() {
        let en = Language::from_code("en").unwrap();
        let cfg = ShingleConfig { size: 2, stopwords: true, stem: true, language: LanguageChoice::Fixed(en) };
        let s = Shingler::new(cfg);
        assert_eq!(s.shingle("the runners were running").hashes, s.shingle("a runner is running").hashes);
        assert_eq!(s.shingle("the runners were running").word_count, 4);
    }

    #[test]
    fn language_detection() {
        let de = "Der schnelle braune Fuchs springt über den faulen Hund und läuft dann weiter in den Wald.";
        assert_eq!(Language::detect(de).map(|l| l.code), Some("de"));
    }

    #[test]
    fn term_counts_are_per_distinct_shingle() {
        let s = Shingler::new(ShingleConfig { size: 1, ..Default::default() });
        let terms = term_counts(s.shingle("b a b c b").occurrences);
        assert_eq!(terms.len(), 3);
        assert_eq!(terms.iter().map(|t| t.1).sum::<u32>(), 5);
    }
}
