//! `Index`: the crawl index, as crawlers use it.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::{PyFileNotFoundError, PyNotADirectoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use webdup::crawler::{CrawledPage, Crawler, PageError};
use webdup::engine::Config;
use webdup::store::Index as StoreIndex;

use crate::arrow::results_table;
use crate::pages::{crawled, pages_of};
use crate::render::{fetch_config, render_config};
use crate::results::CheckResult;
use crate::{batch_error, config, config_from, error, json_of, page_error};

/// A crawl index in one SQLite file, shared safely by threads and
/// processes.
///
/// `Index(path)` opens an index with the settings it was built with, or
/// creates one with the defaults. `threshold` (least exact Jaccard for a
/// near duplicate; pages of two different hosts are held to 0.5, as
/// `webdup cluster` holds them, or to `threshold` when it is lower) and
/// `extractor` (main-content extractor: blocks, auto,
/// trafilatura, rs-trafilatura, readability, fast, none) set a new index's
/// settings; given for an existing index, they must be the ones it was built
/// with. `crawl` names the crawl pages are recorded in unless they name
/// another.
///
/// `render` ("off", "auto" or "on"; False, True) renders each page's HTML in
/// a headless Chromium before it is checked or stored, as `webdup cluster
/// --render` renders fetched pages: "on" every page, "auto" the pages that
/// look client-rendered (an empty mount point and scripts). The scripts and
/// data a page asks for are fetched by webdup (the page's own origin may be
/// a loopback or private address, no other internal one; robots.txt
/// obeyed). `chromium` is the browser (default: `WEBDUP_CHROMIUM`, else
/// `chromium`, `chromium-browser`, `google-chrome` on PATH) and
/// `render_timeout` a page's budget in seconds (default 10). Without a
/// Chromium, `Index(...)` fails, saying how to install one; a page that
/// cannot be rendered raises `WebdupError` and the index stays usable.
#[pyclass(frozen, module = "webdup")]
pub(crate) struct Index {
    crawler: Arc<Crawler>,
}

