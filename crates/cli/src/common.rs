//! What several commands share: reading inputs into a corpus, the progress
//! bar, writing a report, exit codes.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use webdup::engine::{Corpus, CrawlCounts, Progress};
use webdup::report;
use webdup::run::{Loaded, Run, RunConfig};
use webdup::source::ReadLimits;
use webdup::template::Templates;

use crate::args::{CommonArgs, OutputArgs, RenderArg};

/// Exit code when the run completed but some inputs failed.
pub const EXIT_SOME_FAILED: u8 = 1;
/// Exit code for fatal errors.
pub const EXIT_FATAL: u8 = 2;

/// The exit code of a run over `corpus`: some inputs failed, or none.
pub fn exit_for(corpus: &Corpus) -> ExitCode {
    if corpus.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_SOME_FAILED) }
}

/// Expands inputs (sitemaps included), reads local files and fetches URLs,
/// and fingerprints every document as it arrives.
pub fn load_corpus(inputs: &[String], common: &CommonArgs, config: &webdup::Config) -> anyhow::Result<Loaded> {
    load_corpus_with(inputs, common, config, &Templates::default())
}

/// [`load_corpus`], with site templates learned earlier (an index's) for
/// the sites that have too few pages in this run to learn their own.
pub fn load_corpus_with(
    inputs: &[String],
    common: &CommonArgs,
    config: &webdup::Config,
    known: &Templates,
) -> anyhow::Result<Loaded> {
    let mut run = new_run(common)?;
    let progress = Bar::new(common.quiet);
    let loaded = run.load_all(inputs, &mut io::stdin().lock(), config, known, &progress)?;
    report_archives(&loaded.warc, common.quiet);
    report_crawl(loaded.crawl.as_ref(), common.quiet);
    report_rendering(loaded.render_counts(), common.fetch.render, common.quiet);
    Ok(loaded)
}

/// How many pages were rendered, or, without `--render`, a warning when a
/// good share of the fetched pages look like client-rendered shells: their
/// text is written by scripts, and the run read only the empty shell.
pub fn report_rendering(counts: webdup::fetch::RenderCounts, render: RenderArg, quiet: bool) {
    if quiet {
        return;
    }
    let webdup::fetch::RenderCounts { pages, shells, rendered, failed, unread_shells } = counts;
    match render {
        RenderArg::Off if unread_shells > 0 && unread_shells * 4 >= pages => eprintln!(
            "webdup: {unread_shells} of {pages} fetched pages look client-rendered (little text, an empty app \
             root, scripts): their text is written by JavaScript and was not read. Run with --render (or \
             --render auto for a mixed site) to read them as a browser shows them."
        ),
        RenderArg::Off => {}
        RenderArg::On | RenderArg::Auto => eprintln!(
            "webdup: rendered {rendered} of {pages} fetched pages ({shells} looked client-rendered); {failed} could \
             not be rendered"
        ),
    }
}

/// What the run's web archives gave, on standard error unless `-q`: the
/// records passed over (redirects, revisits, images) are in no report.
pub fn report_archives(summary: &webdup::warc::Summary, quiet: bool) {
    if !quiet && !summary.is_empty() {
        eprintln!("webdup: WARC: {summary}");
    }
}

/// A run with the fetch and read settings of the flags.
pub fn new_run(common: &CommonArgs) -> anyhow::Result<Run> {
    let mut fetch = common.fetch.to_config(common.max_bytes)?;
    if let Some(dir) = &common.follow.resume {
        if let Some(cache) = fetch.cache_dir.as_ref().filter(|c| *c != dir) {
            bail!("--resume {} and --cache {} name two folders; give one", dir.display(), cache.display());
        }
        fetch.cache_dir = Some(dir.clone());
    }
    let follow = common.follow.to_config(fetch.keep_query)?;
    Ok(Run::new(RunConfig {
        fetch,
        limits: ReadLimits { max_bytes: common.max_bytes },
        inputs: common.input_options(),
        follow,
    }))
}

/// What following links did, on standard error unless `-q`: the pages the
/// crawl reached are in the report; what it left out is said here.
pub fn report_crawl(crawl: Option<&webdup::crawl::CrawlSummary>, quiet: bool) {
    let Some(c) = crawl.filter(|_| !quiet) else {
        return;
    };
    for (from, to) in &c.moved_starts {
        eprintln!("webdup: crawl: start page {from} redirected to {to}; its host is crawled too");
    }
    let n = &c.not_followed;
    eprintln!(
        "webdup: crawl: {} pages to depth {}; not followed: {} disallowed by robots.txt, {} out of scope, {} nofollow, {} excluded, {} beyond --max-depth, {} beyond --max-pages, {} unusable links, {} links of pages that repeat earlier pages",
        c.pages,
        c.depth,
        n.robots,
        n.out_of_scope,
        n.nofollow,
        n.excluded,
        n.beyond_depth,
        n.beyond_max_pages,
        n.unusable,
        n.repeating
    );
    if c.canonicals_beyond > 0 {
        eprintln!(
            "webdup: crawl: {} canonical targets beyond the limits fetched for their verdict (not followed further)",
            c.canonicals_beyond
        );
    }
    for t in &c.traps {
        eprintln!(
            "webdup: crawl: trap {}: its pages repeat each other; {} fetched, {} more URLs skipped",
            webdup::report::terminal_safe(&t.pattern),
            t.fetched,
            t.skipped
        );
    }
}

