//! `webdup audit`: the SEO duplicate-content report, written to a directory,
//! from a fresh run over inputs or from a crawl kept in an index.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

use webdup::audit::html::ReportLayout;
use webdup::audit::{self, Audit, AuditConfig, AuditTexts};
use webdup::report::terminal_safe;

use crate::args::CommonArgs;
use crate::commands::index;
use crate::common::{exit_for, load_corpus};

/// Where and how the report files are written.
pub struct Output<'a> {
    pub dir: &'a Path,
    pub csv_bom: bool,
    pub layout: ReportLayout,
}

pub fn run(inputs: &[String], common: &CommonArgs, thin_words: usize, out: Output) -> anyhow::Result<ExitCode> {
    // Metadata, texts and (for same-text pairs) markup are what the audit
    // shows; `cluster` runs without them.
    let config = webdup::Config { keep_pages: true, keep_markup: true, slim_fetches: true, ..common.to_config()? };
    let audited = audit::run(load_corpus(inputs, common, &config)?, &config, &AuditConfig { thin_words })?;
    // The fingerprints and pairs are in the audit now: freed before the
    // report is written, the largest step of a large audit.
    let exit = exit_for(&audited.corpus);
    let audit::Audited { audit, texts, .. } = audited;
    write(&audit, &texts, &out, common.quiet)?;
    Ok(exit)
}

/// `webdup audit --index FILE [--crawl NAME] [--since OLD]`: the same
/// report from what the index stored, compared under the index's own
/// settings; with `--since`, with what changed since crawl OLD.
pub fn run_index(
    path: &Path,
    crawl: Option<&str>,
    since: Option<&str>,
    common: &CommonArgs,
    thin_words: usize,
    out: Output,
) -> anyhow::Result<ExitCode> {
    let (index, config) = index::open_to_recluster(path, common)?;
    let settings = AuditConfig { thin_words };
    let audited = match since {
        Some(old) => {
            let new = index.choose_crawl(crawl)?;
            if index.choose_crawl(Some(old))? == new {
                bail!(
                    "--since {} names the crawl being audited: give an older crawl of {}",
                    terminal_safe(old),
                    path.display()
                );
            }
            audit::since(&index, Some(&new), old, &config, &settings)?
        }
        None => audit::from_index(&index, crawl, &config, &settings)?,
    };
    write(&audited.audit, &audited.texts, &out, common.quiet)?;
    Ok(exit_for(&audited.corpus))
}

fn write(audit: &Audit, texts: &AuditTexts, to: &Output, quiet: bool) -> anyhow::Result<()> {
    let out = to.dir;
    let context = || format!("cannot write the report to {}", out.display());
    audit.write_dir(texts, out, to.csv_bom, to.layout).with_context(context)?;
    if !quiet {
        let s = &audit.summary;
        let from = match &audit.source {
            Some(src) if src.pages_without_text > 0 => format!(
                " of crawl {} in {} ({} without a stored text to compare)",
                terminal_safe(&src.crawl),
                terminal_safe(&src.index),
                src.pages_without_text
            ),
            Some(src) => format!(" of crawl {} in {}", terminal_safe(&src.crawl), terminal_safe(&src.index)),
            None => String::new(),
        };
        eprintln!(
            "webdup: {} pages{from}, {} clusters ({} with canonical problems), {} errors; report in {}",
            s.pages,
            s.clusters,
            s.clusters_with_problems,
            s.errors,
            out.join("report.html").display()
        );
        if let Some(ch) = &audit.since {
            let c = &ch.summary;
            eprintln!(
                "webdup: since crawl {}: {} clusters new, {} grown, {} regressed, {} fixed, {} gone, {} otherwise changed; \
                 {} pages moved",
                terminal_safe(&ch.old_crawl),
                c.new,
                c.grown,
                c.regressed,
                c.fixed,
                c.gone,
                c.split + c.changed + c.shrunk + c.merged,
                c.moved
            );
        }
    }
    Ok(())
}
