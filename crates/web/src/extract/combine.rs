//! The extractors themselves, and how the default one combines them.

use std::sync::LazyLock;

use regex::Regex;

use super::Extracted;
use super::visible::{visible_text_with, visible_text_without_nav_footer_aside};
use super::words::{bag_f1, share_of_trigrams_in, share_of_words_in};

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
    Some(Extracted { text: result.content_text, title, extractor: "trafilatura", context: None })
}

/// Mozilla's Readability, as ported by `dom_smoothie`.
pub(super) fn readability(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let article = readability_article(html, url, false)?;
    let text = article.text_content.to_string();
    if !has_words(&text) {
        return None;
    }
    let title = Some(article.title).filter(|t| !t.trim().is_empty());
    Some(Extracted { text, title, extractor: "readability", context: None })
}

/// Readability's article; `keep_classes` keeps the `class` attributes in
/// its HTML, which the cleaning rules read.
fn readability_article(html: &str, url: Option<&url::Url>, keep_classes: bool) -> Option<dom_smoothie::Article> {
    let cfg = dom_smoothie::Config { text_mode: dom_smoothie::TextMode::Formatted, keep_classes, ..Default::default() };
    let mut r = dom_smoothie::Readability::new(html, url.map(url::Url::as_str), Some(cfg)).ok()?;
    r.parse().ok()
}

/// The `fast` extractor: Readability finds the article's container, and
/// trafilatura's discard rules then clear the captions, share bars, bylines
/// and link lists it keeps (see [`super::clean`]).
///
/// On a thin page Readability can pick the cookie banner and the footer,
/// rewritten so that the rules no longer recognise them. So a short result
/// (under [`SHORT_ARTICLE`] bytes) must be mostly word sequences of the
/// visible text without page chrome, or that text is used instead. Long
/// articles skip the check, which costs a second parse.
pub(super) fn fast(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let article = readability_article(html, url, true);
    let title = article.as_ref().map(|a| a.title.clone()).filter(|t| !t.trim().is_empty());
    let text = article.map(|a| super::clean::clean_article_text(&a.content)).unwrap_or_default();
    if text.len() >= SHORT_ARTICLE {
        return Some(Extracted { text, title, extractor: "fast", context: None });
    }
    let outside = chromeless(html);
    match outside {
        Some(o) if !has_words(&text) || share_of_trigrams_in(&text, &o.text) < MIN_SHARE_OUTSIDE_CHROME => Some(o),
        _ => has_words(&text).then_some(Extracted { text, title, extractor: "fast", context: None }),
    }
}

/// See [`fast`]: about 200 words.
const SHORT_ARTICLE: usize = 1200;

/// rs-trafilatura 0.2, which classifies the page type (article, product,
/// listing, forum, ...) and extracts with rules for that type.
pub(super) fn rs_trafilatura(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let options = rs_trafilatura::Options { url: url.map(url::Url::to_string), ..Default::default() };
    let result = rs_trafilatura::extract_with_options(html, &options).ok()?;
    if !has_words(&result.content_text) {
        return None;
    }
    let title = result.metadata.title.filter(|t| !t.trim().is_empty());
    Some(Extracted { text: result.content_text, title, extractor: "rs-trafilatura", context: None })
}

/// Runs one third-party extractor; a panic inside it counts as finding
/// nothing, so one odd page cannot stop a run of thousands.
pub(super) fn guarded(extractor: impl FnOnce() -> Option<Extracted>) -> Option<Extracted> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(extractor)).ok().flatten()
}

/// The default extractor: trafilatura and rs-trafilatura, with Readability
/// and the page's visible text as referees.
///
/// trafilatura (checked against the page chrome, see
/// [`trafilatura_checked`]) is precise on articles; rs-trafilatura, which
/// first classifies the page, recovers products, listings, forums and
/// service pages that trafilatura cuts short or overruns. Neither is better
/// on every page, and their failures differ, so they vote: when
/// trafilatura's text agrees with Readability's (word-bag F1 at least
/// [`AGREEMENT`]) it is taken as it is; otherwise rs-trafilatura runs too, and
/// the output that agrees more with Readability and the visible text
/// without page chrome, summed, wins. Two independent referees outvote
/// one extractor's mistake (a page of comments, a cut story, a menu).
pub(super) fn consensus(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let first = guarded(|| trafilatura_checked(html, url));
    let referee = guarded(|| readability(html, url));
    if let (Some(a), Some(r)) = (&first, &referee)
        && bag_f1(&a.text, &r.text) >= AGREEMENT
    {
        return first;
    }
    let second = guarded(|| rs_trafilatura(html, url));
    let visible = chromeless(html);
    let support = |e: &Extracted| {
        referee.as_ref().map_or(0.0, |r| bag_f1(&e.text, &r.text))
            + visible.as_ref().map_or(0.0, |v| bag_f1(&e.text, &v.text))
    };
    match (first, second) {
        (Some(a), Some(b)) if referee.is_some() || visible.is_some() => {
            Some(if support(&a) >= support(&b) { a } else { b })
        }
        (Some(a), _) => Some(a),
        (None, b) => b.filter(|b| on_page(b, html)).or(referee).or(visible),
    }
}

