//! Following links: from start pages to the site they belong to.
//!
//! An SEO audit needs the URLs no sitemap lists, and those are found only by
//! following the site's links, as a search engine does. [`links`] reads what
//! a page links to, [`scope`] says which URLs belong to the site, [`trap`]
//! recognizes URL patterns that generate pages without end, `repeat`
//! stops chains of pages that repeat each other (a server answering every
//! URL with one page), and
//! [`frontier`] orders the crawl breadth-first so its result never depends
//! on fetch timing. With the `http` feature, `Fetcher::crawl` runs it.

pub mod frontier;
pub mod links;
mod repeat;
pub mod scope;
pub mod trap;
#[cfg(feature = "http")]
mod walk;

pub use frontier::{CrawlSummary, Frontier, Limits, MAX_FOLDED, NotFollowed, Trap, Urls, listed};
pub use links::{Link, LinkKind, PageLinks, page_links};
pub use scope::{Scope, ScopeKind};

/// How a crawl reaches out from its start pages.
#[derive(Debug, Clone, Default)]
pub struct CrawlConfig {
    pub scope: ScopeKind,
    pub limits: Limits,
}

/// Keys for the pages a crawl discovers: `first`, then `first + step`, ...
/// (after every key the inputs took; `step` spaces them as the run's keys
/// are spaced).
#[derive(Debug, Clone, Copy)]
pub struct KeyPlan {
    pub first: u64,
    pub step: u64,
}
