//! What a crawler hands the index, page by page or in batches: the page's
//! URL, its HTML (or text), and what the crawler saw of the exchange. One
//! entrance for every crawler front end (the HTTP API, the Python package),
//! so a page is fingerprinted, checked and stored alike whichever way it
//! came.
//!
//! ```
//! use std::sync::Arc;
//! use webdup::engine::Config;
//! use webdup::store::Index;
//! use webdup::crawler::{CrawledPage, Crawler};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let config = Config::default().validate().unwrap();
//! let index = Arc::new(Index::open(dir.path().join("webdup.db"), &config).unwrap());
//! let crawler = Crawler::new(index, &config, "monday");
//! let html = "<html><body><article><p>The river path was restored this spring with new gravel, \
//!             benches along the bank and lamps every fifty metres.</p></article></body></html>";
//! let first = crawler.check_and_insert(&CrawledPage::html("https://example.com/a", html)).unwrap();
//! assert!(first.result.seen() == false);
//! let again = crawler.check_and_insert(&CrawledPage::html("https://example.com/b", html)).unwrap();
//! assert_eq!(again.result.identical[0].url, "https://example.com/a");
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;

use crate::engine::{Config, Fingerprint, Fingerprinter};
use crate::fetch::Hop;
#[cfg(feature = "http")]
use crate::fetch::{FetchConfig, Fetcher};
use crate::source::{DocKey, Format, RawDocument};
use crate::store::{CheckResult, Error as IndexError, Index, Page, Unsuppressed};
use webdup_core::page::{Exchange, PageView};

/// Longest `url`, `final_url` or `canonical` a [`CrawledPage`] may have, in
/// bytes: every stored URL can then be asked for again in a request line
/// (`GET /v1/pages?url=`), percent-encoded.
pub const MAX_URL_BYTES: usize = 8192;

/// Longest crawl name, in bytes.
pub const MAX_CRAWL_BYTES: usize = 256;

/// A page as a crawler saw it. Exactly one of `html` and `text` is given.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawledPage {
    /// The URL the crawler asked for.
    pub url: String,
    pub html: Option<String>,
    /// Main text, when the crawler extracted it itself.
    pub text: Option<String>,
    /// The crawl to record the page in; the [`Crawler`]'s default otherwise.
    pub crawl: Option<String>,
    /// The URL that answered, after redirects; relative links in the HTML
    /// (`rel=canonical`) resolve against it.
    pub final_url: Option<String>,
    pub status: Option<u16>,
    /// The responses before the final one, when the URL redirected.
    #[serde(default)]
    pub redirects: Vec<Hop>,
    /// The target of a `Link: <...>; rel="canonical"` header.
    pub canonical: Option<String>,
    /// A title to keep in place of the page's own.
    pub title: Option<String>,
    /// `html` is already the DOM a browser left (rendered by
    /// [`Crawler::render`], or by the crawler's own browser): a crawler that
    /// renders pages ([`Crawler::with_render`]) does not render it again.
    /// Not a field of the HTTP API's pages.
    #[serde(skip)]
    pub rendered: bool,
}

impl CrawledPage {
    /// A page given as HTML.
    pub fn html(url: impl Into<String>, html: impl Into<String>) -> CrawledPage {
        CrawledPage { url: url.into(), html: Some(html.into()), ..CrawledPage::default() }
    }

    /// A page given as its main text.
    pub fn text(url: impl Into<String>, text: impl Into<String>) -> CrawledPage {
        CrawledPage { url: url.into(), text: Some(text.into()), ..CrawledPage::default() }
    }

