//! The crawl over HTTP: the [`Frontier`] fed by the [`Fetcher`], a level at
//! a time.

use std::collections::HashSet;

use url::Url;
use webdup_core::DocKey;
use webdup_core::progress::{CrawlCounts, Progress, Quiet};

use super::frontier::{CrawlSummary, Frontier};
use super::links::page_links;
use super::scope::Scope;
use super::trap::page_sketch;
use super::{CrawlConfig, KeyPlan};
use crate::fetch::url::{normalize, origin_key};
use crate::fetch::{FetchErrorKind, FetchOutcome, Fetcher};
use crate::source::{Format, Location, Source};

impl Fetcher {
    /// Fetches `starts` and the pages they link to, within `config`'s scope
    /// and limits, breadth-first, calling `f` with every outcome as it
    /// completes (not in order: keys are the order). Discovered pages are
    /// keyed by `keys` in (depth, URL) order, so the same site gives the same
    /// keys whatever the timing. Non-URL starts are passed through to the
    /// fetcher (which rejects them).
    pub fn crawl(
        &self,
        starts: Vec<Source>,
        config: &CrawlConfig,
        keys: KeyPlan,
        progress: &dyn Progress,
        mut f: impl FnMut(FetchOutcome),
    ) -> CrawlSummary {
        let keep_query = config.limits.keep_query;
        let mut frontier = Frontier::new(Scope::new(config.scope), config.limits.clone());
        let mut named: HashSet<String> = HashSet::new();
        let mut requested: std::collections::HashMap<DocKey, Url> = std::collections::HashMap::new();
        for s in &starts {
            if let Location::Url(u) = &s.location
                && let Ok(url) = normalize(u, keep_query)
            {
                named.insert(origin_key(&url));
                frontier.add_start(&url);
                requested.insert(s.key, url);
            }
        }
        frontier.started(starts.len() as u64);
        progress.start("crawl", starts.len() as u64);
        let mut level = starts;
        let mut next_key = keys.first;
        let mut moved: Vec<(String, String)> = Vec::new();
        let mut counts = CrawlCounts::default();
        loop {
            let depth = frontier.depth();
            let mut left = level.len() as u64;
            self.for_each(level, &Quiet, |outcome| {
                left -= 1;
                let key = outcome.record.key;
                if let Some(url) = requested.remove(&key) {
                    let final_url = outcome.record.final_url.as_deref().and_then(|u| Url::parse(u).ok());
                    // A start page that moved to another host: that host is
                    // the site (followed once, said in the summary).
                    if depth == 0
                        && let Some(to) = &final_url
                        && !frontier.scope_mut().contains(to)
                    {
                        frontier.scope_mut().add(to);
                        moved.push((url.to_string(), to.to_string()));
                    }
                    let parsed = outcome
                        .document
                        .as_ref()
                        .filter(|d| d.format == Format::Html)
                        .map(|d| scraper::Html::parse_document(&d.body));
                    let base = final_url.clone().unwrap_or_else(|| url.clone());
                    let links = parsed.as_ref().map(|doc| page_links(doc, &base));
                    let sketch = parsed.as_ref().and_then(page_sketch);
                    frontier.observe(
                        key,
                        &url,
                        final_url.as_ref(),
                        links.as_ref(),
                        outcome.record.x_robots_tag.as_deref(),
                        sketch,
                    );
                }
                counts.found = frontier.discovered() as u64;
                counts.queued = left + frontier.queued() as u64;
                // A link robots.txt disallows is not a page of the crawl
                // (a start page named by the user is, as in a list).
                if depth > 0 && outcome.record.error.as_ref().is_some_and(|e| e.kind == FetchErrorKind::Robots) {
                    frontier.disallowed();
                    progress.crawled(counts);
                    return;
                }
                counts.fetched += 1;
                if outcome.record.error.is_some() {
                    counts.errors += 1;
                    progress.fail(1);
                }
                progress.advance(1);
                progress.crawled(counts);
                f(outcome);
            });
            let next = frontier.next_level();
            if next.is_empty() {
                break;
            }
            progress.grow(frontier.fetched() + frontier.queued() as u64);
            level = next
                .into_iter()
                .filter_map(|id| {
                    let url = Url::parse(frontier.url(id)).ok()?;
                    if !named.contains(&origin_key(&url)) {
                        self.reach(&url);
                    }
                    let key = DocKey(next_key);
                    next_key += keys.step;
                    requested.insert(key, url.clone());
                    Some(Source { id: url.to_string(), key, location: Location::Url(url.into()) })
                })
                .collect();
        }
        progress.finish();
        let mut summary = frontier.finish();
        moved.sort();
        summary.moved_starts = moved;
        summary
    }
}
