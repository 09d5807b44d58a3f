//! `webdup eval`: extraction and clustering measured against ground truth.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use webdup::extract::ExtractorKind;
use webdup_eval::extract::{EvalOptions, evaluate};

use crate::args::{EvalFormat, ExtractorArg};
use crate::common::Bar;

/// `webdup eval extract`: each extractor's scores on the pages of `dir`.
pub fn extract(
    dir: &Path,
    extractor: &[ExtractorArg],
    limit: Option<usize>,
    threads: Option<usize>,
    per_page: bool,
    format: EvalFormat,
) -> anyhow::Result<ExitCode> {
    let options = EvalOptions {
        extractors: if extractor.is_empty() {
            ExtractorKind::ALL.to_vec()
        } else {
            extractor.iter().map(|e| e.kind()).collect()
        },
        limit,
        per_page,
        threads,
    };
    let progress = Bar::new(false);
    let report = evaluate(dir, &options, &progress).with_context(|| format!("cannot evaluate {}", dir.display()))?;
    print(format, &report)?;
    Ok(ExitCode::SUCCESS)
}

/// `webdup eval cluster`: a clustering scored against labelled truth.
pub fn cluster(truth: &Path, clustering: &Path, format: EvalFormat) -> anyhow::Result<ExitCode> {
    let read = |p: &Path| std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()));
    let truth = webdup_eval::score::Truth::parse(&read(truth)?)
        .with_context(|| format!("invalid truth file {}", truth.display()))?;
    let predicted = webdup_eval::score::Clustering::parse(&read(clustering)?)
        .with_context(|| format!("invalid clustering {}", clustering.display()))?;
    let score = webdup_eval::score::score(&truth, &predicted);
    print(format, &score)?;
    Ok(ExitCode::SUCCESS)
}

/// An evaluation's table or JSON on standard output.
fn print<T: std::fmt::Display + serde::Serialize>(format: EvalFormat, value: &T) -> anyhow::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match format {
        EvalFormat::Table => write!(out, "{value}")?,
        EvalFormat::Json => {
            serde_json::to_writer_pretty(&mut out, value)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}
