//! `webdup._webdup`, the native half of the Python package `webdup`.
//!
//! A thin layer over the `webdup` library: pages come in as Python
//! arguments, dicts or Arrow tables, become `CrawledPage`s, and go through
//! the same entrance as the HTTP API (`webdup::crawler`). Every call
//! that extracts, fingerprints or touches the index releases the GIL, so
//! crawler threads run it in parallel; extraction runs on stacks deep enough
//! for it (the extractor grows its own stack where a thread's is short).

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, Table};
use arrow_schema::DataType;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use webdup::crawler::{Checked, CrawledPage, Crawler, PageError};
use webdup::dedup::{IDENTICAL, NEAR, SAME_TEXT};
use webdup::engine::{self, Config, Fingerprinter, Quiet};
use webdup::extract::{ExtractConfig, ExtractorKind};
use webdup::fetch::Hop;
use webdup::report::{ClusterReport, Format as ReportFormat};
use webdup::run::{Run, RunConfig};
use webdup::source::{DocKey, Format, RawDocument};
use webdup::store::{CheckResult as StoreCheck, Index as StoreIndex, Match as StoreMatch};

pyo3::create_exception!(_webdup, WebdupError, PyException, "An index, a page or an input webdup could not use.");

fn error(e: impl std::fmt::Display) -> PyErr {
    WebdupError::new_err(e.to_string())
}

/// A batch failure names the page by its position.
fn batch_error((i, e): (usize, PageError)) -> PyErr {
    match e {
        PageError::Invalid(m) => PyValueError::new_err(format!("page {i}: {m}")),
        e => WebdupError::new_err(format!("page {i}: {e}")),
    }
}

fn page_error(e: PageError) -> PyErr {
    match e {
        PageError::Invalid(m) => PyValueError::new_err(m),
        e => error(e),
    }
}

/// `base` with the Python arguments given, validated.
fn config_from(base: Config, threshold: Option<f64>, extractor: Option<&str>) -> PyResult<Config> {
    let mut config = base;
    if let Some(t) = threshold {
        config.matching.threshold = t;
        // As on the command line: a cross-site threshold above the one
        // asked for would be stricter across sites than within one.
        config.matching.cross_site_threshold = config.matching.cross_site_threshold.filter(|&c| c < t);
    }
    if let Some(name) = extractor {
        let kind: ExtractorKind = name.parse().map_err(|e| PyValueError::new_err(format!("{e}")))?;
        config.fingerprint.extractor = kind.to_string();
    }
    config.validate().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The tool's settings with the Python arguments given.
fn config(threshold: Option<f64>, extractor: Option<&str>) -> PyResult<Config> {
    config_from(Config::tool(), threshold, extractor)
}

/// An indexed page like the one checked, with its exact overlap.
#[pyclass(frozen, get_all, skip_from_py_object, module = "webdup")]
#[derive(Clone)]
struct Match {
    /// The page's row in the index: ids grow as pages are stored, so the
    /// smaller of two was stored first.
    id: i64,
    url: String,
    crawl: String,
    final_url: Option<String>,
    title: Option<String>,
    /// Exact Jaccard of the two shingle sets.
    jaccard: f64,
    /// Share of the checked page's shingles found in this page.
    containment: f64,
    /// Share of this page's shingles found in the checked page.
    contained: f64,
}

#[pymethods]
impl Match {
    fn __repr__(&self) -> String {
        format!("Match(url={:?}, crawl={:?}, jaccard={:.6})", self.url, self.crawl, self.jaccard)
    }
}

impl From<&StoreMatch> for Match {
    fn from(m: &StoreMatch) -> Match {
        Match {
            id: m.id,
            url: m.url.clone(),
            crawl: m.crawl.clone(),
            final_url: m.final_url.clone(),
            title: m.title.clone(),
            jaccard: m.jaccard,
            containment: m.containment,
            contained: m.contained,
        }
    }
}

/// What the index held like a page: identical pages (the same decoded
/// page), pages of the same text (same normalized text, other pages) and
/// near ones (exact Jaccard at least the index threshold, most similar
/// first). After an insert, `id` is the page's row.
#[pyclass(frozen, get_all, module = "webdup")]
struct CheckResult {
    url: String,
    identical: Vec<Match>,
    same_text: Vec<Match>,
    near: Vec<Match>,
    /// LSH candidates looked at before exact verification.
    candidates: usize,
    id: Option<i64>,
    crawl: Option<String>,
    /// `"learned"` or `"not yet learned"`: whether the page's site template
    /// was learned when it was checked (until it is, pages of the site are
    /// matched conservatively); None when the index suppresses none.
    template: Option<&'static str>,
}

#[pymethods]
impl CheckResult {
    /// True when the content was seen before, exactly or nearly.
    #[getter]
    fn seen(&self) -> bool {
        self.best().is_some()
    }

    /// True when it was not.
    #[getter(new)]
    fn is_new(&self) -> bool {
        !self.seen()
    }

    /// The closest match: the first identical page, else the first of the
    /// same text, else the nearest page.
    #[getter]
    fn best(&self) -> Option<Match> {
        self.identical.first().or(self.same_text.first()).or(self.near.first()).cloned()
    }

    /// What the closest match is: `identical`, `same-text` or `near`
    /// (`None` when nothing was).
    #[getter]
    fn kind(&self) -> Option<&'static str> {
        [(IDENTICAL, &self.identical), (SAME_TEXT, &self.same_text), (NEAR, &self.near)]
            .into_iter()
            .find_map(|(k, ms)| (!ms.is_empty()).then_some(k))
    }

    fn __bool__(&self) -> bool {
        self.seen()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckResult(url={:?}, seen={}, identical={}, same_text={}, near={}, id={:?})",
            self.url,
            if self.seen() { "True" } else { "False" },
            self.identical.len(),
            self.same_text.len(),
            self.near.len(),
            self.id
        )
    }
}

