//! From the user's inputs to a fingerprinted corpus: what every command,
//! a crawler and (later) the Python package share.
//!
//! Inputs are expanded once (sitemaps over HTTP, list files, directories,
//! duplicates dropped), local files are read and URLs fetched with one
//! [`Fetcher`] for the whole run (robots.txt read once per site), and every
//! document is fingerprinted as it arrives. Pages stream from the fetcher
//! into fingerprinting, and from a web archive (WARC, WARC.gz) record by
//! record as they are read, so only the documents in flight are held.
//!
//! ```
//! use webdup::engine::{Config, Quiet};
//! use webdup::run::{Run, RunConfig};
//! use webdup::template::Templates;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let text = "the harbour office posts the winter ferry timetable every monday morning by the window";
//! std::fs::write(dir.path().join("a.txt"), text).unwrap();
//! std::fs::write(dir.path().join("b.txt"), text).unwrap();
//! let config = Config::default().validate().unwrap();
//! let mut run = Run::new(RunConfig::default());
//! let inputs = [dir.path().display().to_string()];
//! let loaded = run.load_all(&inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet).unwrap();
//! assert_eq!(loaded.corpus.docs.len(), 2);
//! assert_eq!(loaded.corpus.docs[0].digest, loaded.corpus.docs[1].digest);
//! ```

mod pages;

use std::io::BufRead;

use crate::crawl::{CrawlConfig, CrawlSummary, KeyPlan};
use webdup_core::page::PageView;

use crate::engine::{Config, Corpus, CrawlCounts, Progress, Quiet};
use crate::error::{DocError, DocErrorKind, Error, Result};
use crate::extract::{ExtractConfig, ExtractedPage};
use crate::fetch::{FetchConfig, FetchFlags, FetchOutcome, FetchRecord, Fetcher, sitemap};
pub use crate::report::Redirected;
use crate::source::{self, Collected, DocKey, InputOptions, Location, RawDocument, ReadLimits, Source};
use crate::template::Templates;
use pages::Fetches;
pub use pages::RunPage;

/// How a run reads and fetches.
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    pub fetch: FetchConfig,
    pub limits: ReadLimits,
    /// How inputs are expanded: whether a walk follows symbolic links out
    /// of the directory named (not by default).
    pub inputs: InputOptions,
    /// Follow links from the URL inputs ([`Run::load_all`] only): each is a
    /// start page, and the pages reached within the scope are loaded too.
    pub follow: Option<CrawlConfig>,
}

/// A run's documents, its pages as recorded and, for URLs and the pages of
/// web archives, what fetching them recorded (in input order).
#[derive(Debug, Default)]
pub struct Loaded {
    pub corpus: Corpus,
    /// Every page of the run by key (input order), with what its fetch
    /// answered and its markup said: filled by [`Loaded::finish`] (which
    /// [`Run::load_all`] runs; not with [`Config::skip_records`]) and kept
    /// in step by [`Loaded::fold_redirects`]. An audit's run
    /// ([`Config::slim_fetches`]) records its fingerprinted pages as they
    /// arrive: they are here as loading ends, their content's sizes to come.
    pub pages: Vec<RunPage>,
    pub fetches: Vec<FetchRecord>,
    /// What is left of the fetches whose pages' records took the rest of
    /// them, by key: an audit's run records each page as it arrives
    /// ([`Config::slim_fetches`]), and keeps whole only the fetches that
    /// failed or redirected, in `fetches`. [`Loaded::fetch_flags`] reads both.
    pub answered: Vec<FetchFlags>,
    /// Inputs folded into another input's page by [`Loaded::fold_redirects`].
    pub redirected: Vec<Redirected>,
    /// What the records of the run's web archives gave: pages, failures,
    /// and the records passed over by reason. Empty without an archive.
    #[cfg(feature = "warc")]
    pub warc: crate::warc::Summary,
    /// What following links did (with [`RunConfig::follow`]): traps, links
    /// not followed and why, the internal links.
    pub crawl: Option<CrawlSummary>,
    /// The markup of the fetched pages and web-archive records, with
    /// [`Config::keep_markup`] (empty without): for the audit's markup diffs.
    pub markup: crate::audit::markup::Spill,
    /// Whether [`Loaded::fold_redirects`] ran (an audit's run folds before
    /// it records its pages): a second call does nothing.
    pub folded: bool,
}

