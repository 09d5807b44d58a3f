//! webdup's evaluation, kept out of the crates a crawler links: nothing in
//! the product depends on this crate (CI checks it with `cargo tree`).
//!
//! - [`extract`]: extractors scored against human ground truth (AEB, WCXB),
//!   `webdup eval extract`;
//! - [`score`]: a clustering scored against labelled truth, `webdup eval
//!   cluster`;
//! - [`corpus`]: near-duplicate corpora with labelled truth, made from the
//!   pages of those data sets;
//! - [`synth`]: synthetic texts with planted near-duplicates, for tests and
//!   benchmarks.

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod corpus;
pub mod extract;
pub mod score;
pub mod synth;
