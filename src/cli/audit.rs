//! `webdup audit`: the SEO duplicate-content report, written to a directory.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use webdup::audit::{Audit, AuditConfig, AuditTexts};
use webdup::engine;

use super::args::CommonArgs;
use super::{Loaded, exit_for, load_corpus};

pub fn run(inputs: &[String], common: &CommonArgs, out: &Path, thin_words: usize) -> anyhow::Result<ExitCode> {
    // Metadata and texts are what the audit shows; `cluster` runs without them.
    let config = webdup::Config { keep_pages: true, ..common.to_config()? };
    let Loaded { corpus, fetches } = load_corpus(inputs, common, &config)?;
    let clustering = engine::find_duplicates(&corpus, &config);
    let audit = Audit::build(&corpus, &clustering, &fetches, &config, &AuditConfig { thin_words });
    let texts = AuditTexts::build(&corpus, &clustering, &audit);
    audit.write_dir(&texts, out).with_context(|| format!("cannot write the report to {}", out.display()))?;
    if !common.quiet {
        let s = &audit.summary;
        eprintln!(
            "webdup: {} pages, {} clusters ({} with canonical problems), {} errors; report in {}",
            s.pages,
            s.clusters,
            s.clusters_with_problems,
            s.errors,
            out.join("report.html").display()
        );
    }
    Ok(exit_for(&corpus))
}
