//! What every layer says about a document's address.

/// True when `s` is an http(s) URL rather than a local path.
pub fn is_url(s: &str) -> bool {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}
