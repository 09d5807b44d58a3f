//! webdup's SEO reports over recorded crawls.
//!
//! A report here reads [`Crawl`]s, the core's record of a crawl (each
//! page's [`PageRecord`] and shingle set), and nothing else: no database,
//! no network, no HTML. The index (webdup-store) reads crawls back; the
//! `webdup` facade hands them over.
//!
//! - [`lost_and_found`]: where did each old URL's content go after a site
//!   changed, as a redirect map.
//!
//! [`Crawl`]: webdup_core::page::Crawl
//! [`PageRecord`]: webdup_core::page::PageRecord

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod lost_and_found;

pub use lost_and_found::lost_and_found;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A crawl the report needs has no pages.
    #[error("crawl '{0}' has no pages")]
    EmptyCrawl(String),
}

pub type Result<T> = std::result::Result<T, Error>;
