//! The pipeline from documents to clusters, stage by stage.
//!
//! [`Fingerprinter`] turns one [`RawDocument`] into a [`Fingerprint`]
//! (extract, shingle, sketch); [`Corpus`] holds the fingerprints of a run and
//! the documents that failed; [`find_duplicates`] generates candidates,
//! verifies them and clusters the result; [`neighbors`] and [`compare`] answer
//! the other questions (the core's [`webdup_core::dedup`], run here on
//! rayon's pool). Each stage only reads the output of the one before.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use crate::error::{DocError, DocErrorKind, Error, Result};
use crate::extract::{self, ExtractConfig};
use crate::index::LshParams;
use crate::shingle::{ShingleConfig, Shingler};
use crate::sketch::{MinHasher, Signature, SimHashWeighting, simhash};
use crate::source::{DocKey, Format, RawDocument};
use crate::template::{self, TemplateConfig, Templates};
use crate::threads::Threads;
pub use crate::verify::Measure;
use webdup_core::dedup;

pub use webdup_core::candidates::Method;

/// Every setting of a run, validated by [`Config::validate`].
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    #[serde(skip)]
    pub extract: ExtractConfig,
    #[serde(skip)]
    pub shingle: ShingleConfig,
    pub shingle_size: usize,
    pub permutations: usize,
    pub seed: u64,
    /// Least exact Jaccard for two documents to be linked; with
    /// [`Config::cross_site_threshold`], for two documents of one site.
    pub threshold: f64,
    /// Least exact Jaccard for two documents of different sites (hosts, or
    /// folders for local files, as [`crate::template::site_of`] tells):
    /// `None` applies [`Config::threshold`] to every pair.
    ///
    /// Pages of one site share their template, and what of it survives
    /// extraction (a teaser column, an author's bio) is shared text to
    /// Jaccard: two thin pages of a site can reach 0.7 on that alone. Pages
    /// of different sites share no template, so what they share is content:
    /// a syndicated copy in another site's template keeps its article but
    /// not its furniture, which lowers its Jaccard to the original (about
    /// 0.5 to 0.8 after extraction for a copy with 5% of its words edited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_site_threshold: Option<f64>,
    /// What the thresholds are compared with: Jaccard (near-duplicates), or
    /// the containment of the smaller page in the larger (excerpts, trimmed
    /// copies, pages with comments added).
    pub measure: Measure,
    pub method: Method,
    pub max_hamming: u32,
    pub simhash_weighting: SimHashWeighting,
    pub min_cluster_size: usize,
    /// Site-template suppression before sketching; off when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<TemplateConfig>,
    /// Keep each page's metadata and main text (its [`PageView`], in
    /// [`Corpus::pages`]). Off by default: `cluster` does not show them, and
    /// at 100,000 pages the texts would outweigh the fingerprints; `audit`
    /// turns it on.
    #[serde(skip)]
    pub keep_pages: bool,
    /// Leave each page's SimHash at 0: for fingerprints that only MinHash
    /// will describe (the distributed job's ingest, whose files keep the
    /// shingles only). Off by default.
    #[serde(skip)]
    pub skip_simhash: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            // The duplicate finder's extractor; `extract` alone defaults to `auto`.
            extract: ExtractConfig::new(crate::extract::ExtractorKind::Blocks),
            shingle: ShingleConfig::default(),
            shingle_size: 5,
            permutations: 128,
            seed: 42,
            threshold: 0.8,
            cross_site_threshold: Some(0.5),
            measure: Measure::Jaccard,
            method: Method::MinHash,
            max_hamming: 3,
            simhash_weighting: SimHashWeighting::Tf,
            min_cluster_size: 2,
            template: None,
            keep_pages: false,
            skip_simhash: false,
        }
    }
}

