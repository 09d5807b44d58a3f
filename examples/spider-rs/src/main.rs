//! `webdup-spider-example START_URL INDEX`: crawls the site at START_URL
//! with spider and prints, for every page, whether the webdup index at
//! INDEX (created if missing) had seen its content.

use std::path::PathBuf;

use anyhow::{Context, Result};

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(start), Some(index), None) = (args.next(), args.next(), args.next()) else {
        anyhow::bail!("usage: webdup-spider-example START_URL INDEX");
    };
    let index = PathBuf::from(index);
    let outcomes = webdup_spider_example::crawl(&start, &index)
        .await
        .with_context(|| format!("crawling {start} into {}", index.display()))?;
    for outcome in &outcomes {
        println!("{outcome}");
    }
    Ok(())
}