    /// Refuses a page without a URL, with both or neither of HTML and text,
    /// with a URL over [`MAX_URL_BYTES`] or a crawl name over
    /// [`MAX_CRAWL_BYTES`], or with a control character (NUL, a line break...)
    /// in its URLs or crawl name, naming the field.
    pub fn validate(&self) -> Result<(), PageError> {
        if self.url.trim().is_empty() {
            return Err(PageError::Invalid("\"url\" must not be empty".into()));
        }
        let fields = [
            ("url", Some(&self.url), MAX_URL_BYTES),
            ("final_url", self.final_url.as_ref(), MAX_URL_BYTES),
            ("canonical", self.canonical.as_ref(), MAX_URL_BYTES),
            ("crawl", self.crawl.as_ref(), MAX_CRAWL_BYTES),
        ];
        for (field, value, limit) in fields {
            let Some(value) = value else { continue };
            if value.len() > limit {
                return Err(PageError::Invalid(format!(
                    "\"{field}\" is {} bytes long; at most {limit} are taken",
                    value.len()
                )));
            }
            if let Some(c) = value.chars().find(|c| c.is_control()) {
                return Err(PageError::Invalid(format!("\"{field}\" contains the control character {c:?}")));
            }
        }
        if self.html.is_some() == self.text.is_some() {
            return Err(PageError::Invalid(format!("{}: give exactly one of \"html\" and \"text\"", self.url)));
        }
        if self.crawl.as_deref().is_some_and(str::is_empty) {
            return Err(PageError::Invalid("\"crawl\" must not be empty (leave it out for the default)".into()));
        }
        Ok(())
    }
}

/// Why a crawled page could not be checked or stored.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// The page as given is not usable (no URL, both HTML and text...).
    #[error("invalid page: {0}")]
    Invalid(String),
    /// Its content gave no fingerprint (too deep, too large, no text...).
    #[error("{url}: [{kind}] {message}")]
    Content { url: String, kind: String, message: String },
    /// The index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// The answer for one page of [`Crawler::check_and_insert`].
#[derive(Debug, Clone)]
pub struct Checked {
    /// What the index held before this page.
    pub result: CheckResult,
    /// The row id the page was stored under.
    pub id: i64,
    /// The crawl it was stored in.
    pub crawl: String,
}

/// An index with the fingerprinter its pages are made with and, when it
/// renders pages ([`Crawler::with_render`]), the fetcher that renders them.
pub struct Crawler {
    index: Arc<Index>,
    fingerprinter: Fingerprinter,
    default_crawl: String,
    /// Renders pages' HTML and fetches what their scripts ask for.
    #[cfg(feature = "http")]
    renderer: Option<Fetcher>,
}

impl Crawler {
    /// Pages are fingerprinted with `config` (which must match the index's
    /// settings: open the index with it) and, unless they name one, stored
    /// in crawl `default_crawl`. They keep their metadata and main text, as
    /// `index add` stores them.
    pub fn new(index: Arc<Index>, config: &Config, default_crawl: impl Into<String>) -> Crawler {
        Crawler {
            index,
            fingerprinter: Fingerprinter::new(&Config { keep_pages: true, ..config.clone() }),
            default_crawl: default_crawl.into(),
            #[cfg(feature = "http")]
            renderer: None,
        }
    }

    /// Renders each page's HTML in a headless Chromium before it is
    /// fingerprinted, as `--render` renders fetched pages
    /// ([`crate::render`]): every page with [`crate::render::RenderMode::On`],
    /// those that look client-rendered with `Auto`, none with `Off`. The
    /// scripts, XHR and stylesheets the pages ask for are fetched by a
    /// fetcher built from `fetch` (its address policy, robots.txt, delay,
    /// user agent); the settings of the render step are `fetch.render`.
    /// Fails before any page when they are unusable, Chromium among them
    /// (the message says how to install it). Every check and store then
    /// renders (single pages and batches alike), and a page that cannot
    /// be rendered fails alone ([`Crawler::render`]). Must not be called
    /// from inside an async runtime.
    #[cfg(feature = "http")]
    pub fn with_render(mut self, fetch: FetchConfig) -> crate::Result<Crawler> {
        let fetch = fetch.validate()?;
        self.renderer = match fetch.render.mode {
            crate::render::RenderMode::Off => None,
            _ => Some(Fetcher::new(fetch)?),
        };
        Ok(self)
    }

    /// Whether pages are rendered before they are fingerprinted.
    pub fn renders(&self) -> bool {
        #[cfg(feature = "http")]
        let renders = self.renderer.is_some();
        #[cfg(not(feature = "http"))]
        let renders = false;
        renders
    }

