//! `webdup neighbors`: each document's most similar documents.

use std::process::ExitCode;

use anyhow::bail;

use webdup::engine;
use webdup::report::NeighborReport;

use crate::args::{CommonArgs, OutputArgs};
use crate::common::{exit_for, load_corpus, write_output};

/// `webdup neighbors`: the `top` neighbours of each document from
/// `min_similarity` (the threshold when not given) up.
pub fn run(
    inputs: &[String],
    common: &CommonArgs,
    output: &OutputArgs,
    top: u32,
    min_similarity: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let config = webdup::Config { skip_records: true, ..common.to_config()? };
    let floor = min_similarity.unwrap_or(config.matching.threshold);
    let top = top as usize;
    if !(floor > 0.0 && floor <= 1.0) {
        bail!("--min-similarity must be in (0, 1], not {floor}");
    }
    let corpus = load_corpus(inputs, common, &config)?.corpus;
    let lists = engine::neighbors(&corpus, &config, floor, top)?;
    let report = NeighborReport::new(&corpus, &lists, config.matching.measure, floor, top);
    write_output(output, |fmt, out| report.write(fmt, out))?;
    Ok(exit_for(&corpus))
}
