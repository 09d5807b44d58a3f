//! `webdup index ...` and `webdup cluster --index`: the persistent index
//! from the command line.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;

use webdup::engine::{self, Difference, Given, Measure};
use webdup::extract::ExtractorKind;
use webdup::report::{ClusterReport, IndexedClusterReport, IndexedRow};
use webdup::run::Loaded;
use webdup::store::{CheckResult, Index, PageRecord, pages_of};

use crate::args::{CommonArgs, IndexCommand, OutputArgs, SettingsArgs};
use crate::common::{
    Bar, EXIT_SOME_FAILED, exit_for, load_corpus_with, new_run, report_archives, report_crawl, write_output,
};

pub fn run(command: IndexCommand) -> anyhow::Result<ExitCode> {
    match command {
        IndexCommand::Add { crawl, inputs, batch, no_text, index, common } => {
            add(&crawl, &inputs, batch as usize, !no_text, &index.path, &common)
        }
        IndexCommand::Query { target, index, common } => query(&target, &index.path, &common),
        // Neither depends on the fingerprint settings: the index's own are used.
        IndexCommand::Stats { index } => {
            let index = Index::open_existing(&index.path)?;
            print_json(&index.stats()?)?;
            Ok(ExitCode::SUCCESS)
        }
        IndexCommand::Remove { url, index } => {
            let index = Index::open_existing(&index.path)?;
            let removed = index.remove(&url)?;
            print_json(&serde_json::json!({ "url": url, "removed": removed }))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Opens an existing index with the settings it was built with: its stored
/// fingerprints are only comparable under those. Flags that ask for other
/// settings are named on stderr; the rest of `common` (fetching, output)
/// applies as given.
pub fn open_with_stored_settings(path: &Path, common: &CommonArgs) -> anyhow::Result<(Index, webdup::Config)> {
    open_stored(path, common, false)
}

/// [`open_with_stored_settings`], but with `--threshold` (and the
/// cross-site threshold) as given when it is given: stored shingle sets are
/// compared exactly, so any threshold applies to them (`audit --index`).
pub fn open_to_recluster(path: &Path, common: &CommonArgs) -> anyhow::Result<(Index, webdup::Config)> {
    open_stored(path, common, true)
}

fn open_stored(path: &Path, common: &CommonArgs, own_threshold: bool) -> anyhow::Result<(Index, webdup::Config)> {
    let index = Index::open_existing(path)?;
    let given = Given {
        threshold: common.threshold.is_some(),
        cross_site_threshold: common.settings.cross_site_threshold.is_some(),
    };
    let (config, differences) = common.to_config()?.under_index(index.settings(), given, own_threshold)?;
    if !differences.is_empty() {
        eprintln!("webdup: using the settings {} was built with: {}", path.display(), Difference::list(&differences));
    }
    Ok((index, config))
}

/// What the index holds like `doc`: by its own Jaccard threshold, or by
/// containment at `containment` (the --threshold given).
fn check(index: &Index, doc: &engine::Fingerprint, measure: Measure, containment: f64) -> anyhow::Result<CheckResult> {
    Ok(match measure {
        Measure::Jaccard => index.check(doc)?,
        Measure::Containment => index.check_containment(doc, containment)?,
    })
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct AddSummary<'a> {
    crawl: &'a str,
    index: String,
    pages: usize,
    with_content: usize,
    failed: usize,
    /// Sites whose template this add learned and stored.
    templates: usize,
    /// Inputs that named nothing (missing paths); not stored.
    not_found: Vec<String>,
    /// What the records of web archives gave; absent without one.
    #[serde(skip_serializing_if = "webdup::warc::Summary::is_empty")]
    warc: webdup::warc::Summary,
}

/// `config` for adding to or serving the index at `path`: when the index
/// exists, what the command line leaves to its default is the index's own
/// for the extractor (one made before `blocks` became the default keeps
/// `auto`) and the cross-site threshold (one made before the index applied
/// it has none, and its band table is built for its one threshold).
pub fn with_index_defaults(path: &Path, args: &SettingsArgs, mut config: webdup::Config) -> webdup::Config {
    if !path.is_file() {
        return config;
    }
    let Ok(existing) = Index::open_existing(path) else { return config };
    let stored = existing.settings();
    if args.extract.extractor.is_none()
        && let Ok(kind) = stored.fingerprint.extractor.parse::<ExtractorKind>()
    {
        config.fingerprint.extractor = kind.to_string();
    }
    if args.cross_site_threshold.is_none() {
        config.matching.cross_site_threshold = stored.cross_site_threshold;
    }
    config
}

fn add(
    crawl: &str,
    inputs: &[String],
    batch: usize,
    keep_text: bool,
    path: &Path,
    common: &CommonArgs,
) -> anyhow::Result<ExitCode> {
    // Page metadata (canonical, noindex, description, h1) and main texts are stored.
    let config = with_index_defaults(path, common, webdup::Config { keep_pages: true, ..common.to_config()? });
    let index = Index::open(path, &config)?;
    if crawl.trim().is_empty() {
        anyhow::bail!("--crawl must not be empty");
    }
    // Expand every input once (sitemaps, lists, directories), as `cluster`
    // does, so a URL named by a sitemap and a list is fetched once.
    let mut run = new_run(common)?;
    let collected = run.expand(inputs, &mut std::io::stdin().lock())?;
    let not_found = collected.errors.iter().map(|e| format!("{}: {}", e.id, e.message)).collect();
    // Every page of the add is fingerprinted before any is stored: each
    // site's template is learned over the whole add (a batch is only a
    // transaction, and never changes what is stored), and kept with the
    // crawl for the pages checked or added later. Sites with too few pages
    // here take the template the index already has.
    let mut loaded = run.load_following(collected, &config, &Bar::new(common.quiet))?;
    report_archives(&loaded.warc, common.quiet);
    report_crawl(loaded.crawl.as_ref(), common.quiet);
    if !keep_text {
        for page in loaded.corpus.pages.values_mut() {
            page.text = None;
        }
    }
    let learned = loaded.finish(&config, &index.templates()?);
    // Kept with the crawl, so `audit --index` reports its links as `audit
    // --follow` does; after `finish`, which lists the pages that name the links' sources.
    let facts = loaded.crawl.as_ref().map(|c| webdup::audit::crawl_facts(c, &loaded.pages));
    let warc = std::mem::take(&mut loaded.warc);
    let pages = pages_of(crawl, loaded, keep_text)?;
    let summary = AddSummary {
        crawl,
        index: path.display().to_string(),
        pages: pages.len(),
        with_content: pages.iter().filter(|p| p.fingerprint.is_some()).count(),
        failed: pages.iter().filter(|p| p.fingerprint.is_none()).count(),
        templates: learned.iter().filter(|(_, t)| !t.is_empty()).count(),
        not_found,
        warc,
    };
    let cannot_write = || format!("cannot write to {}", path.display());
    index.store_templates(crawl, &learned).with_context(cannot_write)?;
    for chunk in pages.chunks(batch) {
        index.insert_batch(chunk).with_context(cannot_write)?;
    }
    if let Some(facts) = &facts {
        index.store_crawl_facts(crawl, facts).with_context(cannot_write)?;
    }
    print_json(&summary)?;
    Ok(if summary.failed == 0 && summary.not_found.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_SOME_FAILED)
    })
}

#[derive(Serialize)]
struct QueryReport {
    input: String,
    /// What the index holds under this exact URL, if anything.
    stored: Vec<PageRecord>,
    #[serde(flatten)]
    result: CheckResult,
}

fn query(target: &str, path: &Path, common: &CommonArgs) -> anyhow::Result<ExitCode> {
    let (index, config) = open_with_stored_settings(path, common)?;
    // A page alone is fingerprinted with its site's template, as learned by
    // the adds that stored the pages it is compared with.
    let mut known = webdup::template::Templates::default();
    if let Some(site) = config.fingerprint.template.as_ref().and_then(|t| webdup::template::site_of(target, t.scope))
        && let Some(template) = index.template_for(target)?
    {
        known.insert(site, template);
    }
    let corpus = load_corpus_with(&[target.to_string()], common, &config, &known)?.corpus;
    if let Some(e) = corpus.errors.first() {
        anyhow::bail!("cannot query {}: {}", e.id, e.message);
    }
    let Some(doc) = corpus.docs.first() else { anyhow::bail!("cannot query {target}: no document") };
    if corpus.docs.len() > 1 {
        anyhow::bail!(
            "cannot query {target}: a web archive of {} pages; `webdup cluster --index` checks each of them",
            corpus.docs.len()
        );
    }
    let result = check(&index, &*corpus.held(doc)?, config.matching.measure, common.threshold())?;
    let report = QueryReport { input: target.to_string(), stored: index.get(target)?, result };
    print_json(&report)?;
    Ok(ExitCode::SUCCESS)
}

/// `webdup cluster --index FILE`: clusters the new crawl, then checks each
/// document against everything indexed. JSON, or CSV with one row per
/// (document, indexed match).
pub fn cluster(path: &Path, inputs: &[String], common: &CommonArgs, output: &OutputArgs) -> anyhow::Result<ExitCode> {
    let config = with_index_defaults(path, common, common.to_config()?);
    let index = match config.matching.measure {
        Measure::Jaccard => Index::open(path, &config)?,
        // --threshold is the containment asked for; the index keeps its own
        // Jaccard threshold, and its fingerprints must be made like these.
        Measure::Containment => {
            let index = Index::open_existing(path)?;
            let mut ours = webdup::store::Settings::of(&config);
            ours.threshold = index.settings().threshold;
            let differences = index.settings().differences(&ours);
            if !differences.is_empty() {
                anyhow::bail!(
                    "{} was built with other settings: {}; fingerprints made differently cannot be compared",
                    path.display(),
                    Difference::list(&differences)
                );
            }
            index
        }
    };
    // Sites with too few pages in this run take the template the index learned.
    let Loaded { corpus, fetches, warc, .. } = load_corpus_with(inputs, common, &config, &index.templates()?)?;
    let clustering = engine::find_duplicates(&corpus, &config)?;
    let mut report = ClusterReport::new(&corpus, &clustering, &config);
    report.fetches = fetches;
    report.warc = warc;
    let mut indexed = Vec::new();
    for doc in &corpus.docs {
        let result = check(&index, &*corpus.held(doc)?, config.matching.measure, config.matching.threshold)?;
        if result.seen() {
            indexed.push(IndexedRow { doc: doc.id.clone(), result });
        }
    }
    let full = IndexedClusterReport { report, index: path.display().to_string(), indexed };
    write_output(output, |format, out| full.write(format, out))?;
    Ok(exit_for(&corpus))
}
