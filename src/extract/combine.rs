//! The extractors themselves, and how the default one combines them.

use std::sync::LazyLock;

use regex::Regex;

use super::Extracted;
use super::visible::visible_text_with;

/// True when `text` holds at least one letter or digit.
fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// `og:type` meta tags and JSON-LD `@type`s that declare a page an article.
static OG_TYPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)<meta\b[^>]*\bog:type\b[^>]*>"#).unwrap_or_else(|_| unreachable!()));
static OG_ARTICLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)\bcontent\s*=\s*["']?\s*article\b"#).unwrap_or_else(|_| unreachable!()));
static LD_ARTICLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""@type"\s*:\s*\[?\s*"(?:\w*Article|BlogPosting|LiveBlogPosting|Report)""#).unwrap_or_else(|_| unreachable!())
});

/// True when the page declares itself an article (Open Graph or schema.org).
/// Articles are extracted with trafilatura's precision focus, which leaves out
/// comments, teasers and related links that trail the story; other pages
/// (products, listings, forums) need the balanced focus's recall.
pub(super) fn declares_article(html: &str) -> bool {
    OG_TYPE.find_iter(html).any(|m| OG_ARTICLE.is_match(m.as_str())) || LD_ARTICLE.is_match(html)
}

/// trafilatura 0.6 with its fallbacks on.
pub(super) fn trafilatura(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let focus = if declares_article(html) {
        trafilatura::ExtractionFocus::FavorPrecision
    } else {
        trafilatura::ExtractionFocus::Balanced
    };
    let mut opts = trafilatura::Options::default().with_fallback(true).with_focus(focus);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_are_recognised_by_open_graph_or_json_ld() {
        assert!(declares_article(r#"<meta property="og:type" content="article">"#));
        assert!(declares_article(r#"<meta content='article' property='og:type'>"#));
        assert!(declares_article(r#"<script type="application/ld+json">{"@type": "NewsArticle"}</script>"#));
        assert!(!declares_article(r#"<meta property="og:type" content="product">"#));
        assert!(!declares_article(r#"{"@type":"Product","description":"an Article"}"#));
    }
}