impl Config {
    /// Checks ranges and returns the config with derived fields in step.
    pub fn validate(mut self) -> Result<Config> {
        if self.shingle.size == 0 || self.shingle.size > 64 {
            return Err(Error::Config(format!("shingle size must be 1 to 64 words, not {}", self.shingle.size)));
        }
        self.shingle_size = self.shingle.size;
        if !(1..=4096).contains(&self.permutations) {
            return Err(Error::Config(format!("permutations must be 1 to 4096, not {}", self.permutations)));
        }
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(Error::Config(format!("threshold must be in (0, 1], not {}", self.threshold)));
        }
        if let Some(t) = self.cross_site_threshold
            && !(t > 0.0 && t <= 1.0)
        {
            return Err(Error::Config(format!("cross-site threshold must be in (0, 1], not {t}")));
        }
        if self.max_hamming > 32 {
            return Err(Error::Config(format!("max Hamming distance must be 0 to 32, not {}", self.max_hamming)));
        }
        if self.measure == Measure::Containment && self.method == Method::SimHash {
            return Err(Error::Config(
                "containment needs MinHash candidates (method minhash or both): SimHash compares whole texts".into(),
            ));
        }
        if self.min_cluster_size < 2 {
            return Err(Error::Config("minimum cluster size must be at least 2".into()));
        }
        if let Some(t) = self.template.take() {
            self.template = Some(t.validate().map_err(Error::Config)?);
        }
        Ok(self)
    }

    /// The LSH banding for [`Config::lowest_threshold`], so that candidates
    /// cover both rules: what clustering and an index use.
    pub fn lsh_params(&self) -> LshParams {
        LshParams::optimal(self.lowest_threshold(), self.permutations)
    }

    /// The lower of [`Config::threshold`] and [`Config::cross_site_threshold`].
    pub fn lowest_threshold(&self) -> f64 {
        self.match_settings().lowest_threshold()
    }
}

pub use webdup_core::fingerprint::Fingerprint;
pub use webdup_core::page::PageView;
pub use webdup_core::settings::{FINGERPRINT_SETTINGS_VERSION, FingerprintSettings, MatchSettings, RunSettings};

impl Config {
    /// Everything that makes this config's fingerprints comparable.
    pub fn fingerprint_settings(&self) -> FingerprintSettings {
        FingerprintSettings {
            version: FINGERPRINT_SETTINGS_VERSION,
            extractor: self.extract.extractor.as_str().into(),
            include_selector: self.extract.include.as_ref().map(|c| c.as_str().into()),
            exclude_selector: self.extract.exclude.as_ref().map(|c| c.as_str().into()),
            template: self.template.clone(),
            shingle_size: self.shingle.size,
            stopwords: self.shingle.stopwords,
            stem: self.shingle.stem,
            language: match self.shingle.language {
                crate::shingle::LanguageChoice::Auto => "auto".into(),
                crate::shingle::LanguageChoice::Fixed(l) => l.code.into(),
            },
            permutations: self.permutations,
            seed: self.seed,
            simhash_weighting: self.simhash_weighting,
        }
    }

    /// How this config compares fingerprints.
    pub fn match_settings(&self) -> MatchSettings {
        MatchSettings {
            threshold: self.threshold,
            cross_site_threshold: self.cross_site_threshold,
            measure: self.measure,
            method: self.method,
            max_hamming: self.max_hamming,
            min_cluster_size: self.min_cluster_size,
        }
    }

    /// Both, as reports echo them.
    pub fn run_settings(&self) -> RunSettings {
        RunSettings { fingerprint: self.fingerprint_settings(), matching: self.match_settings() }
    }
}

/// The settings an index records for fingerprints made with a validated config.
#[cfg(feature = "store")]
impl From<&Config> for crate::store::Settings {
    fn from(config: &Config) -> Self {
        let lsh = config.lsh_params();
        crate::store::Settings {
            fingerprint: config.fingerprint_settings(),
            threshold: config.threshold,
            cross_site_threshold: config.cross_site_threshold,
            bands: lsh.bands,
            rows: lsh.rows,
            assumed: Vec::new(),
        }
    }
}

