//! Candidate generation: which pairs of documents are worth verifying.
//!
//! Both indexes only propose pairs; [`crate::verify`] decides. `lsh` bands
//! MinHash signatures into supershingles, `hamming` finds SimHash
//! fingerprints within a Hamming distance with permuted tables. Each returns
//! sorted, distinct `(i, j)` pairs with `i < j`, so results are the same
//! whatever the thread count.

pub mod hamming;
pub mod lsh;

pub use hamming::HammingTables;

use serde::{Deserialize, Serialize};

/// How candidate pairs are generated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// MinHash signatures banded for LSH.
    #[default]
    MinHash,
    /// SimHash fingerprints within a Hamming distance.
    SimHash,
    /// The union of both.
    Both,
}
pub use lsh::LshParams;

/// Sorts and dedups pairs, each normalized to `(low, high)`.
pub fn normalize_pairs(mut pairs: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    for p in &mut pairs {
        if p.0 > p.1 {
            *p = (p.1, p.0);
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}
