//! `webdup ingest` and `webdup dcluster`: clustering across processes and
//! hosts (webdup-dataflow).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use webdup_dataflow::Task;
use webdup_dataflow::job::{self, Layout};

use super::args::{CommonArgs, OutputArgs};
use super::{EXIT_SOME_FAILED, progress, write_output};

/// Reads, fetches, extracts and shingles one share of the inputs into a
/// work directory, for `webdup dcluster`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// What `webdup cluster` takes: files, directories, lists, URLs,
    /// sitemaps, WARC archives. Every task is given the same inputs.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// The work directory shared by the tasks and the clustering job.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// This task's share, I/N: the Ith of N runs of consecutive inputs
    /// (0-based). A finished task (its marker is there) is not run again.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    pub task: Task,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Clusters an ingested work directory on timely dataflow workers, in one
/// process or several: the report of `webdup cluster` on the same inputs.
///
/// Every process is started with the same flags and its own -p; each
/// finished stage is kept in the work directory, so a run that failed
/// resumes at the stage it hit.
#[derive(Debug, Args)]
pub struct DclusterArgs {
    /// The work directory of `webdup ingest`.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// Worker threads per process (at most 256).
    #[arg(short = 'w', long = "workers", default_value_t = 1, value_name = "N")]
    pub workers: usize,
    /// Number of processes (at most 1024).
    #[arg(short = 'n', long = "processes", default_value_t = 1, value_name = "N")]
    pub processes: usize,
    /// This process's index (0-based); process 0 writes the report.
    #[arg(short = 'p', long = "process", default_value_t = 0, value_name = "I")]
    pub process: usize,
    /// One host:port a line, one line per process, in process order
    /// [default: 127.0.0.1 from port 2101].
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn ingest(args: IngestArgs) -> anyhow::Result<ExitCode> {
    let config = args.common.to_config()?;
    let run_config = webdup::run::RunConfig {
        fetch: args.common.fetch.to_config(args.common.max_bytes)?,
        limits: webdup::source::ReadLimits { max_bytes: args.common.max_bytes },
        inputs: args.common.input_options(),
    };
    let bar = progress::Bar::new(args.common.quiet);
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
    super::report_archives(&report.warc, args.common.quiet);
    write_output(&args.output, |fmt, out| report.write(fmt, out))?;
    if let Some(pages) = outcome.pages {
        pages.finish().context("writing the pages file")?;
    }
    Ok(if outcome.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_SOME_FAILED) })
}