#[cfg(feature = "store")]
impl crate::store::ApplySettings for Config {
    /// The config with an index's fingerprint settings in place of its own
    /// (shingling, extractor, selectors, template suppression, permutations,
    /// seed, SimHash weighting) and its thresholds, validated. The rest
    /// (candidate method, cluster size) is kept.
    fn apply_settings(self, settings: &crate::store::Settings) -> crate::store::Result<Config> {
        use crate::extract::ExtractorKind;
        use crate::shingle::{Language, LanguageChoice, ShingleConfig};
        use crate::store::Error;
        let base = self;
        let f = &settings.fingerprint;
        let language = if f.language.eq_ignore_ascii_case("auto") {
            LanguageChoice::Auto
        } else {
            LanguageChoice::Fixed(
                Language::from_code(&f.language)
                    .ok_or_else(|| Error::BadSettings(format!("language = {:?}", f.language)))?,
            )
        };
        let extractor: ExtractorKind =
            f.extractor.parse().map_err(|_| Error::BadSettings(format!("extractor = {:?}", f.extractor)))?;
        let extract = ExtractConfig { extractor, ..base.extract }
            .with_selectors(f.include_selector.as_deref(), f.exclude_selector.as_deref())
            .map_err(|e| Error::BadSettings(e.to_string()))?;
        let config = Config {
            extract,
            template: f.template.clone(),
            shingle: ShingleConfig { size: f.shingle_size, stopwords: f.stopwords, stem: f.stem, language },
            shingle_size: f.shingle_size,
            permutations: f.permutations,
            seed: f.seed,
            simhash_weighting: f.simhash_weighting,
            threshold: settings.threshold,
            cross_site_threshold: settings.cross_site_threshold,
            ..base
        };
        config.validate().map_err(|e| Error::BadSettings(e.to_string()))
    }
}

/// Turns documents into fingerprints; built once per run.
pub struct Fingerprinter {
    extract: ExtractConfig,
    weighting: SimHashWeighting,
    shingler: Shingler,
    minhasher: MinHasher,
    keep_pages: bool,
    skip_simhash: bool,
    /// Template learning follows: keep each page's [`Fingerprint::context`].
    learns_templates: bool,
}

impl Fingerprinter {
    pub fn new(config: &Config) -> Self {
        Fingerprinter {
            extract: config.extract.clone(),
            weighting: config.simhash_weighting,
            shingler: Shingler::new(config.shingle.clone()),
            minhasher: MinHasher::new(config.permutations, config.seed),
            keep_pages: config.keep_pages,
            skip_simhash: config.skip_simhash,
            learns_templates: config.template.is_some(),
        }
    }

    /// Extracts (HTML only), shingles and sketches one document.
    pub fn fingerprint(&self, raw: RawDocument) -> Result<Fingerprint, DocError> {
        Ok(self.fingerprint_page(raw)?.0)
    }

    /// [`Fingerprinter::fingerprint`], with what the page showed (see
    /// [`Fingerprinter::fingerprint_unsketched`]): what its record is made of.
    pub fn fingerprint_page(&self, raw: RawDocument) -> Result<(Fingerprint, PageView), DocError> {
        let (mut f, page) = self.fingerprint_unsketched(raw)?;
        self.sketch(&mut f);
        Ok((f, page))
    }

