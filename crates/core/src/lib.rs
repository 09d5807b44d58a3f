//! webdup's engine floor: shingles, sketches, candidate generation, exact
//! verification, clustering and site-template learning, over plain data.
//!
//! No I/O happens here: no network, no files, no SQLite, no HTML parser, no
//! async runtime. Text goes in, sorted pairs and clusters come out. The
//! `webdup` crate builds fingerprints from web pages on top of it and
//! re-exports every module here under its old path (`webdup::shingle`,
//! `webdup::index` for [`candidates`], ...).
//!
//! ```
//! use webdup_core::shingle::{ShingleConfig, Shingler};
//! use webdup_core::verify::Overlap;
//!
//! let shingler = Shingler::new(ShingleConfig::default());
//! let a = shingler.shingle("the ferry leaves the harbour at seven every morning in winter");
//! let b = shingler.shingle("the ferry leaves the harbour at eight every morning in winter");
//! let o = Overlap::of(&a.hashes, &b.hashes);
//! assert!(o.jaccard() > 0.0 && o.jaccard() < 1.0);
//! ```

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod candidates;
pub mod cluster;
pub mod crawl;
pub mod dedup;
pub mod doc;
pub mod fingerprint;
pub mod page;
pub mod params;
pub mod progress;
pub mod sets;
pub mod settings;
pub mod shingle;
pub mod site;
pub mod sketch;
pub mod template;
pub mod units;
pub mod verify;

pub use doc::{DocKey, is_url};
