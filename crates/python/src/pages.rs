//! Pages as Python gives them: keyword arguments, dicts, or Arrow tables.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use arrow_array::{Array, ArrayRef, StringArray};
use arrow_pyarrow::{FromPyArrow, Table};
use arrow_schema::DataType;
use pyo3::exceptions::PyValueError;
use webdup::crawler::CrawledPage;
use webdup::fetch::Hop;

use crate::page_error;

/// The page arguments of `check`, `insert` and `check_and_insert`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn crawled(
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
        rendered: false,
    };
    page.validate().map_err(page_error)?;
    Ok(page)
}

const PAGE_FIELDS: [&str; 9] =
    ["url", "html", "text", "final_url", "status", "redirects", "canonical", "title", "crawl"];

/// A page of a batch given as a dict with the keyword arguments' names.
pub(crate) fn page_of_dict(i: usize, d: &Bound<'_, PyDict>) -> PyResult<CrawledPage> {
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
pub(crate) fn pages_of(pages: &Bound<'_, PyAny>) -> PyResult<(Vec<CrawledPage>, bool)> {
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