    /// Extracts and shingles one document, leaving its sketches empty until
    /// [`Fingerprinter::sketch`]: shingles may still be dropped in between.
    /// Beside its fingerprint, what the page showed: the title its extractor
    /// found and, when the fingerprinter keeps pages, its metadata and main
    /// text.
    pub fn fingerprint_unsketched(&self, raw: RawDocument) -> Result<(Fingerprint, PageView), DocError> {
        // The address after redirects, else the one asked for: extractors
        // use it to recognise the site, and canonicals resolve against it.
        let url = raw.url.as_deref().or(crate::source::is_url(&raw.id).then_some(raw.id.as_str()));
        let (text, title, meta, context) = match raw.format {
            Format::Text => (raw.body, None, None, None),
            Format::Html if self.keep_pages => {
                let p = extract::extract_page_with(&raw.body, url, &self.extract, false)
                    .map_err(|e| DocError::new(&raw.id, raw.key, e.doc_kind(), e.to_string()))?;
                (p.text, p.extracted_title, Some(Box::new(p.meta)), p.context)
            }
            // The same extraction, without reading the metadata no report
            // of this run shows.
            Format::Html => {
                let e = extract::extract_with_url(&raw.body, url, &self.extract)
                    .map_err(|e| DocError::new(&raw.id, raw.key, e.doc_kind(), e.to_string()))?;
                (e.text, e.title, None, e.context)
            }
        };
        let mut f = self.shingle_text(raw.id, raw.key, &text)?;
        if self.learns_templates
            && let Some(context) = context
        {
            // Kept as all the page shows, its main text included, so that
            // template learning can borrow it as it is.
            let mut all = self.shingler.shingle(&context).hashes;
            all.extend_from_slice(&f.shingles);
            all.sort_unstable();
            all.dedup();
            all.shrink_to_fit();
            f.context = all;
        }
        let page = PageView { title, meta, text: self.keep_pages.then_some(text) };
        Ok((f, page))
    }

    /// Shingles and sketches text that needs no extraction.
    pub fn fingerprint_text(&self, id: String, key: DocKey, text: &str) -> Result<Fingerprint, DocError> {
        let mut f = self.shingle_text(id, key, text)?;
        self.sketch(&mut f);
        Ok(f)
    }

    /// Shingles text that needs no extraction, leaving its sketches empty
    /// until [`Fingerprinter::sketch`] (see [`Fingerprinter::fingerprint_unsketched`]).
    pub fn shingle_text(&self, id: String, key: DocKey, text: &str) -> Result<Fingerprint, DocError> {
        let sh = self.shingler.shingle(text);
        if sh.hashes.is_empty() {
            return Err(DocError::new(id, key, DocErrorKind::NoText, "no words found in the document's text"));
        }
        // SimHash features are the shingles, not single words: over words,
        // the frequent words of a language dominate every fingerprint and
        // unrelated pages land a few bits apart (175 million candidates at
        // distance 3 among 100,000 generated documents). Over shingles the
        // distance tracks the Jaccard that verification measures. It is
        // taken now, while the repeats are known; MinHash waits for
        // [`Fingerprinter::sketch`], after template suppression.
        let simhash = if self.skip_simhash { 0 } else { simhash::simhash_counted(&sh.occurrences) };
        // Word counts are only needed for corpus-wide weighting; at 100,000
        // documents they would outweigh everything else kept.
        let terms = match self.weighting {
            SimHashWeighting::Tf => Vec::new(),
            SimHashWeighting::TfIdf => crate::shingle::term_counts(sh.occurrences),
        };
        Ok(Fingerprint {
            id,
            key,
            word_count: sh.word_count,
            shingles: sh.hashes,
            digest: sh.digest,
            minhash: Signature::default(),
            simhash,
            terms,
            context: Vec::new(),
        })
    }

    /// The corpus-wide stages for a page that comes alone (a check, a page
    /// posted to the API): its site's template, learned earlier and kept by
    /// an index, is dropped, then the page is sketched.
    pub fn finish_alone(&self, f: &mut Fingerprint, template: Option<&[u64]>) {
        if let Some(t) = template {
            f.drop_template(t);
        }
        f.context = Vec::new();
        self.sketch(f);
    }

    /// Computes the MinHash signature of the (possibly template-filtered) shingles.
    pub fn sketch(&self, f: &mut Fingerprint) {
        f.minhash = self.minhasher.sketch(&f.shingles);
    }
}

pub use webdup_core::progress::{Progress, Quiet};