    /// `page` as it is fingerprinted: its HTML rendered when this crawler
    /// renders pages ([`Crawler::with_render`]) and the render step takes it
    /// (HTML, not yet [`CrawledPage::rendered`]; with `auto`, a page that
    /// looks client-rendered), with `rendered` set; otherwise `page` itself.
    /// Rendered at the page's `final_url` when it has one, its own origin
    /// trusted as one the user named. A page that cannot be rendered is a
    /// [`PageError::Content`] of kind `render`.
    pub fn render<'a>(&self, page: &'a CrawledPage) -> Result<Cow<'a, CrawledPage>, PageError> {
        #[cfg(feature = "http")]
        if let (Some(fetcher), Some(html), false) = (&self.renderer, &page.html, page.rendered) {
            page.validate()?;
            let at = page.final_url.as_deref().unwrap_or(&page.url);
            let done = fetcher.render(at, html.clone()).map_err(|e| PageError::Content {
                url: page.url.clone(),
                kind: e.kind.to_string(),
                message: e.message,
            })?;
            if done.rendered {
                return Ok(Cow::Owned(CrawledPage { html: Some(done.html), rendered: true, ..page.clone() }));
            }
        }
        Ok(Cow::Borrowed(page))
    }

    /// [`Crawler::render`] for several pages, in parallel (rayon; the
    /// fetcher's tabs bound how many render at once); the first failure in
    /// page order, with its position, fails the batch.
    pub fn render_batch<'a>(&self, pages: &'a [CrawledPage]) -> Result<Vec<Cow<'a, CrawledPage>>, (usize, PageError)> {
        in_parallel(pages, |p| self.render(p))
    }

    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// The crawl pages go to when they name none.
    pub fn default_crawl(&self) -> &str {
        &self.default_crawl
    }

    /// The page's fingerprint: extraction with the page's own metadata (as
    /// `index add`), its site's template as the index learned it, then the
    /// sketches.
    pub fn fingerprint(&self, page: &CrawledPage) -> Result<Fingerprint, PageError> {
        Ok(self.fingerprint_learning(page, false)?.0)
    }

    /// [`Crawler::fingerprint`], with (when `learning`, and the index
    /// suppresses templates) the fingerprint as it was before the site's
    /// template was dropped: the index learns the site's template from it
    /// ([`Page::with_unsuppressed`]). A check stores nothing and skips it.
    fn fingerprint_learning(
        &self,
        page: &CrawledPage,
        learning: bool,
    ) -> Result<(Fingerprint, PageView, Option<Unsuppressed>), PageError> {
        page.validate()?;
        let page = &*self.render(page)?;
        let (mut fp, shown) = match (&page.html, &page.text) {
            // The page budget (depth, elements, attributes) is checked by
            // the extractor itself, before any parser runs.
            (Some(html), _) => self
                .fingerprinter
                .fingerprint_unsketched(RawDocument {
                    id: page.url.clone(),
                    key: DocKey(0),
                    format: Format::Html,
                    body: html.clone(),
                    url: page.final_url.clone(),
                })
                .map_err(|e| PageError::Content {
                    url: page.url.clone(),
                    kind: e.kind.to_string(),
                    message: e.message,
                })?,
            (None, Some(text)) => {
                let fp = self.fingerprinter.shingle_text(page.url.clone(), DocKey(0), text).map_err(|e| {
                    PageError::Content { url: page.url.clone(), kind: "text".into(), message: e.to_string() }
                })?;
                // Stored with the page, for the diff view of `audit --index`.
                (fp, PageView { text: Some(text.clone()), ..PageView::default() })
            }
            (None, None) => unreachable!("checked by validate"),
        };
        let template = self.index.site_template(&page.url)?;
        let learns = learning && self.index.settings().fingerprint.template.is_some();
        let before = learns.then(|| Unsuppressed::of(&fp, template.as_ref().map(|t| t.id)));
        self.fingerprinter.finish_alone(&mut fp, template.as_ref().map(|t| t.shingles.as_slice()));
        Ok((fp, shown, before))
    }

    /// The row to store for `page`: [`Crawler::record`], with the
    /// fingerprint before the site's template was dropped, from which the
    /// index learns the site's template as its pages arrive
    /// ([`Page::with_unsuppressed`]). Always has a fingerprint.
    pub fn row(&self, page: &CrawledPage) -> Result<Page, PageError> {
        let (fp, shown, before) = self.fingerprint_learning(page, true)?;
        Ok(self.record_learning(page, fp, shown, before))
    }

    /// The row to store for `page`, from which the index learns nothing:
    /// its fingerprint ([`Crawler::fingerprint`]) and its record, what the
    /// crawler saw of the exchange merged with the page's own markup by the
    /// one rule (the page's `<link rel=canonical>` wins over the header),
    /// with the crawler's title, when it gave one, in place of the page's.
    pub fn record(&self, page: &CrawledPage) -> Result<Page, PageError> {
        let (fp, shown, _) = self.fingerprint_learning(page, false)?;
        Ok(self.record_learning(page, fp, shown, None))
    }

    fn record_learning(
        &self,
        page: &CrawledPage,
        fingerprint: Fingerprint,
        shown: PageView,
        before: Option<Unsuppressed>,
    ) -> Page {
        let exchange = Exchange {
            final_url: page.final_url.clone(),
            status: page.status,
            redirects: page.redirects.clone(),
            link_canonical: page.canonical.clone(),
            ..Default::default()
        };
        let mut row = Page::observed(self.crawl_of(page), page.url.clone(), fingerprint, Some(shown), Some(&exchange));
        if page.title.is_some() {
            row.record.meta.title = page.title.clone();
        }
        match before {
            Some(before) => row.with_unsuppressed(before),
            None => row,
        }
    }

    fn crawl_of(&self, page: &CrawledPage) -> String {
        page.crawl.clone().unwrap_or_else(|| self.default_crawl.clone())
    }

    /// What the index holds like `page`.
    pub fn check(&self, page: &CrawledPage) -> Result<CheckResult, PageError> {
        Ok(self.index.check(&self.fingerprint(page)?)?)
    }

    /// Stores `page`; returns its row id.
    pub fn insert(&self, page: &CrawledPage) -> Result<i64, PageError> {
        Ok(self.insert_batch(std::slice::from_ref(page))?.remove(0))
    }

    /// Checks and stores `page` atomically ([`Index::check_and_insert`]).
    pub fn check_and_insert(&self, page: &CrawledPage) -> Result<Checked, PageError> {
        Ok(self.check_and_insert_batch(std::slice::from_ref(page))?.remove(0))
    }

    /// Fingerprints of `pages`, in order, made in parallel (rayon); the
    /// first failure in page order, with its position, fails the batch.
    pub fn fingerprint_batch(&self, pages: &[CrawledPage]) -> Result<Vec<Fingerprint>, (usize, PageError)> {
        in_parallel(pages, |p| self.fingerprint(p))
    }

    /// [`Crawler::check`] for several pages.
    pub fn check_batch(&self, pages: &[CrawledPage]) -> Result<Vec<CheckResult>, (usize, PageError)> {
        let fps = self.fingerprint_batch(pages)?;
        fps.iter().enumerate().map(|(i, fp)| self.index.check(fp).map_err(|e| (i, e.into()))).collect()
    }

    /// Stores `pages` in one transaction: all or none.
    pub fn insert_batch(&self, pages: &[CrawledPage]) -> Result<Vec<i64>, (usize, PageError)> {
        let rows = self.records(pages)?;
        self.index.insert_batch(&rows).map_err(|e| (0, e.into()))
    }

    /// Checks and stores `pages` in one transaction, each checked against
    /// the index and the pages before it ([`Index::check_and_insert_batch`]).
    pub fn check_and_insert_batch(&self, pages: &[CrawledPage]) -> Result<Vec<Checked>, (usize, PageError)> {
        let rows = self.records(pages)?;
        let results = self.index.check_and_insert_batch(&rows).map_err(|e| (0, e.into()))?;
        Ok(results
            .into_iter()
            .zip(rows)
            .map(|((result, id), row)| Checked { result, id, crawl: row.record.crawl })
            .collect())
    }

    /// The rows to store for `pages` ([`Crawler::row`]), made in parallel.
    fn records(&self, pages: &[CrawledPage]) -> Result<Vec<Page>, (usize, PageError)> {
        in_parallel(pages, |p| self.row(p))
    }
}

/// `f` of each page, in order, run in parallel (rayon); the first failure
/// in page order, with its position, fails the batch.
fn in_parallel<'a, T: Send>(
    pages: &'a [CrawledPage],
    f: impl Fn(&'a CrawledPage) -> Result<T, PageError> + Sync + Send,
) -> Result<Vec<T>, (usize, PageError)> {
    use rayon::prelude::*;
    let results: Vec<Result<T, PageError>> = pages.par_iter().map(f).collect();
    results.into_iter().enumerate().map(|(i, r)| r.map_err(|e| (i, e))).collect()
}

impl From<(usize, PageError)> for PageError {
    /// The error alone, for callers of a single page.
    fn from((_, e): (usize, PageError)) -> PageError {
        e
    }
}
