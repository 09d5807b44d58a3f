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

use crate::candidates::LshParams;
use crate::error::{DocError, DocErrorKind, Error, Result};
use crate::extract::{self, ExtractConfig, ExtractError, ExtractorKind, PageBudget};
use crate::shingle::{ShingleConfig, Shingler};
use crate::sketch::{MinHasher, Signature, SimHashWeighting, simhash};
use crate::source::{DocKey, Format, RawDocument};
use crate::template::{self, TemplateConfig, Templates};
use crate::threads::Threads;
pub use crate::verify::Measure;
use webdup_core::dedup;
use webdup_core::site::{Site, SiteInput};

pub use webdup_core::candidates::Method;

/// Every setting of a run, validated by [`Config::validate`]: the core's
/// two settings types, kept as every report echoes them and an index
/// records them (so recording and applying an index's settings is a copy),
/// and what a run needs besides.
///
/// [`Config::default`] is the library's: no site-template suppression, so
/// a page's fingerprint depends on that page alone. [`Config::tool`] is
/// what the `webdup` command and the Python package use when given no
/// settings.
#[derive(Default, Debug, Clone, Serialize)]
pub struct Config {
    /// Everything that makes fingerprints comparable: the extractor and its
    /// selectors (checked by [`Config::validate`]; [`Config::extract`] reads
    /// them), template suppression, shingling and sketching.
    pub fingerprint: FingerprintSettings,
    /// How fingerprints are compared: thresholds, measure, candidates,
    /// cluster size.
    #[serde(rename = "match")]
    pub matching: MatchSettings,
    /// What one page may cost to extract; a page over it is refused. Not a
    /// fingerprint setting: it changes which pages are read, not how.
    #[serde(skip)]
    pub budget: PageBudget,
    /// Keep each page's metadata and main text (its [`PageView`], in
    /// [`Corpus::pages`]). Off by default: `cluster` does not show them, and
    /// at 100,000 pages the texts would outweigh the fingerprints; `audit`
    /// turns it on.
    #[serde(skip)]
    pub keep_pages: bool,
    /// Keep the markup of the pages a run fetches or reads from a web
    /// archive, deflated in a temporary file (`webdup::run::Loaded::markup`),
    /// so that the audit can show what differs in the markup of two pages
    /// of one text; local files are read again instead. Off by default;
    /// `audit` turns it on.
    #[serde(skip)]
    pub keep_markup: bool,
    /// Leave each page's SimHash at 0: for fingerprints that only MinHash
    /// will describe (the distributed job's ingest, whose files keep the
    /// shingles only). Off by default.
    #[serde(skip)]
    pub skip_simhash: bool,
    /// Make no page records ([`crate::run::Loaded::pages`]) nor keep what
    /// pages showed to make them from: for a run whose report shows only
    /// fingerprints and fetches (`cluster`, `neighbors`), about 0.8 KB a
    /// page less. Off by default.
    #[serde(skip)]
    pub skip_records: bool,
    /// Keep of each fetch only what its page's record reads (where it ended,
    /// its status, redirects, the canonical and robots headers, its error),
    /// not the headers and inputs the run's own report lists: for `audit`,
    /// whose report shows pages, not fetches (about 0.2 KB a page less).
    /// The run's redirects are then folded ([`crate::run::Loaded::fold_redirects`])
    /// before its pages are recorded, and each record takes its fetch's
    /// strings: the fetch keeps its key, status, error and render flags.
    /// Off by default.
    #[serde(skip)]
    pub slim_fetches: bool,
    /// The memory a run may use, in bytes (`None`: no limit). A run whose
    /// pages' shingle sets would not fit keeps them in a temporary file
    /// ([`crate::spill`]); one that would not fit even so is refused before
    /// it starts ([`Config::check_memory`]). The answer is the same either way.
    #[serde(skip)]
    pub memory: Option<u64>,
}