/// The fingerprinted documents of a run, what their pages showed, and the
/// documents that failed.
#[derive(Debug, Default)]
pub struct Corpus {
    /// By key (input order).
    pub docs: Vec<Fingerprint>,
    /// What each fingerprinted document's page showed (its extractor's
    /// title; its metadata and main text with [`Config::keep_pages`]), by
    /// key, until a run makes its pages' records of them
    /// (`webdup::run::Loaded::finish`).
    pub pages: BTreeMap<DocKey, PageView>,
    /// By key (input order).
    pub errors: Vec<DocError>,
}

/// Stack size for worker threads: the extractor recurses over the DOM.
const WORKER_STACK: usize = 64 << 20;

impl Corpus {
    /// The document with this key, if it was fingerprinted (`docs` are kept
    /// sorted by key).
    pub fn doc(&self, key: DocKey) -> Option<&Fingerprint> {
        self.position(key).map(|i| &self.docs[i])
    }

    /// Where the document with this key sits in `docs`: found by binary
    /// search in a corpus webdup built (sorted by key), by a scan in one
    /// assembled by hand in another order.
    pub fn position(&self, key: DocKey) -> Option<usize> {
        webdup_core::fingerprint::position_of(&self.docs, key)
    }

    /// Fingerprints documents in parallel. `load` turns each item into a raw
    /// document (reading a file, say); its failures are kept as errors.
    pub fn build<T: Send>(
        items: Vec<T>,
        load: impl Fn(T) -> Result<RawDocument, DocError> + Sync + Send,
        config: &Config,
        progress: &dyn Progress,
    ) -> Corpus {
        let total = items.len() as u64;
        Corpus::build_streaming(items.into_iter(), total, load, config, progress)
    }

    /// Like [`Corpus::build`], for items that arrive over time (pages from
    /// the fetcher): each is fingerprinted as soon as a worker is free, so
    /// only the documents in flight are held in memory. Output order is
    /// input order whatever the arrival order. `total` sizes the progress bar.
    pub fn build_streaming<T: Send>(
        items: impl Iterator<Item = T> + Send,
        total: u64,
        load: impl Fn(T) -> Result<RawDocument, DocError> + Sync + Send,
        config: &Config,
        progress: &dyn Progress,
    ) -> Corpus {
        let mut corpus = Corpus::fingerprint_streaming(items, total, load, config, progress);
        corpus.finish(config, &Templates::default());
        corpus
    }

    /// The per-document half of [`Corpus::build_streaming`]: documents
    /// extracted and shingled, not yet sketched. [`Corpus::finish`] runs the
    /// corpus-wide stages; until then the fingerprints have no MinHash.
    pub fn fingerprint_streaming<T: Send>(
        items: impl Iterator<Item = T> + Send,
        total: u64,
        load: impl Fn(T) -> Result<RawDocument, DocError> + Sync + Send,
        config: &Config,
        progress: &dyn Progress,
    ) -> Corpus {
        let fp = Fingerprinter::new(config);
        progress.start("fingerprint", total);
        let run = || {
            items
                .par_bridge()
                .map(|item| {
                    let r = load(item).and_then(|raw| fp.fingerprint_unsketched(raw));
                    if r.is_err() {
                        progress.fail(1);
                    }
                    progress.advance(1);
                    r
                })
                .collect::<Vec<_>>()
        };
        let results = match rayon::ThreadPoolBuilder::new().stack_size(WORKER_STACK).build() {
            Ok(pool) => pool.install(run),
            Err(_) => run(),
        };
        progress.finish();
        let mut corpus = Corpus::default();
        for r in results {
            match r {
                Ok((f, page)) => {
                    corpus.pages.insert(f.key, page);
                    corpus.docs.push(f);
                }
                Err(e) => corpus.errors.push(e),
            }
        }
        corpus.docs.sort_by_key(|d| d.key);
        corpus.errors.sort_by_key(|e| e.key);
        corpus
    }

