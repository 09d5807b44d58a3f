//! The extractors themselves, and how the default one combines them.

use std::sync::LazyLock;

use regex::Regex;

use super::Extracted;
use super::visible::{visible_text_with, visible_text_without_nav_footer_aside};

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
    Regex::new(r#""@type"\s*:\s*\[?\s*"(?:\w*Article|BlogPosting|LiveBlogPosting|Report)""#)
        .unwrap_or_else(|_| unreachable!())
});

/// True when the page declares itself an article (Open Graph or schema.org).
pub(super) fn declares_article(html: &str) -> bool {
    OG_TYPE.find_iter(html).any(|m| OG_ARTICLE.is_match(m.as_str())) || LD_ARTICLE.is_match(html)
}

/// trafilatura 0.6 with its fallbacks on.
pub(super) fn trafilatura(
    html: &str,
    url: Option<&url::Url>,
    focus: trafilatura::ExtractionFocus,
) -> Option<Extracted> {
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
/// to the chromeless visible text. trafilatura's output is checked against
/// the page's text outside `nav`, `footer` and `aside`: when most of its
/// words come from those (on a thin page it may pick the footer, the longest block
/// left), it is not the page's content; readability's output gets the same
/// check, and the visible text without those is the last resort.
pub(super) fn trafilatura_checked(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let text = visible_text_without_nav_footer_aside(html);
    let outside = has_words(&text).then_some(Extracted { text, title: None, extractor: "visible" });
    let content = |e: &Extracted| {
        outside.as_ref().is_none_or(|n| share_of_words_in(&e.text, &n.text) >= MIN_SHARE_OUTSIDE_CHROME)
    };
    let first = focused_trafilatura(html, url, outside.as_ref());
    if let Some(t) = first.as_ref().filter(|t| content(t)) {
        return Some(t.clone());
    }
    let second = readability(html, url);
    if let Some(r) = second.as_ref().filter(|r| content(r)) {
        return Some(r.clone());
    }
    outside.or(first).or(second)
}

/// trafilatura with the focus that suits the page. Pages that declare
/// themselves articles get the precision focus, which leaves out comments,
/// teasers and related links trailing the story, unless that keeps less than
/// [`MIN_PRECISION_SHARE`] of the words outside the page chrome (the story
/// itself was cut); other pages (products, listings, forums) need the
/// balanced focus's recall.
fn focused_trafilatura(html: &str, url: Option<&url::Url>, outside: Option<&Extracted>) -> Option<Extracted> {
    if declares_article(html) {
        let precise = trafilatura(html, url, trafilatura::ExtractionFocus::FavorPrecision);
        let words_outside = outside.map_or(0, |n| super::word_count(&n.text));
        if let Some(p) =
            precise.filter(|p| super::word_count(&p.text) as f64 >= MIN_PRECISION_SHARE * words_outside as f64)
        {
            return Some(p);
        }
    }
    trafilatura(html, url, trafilatura::ExtractionFocus::Balanced)
}

/// See [`focused_trafilatura`].
const MIN_PRECISION_SHARE: f64 = 0.2;

/// Least share of the trafilatura output's words that must occur in the
/// page's text outside its chrome.
const MIN_SHARE_OUTSIDE_CHROME: f64 = 0.5;

/// The share of `part`'s words (with multiplicity, case folded) found in `whole`.
fn share_of_words_in(part: &str, whole: &str) -> f64 {
    let mut bag: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for w in whole.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        *bag.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    let (mut total, mut found) = (0usize, 0usize);
    for w in part.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        total += 1;
        if let Some(n) = bag.get_mut(&w.to_lowercase()).filter(|n| **n > 0) {
            *n -= 1;
            found += 1;
        }
    }
    if total == 0 { 0.0 } else { found as f64 / total as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_taken_from_the_page_chrome_is_rejected() {
        let note = "Following the launch, the company plans a smaller model with a new keyboard next spring.";
        let footer = "Example Media Group Limited is registered in England and Wales. All content is copyright \
                      of Example Media Group unless otherwise stated. Contact the newsroom with story tips, \
                      corrections and complaints through our editorial standards page at any time.";
        let html = format!("<html><body><main><p>{note}</p></main><footer><p>{footer}</p></footer></body></html>");
        let e = trafilatura_checked(&html, None).unwrap();
        assert!(e.text.contains("smaller model"), "{e:?}");
        assert!(!e.text.contains("registered in England"), "{e:?}");
        assert!((share_of_words_in("a b a", "a b") - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn articles_are_recognised_by_open_graph_or_json_ld() {
        assert!(declares_article(r#"<meta property="og:type" content="article">"#));
        assert!(declares_article(r#"<meta content='article' property='og:type'>"#));
        assert!(declares_article(r#"<script type="application/ld+json">{"@type": "NewsArticle"}</script>"#));
        assert!(!declares_article(r#"<meta property="og:type" content="product">"#));
        assert!(!declares_article(r#"{"@type":"Product","description":"an Article"}"#));
    }
}