/// What a run holds apart from its pages: the program, its thread stacks,
/// the pages in flight.
pub const BASE_BYTES: u64 = 160 << 20;
/// About what a fetched article costs a run that holds its shingle sets (and,
/// for the audit, its main text): measured at 20,000 pages.
pub const PAGE_BYTES_HELD: u64 = 24 << 10;
/// About what a page costs `cluster` when its sets and signatures are on
/// disk: its key, URL, digests, fetch record and the spill's places
/// (measured at 1,000,000 pages, `scripts/bench-million.sh`: 1.53 and 1.65
/// KB a page above a 20,000-page run, 1,700 and 1,814 MB in all, in two
/// runs; the estimate stays above both).
pub const PAGE_BYTES_SPILLED: u64 = 1800;
/// The same for a run that keeps pages' metadata for the audit
/// ([`Config::keep_pages`]): its records (made as its pages arrive), its
/// rows, and what its report holds of them (measured the same way: 1.54 KB
/// a page above a 20,000-page run, 1,778 MB in all; the estimate stays
/// above it, and lets a million-page audit run under `--memory 2G`).
pub const PAGE_BYTES_SPILLED_KEPT: u64 = 1900;

impl Config {
    /// The `webdup` tool's settings when given none, shared by the command
    /// line and the Python package: the library's defaults with site-template
    /// suppression on. Crawls hold many pages of few sites, whose navigation
    /// and footers would otherwise make thin pages of a site look alike; the
    /// library leaves it off so that a page's fingerprint depends on that
    /// page alone unless asked.
    pub fn tool() -> Config {
        let mut config = Config::default();
        config.fingerprint.template = Some(TemplateConfig::default());
        config
    }

    /// How pages are grouped into sites: the template setting's scope, else
    /// the default (as matching reads it).
    pub fn scope(&self) -> template::TemplateScope {
        self.fingerprint.template.as_ref().map_or_else(Default::default, |t| t.scope)
    }

    /// Whether local pages' sites are read from the pages
    /// ([`webdup_core::site`]): sites matter (templates are learned per
    /// site, or pairs across sites have their own rule) and local files
    /// have one.
    pub fn sites_from_pages(&self) -> bool {
        self.scope() == template::TemplateScope::HostOrDirectory
            && (self.fingerprint.template.is_some() || self.matching.cross_site_threshold.is_some())
    }

    /// Whether a run over `pages` pages keeps their shingle sets on disk:
    /// when holding them would pass [`Config::memory`].
    pub fn spills(&self, pages: u64) -> bool {
        self.memory.is_some_and(|m| BASE_BYTES.saturating_add(pages.saturating_mul(PAGE_BYTES_HELD)) > m)
    }

    /// Refuses a run over `pages` pages that would not fit in
    /// [`Config::memory`] even with its sets on disk, before any work.
    pub fn check_memory(&self, pages: u64) -> Result<()> {
        let Some(budget) = self.memory else { return Ok(()) };
        let per_page = if self.keep_pages { PAGE_BYTES_SPILLED_KEPT } else { PAGE_BYTES_SPILLED };
        let need = BASE_BYTES.saturating_add(pages.saturating_mul(per_page));
        if need > budget {
            return Err(Error::Memory(format!(
                "{pages} pages need about {} MB of memory, even with their shingle sets on disk, and the run may use {} MB: \
                 allow more with --memory, or split the inputs",
                need.div_ceil(1 << 20),
                budget >> 20
            )));
        }
        Ok(())
    }

