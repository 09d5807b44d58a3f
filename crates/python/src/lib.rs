//! `webdup._webdup`, the native half of the Python package `webdup`.
//!
//! A thin layer over the `webdup` library: pages come in as Python
//! arguments, dicts or Arrow tables, become `CrawledPage`s, and go through
//! the same entrance as the HTTP API (`webdup::crawler`). Every call
//! that extracts, fingerprints or touches the index releases the GIL, so
//! crawler threads run it in parallel; extraction runs on stacks deep enough
//! for it (the extractor grows its own stack where a thread's is short).

mod arrow;
mod clusters;
mod index;
mod pages;
mod render;
mod results;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use webdup::crawler::PageError;
use webdup::engine::{self, Config, Fingerprinter};
use webdup::extract::{ExtractConfig, ExtractorKind};
use webdup::source::{DocKey, Format, RawDocument};

use clusters::{Clusters, cluster};
use index::Index;
use results::{CheckResult, Match};

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
