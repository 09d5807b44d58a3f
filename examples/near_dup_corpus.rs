//! Writes a near-duplicate evaluation corpus built from real pages (issue 13;
//! see `webdup_eval::corpus` and docs/near-dup-corpus.md):
//!
//! `cargo run --release --example near_dup_corpus -- --data ../shared/data --out DIR --pages N --seed S
//! [--pages-per-template K] [--sources-per-dataset M] [--flat] [--furniture SHARE] [--canonicals]`
//!
//! `--flat` writes every page into one folder (`pages/pNNNNN.html`, same truth); `--furniture SHARE`
//! wraps the content of that share of the templates in furniture-like containers (`…-widget-wrap`,
//! `category-popular`, page builders' wrappers); `--canonicals` gives every page a `<link rel=canonical>`
//! (a syndicated copy names its original's address).
//!
//! `--texts` also writes each page's inserted main text to `texts/sNNNN/pNNNNN.txt`: clustering those
//! (`webdup cluster texts`, ids mapped back with `sed 's#texts/\(.*\)\.txt#pages/\1.html#'`) measures
//! the similarity rule alone, as with a perfect extractor.
//!
//! Then, in DIR: `webdup cluster pages -f json -o out.json && webdup eval cluster truth.tsv out.json`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use webdup_eval::corpus::{CorpusConfig, generate};

const USAGE: &str = "usage: near_dup_corpus --data DIR --out DIR [--pages N] [--seed S] [--pages-per-template K] \
                     [--sources-per-dataset M] [--texts] [--flat] [--furniture SHARE] [--canonicals]";

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut config = CorpusConfig::default();
    let (mut data, mut out, mut texts) = (None, None, false);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--data" => data = Some(PathBuf::from(value()?)),
            "--out" => out = Some(PathBuf::from(value()?)),
            "--pages" => config.pages = value()?.parse().context("--pages")?,
            "--seed" => config.seed = value()?.parse().context("--seed")?,
            "--pages-per-template" => config.pages_per_template = value()?.parse().context("--pages-per-template")?,
            "--sources-per-dataset" => {
                config.sources_per_dataset = Some(value()?.parse().context("--sources-per-dataset")?)
            }
            "--texts" => texts = true,
            "--flat" => config.flat = true,
            "--furniture" => config.furniture = value()?.parse().context("--furniture")?,
            "--canonicals" => config.canonicals = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let (Some(data), Some(out)) = (data, out) else { bail!(USAGE) };
    let start = Instant::now();
    let corpus = generate(&data, &config)?;
    let planned = start.elapsed();
    corpus.write(&out)?;
    if texts {
        for page in corpus.pages() {
            let path = out.join(page.id.replacen("pages/", "texts/", 1).replace(".html", ".txt"));
            std::fs::create_dir_all(path.parent().context("no parent")?)?;
            std::fs::write(&path, corpus.main_text(page)).with_context(|| path.display().to_string())?;
        }
    }
    eprintln!(
        "{} pages from {} templates in {} ({:.1} s planning, {:.1} s in all); {} source pages usable, {} skipped:",
        corpus.pages().len(),
        corpus.templates(),
        out.display(),
        planned.as_secs_f64(),
        start.elapsed().as_secs_f64(),
        corpus.usable_sources(),
        corpus.skipped().len()
    );
    for (reason, n) in corpus.skip_counts() {
        eprintln!("  {n:5}  {reason}");
    }
    for (kind, n) in corpus.kind_counts() {
        eprintln!("  {n:5}  {}", kind.name());
    }
    Ok(())
}
