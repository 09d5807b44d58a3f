//! `--follow` and its limits: the flags that turn URL inputs into start
//! pages of a crawl.

use std::path::PathBuf;

use clap::Args;
use webdup::crawl::{CrawlConfig, Limits, ScopeKind};

/// How links are followed from URL inputs.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Crawl")]
pub struct FollowArgs {
    /// Follow links from each URL input (a start page) to the pages of its
    /// site: <a>, <area>, <link rel=next|prev|alternate> and canonical
    /// targets, breadth-first, robots.txt obeyed.
    #[arg(long)]
    pub follow: bool,
    /// How far the crawl reaches: the start page's host (with or without
    /// www., over http and https), its registrable domain, or the folder
    /// below the start page.
    #[arg(long, value_name = "host|domain|prefix", default_value = "host", requires = "follow")]
    pub scope: ScopeKind,
    /// Pages fetched at most, start pages included.
    #[arg(long, value_name = "N", requires = "follow")]
    pub max_pages: Option<u64>,
    /// Links followed from a start page at most (0: the start pages only).
    #[arg(long, value_name = "D", requires = "follow")]
    pub max_depth: Option<u32>,
    /// Follow only URLs that match REGEX (repeat for several).
    #[arg(long, value_name = "REGEX", requires = "follow")]
    pub include: Vec<String>,
    /// Do not follow URLs that match REGEX (repeat for several).
    #[arg(long, value_name = "REGEX", requires = "follow")]
    pub exclude: Vec<String>,
    /// Follow rel=nofollow links, and the links of pages that say
    /// nofollow (meta robots or X-Robots-Tag), too.
    #[arg(long, requires = "follow")]
    pub follow_nofollow: bool,
    /// Keep the crawl's pages in DIR; the same command with the same DIR
    /// after an interruption continues where it stopped, without fetching
    /// again what it had fetched (the crawl is the same whatever the timing).
    #[arg(long, value_name = "DIR", requires = "follow")]
    pub resume: Option<PathBuf>,
}

impl FollowArgs {
    /// The crawl these flags ask for, if any; `keep_query` is the
    /// fetcher's. Regular expressions are checked here, naming the flag.
    pub fn to_config(&self, keep_query: bool) -> anyhow::Result<Option<CrawlConfig>> {
        if !self.follow {
            return Ok(None);
        }
        let compile = |flag: &str, patterns: &[String]| -> anyhow::Result<Vec<regex::Regex>> {
            patterns
                .iter()
                .map(|p| {
                    regex::Regex::new(p).map_err(|e| anyhow::anyhow!("--{flag} {p:?} is not a regular expression: {e}"))
                })
                .collect()
        };
        let limits = Limits {
            max_pages: self.max_pages,
            max_depth: self.max_depth,
            include: compile("include", &self.include)?,
            exclude: compile("exclude", &self.exclude)?,
            follow_nofollow: self.follow_nofollow,
            keep_query,
        };
        Ok(Some(CrawlConfig { scope: self.scope, limits }))
    }
}
