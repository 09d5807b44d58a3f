//! Crawl-time deduplication measured on a near-duplicate corpus (see
//! `near_dup_corpus`): each page is checked and stored, one at a time and in
//! a shuffled order, as a crawler would (`webdup::crawler`), with
//! each corpus site (`pages/sNNNN`) on a host of its own. Prints how many
//! pages were answered "seen", how many of those named a page of another
//! true cluster (false drops), and the corpus's known duplicates (a true
//! cluster of n pages holds n - 1).
//!
//! `cargo run --release --example crawl_order_eval -- --corpus DIR [--seed S] [--no-learning]`
//!
//! `--no-learning` stores pages without what the index learns site
//! templates from (as before the index learned them), for comparison.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use webdup::crawler::{CrawledPage, Crawler};
use webdup::engine::Config;
use webdup::store::Index;

const USAGE: &str = "usage: crawl_order_eval --corpus DIR [--seed S] [--no-learning]";

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut corpus, mut seed, mut learning) = (None, 1u64, true);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--corpus" => corpus = Some(PathBuf::from(args.next().context("--corpus needs a value")?)),
            "--seed" => seed = args.next().context("--seed needs a value")?.parse().context("--seed")?,
            "--no-learning" => learning = false,
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let root = corpus.context(USAGE)?;
    let truth = std::fs::read_to_string(root.join("truth.tsv")).with_context(|| format!("{}", root.display()))?;
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for line in truth.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 3 {
            bail!("truth.tsv: bad line {line:?}");
        }
        rows.push((f[0].to_string(), f[1].to_string(), f[2].to_string()));
    }
    // Fisher-Yates with a fixed generator: the same order for the same seed.
    let mut state = seed;
    for i in (1..rows.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        rows.swap(i, (state >> 33) as usize % (i + 1));
    }
    let config = Config::tool().validate()?;
    let dir = tempfile::tempdir()?;
    let index = Index::open(dir.path().join("eval.db"), &config)?;
    let crawler = Crawler::new(Arc::new(index), &config, "eval");
    // pages/sNNNN/pNNNNN.html -> http://sNNNN.test/sNNNN/pNNNNN.html
    let url = |id: &str| -> anyhow::Result<String> {
        let site = id.split('/').nth(1).with_context(|| format!("{id}: not pages/SITE/PAGE"))?;
        Ok(format!("http://{site}.test/{}", id.trim_start_matches("pages/")))
    };
    let (mut seen, mut false_drops, mut errors) = (0usize, 0usize, 0usize);
    let mut cluster_of: HashMap<String, &str> = HashMap::new();
    let mut sizes: HashMap<&str, usize> = HashMap::new();
    let start = std::time::Instant::now();
    for (id, cluster, _kind) in &rows {
        let page = CrawledPage::html(url(id)?, std::fs::read_to_string(root.join(id))?);
        *sizes.entry(cluster).or_default() += 1;
        let checked = if learning {
            crawler.check_and_insert(&page).map(|c| c.result)
        } else {
            crawler.record(&page).and_then(|row| Ok(crawler.index().check_and_insert(&row).map(|(r, _)| r)?))
        };
        let result = match checked {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{id}: {e}");
                errors += 1;
                continue;
            }
        };
        if let Some(m) = result.best() {
            seen += 1;
            if cluster_of.get(&m.url) != Some(&cluster.as_str()) {
                false_drops += 1;
            }
        }
        cluster_of.insert(page.url, cluster);
    }
    let known: usize = sizes.values().map(|n| n - 1).sum();
    println!(
        "{} pages, seed {seed}, learning {}: seen {seen}, false drops {false_drops}, right drops {}, known duplicates \
         {known}, errors {errors}, {:.1} s",
        rows.len(),
        if learning { "on" } else { "off" },
        seen - false_drops,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
