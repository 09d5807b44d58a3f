//! The extractors themselves, and how the default one combines them.

use super::Extracted;
use super::visible::visible_text_with;

/// True when `text` holds at least one letter or digit.
fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// trafilatura 0.6 with its fallbacks on.
pub(super) fn trafilatura(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let mut opts = trafilatura::Options::default().with_fallback(true);
    if let Some(u) = url {
        opts = opts.with_url(u.clone());
    }
    let result = trafilatura::extract(html, &opts).ok()?;
    if !has_words(&result.content_text) {
        return None;
    }
    let title = Some(result.metadata.title).filter(|t| !t.is_empty());
    Some(Extracted { text: result.content_text, title, extractor: "trafilatura" })
}

/// Mozilla's Readability, as ported by `dom_smoothie`.
pub(super) fn readability(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let cfg = dom_smoothie::Config { text_mode: dom_smoothie::TextMode::Formatted, ..Default::default() };
    let mut r = dom_smoothie::Readability::new(html, url.map(url::Url::as_str), Some(cfg)).ok()?;
    let article = r.parse().ok()?;
    let text = article.text_content.to_string();
    if !has_words(&text) {
        return None;
    }
    let title = Some(article.title).filter(|t| !t.trim().is_empty());
    Some(Extracted { text, title, extractor: "readability" })
}

/// Visible text without the page chrome.
pub(super) fn chromeless(html: &str) -> Option<Extracted> {
    let (text, title) = visible_text_with(html, true);
    has_words(&text).then_some(Extracted { text, title, extractor: "none" })
}

/// The default extractor: trafilatura, falling back to readability and then
/// to the chromeless visible text.
pub(super) fn trafilatura_checked(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    trafilatura(html, url).or_else(|| readability(html, url)).or_else(|| chromeless(html))
}