/// rs-trafilatura's output, if its words are on the page: on a page that is
/// all chrome it can return the `<title>` repeated.
pub(super) fn rs_trafilatura_checked(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    guarded(|| rs_trafilatura(html, url)).filter(|e| on_page(e, html))
}

/// True when most of `e`'s words are in the page's visible text.
fn on_page(e: &Extracted, html: &str) -> bool {
    share_of_words_in(&e.text, &super::visible_text(html).0) >= MIN_SHARE_OUTSIDE_CHROME
}

/// Word-bag F1 between trafilatura's and Readability's texts above which
/// the consensus takes trafilatura's without a vote.
const AGREEMENT: f64 = 0.97;

/// Visible text without the page chrome.
pub(super) fn chromeless(html: &str) -> Option<Extracted> {
    let (text, title) = visible_text_with(html, true);
    has_words(&text).then_some(Extracted { text, title, extractor: "none", context: None })
}

/// The default extractor: trafilatura, falling back to readability and then
/// to the chromeless visible text. trafilatura's output is checked against
/// the page's text outside `nav`, `footer` and `aside`: when most of its
/// words come from those (on a thin page it may pick the footer, the longest block
/// left), it is not the page's content; readability's output gets the same
/// check, and the visible text without those is the last resort.
pub(super) fn trafilatura_checked(html: &str, url: Option<&url::Url>) -> Option<Extracted> {
    let text = visible_text_without_nav_footer_aside(html);
    let outside = has_words(&text).then_some(Extracted { text, title: None, extractor: "visible", context: None });
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
    }

    #[test]
    fn fast_drops_captions_and_share_bars_and_does_not_take_a_thin_pages_footer() {
        let para = "The harbour ferry will run every hour from the north pier this summer, the council said on \
                    Tuesday, after a year in which passengers waited up to three hours at the island terminal.";
        let article = format!(
            "<html><body><nav><a href=/>Home</a></nav><article><h1>Hourly ferries</h1><p>{para}</p>\
             <figure><img src=p.jpg><figcaption>The north pier. Photo: Ann Lee</figcaption></figure>\
             <div class=share-bar><a href=/s>Share</a> <a href=/t>Post</a></div><p>{para}</p><p>{para}</p>\
             <p>{para}</p></article><footer>Harbour News, 1 Quay Street</footer></body></html>"
        );
        let e = fast(&article, None).unwrap();
        assert_eq!(e.text.matches("three hours").count(), 4, "{e:?}");
        assert!(!e.text.contains("Photo") && !e.text.contains("Share") && !e.text.contains("Quay"), "{e:?}");
        // On a thin page Readability picks the cookie notice and the footer,
        // the longest texts, rewritten so that no rule recognises them.
        let thin = include_str!("../../../../fixtures/extract/templates/news.html")
            .replace("{{TITLE}}", "Ferry note")
            .replace("{{BODY}}", "<p>Boats resume on Monday.</p>");
        let e = fast(&thin, None).unwrap();
        assert!(e.text.contains("Boats resume on Monday"), "{e:?}");
        assert!(!e.text.contains("registered in England"), "{e:?}");
    }

    #[test]
    fn articles_are_recognised_by_open_graph_or_json_ld() {
        assert!(declares_article(r#"<meta property="og:type" content="article">"#));
        assert!(declares_article(r#"<meta content='article' property='og:type'>"#));
        assert!(declares_article(r#"<script type="application/ld+json">{"@type": "NewsArticle"}</script>"#));
        assert!(!declares_article(r#"<meta property="og:type" content="product">"#));
        assert!(!declares_article(r#"{"@type":"Product","description":"an Article"}"#));
    }

    #[test]
    fn a_panicking_extractor_counts_as_finding_nothing() {
        assert_eq!(guarded(|| panic!("a bug in a third-party extractor")), None);
        let found = Extracted { text: "x".into(), title: None, extractor: "none", context: None };
        assert_eq!(guarded(|| Some(found.clone())), Some(found));
    }

    #[test]
    fn consensus_keeps_agreeing_output_and_never_returns_text_that_is_not_on_the_page() {
        let story = "The harbour ferry will run every hour from the north pier this summer, the council said on \
                     Tuesday, after a year in which passengers waited up to three hours at the island terminal. \
                     The new timetable adds two boats and a late service on Fridays and Saturdays.";
        let html = format!(
            "<html><head><title>Ferry timetable | Harbour News</title></head><body><nav><a href=/>Home</a>\
             <a href=/sport>Sport</a></nav><article><h1>Hourly ferries</h1><p>{story}</p><p>{story}</p></article>\
             <footer>Harbour News, 1 Quay Street</footer></body></html>"
        );
        let e = consensus(&html, None).unwrap();
        assert!(e.text.contains("late service on Fridays"), "{e:?}");
        assert!(!e.text.contains("Quay Street"), "{e:?}");
        // A page of chrome alone: whatever comes back must be words from the page, not its <title>.
        let chrome = "<html><head><title>Comet may be visible this autumn</title></head><body><aside><h2>Most read</h2>\
                      <ul><li>Traffic changes on the ring road</li></ul></aside></body></html>";
        if let Some(e) = consensus(chrome, None) {
            assert!(!e.text.contains("Comet"), "{e:?}");
        }
    }
}
