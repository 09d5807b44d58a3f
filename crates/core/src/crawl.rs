//! What a link-following crawl counts, as the crawler (webdup-web) makes it
//! and the audit (webdup-seo) reports it: one type each, so a new reason a
//! link is left out reaches every report.

use serde::Serialize;

/// Links not followed, by reason, counted over a crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trap {
    /// Host, path with digit-bearing segments as `*`, parameter names.
    pub pattern: String,
    /// Its pages fetched before it was judged.
    pub fetched: usize,
    /// Its URLs found and not fetched.
    pub skipped: u64,
}