/// One run over the user's inputs; keeps its fetcher between calls.
pub struct Run {
    config: RunConfig,
    fetcher: Option<Fetcher>,
}

impl Run {
    pub fn new(config: RunConfig) -> Run {
        Run { config, fetcher: None }
    }

    /// Expands `inputs`, loads and fingerprints every document, and runs
    /// the corpus-wide stages ([`Corpus::finish`], with `known` templates
    /// for sites too small in this run to learn their own). Inputs that
    /// name nothing are errors of the corpus, after its documents. `-`
    /// reads a list from `stdin`.
    pub fn load_all(
        &mut self,
        inputs: &[String],
        stdin: &mut dyn BufRead,
        config: &Config,
        known: &Templates,
        progress: &dyn Progress,
    ) -> Result<Loaded> {
        let expanded = self.expand(inputs, stdin)?;
        // Pages named, and the most a crawl may add: a run that could not
        // fit is refused now, not killed later. (An archive's records are
        // not counted: its size says little of them.)
        let named = expanded.sources.iter().filter(|s| !s.is_warc()).count() as u64;
        let crawled = self.config.follow.as_ref().and_then(|f| f.limits.max_pages).unwrap_or(0);
        config.check_memory(named.saturating_add(crawled))?;
        let keys = expanded.next_keys();
        let Collected { sources, errors, listed } = expanded;
        let mut loaded = self.load_listed(sources, keys, listed, config, progress)?;
        // Keyed after every source by `expand` (see `Collected`).
        loaded.corpus.add_errors(errors);
        loaded.finish(config, known);
        Ok(loaded)
    }

    /// The user's inputs as documents to load: sitemaps expanded (over
    /// HTTP when remote), lists and directories walked, duplicates dropped.
    /// One rule for every command: what `cluster` treats as a document,
    /// `index add` does too. Errors are inputs that could not be expanded;
    /// [`Error::NoDocuments`] when nothing at all was found. Every source
    /// and error is keyed here, once ([`Collected`] says how). When links
    /// are followed, the sitemaps' URLs are start pages and are recorded as
    /// [`Collected::listed`] too.
    pub fn expand(&mut self, inputs: &[String], stdin: &mut dyn BufRead) -> Result<Collected> {
        let mut expanded: Vec<String> = Vec::with_capacity(inputs.len());
        let mut sitemap_errors: Vec<DocError> = Vec::new();
        let mut listed: Option<Vec<Box<str>>> = None;
        for input in inputs {
            if sitemap::looks_like_sitemap(input) {
                let expansion = sitemap::expand(input, self.fetcher()?);
                if let Some(follow) = &self.config.follow {
                    let urls = expansion.urls.iter().map(String::as_str);
                    listed.get_or_insert_default().extend(crate::crawl::listed(urls, follow.limits.keep_query));
                }
                expanded.extend(expansion.urls);
                sitemap_errors.extend(expansion.errors);
            } else {
                expanded.push(input.clone());
            }
        }
        let mut collected = source::collect_with(&expanded, stdin, self.config.inputs);
        if collected.is_empty() && sitemap_errors.is_empty() {
            return Err(Error::NoDocuments);
        }
        for e in sitemap_errors {
            collected.push_error(e);
        }
        collected.listed = listed.map(|mut l| {
            l.sort_unstable();
            l.dedup();
            l
        });
        Ok(collected)
    }

    /// Reads local files and fetches URLs, fingerprinting every document as
    /// it arrives. The corpus-wide stages, and with them the pages' records,
    /// are the caller's: [`Loaded::finish`]. While pages stream in from the fetcher, progress
    /// is reported as the `fetch` stage: fetching is what the user waits for.
    ///
    /// `sources` may be any of the sources [`Run::expand`] gave, in any
    /// order (a task of N loads every N-th): they keep the keys given there,
    /// and a web archive's records are keyed from its source's key, so each
    /// document has the key the whole run would give it. An archive's pages
    /// come with the [`FetchRecord`] of their recorded exchange.
    pub fn load(&mut self, sources: Vec<Source>, config: &Config, progress: &dyn Progress) -> Result<Loaded> {
        self.load_keyed(sources, None, config, progress)
    }

