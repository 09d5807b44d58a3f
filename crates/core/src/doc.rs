//! What every layer says about a document's address.

use serde::{Deserialize, Serialize};

/// True when `s` is an http(s) URL rather than a local path.
pub fn is_url(s: &str) -> bool {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A document's key: the one name every stage, report and process uses for
/// it.
///
/// Assigned once, when inputs are expanded, from the global input order, so
/// one process and N processes give every page the same key. Results
/// (pairs, cluster members, representatives, neighbours) carry keys;
/// positions in one process's vectors stay inside the functions that made
/// them. Keys of the documents compared together must be distinct; ties
/// (which copy of a text comes first, which member represents a cluster)
/// go to the lower key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DocKey(pub u64);

impl DocKey {
    /// The key of the input at position `n`.
    pub fn at(n: usize) -> DocKey {
        DocKey(n as u64)
    }
}

impl std::fmt::Display for DocKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
