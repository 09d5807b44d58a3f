//! Arrow tables out: a batch's answers and the rows of clusters, as `pyarrow.Table`s.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_pyarrow::{IntoPyArrow, Table};
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;

use crate::error;
use crate::results::CheckResult;

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