#[pymethods]
impl Index {
    #[new]
    #[pyo3(signature = (path, threshold=None, extractor=None, crawl="python", *, render=None, chromium=None, render_timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        threshold: Option<f64>,
        extractor: Option<&str>,
        crawl: &str,
        render: Option<&Bound<'_, PyAny>>,
        chromium: Option<PathBuf>,
        render_timeout: Option<f64>,
    ) -> PyResult<Index> {
        if crawl.is_empty() {
            return Err(PyValueError::new_err("the crawl name must not be empty"));
        }
        // Validated before any file is touched.
        config(threshold, extractor)?;
        let render = render_config(render, chromium, render_timeout)?;
        missing_folder(&path)?;
        let opened = py.detach(move || -> PyResult<Crawler> {
            // An existing index keeps the settings it was built with: what
            // is not given comes from it, what is given must match it
            // (Index::open refuses other settings, naming them).
            let base = if path.exists() {
                index_settings(&path).map_err(error)?.apply(Config::tool()).map_err(error)?
            } else {
                Config::tool()
            };
            let config = config_from(base, threshold, extractor)?;
            let index = StoreIndex::open(&path, &config).map_err(error)?;
            Crawler::new(Arc::new(index), &config, crawl).with_render(fetch_config(render)).map_err(error)
        });
        Ok(Index { crawler: Arc::new(opened?) })
    }

    /// What the index holds like this page (nothing is stored).
    #[pyo3(signature = (url, html=None, text=None, *, final_url=None, status=None, redirects=None, canonical=None, title=None, crawl=None))]
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        py: Python<'_>,
        url: String,
        html: Option<String>,
        text: Option<String>,
        final_url: Option<String>,
        status: Option<u16>,
        redirects: Option<Vec<(String, u16)>>,
        canonical: Option<String>,
        title: Option<String>,
        crawl: Option<String>,
    ) -> PyResult<CheckResult> {
        let page = crawled(url, html, text, final_url, status, redirects, canonical, title, crawl)?;
        let (r, rendered) = py
            .detach(|| -> Result<_, PageError> {
                let page = self.crawler.render(&page)?;
                Ok((self.crawler.check(&page)?, page.rendered))
            })
            .map_err(page_error)?;
        Ok(CheckResult::of(&page.url, &r, None, None).rendered(rendered))
    }

    /// Stores the page as the crawler saw it (final URL, status, redirects as
    /// (url, status) pairs, a Link canonical); returns its row id.
    #[pyo3(signature = (url, html=None, text=None, *, final_url=None, status=None, redirects=None, canonical=None, title=None, crawl=None))]
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &self,
        py: Python<'_>,
        url: String,
        html: Option<String>,
        text: Option<String>,
        final_url: Option<String>,
        status: Option<u16>,
        redirects: Option<Vec<(String, u16)>>,
        canonical: Option<String>,
        title: Option<String>,
        crawl: Option<String>,
    ) -> PyResult<i64> {
        let page = crawled(url, html, text, final_url, status, redirects, canonical, title, crawl)?;
        py.detach(|| self.crawler.insert(&page)).map_err(page_error)
    }

    /// Checks and stores the page atomically: of near copies checked at the
    /// same time, from threads or processes, exactly one is new. The result
    /// is what the index held before the page; its `id` is the page's row.
    ///
    /// With `skip_template_only`, a page with no text of its own beyond its
    /// site's template as the index learned it (a site index page, a tag
    /// listing) is checked but not stored (`id` is None): the index then
    /// learns the site's template from its content pages alone.
    #[pyo3(signature = (url, html=None, text=None, *, final_url=None, status=None, redirects=None, canonical=None, title=None, crawl=None, skip_template_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn check_and_insert(
        &self,
        py: Python<'_>,
        url: String,
        html: Option<String>,
        text: Option<String>,
        final_url: Option<String>,
        status: Option<u16>,
        redirects: Option<Vec<(String, u16)>>,
        canonical: Option<String>,
        title: Option<String>,
        crawl: Option<String>,
        skip_template_only: bool,
    ) -> PyResult<CheckResult> {
        let page = crawled(url, html, text, final_url, status, redirects, canonical, title, crawl)?;
        py.detach(|| -> Result<CheckResult, PageError> {
            let page = self.crawler.render(&page)?;
            if !skip_template_only {
                let c = self.crawler.check_and_insert(&page)?;
                return Ok(CheckResult::checked(&page.url, &c).rendered(page.rendered));
            }
            let row = self.crawler.row(&page)?;
            let index = self.crawler.index();
            let result = match row.fingerprint.as_ref().filter(|fp| fp.template_only) {
                Some(fp) => CheckResult::of(&page.url, &index.check(fp)?, None, None),
                None => {
                    let (result, id) = index.check_and_insert(&row)?;
                    CheckResult::of(&page.url, &result, Some(id), Some(row.record.crawl.clone()))
                }
            };
            Ok(result.rendered(page.rendered))
        })
        .map_err(page_error)
    }

    /// `check` for many pages: a list of dicts (the keyword names of
    /// `check`) gives a list of results; an Arrow table gives a
    /// `pyarrow.Table`, one row per page (url, new, id, exact, near,
    /// match_url, match_id, jaccard, containment).
    fn check_batch(&self, py: Python<'_>, pages: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let (pages, arrow) = pages_of(pages)?;
        let results = py
            .detach(|| -> Result<_, (usize, PageError)> {
                let pages = self.rendered(pages)?;
                let results = self.crawler.check_batch(&pages)?;
                Ok(pages
                    .iter()
                    .zip(&results)
                    .map(|(p, r)| CheckResult::of(&p.url, r, None, None).rendered(p.rendered))
                    .collect())
            })
            .map_err(batch_error)?;
        answer(py, results, arrow)
    }

    /// Stores many pages in one transaction (all or none); returns their
    /// row ids, in order.
    fn insert_batch(&self, py: Python<'_>, pages: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
        let (pages, _) = pages_of(pages)?;
        py.detach(|| self.crawler.insert_batch(&pages)).map_err(batch_error)
    }

    /// `check_and_insert` for many pages in one transaction: each page is
    /// checked against the index and the pages before it. Answers as
    /// `check_batch` does.
    fn check_and_insert_batch(&self, py: Python<'_>, pages: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let (pages, arrow) = pages_of(pages)?;
        let results = py
            .detach(|| -> Result<_, (usize, PageError)> {
                let pages = self.rendered(pages)?;
                let checked = self.crawler.check_and_insert_batch(&pages)?;
                Ok(pages
                    .iter()
                    .zip(&checked)
                    .map(|(p, c)| CheckResult::checked(&p.url, c).rendered(p.rendered))
                    .collect())
            })
            .map_err(batch_error)?;
        answer(py, results, arrow)
    }

    /// Removes every stored page with this URL (all crawls); returns how many.
    fn remove(&self, py: Python<'_>, url: String) -> PyResult<usize> {
        py.detach(|| self.crawler.index().remove(&url)).map_err(error)
    }

    /// The stored records of this URL, one dict per crawl.
    fn get(&self, py: Python<'_>, url: String) -> PyResult<Py<PyAny>> {
        let pages = py.detach(|| self.crawler.index().get(&url)).map_err(error)?;
        json_of(py, &pages)
    }

    /// Pages, crawls, settings and file size, as `webdup index stats`.
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let stats = py.detach(|| self.crawler.index().stats()).map_err(error)?;
        json_of(py, &stats)
    }

    /// The index file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.crawler.index().path().to_path_buf()
    }

    /// True when pages are rendered in Chromium before they are checked
    /// (`render="on"` or `"auto"`).
    #[getter]
    fn renders(&self) -> bool {
        self.crawler.renders()
    }

    /// The Jaccard threshold of near duplicates (two pages of one host).
    #[getter]
    fn threshold(&self) -> f64 {
        self.crawler.index().settings().threshold
    }

    /// The Jaccard threshold of two pages of different hosts (the same
    /// article in another site's template), or None when the index holds
    /// every pair to `threshold`.
    #[getter]
    fn cross_site_threshold(&self) -> Option<f64> {
        self.crawler.index().settings().cross_site_threshold
    }

    fn __repr__(&self) -> String {
        format!("Index({:?})", self.crawler.index().path())
    }
}

