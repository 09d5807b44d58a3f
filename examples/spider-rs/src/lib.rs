//! Dedup at crawl time: a [spider](https://docs.rs/spider) crawl whose every
//! page is checked against, and stored in, a webdup index.
//!
//! spider broadcasts each page it fetches to its subscribers; one task
//! takes them off the broadcast at once and hands them to a thread that
//! asks the index. Checking a page (extracting its main text, shingling it,
//! querying SQLite) is blocking work, kept off the crawler's async runtime,
//! and a broadcast drops pages a slow subscriber leaves waiting.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;

use anyhow::{Result, anyhow};
use spider::page::Page;
use spider::website::Website;
use tokio::sync::broadcast::error::RecvError;
use webdup::engine::Config;
use webdup::store::Index;
use webdup::crawler::{CrawledPage, Crawler};
use webdup::template::TemplateConfig;

/// What the index said about one fetched page.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub url: String,
    pub verdict: Verdict,
}

/// The index's answer for a page.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Content the index had not seen; the page is stored.
    New,
    /// The index holds this content already, under `of`: exactly (same
    /// main text, `jaccard` 1) or nearly (`jaccard` at least the index's
    /// threshold). The page is stored too, as seen in this crawl.
    Duplicate { of: String, jaccard: f64 },
    /// Not checked: an error status, no HTML, a page webdup could not read.
    Skipped(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::New => write!(f, "new        {}", self.url),
            Verdict::Duplicate { of, jaccard } => {
                write!(f, "duplicate  {} of {of} (jaccard {jaccard:.3})", self.url)
            }
            Verdict::Skipped(why) => write!(f, "skipped    {}: {why}", self.url),
        }
    }
}

/// Opens the index at `path` as `webdup index` and the Python package do:
/// an existing index with the settings it was built with, a new one with the
/// command line's defaults (the library's, with site-template suppression).
pub fn open_index(path: &Path) -> Result<Crawler> {
    let defaults = Config { template: Some(TemplateConfig::default()), ..Config::default() };
    let config =
        if path.exists() { Index::open_existing(path)?.settings().apply(defaults)? } else { defaults.validate()? };
    let index = Index::open(path, &config)?;
    Ok(Crawler::new(Arc::new(index), &config, "spider"))
}

/// Crawls the site at `start`, checking every page against the index at
/// `index_path` (created if missing) and storing it there. Returns one
/// outcome per fetched page, in the order they were checked.
pub async fn crawl(start: &str, index_path: &Path) -> Result<Vec<Outcome>> {
    let crawler = open_index(index_path)?;

    let mut website = Website::new(start);
    website.with_respect_robots_txt(true).with_user_agent(Some("webdup-spider-example"));
    let mut pages = website.subscribe(0);

    let (to_checker, inbox) = mpsc::channel::<Page>();
    let receiver = tokio::spawn(async move {
        loop {
            match pages.recv().await {
                Ok(page) => {
                    if to_checker.send(page).is_err() {
                        break; // the checking thread is gone; joining it says why
                    }
                }
                Err(RecvError::Lagged(n)) => eprintln!("warning: {n} pages missed (the subscriber fell behind)"),
                Err(RecvError::Closed) => break,
            }
        }
    });
    let checker = std::thread::spawn(move || inbox.into_iter().map(|page| check(&crawler, &page)).collect());

    website.crawl().await;
    website.unsubscribe(); // closes the broadcast: the receiver ends, then the checker
    receiver.await?;
    checker.join().map_err(|_| anyhow!("the checking thread panicked"))
}

/// Checks and stores one page; a page that cannot be is skipped, with why.
fn check(crawler: &Crawler, page: &Page) -> Outcome {
    let url = page.get_url().to_string();
    let skip = |why: String| Outcome { url: url.clone(), verdict: Verdict::Skipped(why) };
    if let Some(error) = &page.error_status {
        return skip(error.to_string());
    }
    let status = page.status_code.as_u16();
    if !page.status_code.is_success() {
        return skip(format!("HTTP {status}"));
    }
    if page.binary_file || page.is_empty() {
        return skip("no HTML".into());
    }
    let final_url = page.get_url_final();
    let crawled = CrawledPage {
        final_url: (final_url != url).then(|| final_url.to_string()),
        status: Some(status),
        ..CrawledPage::html(&url, page.get_html())
    };
    let checked = match crawler.check_and_insert(&crawled) {
        Ok(checked) => checked,
        Err(e) => return skip(e.to_string()),
    };
    // The first identical page, else the first of the same text, else the nearest page.
    let verdict = match checked.result.best() {
        Some(m) => Verdict::Duplicate { of: m.url.clone(), jaccard: m.jaccard },
        None => Verdict::New,
    };
    Outcome { url, verdict }
}
