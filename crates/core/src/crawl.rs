//! What a link-following crawl counts, as the crawler (webdup-web) makes it
//! and the audit (webdup-seo) reports it: one type each, so a new reason a
//! link is left out reaches every report. [`CrawlFacts`], the crawl as the
//! audit reads it, lives here too, so the index (webdup-store) can keep it
//! with the crawl and an audit of the index read it back.

use serde::{Deserialize, Serialize};

/// Links not followed, by reason, counted over a crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotFollowed {
    /// Pages robots.txt disallows (never requested).
    pub robots: u64,
    pub out_of_scope: u64,
    pub nofollow: u64,
    /// By `--include` / `--exclude`.
    pub excluded: u64,
    pub beyond_depth: u64,
    pub beyond_max_pages: u64,
    /// No http(s) URL, too long, or past a page's limit of links.
    pub unusable: u64,
    /// Links of pages that repeat a page fetched before and were reached
    /// only from such pages (a server answering every URL with one page).
    pub repeating: u64,
}

/// A URL pattern judged a crawl trap: its pages kept repeating each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trap {
    /// Host, path with digit-bearing segments as `*`, parameter names.
    pub pattern: String,
    /// Its pages fetched before it was judged.
    pub fetched: usize,
    /// Its URLs found and not fetched.
    pub skipped: u64,
}

/// A crawl, as the audit reads it: plain URLs, no document keys, so an
/// audit stays a function of pages and facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrawlFacts {
    /// Pages fetched (start pages included).
    pub pages: u64,
    /// The deepest level fetched.
    pub depth: u32,
    /// Internal links: (the linking page's URL, the URL it links to), in
    /// any order; repeats count once.
    pub links: Vec<(String, String)>,
    /// The URLs the sitemaps given as inputs listed; `None` without one.
    pub listed: Option<Vec<String>>,
    /// Links the crawl's URL normalization folded: (linked URL, the URL it
    /// was folded into).
    pub folded: Vec<(String, String)>,
    /// Folded links the crawl counted but did not list.
    pub folded_beyond: u64,
    /// Canonical targets beyond the depth or page limit fetched anyway.
    pub canonicals_beyond: u64,
    /// URL patterns judged crawl traps.
    pub traps: Vec<Trap>,
    pub not_followed: NotFollowed,
    /// Start pages that redirected to another host, which joined the scope.
    pub moved_starts: Vec<MovedStart>,
}

/// A start page that redirected to another host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovedStart {
    pub from: String,
    pub to: String,
}
