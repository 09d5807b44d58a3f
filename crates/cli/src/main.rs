//! The `webdup` binary: parses flags, builds a validated config, calls the
//! library, and maps the outcome to an exit code.
//!
//! Modules depend one way: `main` -> `commands` (one module per command or
//! group of commands) -> `common` (what several commands share: reading
//! inputs, progress, output) and `args` (the flags, as clap sees them, and
//! their validated configs; it knows no other module of the binary).
//! `scripts/module-cycles.py` checks there is no cycle.
//!
//! Exit codes: 0 when every input was processed, 1 when the run completed
//! but some inputs failed (they are listed in the output), 2 on a fatal
//! error (bad flags, unwritable output, no usable input).

mod args;
mod commands;
mod common;
mod follow;
mod memory;

use std::io;
use std::process::ExitCode;

use anyhow::bail;
use clap::Parser;

use args::{Cli, Command, EvalCommand, IndexCommand};
use commands::{audit, cluster, compare, dataflow, eval, extract, index, lost_and_found, manual, neighbors, serve};
use common::EXIT_FATAL;

// glibc's allocator grows per-thread arenas with an mprotect call at a time,
// which dominated a 100,000-document run; mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve(_)) {
        tune_memory_for_a_job();
    }
    match dispatch(cli.command) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("webdup: error: {}", webdup::report::terminal_safe(&format!("{err:#}")));
            ExitCode::from(EXIT_FATAL)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || matches!(e.downcast_ref::<webdup::Error>(), Some(webdup::Error::Output(io)) if io.kind() == io::ErrorKind::BrokenPipe)
            // serde_json's error hides its io::Error from the chain (its
            // `source` is the io::Error's own source).
            || e.downcast_ref::<serde_json::Error>().and_then(serde_json::Error::io_error_kind)
                == Some(io::ErrorKind::BrokenPipe)
    })
}

/// The flags every reading command shares, for the commands that take them.
fn common_of(command: &Command) -> Option<&args::CommonArgs> {
    match command {
        Command::Cluster { common, .. }
        | Command::Compare { common, .. }
        | Command::Audit { common, .. }
        | Command::Neighbors { common, .. }
        | Command::Index { command: IndexCommand::Add { common, .. } | IndexCommand::Query { common, .. } } => {
            Some(common)
        }
        Command::Ingest(args) => Some(&args.common),
        Command::Dcluster(args) => Some(&args.common),
        _ => None,
    }
}

fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    // Before any work: rayon starts its pool with the first parallel stage.
    if let Some(n) = common_of(&command).and_then(|c| c.threads) {
        webdup::threads::start(n.into())?;
    }
    match command {
        Command::Cluster { inputs, common, output, explain, index } => {
            cluster::run(&inputs, &common, &output, explain, index.as_deref())
        }
        Command::Neighbors { inputs, common, output, top, min_similarity } => {
            neighbors::run(&inputs, &common, &output, top, min_similarity)
        }
        Command::Audit { inputs, index: Some(path), crawl, since, common, out, thin_words, csv_bom, report } => {
            debug_assert!(inputs.is_empty(), "clap rejects inputs with --index");
            let to = audit::Output { dir: &out, csv_bom, layout: report.layout() };
            audit::run_index(&path, crawl.as_deref(), since.as_deref(), &common, thin_words, to)
        }
        Command::Audit { inputs, index: None, crawl, since, common, out, thin_words, csv_bom, report } => {
            // Not clap's `requires`: it is waived once INPUT, which conflicts
            // with --index, is given.
            if crawl.is_some() {
                bail!("--crawl picks a crawl of an index: give --index FILE (and no INPUT)");
            }
            if since.is_some() {
                bail!("--since compares two crawls of an index: give --index FILE (and no INPUT)");
            }
            audit::run(&inputs, &common, thin_words, audit::Output { dir: &out, csv_bom, layout: report.layout() })
        }
        Command::Extract { pages, extract, url, format, fetch } => {
            extract::run(&pages, &extract, url.as_deref(), format, &fetch)
        }
        Command::Eval { what: EvalCommand::Extract { dir, extractor, limit, threads, per_page, format } } => {
            eval::extract(&dir, &extractor, limit, threads, per_page, format)
        }
        Command::Eval { what: EvalCommand::Cluster { truth, clustering, format } } => {
            eval::cluster(&truth, &clustering, format)
        }
        Command::Compare { a, b, common, output } => compare::run(a, b, &common, &output),
        Command::Index { command } => index::run(command),
        Command::Serve(args) => serve::run(args),
        Command::Ingest(args) => dataflow::ingest(args),
        Command::Dcluster(args) => dataflow::dcluster(args),
        Command::LostAndFound(args) => lost_and_found::run(args),
        Command::Completions { shell } => manual::completions(shell),
        Command::Man => manual::man(),
    }
}

/// Memory settings for commands that run a job and exit (not `serve`).
///
/// Freed memory is kept for the process's own reuse instead of being given
/// back to the system after mimalloc's purge delay. A job frees each
/// stage's data and allocates the next stage's: given back in between,
/// every page is faulted in and zeroed again. On 100,000 documents this cut
/// page faults from 5,700 to 1,100 in `cluster` (6.9 to 6.3 s) and from
/// 39,000-75,000 to 1,500 in `dcluster` (6.3-7.1 to 5.6-5.8 s); the peak
/// is unchanged.
///
/// Transparent huge pages are turned off for the process (Linux). mimalloc
/// asks for them on its arenas, and a job's memory is touched once, mostly:
/// a huge page is zeroed whole at its first touch, and on the 2-core VM
/// these figures come from that cost `dcluster -w 1` 3.3 to 3.5 s of system
/// time against 1.1 to 1.2 s with 4 KiB pages (9.2-9.4 s against 7.0-7.4 s
/// of wall time), while `cluster` ran alike either way (4.5-5.0 s).
fn tune_memory_for_a_job() {
    // mimalloc.h's `mi_option_purge_delay` (the same in mimalloc 2 and 3);
    // -1: never purge.
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets one of mimalloc's options, which it reads atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only how
    // this process's later page faults are served; a failure (an old
    // kernel) leaves it as it was.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}
