//! Command-line interface. Flags (clap) become a validated
//! [`webdup::Config`] here; the library never sees clap.
//!
//! Exit codes: 0 when every input was processed, 1 when the run completed
//! but some inputs failed (they are listed in the output), 2 on a fatal
//! error (bad flags, unwritable output, no usable input).

mod args;
mod audit;
mod dataflow;
mod index;
mod lost_and_found;
mod progress;
mod serve;

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;

use webdup::engine::{self, Corpus};
use webdup::report::{self, ComparisonReport, NeighborReport, terminal_safe};
use webdup::run::{Clustered, Loaded, Run, RunConfig};
use webdup::source::ReadLimits;
use webdup::template::Templates;

use args::{Cli, Command, CommonArgs, EvalCommand, EvalFormat, OutputArgs, TextFormat};
use webdup::extract::{
    ExtractorKind,
    eval::{self, EvalOptions},
};

/// Exit code when the run completed but some inputs failed.
const EXIT_SOME_FAILED: u8 = 1;
/// Exit code for fatal errors.
const EXIT_FATAL: u8 = 2;

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("webdup: error: {}", terminal_safe(&format!("{err:#}")));
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

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    if !matches!(cli.command, Command::Serve(_)) {
        crate::tune_memory_for_a_job();
    }
    match cli.command {
        Command::Cluster { inputs, common, output, explain, index } => {
            let config = common.to_config()?;
            if explain {
                explain_lsh(&config);
            }
            if let Some(path) = index {
                return index::cluster(&path, &inputs, &common, &output);
            }
            // One page per final URL: an old URL that redirects to a page of
            // the run is a redirect, not a duplicate of its target.
            let Clustered { corpus, report, .. } =
                webdup::run::cluster(load_corpus(&inputs, &common, &config)?, &config);
            write_output(&output, |fmt, out| report.write(fmt, out))?;
            Ok(exit_for(&corpus))
        }
        Command::Neighbors { inputs, common, output, top, min_similarity } => {
            let config = common.to_config()?;
            let floor = min_similarity.unwrap_or(config.matching.threshold);
            let top = top as usize;
            if !(floor > 0.0 && floor <= 1.0) {
                bail!("--min-similarity must be in (0, 1], not {floor}");
            }
            let corpus = load_corpus(&inputs, &common, &config)?.corpus;
            let lists = engine::neighbors(&corpus, &config, floor, top);
            let report = NeighborReport::new(&corpus, &lists, config.matching.measure, floor, top);
            write_output(&output, |fmt, out| report.write(fmt, out))?;
            Ok(exit_for(&corpus))
        }
        Command::Audit { inputs, index: Some(path), crawl, common, out, thin_words, csv_bom } => {
            debug_assert!(inputs.is_empty(), "clap rejects inputs with --index");
            audit::run_index(&path, crawl.as_deref(), &common, &out, thin_words, csv_bom)
        }
        Command::Audit { inputs, index: None, crawl, common, out, thin_words, csv_bom } => {
            // Not clap's `requires`: it is waived once INPUT, which conflicts
            // with --index, is given.
            if crawl.is_some() {
                bail!("--crawl picks a crawl of an index: give --index FILE (and no INPUT)");
            }
            audit::run(&inputs, &common, &out, thin_words, csv_bom)
        }
        Command::Extract { pages, extract, url, format, fetch } => extract_pages(&pages, &extract, url, format, &fetch),
        Command::Eval { what: EvalCommand::Extract { dir, extractor, limit, threads, per_page, format } } => {
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
            let progress = progress::Bar::new(false);
            let report = eval::evaluate(&dir, &options, &progress)
                .with_context(|| format!("cannot evaluate {}", dir.display()))?;
            print_eval(format, &report)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval { what: EvalCommand::Cluster { truth, clustering, format } } => {
            let read = |p: &std::path::PathBuf| {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
            };
            let truth = webdup::score::Truth::parse(&read(&truth)?)
                .with_context(|| format!("invalid truth file {}", truth.display()))?;
            let predicted = webdup::score::Clustering::parse(&read(&clustering)?)
                .with_context(|| format!("invalid clustering {}", clustering.display()))?;
            let score = webdup::score::score(&truth, &predicted);
            print_eval(format, &score)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { a, b, common, output } => {
            let config = common.to_config()?;
            let corpus = load_corpus(&[a.clone(), b.clone()], &common, &config)?.corpus;
            if let Some(e) = corpus.errors.first() {
                bail!("cannot compare: {}: {}", e.id, e.message);
            }
            if corpus.docs.len() != 2 {
                bail!("compare needs two different documents");
            }
            let comparison = engine::compare(&corpus.docs[0], &corpus.docs[1], config.matching.threshold);
            let report = ComparisonReport { schema_version: report::SCHEMA_VERSION, a, b, comparison };
            write_output(&output, |fmt, out| report.write(fmt, out))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Index { command } => index::run(command),
        Command::Serve(args) => serve::run(args),
        Command::Ingest(args) => dataflow::ingest(args),
        Command::Dcluster(args) => dataflow::dcluster(args),
        Command::LostAndFound(args) => lost_and_found::run(args),
        Command::Completions { shell } => {
            // Generated in memory: clap_complete panics when its writer
            // fails, and a closed pipe is no reason to panic.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "webdup", &mut script);
            let mut out = io::stdout().lock();
            out.write_all(&script)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let mut out = io::stdout().lock();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut out)?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An evaluation's table or JSON on standard output.
fn print_eval<T: std::fmt::Display + serde::Serialize>(format: EvalFormat, value: &T) -> anyhow::Result<()> {
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

/// `webdup extract`: each page's main text, or JSON with its metadata.
fn extract_pages(
    pages: &[String],
    args: &args::ExtractArgs,
    url: Option<String>,
    format: TextFormat,
    fetch: &args::FetchArgs,
) -> anyhow::Result<ExitCode> {
    if url.is_some() && pages.len() != 1 {
        bail!("--url applies to a single page; {} were given", pages.len());
    }
    let config = args.to_config(webdup::extract::ExtractorKind::Auto)?;
    let limits = ReadLimits::default();
    let mut run = Run::new(RunConfig { fetch: fetch.to_config(limits.max_bytes)?, limits, ..RunConfig::default() });
    let results = run.extract(pages, url.as_deref(), &config)?;
    let mut failed = false;
    let mut out = io::BufWriter::new(io::stdout().lock());
    for (id, r) in pages.iter().zip(results) {
        match r {
            Ok(page) => match format {
                TextFormat::Text => {
                    if pages.len() > 1 {
                        writeln!(out, "==> {id} <==")?;
                    }
                    writeln!(out, "{}", page.text)?;
                }
                TextFormat::Json => {
                    let mut v = serde_json::to_value(&page)?;
                    v["id"] = serde_json::Value::String(id.clone());
                    serde_json::to_writer(&mut out, &v)?;
                    writeln!(out)?;
                }
            },
            Err(e) => {
                failed = true;
                out.flush()?;
                eprintln!("webdup: {}: [{}] {}", terminal_safe(&e.id), e.kind, terminal_safe(&e.message));
            }
        }
    }
    out.flush()?;
    Ok(if failed { ExitCode::from(EXIT_SOME_FAILED) } else { ExitCode::SUCCESS })
}

fn exit_for(corpus: &Corpus) -> ExitCode {
    if corpus.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_SOME_FAILED) }
}

/// Expands inputs (sitemaps included), reads local files and fetches URLs,
/// and fingerprints every document as it arrives.
fn load_corpus(inputs: &[String], common: &CommonArgs, config: &webdup::Config) -> anyhow::Result<Loaded> {
    load_corpus_with(inputs, common, config, &Templates::default())
}

/// [`load_corpus`], with site templates learned earlier (an index's) for
/// the sites that have too few pages in this run to learn their own.
fn load_corpus_with(
    inputs: &[String],
    common: &CommonArgs,
    config: &webdup::Config,
    known: &Templates,
) -> anyhow::Result<Loaded> {
    let mut run = new_run(common)?;
    let progress = progress::Bar::new(common.quiet);
    let loaded = run.load_all(inputs, &mut io::stdin().lock(), config, known, &progress)?;
    report_archives(&loaded.warc, common.quiet);
    Ok(loaded)
}

/// What the run's web archives gave, on standard error unless `-q`: the
/// records passed over (redirects, revisits, images) are in no report.
fn report_archives(summary: &webdup::warc::Summary, quiet: bool) {
    if !quiet && !summary.is_empty() {
        eprintln!("webdup: WARC: {summary}");
    }
}

/// A run with the fetch and read settings of the flags.
fn new_run(common: &CommonArgs) -> anyhow::Result<Run> {
    Ok(Run::new(RunConfig {
        fetch: common.fetch.to_config(common.max_bytes)?,
        limits: ReadLimits { max_bytes: common.max_bytes },
        inputs: common.input_options(),
    }))
}

fn write_output(
    output: &OutputArgs,
    write: impl Fn(report::Format, &mut dyn Write) -> webdup::Result<()>,
) -> anyhow::Result<()> {
    let format = output.format(io::stdout().is_terminal() && output.output.is_none());
    let bom: &[u8] = if output.csv_bom && matches!(format, report::Format::Csv | report::Format::Tsv) {
        report::UTF8_BOM
    } else {
        b""
    };
    match &output.output {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = io::BufWriter::new(file);
            w.write_all(bom).with_context(|| format!("cannot write {}", path.display()))?;
            write(format, &mut w).with_context(|| format!("cannot write {}", path.display()))?;
            w.flush().with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => {
            let mut w = io::BufWriter::new(io::stdout().lock());
            w.write_all(bom)?;
            write(format, &mut w)?;
            w.flush()?;
        }
    }
    Ok(())
}

/// Prints the LSH banding `cluster` uses and its S-curve to standard error:
/// the banding is tuned for the lower of the two thresholds, so that its
/// candidates cover both rules.
fn explain_lsh(config: &webdup::Config) {
    let threshold = config.lowest_threshold();
    let p = config.lsh_params();
    eprintln!(
        "LSH: {} bands x {} rows ({} of {} permutations) for threshold {threshold}",
        p.bands,
        p.rows,
        p.used_rows(),
        config.fingerprint.permutations,
    );
    if let Some(cross) = config.matching.cross_site_threshold {
        eprintln!(
            "  the lower of --threshold {} (pages of one site) and --cross-site-threshold {cross}",
            config.matching.threshold
        );
    }
    eprintln!(
        "  chosen by minimizing 0.5 x false-positive area + 0.5 x false-negative area among bandings \
         that catch at least {:.1}% of pairs at the threshold",
        webdup::index::lsh::RECALL_FLOOR * 100.0
    );
    eprintln!("  similarity  P(candidate)");
    let mut points: Vec<f64> = vec![0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, threshold];
    points.sort_by(f64::total_cmp);
    points.dedup();
    for s in points {
        let mark = if s == threshold { "  <- threshold" } else { "" };
        eprintln!("  {s:>10.2}  {:>12.4}{mark}", p.probability(s));
    }
    eprintln!(
        "  false-positive area {:.4}, false-negative area {:.4}",
        p.false_positive_area(threshold),
        p.false_negative_area(threshold)
    );
}
