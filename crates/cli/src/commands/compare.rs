//! `webdup compare`: two documents side by side.

use std::process::ExitCode;

use anyhow::bail;

use webdup::engine;
use webdup::report::{self, ComparisonReport};

use crate::args::{CommonArgs, OutputArgs};
use crate::common::{load_corpus, write_output};

/// `webdup compare A B`: exact Jaccard, sketch estimates, containment.
pub fn run(a: String, b: String, common: &CommonArgs, output: &OutputArgs) -> anyhow::Result<ExitCode> {
    let config = common.to_config()?;
    let corpus = load_corpus(&[a.clone(), b.clone()], common, &config)?.corpus;
    if let Some(e) = corpus.errors.first() {
        bail!("cannot compare: {}: {}", e.id, e.message);
    }
    if corpus.docs.len() != 2 {
        bail!("compare needs two different documents");
    }
    let comparison =
        engine::compare(&*corpus.held(&corpus.docs[0])?, &*corpus.held(&corpus.docs[1])?, config.matching.threshold);
    let report = ComparisonReport { schema_version: report::SCHEMA_VERSION, a, b, comparison };
    write_output(output, |fmt, out| report.write(fmt, out))?;
    Ok(ExitCode::SUCCESS)
}
