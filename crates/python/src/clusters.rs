//! `cluster()` and the `Clusters` it answers.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BooleanBuilder, Float64Builder, StringBuilder, UInt32Builder};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use webdup::engine::{self, Quiet};
use webdup::fetch::Fetcher;
use webdup::render::RenderMode;
use webdup::report::{ClusterReport, Format as ReportFormat};
use webdup::run::{Run, RunConfig};
use webdup::source::{DocKey, Format, RawDocument};

use crate::arrow::pyarrow_table;
use crate::pages::page_of_dict;
use crate::render::{fetch_config, render_config, render_documents};
use crate::{config, error, json_of};

/// The clusters of a run, with its failures and the report `webdup cluster`
/// would write.
#[pyclass(frozen, module = "webdup")]
pub(crate) struct Clusters {
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
///
/// `render`, `chromium` and `render_timeout` render pages in a headless
/// Chromium first, as `Index(...)` takes them: the fetched pages of URL and
/// sitemap inputs as `webdup cluster --render` does, and the HTML of dict
/// pages at their `url`. A page that cannot be rendered is one of the
/// errors; the others are clustered.
#[pyfunction]
#[pyo3(signature = (pages, threshold=None, extractor=None, *, render=None, chromium=None, render_timeout=None))]
pub(crate) fn cluster(
    py: Python<'_>,
    pages: &Bound<'_, PyList>,
    threshold: Option<f64>,
    extractor: Option<&str>,
    render: Option<&Bound<'_, PyAny>>,
    chromium: Option<PathBuf>,
    render_timeout: Option<f64>,
) -> PyResult<Clusters> {
    let config = config(threshold, extractor)?;
    let render = render_config(render, chromium, render_timeout)?;
    let inputs: Option<Vec<String>> = pages.iter().map(|p| p.extract::<String>().ok()).collect();
    if let Some(inputs) = inputs {
        let report = py.detach(|| -> webdup::Result<ClusterReport> {
            let mut run = Run::new(RunConfig { fetch: fetch_config(render), ..RunConfig::default() });
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
        let docs = match render.mode {
            RenderMode::Off => raws.into_iter().map(Ok).collect(),
            _ => {
                let tabs = render.tabs();
                render_documents(&Fetcher::new(fetch_config(render))?, tabs, raws)
            }
        };
        let corpus = engine::Corpus::build(docs, |d| d, &config, &Quiet);
        let clustering = engine::find_duplicates(&corpus, &config)?;
        Ok(ClusterReport::new(&corpus, &clustering, &config))
    });
    Ok(Clusters { report: report.map_err(error)? })
}