impl CheckResult {
    fn of(url: &str, r: &StoreCheck, id: Option<i64>, crawl: Option<String>) -> CheckResult {
        CheckResult {
            url: url.to_string(),
            identical: r.identical.iter().map(Match::from).collect(),
            same_text: r.same_text.iter().map(Match::from).collect(),
            near: r.near.iter().map(Match::from).collect(),
            candidates: r.candidates,
            id,
            crawl,
            template: r.template.map(|t| t.as_str()),
        }
    }

    fn checked(url: &str, c: &Checked) -> CheckResult {
        CheckResult::of(url, &c.result, Some(c.id), Some(c.crawl.clone()))
    }
}

/// The page arguments of `check`, `insert` and `check_and_insert`.
#[allow(clippy::too_many_arguments)]
fn crawled(
    url: String,
    html: Option<String>,
    text: Option<String>,
    final_url: Option<String>,
    status: Option<u16>,
    redirects: Option<Vec<(String, u16)>>,
    canonical: Option<String>,
    title: Option<String>,
    crawl: Option<String>,
) -> PyResult<CrawledPage> {
    let page = CrawledPage {
        url,
        html,
        text,
        crawl,
        final_url,
        status,
        redirects: redirects.unwrap_or_default().into_iter().map(|(url, status)| Hop { url, status }).collect(),
        canonical,
        title,
    };
    page.validate().map_err(page_error)?;
    Ok(page)
}

const PAGE_FIELDS: [&str; 9] =
    ["url", "html", "text", "final_url", "status", "redirects", "canonical", "title", "crawl"];

/// A page of a batch given as a dict with the keyword arguments' names.
fn page_of_dict(i: usize, d: &Bound<'_, PyDict>) -> PyResult<CrawledPage> {
    for key in d.keys() {
        let key: String = key.extract()?;
        if !PAGE_FIELDS.contains(&key.as_str()) {
            return Err(PyValueError::new_err(format!(
                "page {i}: unknown field {key:?}; a page has {}",
                PAGE_FIELDS.join(", ")
            )));
        }
    }
    fn get<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<Option<T>> {
        match d.get_item(k)? {
            Some(v) if !v.is_none() => Ok(Some(v.extract().map_err(Into::into)?)),
            _ => Ok(None),
        }
    }
    let url: Option<String> = get(d, "url")?;
    let url = url.ok_or_else(|| PyValueError::new_err(format!("page {i}: no \"url\"")))?;
    crawled(
        url,
        get(d, "html")?,
        get(d, "text")?,
        get(d, "final_url")?,
        get(d, "status")?,
        get(d, "redirects")?,
        get(d, "canonical")?,
        get(d, "title")?,
        get(d, "crawl")?,
    )
    .map_err(|e| PyValueError::new_err(format!("page {i}: {e}")))
}

