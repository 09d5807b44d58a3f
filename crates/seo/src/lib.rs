//! webdup's SEO reports over recorded crawls.
//!
//! A report here reads [`Crawl`]s, the core's record of a crawl (each
//! page's [`PageRecord`] and shingle set), and nothing else: no database,
//! no network, no HTML. The index (webdup-store) reads crawls back; the
//! `webdup` facade hands them over.
//!
//! - [`audit`]: the duplicate-content audit (`webdup audit`): a row per
//!   page, clusters with canonical verdicts, duplicate titles, descriptions
//!   and h1s, thin pages, errors; `report.json`, two CSV files and a
//!   self-contained `report.html`. It reads [`audit::AuditPage`]s (a page's
//!   record and what became of its content) and the pages' fingerprints.
//! - [`causes`]: why a duplicate cluster exists (what differs between its
//!   URLs), which URL to keep, and the parameters that make duplicates.
//! - [`mod@lost_and_found`]: where did each old URL's content go after a site
//!   changed, as a redirect map.
//! - [`csv_safe`]: CSV cells a spreadsheet opens as data, not formulas.
//!
//! [`Crawl`]: webdup_core::page::Crawl
//! [`PageRecord`]: webdup_core::page::PageRecord

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod causes;
pub mod csv_safe;
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