    /// Checks ranges, the extractor and the selectors; returns the config.
    pub fn validate(mut self) -> Result<Config> {
        let f = &self.fingerprint;
        if f.shingle_size == 0 || f.shingle_size > 64 {
            return Err(Error::Config(format!("shingle size must be 1 to 64 words, not {}", f.shingle_size)));
        }
        if !(1..=4096).contains(&f.permutations) {
            return Err(Error::Config(format!("permutations must be 1 to 4096, not {}", f.permutations)));
        }
        self.extract()?;
        let m = &self.matching;
        if !(m.threshold > 0.0 && m.threshold <= 1.0) {
            return Err(Error::Config(format!("threshold must be in (0, 1], not {}", m.threshold)));
        }
        if let Some(t) = m.cross_site_threshold
            && !(t > 0.0 && t <= 1.0)
        {
            return Err(Error::Config(format!("cross-site threshold must be in (0, 1], not {t}")));
        }
        if m.max_hamming > 32 {
            return Err(Error::Config(format!("max Hamming distance must be 0 to 32, not {}", m.max_hamming)));
        }
        if m.measure == Measure::Containment && m.method == Method::SimHash {
            return Err(Error::Config(
                "containment needs MinHash candidates (method minhash or both): SimHash compares whole texts".into(),
            ));
        }
        if m.min_cluster_size < 2 {
            return Err(Error::Config("minimum cluster size must be at least 2".into()));
        }
        if let Some(t) = self.fingerprint.template.take() {
            self.fingerprint.template = Some(t.validate().map_err(Error::Config)?);
        }
        Ok(self)
    }

    /// How pages are read: the fingerprint settings' extractor and
    /// selectors, parsed, with the page budget.
    pub fn extract(&self) -> Result<ExtractConfig> {
        let f = &self.fingerprint;
        let extractor: ExtractorKind = f.extractor.parse().map_err(|e: ExtractError| Error::Config(e.to_string()))?;
        let extract = ExtractConfig { extractor, budget: self.budget, ..ExtractConfig::default() };
        extract
            .with_selectors(f.include_selector.as_deref(), f.exclude_selector.as_deref())
            .map_err(|e| Error::Config(e.to_string()))
    }

    /// How text becomes shingles: the fingerprint settings' shingling.
    pub fn shingle(&self) -> ShingleConfig {
        let f = &self.fingerprint;
        ShingleConfig { size: f.shingle_size, stopwords: f.stopwords, stem: f.stem, language: f.language }
    }

    /// The LSH banding for [`Config::lowest_threshold`], so that candidates
    /// cover both rules: what clustering and an index use.
    pub fn lsh_params(&self) -> LshParams {
        LshParams::optimal(self.lowest_threshold(), self.fingerprint.permutations)
    }

    /// The lower of the threshold and the cross-site threshold.
    pub fn lowest_threshold(&self) -> f64 {
        self.matching.lowest_threshold()
    }

    /// Both settings, as reports echo them.
    pub fn run_settings(&self) -> RunSettings {
        RunSettings { fingerprint: self.fingerprint.clone(), matching: self.matching.clone() }
    }
}

pub use webdup_core::fingerprint::Fingerprint;
pub use webdup_core::page::PageView;
pub use webdup_core::settings::{
    Difference, FINGERPRINT_SETTINGS_VERSION, FingerprintSettings, MatchSettings, RunSettings,
};

/// The settings an index records for fingerprints made with a validated config.
#[cfg(feature = "store")]
impl From<&Config> for crate::store::Settings {
    fn from(config: &Config) -> Self {
        let lsh = config.lsh_params();
        crate::store::Settings {
            fingerprint: config.fingerprint.clone(),
            threshold: config.matching.threshold,
            cross_site_threshold: config.matching.cross_site_threshold,
            bands: lsh.bands,
            rows: lsh.rows,
            assumed: Vec::new(),
        }
    }
}

#[cfg(feature = "store")]
impl crate::store::ApplySettings for Config {
    /// The config with an index's fingerprint settings in place of its own
    /// and its thresholds, validated. The rest (measure, candidate method,
    /// cluster size, page budget) is kept.
    fn apply_settings(self, settings: &crate::store::Settings) -> crate::store::Result<Config> {
        let matching = MatchSettings {
            threshold: settings.threshold,
            cross_site_threshold: settings.cross_site_threshold,
            ..self.matching
        };
        let config = Config { fingerprint: settings.fingerprint.clone(), matching, ..self };
        config.validate().map_err(|e| crate::store::Error::BadSettings(e.to_string()))
    }
}

/// Which of the settings asked for on the way to an existing index were
/// given, rather than left to their defaults: only those are differences
/// worth naming.
#[cfg(feature = "store")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Given {
    pub threshold: bool,
    pub cross_site_threshold: bool,
}