/// Pages of a batch: an Arrow table (anything with `__arrow_c_stream__`:
/// pyarrow, polars, DuckDB results...) with a `url` column and an `html` or
/// `text` column, or a list of dicts. Also says which it was.
fn pages_of(pages: &Bound<'_, PyAny>) -> PyResult<(Vec<CrawledPage>, bool)> {
    if pages.hasattr("__arrow_c_stream__")? || pages.hasattr("__arrow_c_array__")? {
        let table = Table::from_pyarrow_bound(pages)?;
        return Ok((pages_of_table(&table)?, true));
    }
    let list = pages.cast::<PyList>().map_err(|_| {
        PyValueError::new_err("pages must be a list of dicts or an Arrow table (pyarrow.Table, RecordBatch...)")
    })?;
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let d = item.cast::<PyDict>().map_err(|_| PyValueError::new_err(format!("page {i} is not a dict")))?;
        out.push(page_of_dict(i, d)?);
    }
    Ok((out, false))
}

fn pages_of_table(table: &Table) -> PyResult<Vec<CrawledPage>> {
    let schema = table.schema();
    for f in schema.fields() {
        if !PAGE_FIELDS.contains(&f.name().as_str()) || f.name() == "redirects" {
            return Err(PyValueError::new_err(format!(
                "unknown column {:?}; an Arrow batch has url, html or text, and optionally final_url, status, \
                 canonical, title, crawl",
                f.name()
            )));
        }
    }
    let mut pages = Vec::new();
    for batch in table.record_batches() {
        let string = |name: &str| -> PyResult<Option<StringArray>> {
            let Some(col) = batch.column_by_name(name) else { return Ok(None) };
            let col = arrow_cast_utf8(col).ok_or_else(|| {
                PyValueError::new_err(format!("column {name:?} must be strings, not {}", col.data_type()))
            })?;
            Ok(Some(col))
        };
        let url = string("url")?.ok_or_else(|| PyValueError::new_err("the table has no \"url\" column"))?;
        let (html, text) = (string("html")?, string("text")?);
        let (final_url, canonical, title, crawl) =
            (string("final_url")?, string("canonical")?, string("title")?, string("crawl")?);
        let status = match batch.column_by_name("status") {
            None => None,
            Some(c) => Some(
                arrow_array::cast::AsArray::as_primitive_opt::<arrow_array::types::Int64Type>(c.as_ref())
                    .cloned()
                    .map(Ok)
                    .unwrap_or_else(|| {
                        arrow_array::cast::AsArray::as_primitive_opt::<arrow_array::types::Int32Type>(c.as_ref())
                            .map(|a| a.unary::<_, arrow_array::types::Int64Type>(i64::from))
                            .ok_or_else(|| PyValueError::new_err("column \"status\" must be integers"))
                    })?,
            ),
        };
        let value = |a: &Option<StringArray>, row: usize| {
            a.as_ref().filter(|a| a.is_valid(row)).map(|a| a.value(row).to_string())
        };
        for row in 0..batch.num_rows() {
            let i = pages.len();
            let page = crawled(
                value(&Some(url.clone()), row).unwrap_or_default(),
                value(&html, row),
                value(&text, row),
                value(&final_url, row),
                status.as_ref().filter(|s| s.is_valid(row)).and_then(|s| u16::try_from(s.value(row)).ok()),
                None,
                value(&canonical, row),
                value(&title, row),
                value(&crawl, row),
            )
            .map_err(|e| PyValueError::new_err(format!("page {i}: {e}")))?;
            pages.push(page);
        }
    }
    Ok(pages)
}

/// A string column as UTF-8 (large strings and string views converted).
fn arrow_cast_utf8(col: &ArrayRef) -> Option<StringArray> {
    use arrow_array::cast::AsArray;
    match col.data_type() {
        DataType::Utf8 => Some(col.as_string::<i32>().clone()),
        DataType::LargeUtf8 => Some(col.as_string::<i64>().iter().collect()),
        DataType::Utf8View => Some(col.as_string_view().iter().collect()),
        DataType::Null => Some(StringArray::new_null(col.len())),
        _ => None,
    }
}