    /// [`Run::load`] of a whole run's sources, as [`Run::expand`] gave
    /// them: with [`RunConfig::follow`], URL sources are start pages, the
    /// pages reached are loaded too, and the crawl's summary says which
    /// URLs the sitemaps listed. The inputs that could not be expanded
    /// ([`Collected::errors`]) are the caller's: they are not loaded.
    pub fn load_following(&mut self, collected: Collected, config: &Config, progress: &dyn Progress) -> Result<Loaded> {
        let keys = collected.next_keys();
        self.load_listed(collected.sources, keys, collected.listed, config, progress)
    }

    fn load_listed(
        &mut self,
        sources: Vec<Source>,
        keys: KeyPlan,
        listed: Option<Vec<Box<str>>>,
        config: &Config,
        progress: &dyn Progress,
    ) -> Result<Loaded> {
        let mut loaded = self.load_keyed(sources, Some(keys), config, progress)?;
        if let Some(crawl) = &mut loaded.crawl {
            crawl.listed = listed;
        }
        Ok(loaded)
    }

    fn load_keyed(
        &mut self,
        sources: Vec<Source>,
        crawl_keys: Option<KeyPlan>,
        config: &Config,
        progress: &dyn Progress,
    ) -> Result<Loaded> {
        let limits = self.config.limits;
        let follow = self.config.follow.clone().zip(crawl_keys);
        let mut crawl = None;
        let total = sources.len() as u64;
        let (urls, files): (Vec<Source>, Vec<Source>) =
            sources.into_iter().partition(|s| matches!(s.location, Location::Url(_)));
        let fetches = Fetches::new(config, total);
        #[cfg(feature = "warc")]
        let mut summary = crate::warc::Summary::default();
        let markup = crate::audit::markup::Spill::new(config.keep_markup, limits);
        // A fetched page or an archive's record cannot be read again: its
        // markup is kept as it arrives. A local file is read again.
        let load = |p| match p {
            Pending::File(s) => read(s, limits),
            Pending::Ready(doc) => {
                if let Ok(d) = &doc {
                    markup.keep(d);
                }
                doc
            }
        };
        let local = Local {
            files: files.into_iter(),
            #[cfg(feature = "warc")]
            limits,
            #[cfg(feature = "warc")]
            archive: None,
            #[cfg(feature = "warc")]
            summary: &mut summary,
            fetches: &fetches,
        };
        let recorder = |f: &crate::engine::Fingerprint, page: PageView| fetches.record(f, page);
        let shown: Option<crate::engine::Shown<'_>> = fetches.recording.then_some(&recorder);
        let corpus = if urls.is_empty() {
            Corpus::fingerprint_into(local, total, load, config, progress, shown)
        } else {
            let f = self.fetcher()?;
            let progress = Renamed { inner: progress, stage: "fetch" };
            let (tx, rx) = std::sync::mpsc::sync_channel::<(FetchRecord, Result<RawDocument, DocError>)>(64);
            std::thread::scope(|scope| {
                let crawl = &mut crawl;
                let growth = Growth(&progress);
                let fetching = scope.spawn(move || {
                    // The receiver only goes away if fingerprinting panicked.
                    let send = |outcome: FetchOutcome| {
                        let _ = tx.send(outcome.into_parts());
                    };
                    match follow {
                        Some((c, keys)) => *crawl = Some(f.crawl(urls, &c, keys, &growth, send)),
                        None => f.for_each(urls, &Quiet, send),
                    }
                });
                let fetches = &fetches;
                let items = local.chain(rx.into_iter().map(|(record, doc)| {
                    fetches.arrived(record);
                    Pending::Ready(doc)
                }));
                let corpus = Corpus::fingerprint_into(items, total, load, config, &progress, shown);
                let _ = fetching.join();
                corpus
            })
        };
        let (fetches, answered, pages) = fetches.into_parts();
        Ok(Loaded {
            corpus,
            pages,
            fetches,
            answered,
            redirected: Vec::new(),
            #[cfg(feature = "warc")]
            warc: summary,
            crawl,
            markup,
            folded: false,
        })
    }

