//! Arrow tables in and out: pages of a batch, answers, cluster rows.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder};
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_pyarrow::{IntoPyArrow, Table};
use arrow_schema::DataType;
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use webdup::crawler::CrawledPage;

use crate::error;
use crate::pages::{PAGE_FIELDS, crawled};
use crate::results::CheckResult;

pub(crate) fn pages_of_table(table: &Table) -> PyResult<Vec<CrawledPage>> {
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
pub(crate) fn arrow_cast_utf8(col: &ArrayRef) -> Option<StringArray> {
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
pub(crate) fn results_table(py: Python<'_>, results: &[CheckResult]) -> PyResult<Py<PyAny>> {
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
pub(crate) fn pyarrow_table<const N: usize>(
    py: Python<'_>,
    columns: [(&str, ArrayRef, bool); N],
) -> PyResult<Py<PyAny>> {
    let batch = RecordBatch::try_from_iter_with_nullable(columns).map_err(error)?;
    let table = Table::try_new(vec![batch.clone()], batch.schema()).map_err(error)?;
    // pyarrow is an extra: without it, the user is told which one (the
    // bare ModuleNotFoundError names only the module).
    if let Err(e) = py.import("pyarrow") {
        if e.is_instance_of::<PyImportError>(py) {
            let hint = PyImportError::new_err(
                "an Arrow answer needs pyarrow, which webdup installs as an extra: pip install 'webdup[arrow]'",
            );
            hint.set_cause(py, Some(e));
            return Err(hint);
        }
        return Err(e);
    }
    Ok(table.into_pyarrow(py)?.unbind())
}
