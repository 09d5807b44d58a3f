//! A persistent index of fingerprints across crawls, in one SQLite file.
//!
//! A crawler asks, page by page, "have I seen this content before, under
//! which URL?" ([`Index::check`]) and records what it fetched
//! ([`Index::insert`], [`Index::insert_batch`]). Every page row keeps what
//! exact verification needs (the full shingle set), so, as everywhere in
//! webdup, the LSH band keys only nominate candidates and every reported
//! Jaccard is exact ([`webdup_core::verify::Overlap`]).
//!
//! The index remembers the settings its fingerprints were made with
//! (shingling, permutations, seed, thresholds and banding) and refuses to
//! open with different ones: fingerprints made otherwise are not comparable.
//! Like `webdup cluster`, it holds pages of two different sites to its
//! cross-site threshold when it has one (the same article in another site's
//! template keeps some of each template's text), and pages of one site to
//! its threshold; the band table is built for the lower of the two.
//!
//! An [`Index`] is `Send + Sync`: share it across tokio tasks or threads as
//! an `Arc<Index>`. Writes go through one connection behind a mutex; reads
//! use a small pool of connections, which WAL mode lets run beside a write.
//! Each insert (a page row, its band keys, its shingles) is one transaction,
//! or one transaction per batch: a killed process never leaves half a page.
//! Other processes may write the same file at the same time (two `webdup
//! serve`, an `index add` beside a server): every write transaction begins
//! IMMEDIATE, so a writer waits for another's commit (up to 30 s) rather than
//! failing with "database is locked".
//!
//! `webdup::store` re-exports this crate with an example that fingerprints
//! pages with `webdup`'s `Fingerprinter`.

pub mod bands;
mod codec;
mod crawl;
mod facts;
mod file;
mod index;
mod learn;
mod page;
mod read;
pub mod schema;
mod settings;
mod stored;

pub use crawl::CrawlRow;
pub use index::{Error, Index, Result};
pub use learn::{LEARN_UNTIL, SiteTemplate, Unsuppressed};
pub use page::{Page, now};
pub use read::{COLD_TEMPLATE_SHARE, CheckResult, CrawlStats, Match, Stats, TemplateState, cold_jaccard};
pub use settings::{ApplySettings, Settings};
// A page as stored is the core's page record.
pub use webdup_core::page::{
    CanonicalSource, Crawl, Exchange, NoindexSource, PageRecord, PageView, RecordMeta, iso8601_utc,
};