    /// Each page's main text and metadata, in input order: `webdup
    /// extract` as a library call. `pages` are paths or URLs, read or
    /// fetched as a run does; `url` is the address of a single local page
    /// (for its relative canonical). A page that fails, is not HTML, or
    /// keeps no word is an error of its own, never the others'.
    pub fn extract(
        &mut self,
        pages: &[String],
        url: Option<&str>,
        config: &ExtractConfig,
    ) -> Result<Vec<std::result::Result<ExtractedPage, DocError>>> {
        if url.is_some() && pages.len() != 1 {
            return Err(Error::Config(format!("a page URL applies to a single page; {} were given", pages.len())));
        }
        let limits = self.config.limits;
        let sources = pages.iter().enumerate().map(|(n, p)| Source {
            id: p.clone(),
            key: DocKey::at(n),
            location: if source::is_url(p) { Location::Url(p.clone()) } else { Location::File(p.into()) },
        });
        let (urls, files): (Vec<Source>, Vec<Source>) = sources.partition(|s| matches!(s.location, Location::Url(_)));
        let mut docs: Vec<(std::result::Result<RawDocument, DocError>, Option<String>)> =
            files.into_iter().map(|s| (read_page(s, limits), url.map(str::to_string))).collect();
        if !urls.is_empty() {
            for outcome in self.fetcher()?.fetch_all(urls, &Quiet) {
                let final_url = outcome.record.final_url.clone();
                docs.push((outcome.into_document(), final_url));
            }
        }
        docs.sort_by_key(|(d, _)| match d {
            Ok(d) => d.key,
            Err(e) => e.key,
        });
        let one = |(doc, page_url): (std::result::Result<RawDocument, DocError>, Option<String>)| {
            let d = doc?;
            let page = match d.format {
                source::Format::Html => crate::extract::extract_page(&d.body, page_url.as_deref(), config)
                    .map_err(|e| DocError::new(&d.id, d.key, e.doc_kind(), e.to_string()))?,
                source::Format::Text => {
                    return Err(DocError::new(
                        &d.id,
                        d.key,
                        DocErrorKind::NoText,
                        "not an HTML page: there is nothing to extract",
                    ));
                }
            };
            // A page without a word is as useless as a failed one.
            if page.word_count == 0 {
                return Err(DocError::new(&d.id, d.key, DocErrorKind::NoText, "no words left after extraction"));
            }
            Ok(page)
        };
        // Extraction recurses over the DOM: give it the engine's stack size.
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(crate::extract::EXTRACT_STACK)
                .spawn_scoped(scope, || docs.into_iter().map(one).collect::<Vec<_>>())
                .map_err(|e| Error::Config(format!("cannot start an extraction thread: {e}")))?
                .join()
                .map_err(|_| Error::Config("internal: page extraction panicked".into()))
        })
    }

    /// The run's fetcher, built on first use.
    fn fetcher(&mut self) -> Result<&Fetcher> {
        if self.fetcher.is_none() {
            self.fetcher = Some(Fetcher::new(self.config.fetch.clone())?);
        }
        Ok(self.fetcher.as_ref().expect("just set"))
    }
}

/// A document on its way to fingerprinting.
enum Pending {
    /// A local file, read by the fingerprinting worker.
    File(Source),
    /// Read, fetched or failed already.
    Ready(std::result::Result<RawDocument, DocError>),
}

/// The local sources as documents on their way to fingerprinting: a file
/// is one, read by a fingerprinting worker; a web archive is its pages,
/// read record by record as fingerprinting asks for more.
struct Local<'a> {
    files: std::vec::IntoIter<Source>,
    #[cfg(feature = "warc")]
    limits: ReadLimits,
    #[cfg(feature = "warc")]
    archive: Option<crate::warc::Archive>,
    /// What the run's web archives gave: pages, failures, records passed over.
    #[cfg(feature = "warc")]
    summary: &'a mut crate::warc::Summary,
    #[cfg_attr(not(feature = "warc"), allow(dead_code))]
    fetches: &'a Fetches,
}

