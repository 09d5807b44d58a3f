//! Main-content extraction: from a page's HTML to the text worth comparing.
//!
//! Navigation, ads and footers are shared by every page of a site; left in,
//! they make unrelated pages look alike. The default extractor is the
//! `trafilatura` crate with its fallbacks on; when it returns nothing the
//! page's visible body text is used instead, so a page never silently becomes
//! an empty document.

mod visible;

use serde::Serialize;

pub use visible::visible_text;

/// Which extraction algorithm to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractorKind {
    /// trafilatura 0.6 with readability/jusText fallbacks.
    #[default]
    Trafilatura,
    /// All visible body text, nothing removed.
    None,
}

impl ExtractorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExtractorKind::Trafilatura => "trafilatura",
            ExtractorKind::None => "none",
        }
    }
}

/// Extraction settings.
#[derive(Debug, Clone)]
pub struct ExtractConfig {
    pub extractor: ExtractorKind,
    /// Deepest element nesting accepted; deeper pages are refused rather than
    /// risking the stack of the recursive extractor. Browsers cap the parser's
    /// nesting at 512, so real pages stay far below this.
    pub max_depth: usize,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig { extractor: ExtractorKind::default(), max_depth: 4096 }
    }
}

/// The text of a page and what produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Extracted {
    pub text: String,
    /// The page title, when the extractor found one.
    pub title: Option<String>,
    /// The extractor whose output was used (after any fallback).
    pub extractor: &'static str,
}

/// Why a page could not be extracted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("HTML nested more than {limit} levels deep")]
    TooDeep { limit: usize },
}

/// Extracts the main text of an HTML page.
pub fn extract(html: &str, config: &ExtractConfig) -> Result<Extracted, ExtractError> {
    if nesting_depth(html, config.max_depth) > config.max_depth {
        return Err(ExtractError::TooDeep { limit: config.max_depth });
    }
    if config.extractor == ExtractorKind::Trafilatura {
        let opts = trafilatura::Options::default().with_fallback(true);
        if let Ok(result) = trafilatura::extract(html, &opts)
            && result.content_text.chars().any(char::is_alphanumeric)
        {
            let title = Some(result.metadata.title).filter(|t| !t.is_empty());
            return Ok(Extracted { text: result.content_text, title, extractor: "trafilatura" });
        }
    }
    let (text, title) = visible_text(html);
    Ok(Extracted { text, title, extractor: "none" })
}

/// Elements that never hold children, or whose end tag is optional: they are
/// not counted, so the estimate errs low on sloppy markup, not high.
const UNCOUNTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "p",
    "li", "dt", "dd", "tr", "td", "th", "option", "thead", "tbody", "tfoot", "colgroup", "rb", "rt", "rp", "optgroup",
];

/// Estimates the deepest element nesting of `html` with a byte scan, without
/// building a tree. Stops early once `stop_above` is exceeded.
pub fn nesting_depth(html: &str, stop_above: usize) -> usize {
    let b = html.as_bytes();
    let (mut i, mut depth, mut max) = (0usize, 0usize, 0usize);
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        i += off + 1;
        match b.get(i) {
            Some(b'!') | Some(b'?') => {
                let end = if b[i..].starts_with(b"!--") { find(b, i, b"-->") } else { find(b, i, b">") };
                i = end;
            }
            Some(b'/') => {
                let (name, _) = tag_name(b, i + 1);
                if !UNCOUNTED.contains(&name.as_str()) && !name.is_empty() {
                    depth = depth.saturating_sub(1);
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let (name, after) = tag_name(b, i);
                let close = memchr::memchr(b'>', &b[after..]).map_or(b.len(), |e| after + e);
                let self_closing = close > 0 && b.get(close - 1) == Some(&b'/');
                i = close;
                if matches!(name.as_str(), "script" | "style" | "textarea" | "title" | "xmp") {
                    i = find(b, i, format!("</{name}").as_bytes());
                    continue;
                }
                if !self_closing && !UNCOUNTED.contains(&name.as_str()) {
                    depth += 1;
                    max = max.max(depth);
                    if max > stop_above {
                        return max;
                    }
                }
            }
            _ => {}
        }
    }
    max
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> usize {
    let from = from.min(b.len());
    memchr::memmem::find(&b[from..], needle).map_or(b.len(), |p| from + p + needle.len())
}

fn tag_name(b: &[u8], from: usize) -> (String, usize) {
    let end = b[from.min(b.len())..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'-' || *c == b':'))
        .map_or(b.len(), |p| from + p);
    (String::from_utf8_lossy(&b[from.min(end)..end]).to_ascii_lowercase(), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_real_nesting_and_ignores_void_and_optional_tags() {
        assert_eq!(nesting_depth("<html><body><div><p>a<p>b<br><img src=x></div></body></html>", 100), 3);
        assert_eq!(nesting_depth("<div><script>if (a<b) { '<div>' }</script></div>", 100), 1);
        let deep = "<div>".repeat(100_000);
        assert!(nesting_depth(&deep, 4096) > 4096);
    }

    #[test]
    fn too_deep_pages_are_refused_not_crashed_on() {
        let deep = format!("<html><body>{}text</body></html>", "<span>".repeat(100_000));
        assert_eq!(extract(&deep, &ExtractConfig::default()), Err(ExtractError::TooDeep { limit: 4096 }));
    }

    #[test]
    fn main_content_wins_over_boilerplate() {
        let body = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(12);
        let html = format!(
            "<html><head><title>T</title></head><body><nav><a href=/>Home</a> <a href=/a>About us</a></nav>\
             <article><p>{body}</p></article><footer>Copyright 2026 Example Corp all rights reserved</footer></body></html>"
        );
        let e = extract(&html, &ExtractConfig::default()).unwrap();
        assert!(e.text.contains("quick brown fox"));
        assert!(!e.text.contains("Copyright"), "{}", e.text);
        assert_eq!(e.extractor, "trafilatura");
    }

    #[test]
    fn pages_trafilatura_rejects_fall_back_to_visible_text() {
        let e = extract("<html><body><div>Short note</div></body></html>", &ExtractConfig::default()).unwrap();
        assert!(e.text.contains("Short note"));
    }
}
