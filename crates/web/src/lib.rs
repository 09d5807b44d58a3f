//! webdup's web floor: from the user's inputs to documents and their main
//! text.
//!
//! [`source`] expands files, directories, lists and URLs into ordered
//! sources and reads local files; [`fetch`] fetches URLs politely
//! (robots.txt, per-host limits, retries, redirects, sitemaps); [`decode`]
//! turns bytes into text; [`extract`] finds a page's main content and reads
//! its metadata; [`crawl`] follows links from start pages within a site;
//! [`render`] runs fetched pages' scripts in a headless Chromium;
//! `warc` (feature `warc`) reads web archives, WARC and
//! WARC.gz files, into the pages they hold. Nothing here fingerprints,
//! stores or reports: that is the `webdup` crate above, over `webdup-core`
//! below.

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod crawl;
pub mod decode;
pub mod error;
pub mod extract;
pub mod fetch;
mod lex;
pub mod render;
pub mod site;
pub mod source;
#[cfg(feature = "warc")]
pub mod warc;
