//! `webdup ingest` and `webdup dcluster`: clustering across processes and
//! hosts (webdup-dataflow).

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Context;

use webdup_dataflow::job::{self, Layout};

use crate::args::{DclusterArgs, IngestArgs};
use crate::common::{Bar, EXIT_SOME_FAILED, report_archives, write_output};

pub fn ingest(args: IngestArgs) -> anyhow::Result<ExitCode> {
    if args.common.follow.follow {
        // Each task of an ingest loads every N-th input; a crawl's pages are
        // known only as it goes, so it cannot be split that way yet.
        anyhow::bail!(
            "--follow is not available for ingest: its tasks each take every N-th input, and a crawl is one frontier \
             (each level comes from every page of the one before), so N tasks would each fetch the whole site; \
             crawl with `webdup index add --follow` or `webdup cluster --follow`"
        );
    }
    // An ingest task holds one block of pages at a time and writes their
    // sets to its files: nothing to spill.
    let config = webdup::Config { memory: None, ..args.common.to_config()? };
    let run_config = webdup::run::RunConfig {
        fetch: args.common.fetch.to_config(args.common.max_bytes)?,
        limits: webdup::source::ReadLimits { max_bytes: args.common.max_bytes },
        inputs: args.common.input_options(),
        follow: None,
    };
    let bar = Bar::new(args.common.quiet);
    let done = webdup_dataflow::ingest::ingest(
        &args.inputs,
        &mut io::stdin().lock(),
        &config,
        run_config,
        args.task,
        &args.work,
        &bar,
    )
    .with_context(|| format!("ingest task {} into {}", args.task, args.work.display()))?;
    if !args.common.quiet {
        if let Some(why) = &done.redone {
            eprintln!("task {}: ingesting again: {why}", args.task);
        }
        let what = if done.ran { "ingested" } else { "already ingested, skipped" };
        eprintln!(
            "task {}: {what}: {} documents ({} failed) in {}",
            args.task,
            done.documents,
            done.failed,
            done.path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn dcluster(args: DclusterArgs) -> anyhow::Result<ExitCode> {
    let config = args.common.to_config()?;
    let hosts = match &args.hostfile {
        Some(path) => Some(job::read_hosts(path)?),
        None => None,
    };
    let exec = Layout { threads: args.workers, processes: args.processes, process: args.process, hosts };
    let outcome = job::cluster(&args.work, &config, &exec);
    let outcome = outcome.with_context(|| {
        format!("clustering {} (process {} of {})", args.work.display(), args.process, args.processes)
    })?;
    if !args.common.quiet {
        let mut err = io::stderr().lock();
        for note in &outcome.notes {
            let _ = writeln!(err, "{note}");
        }
        for (stage, took) in &outcome.stages {
            match took {
                Some(t) => writeln!(err, "stage {stage}: done in {:.1} s", t.as_secs_f64()),
                None => writeln!(err, "stage {stage}: kept from an earlier run"),
            }
            .ok();
        }
        if let Some(p) = &outcome.pages {
            let _ = writeln!(err, "pages: {}", p.path().display());
        }
    }
    let Some(report) = outcome.report else {
        return Ok(ExitCode::SUCCESS);
    };
    report_archives(&report.warc, args.common.quiet);
    write_output(&args.output, |fmt, out| report.write(fmt, out))?;
    if let Some(pages) = outcome.pages {
        pages.finish().context("writing the pages file")?;
    }
    Ok(if outcome.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_SOME_FAILED) })
}