/// The report `write` makes, in the format `output` asks for, to its file
/// or standard output.
pub fn write_output(
    output: &OutputArgs,
    write: impl Fn(report::Format, &mut dyn Write) -> webdup::Result<()>,
) -> anyhow::Result<()> {
    let format = output.format(io::stdout().is_terminal() && output.output.is_none());
    let bom: &[u8] = if output.csv_bom && matches!(format, report::Format::Csv | report::Format::Tsv) {
        report::UTF8_BOM
    } else {
        b""
    };
    write_to(output.output.as_deref(), |w| {
        w.write_all(bom)?;
        write(format, w)?;
        Ok(())
    })
}

/// What `write` writes, to the file at `path` or to standard output.
pub fn write_to(path: Option<&Path>, write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>) -> anyhow::Result<()> {
    match path {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = io::BufWriter::new(file);
            write(&mut w).with_context(|| format!("cannot write {}", path.display()))?;
            w.flush().with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => {
            let mut w = io::BufWriter::new(io::stdout().lock());
            write(&mut w)?;
            w.flush()?;
        }
    }
    Ok(())
}

/// A progress bar on standard error when it is a terminal; nothing otherwise.
/// While a crawl runs, a line of its counts instead of a bar: its total is
/// not known until it ends.
pub struct Bar {
    bar: Option<ProgressBar>,
    failed: AtomicU64,
    /// When the stage's crawl reported first: the line's clock.
    crawl_since: Mutex<Option<Instant>>,
}

impl Bar {
    /// Drawn unless `quiet` or standard error is not a terminal.
    pub fn new(quiet: bool) -> Bar {
        let show = !quiet && std::io::stderr().is_terminal();
        // Hidden until a stage starts with its style, so nothing unlabeled
        // is ever drawn.
        Bar {
            bar: show.then(|| ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())),
            failed: AtomicU64::new(0),
            crawl_since: Mutex::new(None),
        }
    }
}

fn rate(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&format_rate(state.per_sec()));
}

/// `31.7/s`, `4.2/s`, `1250/s`: a rate people read at a glance.
fn format_rate(per_sec: f64) -> String {
    format!("{}/s", per_second(per_sec))
}

fn per_second(per_sec: f64) -> String {
    if per_sec >= 100.0 { format!("{per_sec:.0}") } else { format!("{per_sec:.1}") }
}

/// `1,234 fetched  5,678 queued  9,012 found  3 errors  45.2 pages/s`
/// (a rate over one second at least: no wild figure from the first pages).
fn crawl_line(c: CrawlCounts, elapsed: Duration) -> String {
    let per_sec = c.fetched as f64 / elapsed.as_secs_f64().max(1.0);
    format!(
        "{} fetched  {} queued  {} found  {} errors  {} pages/s",
        HumanCount(c.fetched),
        HumanCount(c.queued),
        HumanCount(c.found),
        HumanCount(c.errors),
        per_second(per_sec)
    )
}

impl Progress for Bar {
    fn start(&self, stage: &'static str, total: u64) {
        if let Some(b) = &self.bar {
            let style = ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {rate} eta {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .with_key("rate", rate)
                .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(stage);
            self.failed.store(0, Ordering::Relaxed);
            *self.crawl_since.lock().unwrap_or_else(|e| e.into_inner()) = None;
            b.set_message("");
            b.set_length(total);
            b.set_position(0);
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    fn grow(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    fn fail(&self, n: u64) {
        if let Some(b) = &self.bar {
            let failed = self.failed.fetch_add(n, Ordering::Relaxed) + n;
            // A crawl's line counts its errors itself.
            if self.crawl_since.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
                b.set_message(format!("· {failed} failed"));
            }
        }
    }

    fn crawled(&self, counts: CrawlCounts) {
        if let Some(b) = &self.bar {
            let mut since = self.crawl_since.lock().unwrap_or_else(|e| e.into_inner());
            let first = since.is_none();
            b.set_message(crawl_line(counts, since.get_or_insert_with(Instant::now).elapsed()));
            if first {
                b.set_style(
                    ProgressStyle::with_template("{prefix:>12} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                b.set_prefix("crawl");
            }
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_have_at_most_one_decimal() {
        assert_eq!(format_rate(31.6874), "31.7/s");
        assert_eq!(format_rate(0.04), "0.0/s");
        assert_eq!(format_rate(1249.6), "1250/s");
    }

    #[test]
    fn a_crawl_line_groups_digits_and_gives_pages_a_second() {
        let counts = CrawlCounts { found: 9012, fetched: 1234, queued: 5678, errors: 3 };
        assert_eq!(
            crawl_line(counts, Duration::from_secs(10)),
            "1,234 fetched  5,678 queued  9,012 found  3 errors  123 pages/s"
        ); // The first pages in less than a second: a rate over one second.
        let first = CrawlCounts { found: 40, fetched: 3, queued: 37, errors: 0 };
        assert_eq!(
            crawl_line(first, Duration::from_millis(20)),
            "3 fetched  37 queued  40 found  0 errors  3.0 pages/s"
        );
    }
}