    /// The corpus-wide stages, in order: each site's template is learned
    /// from this corpus's pages ([`Templates::learn`]; sites with too few
    /// pages here take theirs from `known`, templates learned earlier, as an
    /// index keeps them) and dropped from its pages; then every page is
    /// sketched and, for TF-IDF, weighted. Returns the templates learned
    /// here. Call once, on a corpus from [`Corpus::fingerprint_streaming`].
    pub fn finish(&mut self, config: &Config, known: &Templates) -> Templates {
        let fp = Fingerprinter::new(config);
        let learned = match &config.template {
            Some(t) => self.suppress_templates(t, known),
            None => Templates::default(),
        };
        self.docs.par_iter_mut().for_each(|d| fp.sketch(d));
        self.finish_weighting(config.simhash_weighting);
        learned
    }

    /// Drops each site's template shingles (see [`crate::template`]).
    fn suppress_templates(&mut self, config: &TemplateConfig, known: &Templates) -> Templates {
        let sites: Vec<Option<String>> = self.docs.iter().map(|d| template::site_of(&d.id, config.scope)).collect();
        // What each page shows of its site: its shingles and, where the
        // extractor read more than it kept, the rest of its text.
        let sets: Vec<(Option<&str>, &[u64])> = self
            .docs
            .iter()
            .zip(&sites)
            .map(|(d, s)| (s.as_deref(), if d.context.is_empty() { &d.shingles } else { &d.context }.as_slice()))
            .collect();
        let learned = Templates::learn_on(&Threads, &sets, config);
        drop(sets);
        self.docs.par_iter_mut().zip(&sites).for_each(|(d, site)| {
            if let Some(t) = site.as_deref().and_then(|s| learned.get(s).or_else(|| known.get(s))) {
                d.drop_template(t);
            }
            d.context = Vec::new();
        });
        learned
    }

    /// Adds errors found before fingerprinting (missing paths), keeping input order.
    pub fn add_errors(&mut self, errors: impl IntoIterator<Item = DocError>) {
        self.errors.extend(errors);
        self.errors.sort_by_key(|e| e.key);
        self.docs.sort_by_key(|d| d.key);
    }

    /// Recomputes SimHash with corpus-wide weights where asked, then drops
    /// the per-word counts.
    fn finish_weighting(&mut self, weighting: SimHashWeighting) {
        if weighting == SimHashWeighting::TfIdf && !self.docs.is_empty() {
            let mut df: crate::shingle::ShingleMap<u32> = Default::default();
            for d in &self.docs {
                for &(h, _) in &d.terms {
                    *df.entry(h).or_insert(0) += 1;
                }
            }
            let n = self.docs.len() as f32;
            self.docs.par_iter_mut().for_each(|d| {
                d.simhash = simhash::simhash(d.terms.iter().map(|&(h, tf)| {
                    let idf = (n / df[&h] as f32).ln() + 1.0;
                    (h, tf as f32 * idf)
                }));
            });
        }
        for d in &mut self.docs {
            d.terms = Vec::new();
            d.shingles.shrink_to_fit();
        }
    }