impl Iterator for Local<'_> {
    type Item = Pending;

    #[cfg(feature = "warc")]
    fn next(&mut self) -> Option<Pending> {
        use crate::warc::{Archive, Entry};
        loop {
            if let Some(archive) = &mut self.archive {
                let Some(entry) = archive.next() else {
                    self.archive = None;
                    continue;
                };
                self.summary.count(&entry);
                match entry {
                    Entry::Page(outcome) => {
                        let (record, doc) = outcome.into_parts();
                        self.fetches.arrived(record);
                        return Some(Pending::Ready(doc));
                    }
                    Entry::Failed(e) => return Some(Pending::Ready(Err(e))),
                    Entry::Skipped(_) => continue,
                }
            }
            let s = self.files.next()?;
            if !s.is_warc() {
                return Some(Pending::File(s));
            }
            self.summary.archives += 1;
            match Archive::open(&s, self.limits) {
                Ok(archive) => self.archive = Some(archive),
                Err(e) => return Some(Pending::Ready(Err(e))),
            }
        }
    }

    #[cfg(not(feature = "warc"))]
    fn next(&mut self) -> Option<Pending> {
        let s = self.files.next()?;
        if !s.is_warc() {
            return Some(Pending::File(s));
        }
        let why = "a web archive; this build of webdup reads none (its `warc` feature is off)";
        Some(Pending::Ready(Err(DocError::new(&s.id, s.key, DocErrorKind::Io, why))))
    }
}

fn read(s: Source, limits: ReadLimits) -> std::result::Result<RawDocument, DocError> {
    match &s.location {
        Location::File(path) => source::read_file(&s, path, limits),
        Location::Url(_) => {
            Err(DocError::new(&s.id, s.key, DocErrorKind::Fetch, "internal: URL reached the file reader"))
        }
    }
}

/// A local file as one page: a web archive holds many, and is refused.
fn read_page(s: Source, limits: ReadLimits) -> std::result::Result<RawDocument, DocError> {
    if s.is_warc() {
        let why = "a web archive (WARC), not a page: `cluster`, `audit` and `index add` read its pages";
        return Err(DocError::new(&s.id, s.key, DocErrorKind::NoText, why));
    }
    read(s, limits)
}

/// Progress reported under another stage's name.
struct Renamed<'a> {
    inner: &'a dyn Progress,
    stage: &'static str,
}

impl Progress for Renamed<'_> {
    fn start(&self, _stage: &'static str, total: u64) {
        self.inner.start(self.stage, total);
    }
    fn advance(&self, n: u64) {
        self.inner.advance(n);
    }
    fn fail(&self, n: u64) {
        self.inner.fail(n);
    }
    fn grow(&self, total: u64) {
        self.inner.grow(total);
    }
    fn crawled(&self, counts: CrawlCounts) {
        self.inner.crawled(counts);
    }
    fn finish(&self) {
        self.inner.finish();
    }
}

/// A crawl's growing total and its counts, reported to the stage that
/// counts its pages as they are fingerprinted.
struct Growth<'a>(&'a dyn Progress);

impl Progress for Growth<'_> {
    fn grow(&self, total: u64) {
        self.0.grow(total);
    }
    fn crawled(&self, counts: CrawlCounts) {
        self.0.crawled(counts);
    }
}

/// A run's duplicates, as `webdup cluster` reports them.
pub struct Clustered {
    /// The documents, after redirects were folded.
    pub corpus: Corpus,
    pub clustering: crate::engine::Clustering,
    pub report: crate::report::ClusterReport,
}

/// What `webdup cluster` does with a loaded run: one page per final URL
/// ([`Loaded::fold_redirects`]), duplicates found, and the report with the
/// run's fetches, redirects and web-archive summary.
pub fn cluster(mut loaded: Loaded, config: &Config) -> Result<Clustered> {
    loaded.fold_redirects();
    let Loaded { corpus, fetches, redirected, .. } = loaded;
    let clustering = crate::engine::find_duplicates(&corpus, config)?;
    let mut report = crate::report::ClusterReport::new(&corpus, &clustering, config);
    report.fetches = fetches;
    report.redirected = redirected;
    #[cfg(feature = "warc")]
    {
        report.warc = loaded.warc;
    }
    Ok(Clustered { corpus, clustering, report })
}