/// One row per page of a batch's answers.
fn results_table(py: Python<'_>, results: &[CheckResult]) -> PyResult<Py<PyAny>> {
    let mut url = StringBuilder::new();
    let (mut new, mut id) = (BooleanBuilder::new(), Int64Builder::new());
    let (mut identical, mut same_text, mut near) = (UInt32Builder::new(), UInt32Builder::new(), UInt32Builder::new());
    let (mut best, mut best_id) = (StringBuilder::new(), Int64Builder::new());
    let (mut jaccard, mut containment) = (Float64Builder::new(), Float64Builder::new());
    for r in results {
        url.append_value(&r.url);
        new.append_value(r.is_new());
        id.append_option(r.id);
        identical.append_value(r.identical.len() as u32);
        same_text.append_value(r.same_text.len() as u32);
        near.append_value(r.near.len() as u32);
        let b = r.best();
        best.append_option(b.as_ref().map(|m| m.url.as_str()));
        best_id.append_option(b.as_ref().map(|m| m.id));
        jaccard.append_option(b.as_ref().map(|m| m.jaccard));
        containment.append_option(b.as_ref().map(|m| m.containment));
    }
    pyarrow_table(
        py,
        [
            ("url", Arc::new(url.finish()) as ArrayRef, false),
            ("new", Arc::new(new.finish()), false),
            ("id", Arc::new(id.finish()), true),
            ("identical", Arc::new(identical.finish()), false),
            ("same_text", Arc::new(same_text.finish()), false),
            ("near", Arc::new(near.finish()), false),
            ("match_url", Arc::new(best.finish()), true),
            ("match_id", Arc::new(best_id.finish()), true),
            ("jaccard", Arc::new(jaccard.finish()), true),
            ("containment", Arc::new(containment.finish()), true),
        ],
    )
}

/// One record batch of `columns` (name, array, nullable) as a `pyarrow.Table`.
fn pyarrow_table<const N: usize>(py: Python<'_>, columns: [(&str, ArrayRef, bool); N]) -> PyResult<Py<PyAny>> {
    let batch = RecordBatch::try_from_iter_with_nullable(columns).map_err(error)?;
    let table = Table::try_new(vec![batch.clone()], batch.schema()).map_err(error)?;
    Ok(table.into_pyarrow(py)?.unbind())
}