    /// Total documents named, fingerprinted or failed.
    pub fn len(&self) -> usize {
        self.docs.len() + self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// Duplicates, neighbours and comparisons are the core's (webdup_core::dedup),
// over the corpus's fingerprints; here they run on rayon's pool.
pub use webdup_core::dedup::{Cluster, Clustering, Comparison, Member, Neighbor, Stats, compare};

/// Exact-duplicate grouping, candidate generation, verification and
/// clustering over a corpus ([`webdup_core::dedup::find_duplicates`] on
/// rayon's pool; `stats.documents` counts the failed documents too).
pub fn find_duplicates(corpus: &Corpus, config: &Config) -> Clustering {
    let mut clustering =
        dedup::find_duplicates(&Threads, &corpus.docs, &config.match_settings(), &config.fingerprint_settings());
    clustering.stats.documents = corpus.len();
    clustering
}

/// For each document, up to `top` others whose exact [`Config::measure`]
/// is at least `floor`, most similar first (ties to the lower key), in the
/// order of `corpus.docs`.
pub fn neighbors(corpus: &Corpus, config: &Config, floor: f64, top: usize) -> Vec<Vec<Neighbor>> {
    dedup::neighbors(&Threads, &corpus.docs, &config.match_settings(), &config.fingerprint_settings(), floor, top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Format, RawDocument};
    use crate::verify::Overlap;

    #[test]
    fn the_default_config_fingerprints_with_the_cores_default_settings() {
        assert_eq!(Config::default().validate().unwrap().fingerprint_settings(), FingerprintSettings::default());
    }

    #[test]
    fn skipping_simhash_changes_nothing_else() {
        let text = "The guide explains how to book the ferry, where to park and what to bring for the crossing.";
        let raw = || RawDocument { id: "a".into(), key: DocKey(0), format: Format::Text, body: text.into(), url: None };
        let config = Config::default().validate().unwrap();
        let with = Fingerprinter::new(&config).fingerprint(raw()).unwrap();
        let without = Fingerprinter::new(&Config { skip_simhash: true, ..config }).fingerprint(raw()).unwrap();
        assert_ne!(with.simhash, 0);
        assert_eq!(without.simhash, 0);
        assert_eq!(Fingerprint { simhash: 0, ..with }, without);
    }

    #[test]
    fn relative_canonicals_resolve_against_the_address_after_redirects() {
        let config = Config { keep_pages: true, ..Config::default() }.validate().unwrap();
        let fp = Fingerprinter::new(&config);
        let words = "The guide explains how to book the ferry, where to park and what to bring for the crossing. ";
        let html = format!("<html><head><link rel=canonical href='guide'></head><body><p>{}</p></body></html>", words);
        let canonical = |url: Option<&str>| {
            let raw = RawDocument {
                id: "https://old.example/a/page".into(),
                key: DocKey(0),
                format: Format::Html,
                body: html.clone(),
                url: url.map(str::to_string),
            };
            fp.fingerprint_unsketched(raw).unwrap().1.meta.and_then(|m| m.canonical)
        };
        assert_eq!(canonical(Some("https://new.example/b/page")).as_deref(), Some("https://new.example/b/guide"));
        assert_eq!(canonical(None).as_deref(), Some("https://old.example/a/guide"));
    }

    /// Two texts sharing about 60% of their shingles: duplicates across
    /// sites (what they share cannot be a shared template), not within one.
    #[test]
    fn pages_of_different_sites_are_held_to_the_cross_site_threshold() {
        let config = Config::default().validate().unwrap();
        let fp = Fingerprinter::new(&config);
        let story: Vec<String> = (0..120).map(|i| format!("w{i}")).collect();
        let mut copy = story.clone();
        for i in (0..120).step_by(24) {
            copy[i] = format!("x{i}");
        }
        let doc = |id: &str, key: u64, words: &[String]| {
            let raw =
                RawDocument { id: id.into(), key: DocKey(key), format: Format::Text, body: words.join(" "), url: None };
            fp.fingerprint(raw).unwrap()
        };
        let clustered = |a: &str, b: &str, config: &Config| {
            let corpus = Corpus { docs: vec![doc(a, 0, &story), doc(b, 1, &copy)], ..Corpus::default() };
            let j = Overlap::of(&corpus.docs[0].shingles, &corpus.docs[1].shingles).jaccard();
            assert!((0.5..0.8).contains(&j), "{j}");
            find_duplicates(&corpus, config).clusters.len() == 1
        };
        assert!(clustered("https://a.example/story", "https://b.example/copy", &config));
        assert!(!clustered("https://a.example/story", "https://a.example/copy", &config));
        assert!(clustered("site-a/story.txt", "site-b/copy.txt", &config));
        assert!(!clustered("site-a/story.txt", "site-a/copy.txt", &config));
        let one_rule = Config { cross_site_threshold: None, ..config.clone() };
        assert!(!clustered("https://a.example/story", "https://b.example/copy", &one_rule));
    }
}