impl Index {
    /// `pages` with their HTML rendered, when the index renders pages.
    fn rendered(&self, pages: Vec<CrawledPage>) -> Result<Vec<CrawledPage>, (usize, PageError)> {
        if !self.crawler.renders() {
            return Ok(pages);
        }
        Ok(self.crawler.render_batch(&pages)?.into_iter().map(Cow::into_owned).collect())
    }
}

/// A new index's folder must exist: SQLite would say only "unable to open
/// database file", naming neither the file nor the folder.
fn missing_folder(path: &Path) -> PyResult<()> {
    let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) else { return Ok(()) };
    if path.exists() || folder.is_dir() {
        return Ok(());
    }
    if folder.exists() {
        return Err(PyNotADirectoryError::new_err(format!(
            "cannot create the index {}: {} is not a folder",
            path.display(),
            folder.display()
        )));
    }
    Err(PyFileNotFoundError::new_err(format!(
        "cannot create the index {}: its folder {} does not exist (create it first)",
        path.display(),
        folder.display()
    )))
}

/// The settings an existing index was built with, to open it as it is.
pub(crate) fn index_settings(path: &std::path::Path) -> Result<webdup::store::Settings, webdup::store::Error> {
    Ok(StoreIndex::open_existing(path)?.settings().clone())
}

pub(crate) fn answer(py: Python<'_>, results: Vec<CheckResult>, arrow: bool) -> PyResult<Py<PyAny>> {
    if arrow {
        results_table(py, &results)
    } else {
        Ok(PyList::new(py, results.into_iter().map(|r| Py::new(py, r)).collect::<PyResult<Vec<_>>>()?)?
            .into_any()
            .unbind())
    }
}