/// A JSON value as the Python object `json.loads` would give.
fn to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any().unbind(),
            (None, Some(f)) => f.into_pyobject(py)?.into_any().unbind(),
            _ => py.None(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            PyList::new(py, a.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any().unbind()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

fn json_of(py: Python<'_>, v: &impl serde::Serialize) -> PyResult<Py<PyAny>> {
    to_py(py, &serde_json::to_value(v).map_err(error)?)
}

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
#[pyclass(frozen, module = "webdup")]
struct Index {
    crawler: Arc<Crawler>,
}

#[pymethods]
impl Index {
    #[new]
    #[pyo3(signature = (path, threshold=None, extractor=None, crawl="python"))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        threshold: Option<f64>,
        extractor: Option<&str>,
        crawl: &str,
    ) -> PyResult<Index> {
        if crawl.is_empty() {
            return Err(PyValueError::new_err("the crawl name must not be empty"));
        }
        // Validated before any file is touched.
        config(threshold, extractor)?;
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
            Ok(Crawler::new(Arc::new(index), &config, crawl))
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
        let r = py.detach(|| self.crawler.check(&page)).map_err(page_error)?;
        Ok(CheckResult::of(&page.url, &r, None, None))
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
    #[pyo3(signature = (url, html=None, text=None, *, final_url=None, status=None, redirects=None, canonical=None, title=None, crawl=None))]
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
    ) -> PyResult<CheckResult> {
        let page = crawled(url, html, text, final_url, status, redirects, canonical, title, crawl)?;
        let c = py.detach(|| self.crawler.check_and_insert(&page)).map_err(page_error)?;
        Ok(CheckResult::checked(&page.url, &c))
    }

    /// `check` for many pages: a list of dicts (the keyword names of
    /// `check`) gives a list of results; an Arrow table gives a
    /// `pyarrow.Table`, one row per page (url, new, id, exact, near,
    /// match_url, match_id, jaccard, containment).
    fn check_batch(&self, py: Python<'_>, pages: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let (pages, arrow) = pages_of(pages)?;
        let results = py.detach(|| self.crawler.check_batch(&pages)).map_err(batch_error)?;
        let results: Vec<CheckResult> =
            pages.iter().zip(&results).map(|(p, r)| CheckResult::of(&p.url, r, None, None)).collect();
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
        let checked = py.detach(|| self.crawler.check_and_insert_batch(&pages)).map_err(batch_error)?;
        let results = pages.iter().zip(&checked).map(|(p, c)| CheckResult::checked(&p.url, c)).collect();
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

/// The settings an existing index was built with, to open it as it is.
fn index_settings(path: &std::path::Path) -> Result<webdup::store::Settings, webdup::store::Error> {
    Ok(StoreIndex::open_existing(path)?.settings().clone())
}

fn answer(py: Python<'_>, results: Vec<CheckResult>, arrow: bool) -> PyResult<Py<PyAny>> {
    if arrow {
        results_table(py, &results)
    } else {
        Ok(PyList::new(py, results.into_iter().map(|r| Py::new(py, r)).collect::<PyResult<Vec<_>>>()?)?
            .into_any()
            .unbind())
    }
}

/// The clusters of a run, with its failures and the report `webdup cluster`
/// would write.
#[pyclass(frozen, module = "webdup")]
struct Clusters {
    report: ClusterReport,
}

#[pymethods]
impl Clusters {
    /// The clusters, each a dict: id, size, kind (identical, same-text or
    /// near), representative, members (id, representative, jaccard,
    /// containment, identical, same_text, words).
    #[getter]
    fn clusters(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        json_of(py, &self.report.clusters)
    }

    /// Inputs that gave no document: id, kind, message.
    #[getter]
    fn errors(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        json_of(py, &self.report.errors)
    }

    /// Documents, clusters, candidate and confirmed pairs.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        json_of(py, &self.report.summary)
    }

    /// The report as `webdup cluster -f json` writes it, byte for byte.
    fn to_json(&self) -> PyResult<String> {
        self.write(ReportFormat::Json)
    }

    /// The report as `webdup cluster -f csv` writes it.
    fn to_csv(&self) -> PyResult<String> {
        self.write(ReportFormat::Csv)
    }

    /// One row per clustered page (cluster, id, representative, jaccard and
    /// containment to it, identical and same-text flags, words) as a
    /// `pyarrow.Table`.
    fn to_arrow(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mut cluster = UInt32Builder::new();
        let (mut id, mut rep) = (StringBuilder::new(), StringBuilder::new());
        let (mut jaccard, mut containment) = (Float64Builder::new(), Float64Builder::new());
        let (mut identical, mut same_text) = (BooleanBuilder::new(), BooleanBuilder::new());
        let mut words = UInt32Builder::new();
        for c in &self.report.clusters {
            for m in &c.members {
                cluster.append_value(c.id as u32);
                id.append_value(&m.id);
                rep.append_value(&c.representative);
                jaccard.append_value(m.jaccard);
                containment.append_value(m.containment);
                identical.append_value(m.identical);
                same_text.append_value(m.same_text);
                words.append_value(m.words as u32);
            }
        }
        pyarrow_table(
            py,
            [
                ("cluster", Arc::new(cluster.finish()) as ArrayRef, false),
                ("id", Arc::new(id.finish()), false),
                ("representative", Arc::new(rep.finish()), false),
                ("jaccard", Arc::new(jaccard.finish()), false),
                ("containment", Arc::new(containment.finish()), false),
                ("identical", Arc::new(identical.finish()), false),
                ("same_text", Arc::new(same_text.finish()), false),
                ("words", Arc::new(words.finish()), false),
            ],
        )
    }

    fn __len__(&self) -> usize {
        self.report.clusters.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Clusters({} clusters of {} documents, {} failed)",
            self.report.summary.clusters, self.report.summary.documents, self.report.summary.failed
        )
    }
}

impl Clusters {
    fn write(&self, format: ReportFormat) -> PyResult<String> {
        let mut out = Vec::new();
        self.report.write(format, &mut out).map_err(error)?;
        String::from_utf8(out).map_err(error)
    }
}

/// Finds the duplicate clusters among pages.
///
/// `pages` is either a list of inputs as `webdup cluster` takes them (paths
/// of files or directories, URL lists, sitemaps, URLs, web archives): the
/// answer is then the one `webdup cluster` gives with the same settings; or
/// a list of dicts with `url` and `html` (or `text`), clustered in list
/// order.
#[pyfunction]
#[pyo3(signature = (pages, threshold=None, extractor=None))]
fn cluster(
    py: Python<'_>,
    pages: &Bound<'_, PyList>,
    threshold: Option<f64>,
    extractor: Option<&str>,
) -> PyResult<Clusters> {
    let config = config(threshold, extractor)?;
    let inputs: Option<Vec<String>> = pages.iter().map(|p| p.extract::<String>().ok()).collect();
    if let Some(inputs) = inputs {
        let report = py.detach(|| -> webdup::Result<ClusterReport> {
            let mut run = Run::new(RunConfig::default());
            let loaded =
                run.load_all(&inputs, &mut std::io::empty(), &config, &webdup::template::Templates::default(), &Quiet)?;
            Ok(webdup::run::cluster(loaded, &config)?.report)
        });
        return Ok(Clusters { report: report.map_err(error)? });
    }
    let mut raws = Vec::with_capacity(pages.len());
    for (i, item) in pages.iter().enumerate() {
        let d = item.cast::<PyDict>().map_err(|_| {
            PyValueError::new_err(format!("page {i}: give paths and URLs as strings, or pages as dicts"))
        })?;
        let page = page_of_dict(i, d)?;
        let (format, body) = match (page.html, page.text) {
            (Some(html), _) => (Format::Html, html),
            (None, Some(text)) => (Format::Text, text),
            (None, None) => unreachable!("checked by page_of_dict"),
        };
        raws.push(RawDocument { id: page.url.clone(), key: DocKey(i as u64), format, body, url: Some(page.url) });
    }
    let report = py.detach(|| -> webdup::Result<ClusterReport> {
        let corpus = engine::Corpus::build(raws, Ok, &config, &Quiet);
        let clustering = engine::find_duplicates(&corpus, &config)?;
        Ok(ClusterReport::new(&corpus, &clustering, &config))
    });
    Ok(Clusters { report: report.map_err(error)? })
}

/// Compares two pages exactly: Jaccard, containment each way, shared
/// shingles, the MinHash estimate and SimHash distance, identical,
/// same-text and duplicate flags. `a` and `b` are HTML unless `text=True`.
#[pyfunction]
#[pyo3(signature = (a, b, *, text=false, threshold=None, extractor=None))]
fn compare(
    py: Python<'_>,
    a: String,
    b: String,
    text: bool,
    threshold: Option<f64>,
    extractor: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let config = config(threshold, extractor)?;
    let comparison = py.detach(|| -> Result<engine::Comparison, webdup::DocError> {
        let fp = Fingerprinter::new(&config);
        let format = if text { Format::Text } else { Format::Html };
        let doc = |id: &str, key: u64, body: String| {
            fp.fingerprint(RawDocument { id: id.into(), key: DocKey(key), format, body, url: None })
        };
        Ok(engine::compare(&doc("a", 0, a)?, &doc("b", 1, b)?, config.matching.threshold))
    });
    json_of(py, &comparison.map_err(error)?)
}

/// The main content of an HTML page with its metadata: title, text,
/// word_count, description, h1, canonical, noindex, language, extractor.
#[pyfunction]
#[pyo3(signature = (html, url=None, extractor="auto"))]
fn extract(py: Python<'_>, html: String, url: Option<String>, extractor: &str) -> PyResult<Py<PyAny>> {
    let kind: ExtractorKind = extractor.parse().map_err(|e| PyValueError::new_err(format!("{e}")))?;
    let page =
        py.detach(|| webdup::extract::extract_page(&html, url.as_deref(), &ExtractConfig::new(kind))).map_err(error)?;
    json_of(py, &page)
}

#[pymodule]
fn _webdup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Index>()?;
    m.add_class::<CheckResult>()?;
    m.add_class::<Match>()?;
    m.add_class::<Clusters>()?;
    m.add_function(wrap_pyfunction!(cluster, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(extract, m)?)?;
    m.add("WebdupError", m.py().get_type::<WebdupError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