#[cfg(feature = "store")]
impl Config {
    /// The config under which an index with `stored` settings is read, and
    /// the settings asked for (this config) that the index's own replace.
    ///
    /// The index's fingerprints are only comparable under its fingerprint
    /// settings, so those always win. With `own_thresholds`, the thresholds
    /// stay as asked when given: stored shingle sets are compared exactly,
    /// so any threshold applies to them (`audit --index`); without, the
    /// index's thresholds win too. A containment threshold is not the
    /// index's Jaccard one, so it is never a difference.
    pub fn under_index(
        mut self,
        stored: &crate::store::Settings,
        given: Given,
        own_thresholds: bool,
    ) -> crate::store::Result<(Config, Vec<Difference>)> {
        let threshold = self.matching.threshold;
        let recluster = own_thresholds && given.threshold;
        if self.matching.measure == Measure::Containment || recluster {
            self.matching.threshold = stored.threshold;
        }
        let mut ours = crate::store::Settings::from(&self);
        if own_thresholds || !given.cross_site_threshold {
            // Applied as asked, or not asked for: not a difference to name.
            ours.cross_site_threshold = stored.cross_site_threshold;
        }
        let differences = stored.differences(&ours);
        let cross_site = self.matching.cross_site_threshold;
        let mut config = stored.apply(self)?;
        if own_thresholds {
            // The stored sets re-cluster under any rule for pages of two sites.
            if recluster {
                config.matching.threshold = threshold;
            }
            config.matching.cross_site_threshold = cross_site.filter(|&c| c != config.matching.threshold);
            config = config.validate().map_err(|e| crate::store::Error::BadSettings(e.to_string()))?;
        }
        Ok((config, differences))
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
    /// Local pages' sites may be other than their folders: read what their
    /// markup says of them ([`webdup_core::site`]).
    reads_sites: bool,
}

impl Fingerprinter {
    pub fn new(config: &Config) -> Self {
        Fingerprinter {
            extract: config.extract().expect("a config from Config::validate reads its extractor and selectors"),
            weighting: config.fingerprint.simhash_weighting,
            shingler: Shingler::new(config.shingle()),
            minhasher: MinHasher::new(config.fingerprint.permutations, config.fingerprint.seed),
            keep_pages: config.keep_pages,
            skip_simhash: config.skip_simhash,
            learns_templates: config.fingerprint.template.is_some(),
            reads_sites: config.sites_from_pages(),
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
        let page_digest = webdup_core::fingerprint::page_digest(&raw.body);
        // A local page only: an address names its site.
        let signals = if self.reads_sites && raw.format == Format::Html && url.is_none() {
            webdup_web::site::site_signals(&raw.body)
        } else {
            Default::default()
        };
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
        f.page_digest = Some(page_digest);
        f.signals = signals;
        if self.learns_templates
            && let Some(context) = context
        {
            // Kept as all the page shows, its main text included, so that
            // template learning can borrow it as it is.
            let mut all = webdup_core::shingle::union_sorted(&self.shingler.hashes(&context), &f.shingles);
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
    /// The text is the page: its digest is the page's too.
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
            page_digest: Some(webdup_core::fingerprint::page_digest(text)),
            minhash: Signature::default(),
            simhash,
            terms,
            context: Vec::new(),
            site: None,
            signals: Default::default(),
            template_only: false,
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

pub use webdup_core::progress::{CrawlCounts, Progress, Quiet};

/// The fingerprinted documents of a run, what their pages showed, and the
/// documents that failed.
#[derive(Debug, Default)]
pub struct Corpus {
    /// By key (input order).
    pub docs: Vec<Fingerprint>,
    /// What each fingerprinted document's page showed (its extractor's
    /// title; its metadata and main text with [`Config::keep_pages`]), by
    /// key, until a run makes its pages' records of them
    /// (`webdup::run::Loaded::finish`). Empty in an audit's run, which
    /// records each page as it arrives.
    pub pages: BTreeMap<DocKey, PageView>,
    /// By key (input order).
    pub errors: Vec<DocError>,
    /// Where the documents' shingle sets are when they are not in `docs`
    /// (a run over more pages than [`Config::memory`] holds): read them
    /// with [`Corpus::shingle_count`] and [`Corpus::find_duplicates`]'s kin.
    pub spill: Option<crate::spill::Spill>,
}

/// Where [`Corpus::fingerprint_into`] hands each page's view, with its
/// fingerprint.
pub(crate) type Shown<'a> = &'a (dyn Fn(&Fingerprint, PageView) + Sync);

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
        Corpus::fingerprint_into(items, total, load, config, progress, None)
    }

    /// [`Corpus::fingerprint_streaming`], each page's view handed to `shown`
    /// as its document is fingerprinted (before the document joins the
    /// corpus) rather than kept in [`Corpus::pages`]: a run records its
    /// pages as they arrive.
    pub(crate) fn fingerprint_into<T: Send>(
        items: impl Iterator<Item = T> + Send,
        total: u64,
        load: impl Fn(T) -> Result<RawDocument, DocError> + Sync + Send,
        config: &Config,
        progress: &dyn Progress,
        shown: Option<Shown<'_>>,
    ) -> Corpus {
        let fp = Fingerprinter::new(config);
        let spiller = crate::spill::Spiller::new(config, total);
        progress.start("fingerprint", total);
        // Each result goes straight into the corpus (sorted by key after):
        // a million results collected first would be held twice.
        let corpus = std::sync::Mutex::new(Corpus::default());
        let keep_views = !config.skip_records;
        let run = || {
            items.par_bridge().for_each(|item| {
                let r = load(item).and_then(|raw| fp.fingerprint_unsketched(raw)).and_then(|(mut f, mut page)| {
                    spiller
                        .take(&mut f, &mut page)
                        .map_err(|e| DocError::new(&f.id, f.key, DocErrorKind::Io, e.to_string()))?;
                    Ok((f, page))
                });
                if r.is_err() {
                    progress.fail(1);
                }
                progress.advance(1);
                // A view goes to `shown`, or is kept, or neither.
                let r = r.map(|(f, page)| match shown {
                    Some(shown) if keep_views => {
                        shown(&f, page);
                        (f, None)
                    }
                    _ => (f, keep_views.then_some(page)),
                });
                let Ok(mut corpus) = corpus.lock() else { return };
                match r {
                    Ok((f, page)) => {
                        if let Some(page) = page {
                            corpus.pages.insert(f.key, page);
                        }
                        corpus.docs.push(f);
                    }
                    Err(e) => corpus.errors.push(e),
                }
            })
        };
        match rayon::ThreadPoolBuilder::new().stack_size(WORKER_STACK).build() {
            Ok(pool) => pool.install(run),
            Err(_) => run(),
        };
        progress.finish();
        let mut corpus = corpus.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        corpus.spill = spiller.into_spill();
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
        if config.sites_from_pages() {
            self.assign_sites(config.scope());
        }
        if self.spill.is_some() {
            let learned = self.finish_spilled(&fp, config, known);
            self.finish_weighting(config.fingerprint.simhash_weighting);
            return learned;
        }
        let learned = match &config.fingerprint.template {
            Some(t) => self.suppress_templates(t, known),
            None => Templates::default(),
        };
        self.docs.par_iter_mut().for_each(|d| fp.sketch(d));
        self.finish_weighting(config.fingerprint.simhash_weighting);
        learned
    }

    /// Decides each page's site from what its page showed
    /// ([`webdup_core::site::assign`]); a page whose site is the one its id
    /// names keeps none of its own.
    fn assign_sites(&mut self, scope: template::TemplateScope) {
        let inputs: Vec<SiteInput> = self.docs.iter().map(|d| SiteInput { id: &d.id, signals: &d.signals }).collect();
        let sites = webdup_core::site::assign(&inputs, scope);
        drop(inputs);
        for (d, site) in self.docs.iter_mut().zip(sites) {
            d.signals = Default::default();
            d.site = site.filter(|s| Some(s) != Site::of_id(&d.id, scope).as_ref());
        }
    }

    /// Drops each site's template shingles (see [`crate::template`]).
    fn suppress_templates(&mut self, config: &TemplateConfig, known: &Templates) -> Templates {
        let sites: Vec<Option<String>> = self.docs.iter().map(|d| d.site(config.scope).map(|s| s.name)).collect();
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

    /// How many shingles a document has, wherever its set is.
    pub fn shingle_count(&self, d: &Fingerprint) -> usize {
        match self.spill.as_ref().and_then(|s| s.places(d.key)) {
            Some(p) => p.shingles.len(),
            None => d.shingles.len(),
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
/// rayon's pool; `stats.documents` counts the failed documents too). Sets
/// kept on disk are read back for the candidate pairs; an error only when
/// they cannot be.
pub fn find_duplicates(corpus: &Corpus, config: &Config) -> Result<Clustering> {
    let mut clustering = match &corpus.spill {
        None => dedup::find_duplicates(&Threads, &corpus.docs, &config.matching, &config.fingerprint),
        Some(spill) => {
            let sets = spill.sets(&corpus.docs);
            dedup::find_duplicates_in(&Threads, &corpus.docs, &sets, &config.matching, &config.fingerprint)
                .map_err(|e| Error::Scratch(e.to_string()))?
        }
    };
    clustering.stats.documents = corpus.len();
    Ok(clustering)
}

/// For each document, up to `top` others whose exact [`Config::measure`]
/// is at least `floor`, most similar first (ties to the lower key), in the
/// order of `corpus.docs`.
pub fn neighbors(corpus: &Corpus, config: &Config, floor: f64, top: usize) -> Result<Vec<Vec<Neighbor>>> {
    match &corpus.spill {
        None => Ok(dedup::neighbors(&Threads, &corpus.docs, &config.matching, &config.fingerprint, floor, top)),
        Some(spill) => {
            let sets = spill.sets(&corpus.docs);
            dedup::neighbors_in(&Threads, &corpus.docs, &sets, &config.matching, &config.fingerprint, floor, top)
                .map_err(|e| Error::Scratch(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Format, RawDocument};
    use crate::verify::Overlap;

    #[test]
    fn a_budget_spills_what_does_not_fit_and_refuses_what_never_can() {
        let config = |memory| Config { memory: Some(memory), ..Config::tool() };
        assert!(!Config::tool().spills(u64::MAX) && Config::tool().check_memory(u64::MAX).is_ok(), "no budget");
        let two_gb = config(2 << 30);
        assert!(!two_gb.spills(20_000), "20,000 pages fit held in 2 GB");
        assert!(two_gb.spills(200_000));
        assert!(two_gb.check_memory(1_000_000).is_ok(), "a million fit spilled");
        let err = two_gb.check_memory(5_000_000).unwrap_err().to_string();
        assert!(err.contains("5000000 pages need about") && err.contains("--memory"), "{err}");
        let audit = Config { keep_pages: true, ..config(1 << 30) };
        assert!(
            audit.check_memory(350_000).is_ok() && audit.check_memory(600_000).is_err(),
            "an audit costs more a page"
        );
    }

    #[test]
    fn the_tool_config_is_the_library_one_with_templates_on() {
        let tool = Config::tool().validate().unwrap();
        assert_eq!(tool.fingerprint.template, Some(TemplateConfig::default()));
        let library = Config::default().validate().unwrap();
        assert_eq!(
            Config { fingerprint: FingerprintSettings { template: None, ..tool.fingerprint }, ..tool }.run_settings(),
            library.run_settings()
        );
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
            find_duplicates(&corpus, config).unwrap().clusters.len() == 1
        };
        assert!(clustered("https://a.example/story", "https://b.example/copy", &config));
        assert!(!clustered("https://a.example/story", "https://a.example/copy", &config));
        assert!(clustered("site-a/story.txt", "site-b/copy.txt", &config));
        assert!(!clustered("site-a/story.txt", "site-a/copy.txt", &config));
        let mut one_rule = config.clone();
        one_rule.matching.cross_site_threshold = None;
        assert!(!clustered("https://a.example/story", "https://b.example/copy", &one_rule));
    }
}
