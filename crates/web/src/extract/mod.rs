//! Main-content extraction: from a page's HTML to the text worth comparing.
//!
//! Navigation, ads and footers are shared by every page of a site; left in,
//! they make unrelated pages look alike. Three extractors are offered:
//! `trafilatura` (the default: the `trafilatura` crate with its fallbacks on,
//! cross-checked against `readability`), `readability` (the `dom_smoothie`
//! port of Mozilla's Readability) and `none` (the visible body text without
//! `nav`, `header`, `footer` and `aside`). Whatever fails or finds nothing
//! falls back to the next one, ending at all visible text, so a page never
//! silently becomes an empty document.
//!
//! Whatever the extractor, words are kept apart as a browser shows them
//! (the whitespace between inline elements separates words, adjacent inline
//! elements do not: see `respace.rs`), and a text far smaller than the page's
//! own run of prose, which it misses, gets that run added (see
//! `shortfall.rs`): sites name the wrappers of their content like furniture.
//!
//! ```
//! use webdup_web::extract::{extract, ExtractConfig, ExtractorKind};
//!
//! let body = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(12);
//! let html = format!("<html><body><nav>Home About</nav><article><p>{body}</p></article></body></html>");
//! let config = ExtractConfig { extractor: ExtractorKind::Readability, ..ExtractConfig::default() };
//! let page = extract(&html, &config).unwrap();
//! assert!(page.text.contains("quick brown fox") && !page.text.contains("About"));
//! ```

mod blocks;
mod clean;
mod combine;
pub mod guard;
mod meta;
mod respace;
mod select;
mod shortfall;
mod strip;
mod visible;
pub mod words;

use std::str::FromStr;

use serde::Serialize;

pub use blocks::hidden;
pub use guard::{HtmlCost, PageBudget};
pub use meta::{Hreflang, PageMeta, forbids_indexing, page_meta};
pub use select::CssSelector;
pub use visible::{visible_text, visible_text_of, visible_text_with};

/// Stack size that extraction needs for pages at [`PageBudget::max_depth`]:
/// the `trafilatura` and `readability` extractors recurse over the DOM.
/// [`extract`] runs them on a stack of this size of its own when the calling
/// thread has less than a quarter of it left; threads that extract many
/// pages are best given this much, which saves mapping a stack per page.
pub const EXTRACT_STACK: usize = 64 << 20;

/// Which extraction algorithm to run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtractorKind {
    /// trafilatura and rs-trafilatura, refereed by readability and the
    /// visible text when they disagree.
    #[default]
    Auto,
    /// trafilatura 0.6 with its fallbacks, checked against the page chrome.
    Trafilatura,
    /// rs-trafilatura 0.2: page-type classification, then per-type rules.
    RsTrafilatura,
    /// Mozilla's Readability algorithm (the `dom_smoothie` crate).
    Readability,
    /// Readability's article cleaned with trafilatura's discard rules:
    /// about as precise as trafilatura on articles, several times faster.
    Fast,
    /// Block classification: furniture rules, link density, runs of words.
    Blocks,
    /// Visible body text without navigation, header, footer and sidebars.
    None,
}

impl ExtractorKind {
    /// Every extractor, default first.
    pub const ALL: [ExtractorKind; 7] = [
        ExtractorKind::Auto,
        ExtractorKind::Trafilatura,
        ExtractorKind::RsTrafilatura,
        ExtractorKind::Readability,
        ExtractorKind::Fast,
        ExtractorKind::Blocks,
        ExtractorKind::None,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExtractorKind::Auto => "auto",
            ExtractorKind::Trafilatura => "trafilatura",
            ExtractorKind::RsTrafilatura => "rs-trafilatura",
            ExtractorKind::Readability => "readability",
            ExtractorKind::Fast => "fast",
            ExtractorKind::Blocks => "blocks",
            ExtractorKind::None => "none",
        }
    }
}

impl FromStr for ExtractorKind {
    type Err = ExtractError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExtractorKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ExtractError::UnknownExtractor(s.to_string()))
    }
}

impl std::fmt::Display for ExtractorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Extraction settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtractConfig {
    pub extractor: ExtractorKind,
    /// What one page may cost: nesting depth (the extractors recurse),
    /// elements and attributes. A page over it is refused, never crashed on
    /// or worked on for minutes.
    pub budget: PageBudget,
    /// When set, only the elements matching it are extracted from.
    pub include: Option<CssSelector>,
    /// Elements matching it are removed before extraction.
    pub exclude: Option<CssSelector>,
}

impl ExtractConfig {
    /// A config for `extractor` with the default limits.
    pub fn new(extractor: ExtractorKind) -> Self {
        ExtractConfig { extractor, ..ExtractConfig::default() }
    }

    /// Sets the include/exclude CSS selectors, checking their syntax.
    pub fn with_selectors(mut self, include: Option<&str>, exclude: Option<&str>) -> Result<Self, ExtractError> {
        self.include = include.map(CssSelector::parse).transpose()?;
        self.exclude = exclude.map(CssSelector::parse).transpose()?;
        Ok(self)
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
    /// All the page's text outside its chrome, when the extractor read more
    /// than it kept (`blocks`); for learning a site's template.
    pub context: Option<String>,
}

/// Why a page could not be extracted, or a setting is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("HTML nested more than {limit} levels deep")]
    TooDeep { limit: usize },
    /// Over another part of the page budget (elements, attributes).
    #[error("page too costly to extract: {0}")]
    TooCostly(String),
    #[error("invalid CSS selector `{selector}`: {message}")]
    Selector { selector: String, message: String },
    #[error("unknown extractor `{0}`; use auto, trafilatura, rs-trafilatura, readability, fast or none")]
    UnknownExtractor(String),
}

impl ExtractError {
    /// The per-document error category of a page this error refused.
    pub fn doc_kind(&self) -> crate::error::DocErrorKind {
        match self {
            ExtractError::TooCostly(_) => crate::error::DocErrorKind::TooCostly,
            _ => crate::error::DocErrorKind::TooDeep,
        }
    }
}

/// Extracts the main text of an HTML page.
pub fn extract(html: &str, config: &ExtractConfig) -> Result<Extracted, ExtractError> {
    extract_with_url(html, None, config)
}

/// [`extract`] with the page's URL, which helps the extractors resolve links
/// and recognise the site.
pub fn extract_with_url(html: &str, url: Option<&str>, config: &ExtractConfig) -> Result<Extracted, ExtractError> {
    guard::check(html, &config.budget)?;
    // The extractors recurse over the DOM: on a thread with less stack left
    // than a page at the depth limit needs (a library caller's main thread,
    // tokio's 2 MiB blocking threads), run them on a stack of their own.
    stacker::maybe_grow(EXTRACT_STACK / 4, EXTRACT_STACK, || run_extractor(html, url, config))
}

fn run_extractor(html: &str, url: Option<&str>, config: &ExtractConfig) -> Result<Extracted, ExtractError> {
    let narrowed;
    let html = if config.include.is_some() || config.exclude.is_some() {
        narrowed = select::apply(html, config.include.as_ref(), config.exclude.as_ref());
        narrowed.as_str()
    } else {
        html
    };
    let url = url.and_then(|u| url::Url::parse(u).ok()).filter(|u| matches!(u.scheme(), "http" | "https"));
    let found = match config.extractor {
        ExtractorKind::Auto => combine::consensus(html, url.as_ref()),
        ExtractorKind::Trafilatura => combine::guarded(|| combine::trafilatura_checked(html, url.as_ref())),
        ExtractorKind::RsTrafilatura => {
            combine::rs_trafilatura_checked(html, url.as_ref()).or_else(|| combine::chromeless(html))
        }
        ExtractorKind::Readability => {
            combine::guarded(|| combine::readability(html, url.as_ref())).or_else(|| combine::chromeless(html))
        }
        ExtractorKind::Fast => {
            combine::guarded(|| combine::fast(html, url.as_ref())).or_else(|| combine::chromeless(html))
        }
        ExtractorKind::Blocks => combine::guarded(|| blocks::blocks(html)).or_else(|| combine::chromeless(html)),
        ExtractorKind::None => combine::chromeless(html),
    };
    let Some(mut e) = found else {
        let (text, title) = visible_text(html);
        return Ok(Extracted { text, title, extractor: "visible", context: None });
    };
    // trafilatura and rs-trafilatura separate the text of adjacent inline
    // elements (`<b>Java</b><i>Script</i>`): the page's spacing is put back.
    if matches!(e.extractor, "trafilatura" | "rs-trafilatura") {
        e.text = respace::respace(&e.text, &visible_text(html).0);
    }
    // `none` keeps all the text outside the chrome: nothing to make up;
    // `blocks` made up for it on the page it parsed.
    if !matches!(e.extractor, "none" | "blocks") {
        e = shortfall::make_up(html, e);
    }
    Ok(e)
}

/// Runs every extractor once on a small built-in page, so that their
/// one-time set-up (jusText's stop lists for every language, compiled
/// patterns, rs-trafilatura's classifier) is paid before the first real
/// page: `serve` calls it before listening, and webdup-eval before timing.
pub fn warm_up() {
    let html = "<html lang=en><head><title>Warm-up</title></head><body><nav><a href=/>Home</a></nav>\
                <article><h1>A short note</h1><p>The committee met on Tuesday and agreed the budget for \
                next year.</p></article><footer>Contact us</footer></body></html>";
    for kind in ExtractorKind::ALL {
        let _ = extract_with_url(html, Some("https://example.com/note"), &ExtractConfig::new(kind));
    }
}

/// A page's main text with the metadata later stages need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtractedPage {
    /// The page URL, when known.
    pub url: Option<String>,
    /// The extractor whose output was used (after any fallback).
    pub extractor: &'static str,
    /// Words in `text` (runs of letters and digits).
    pub word_count: usize,
    #[serde(flatten)]
    pub meta: PageMeta,
    pub text: String,
    /// The title the extractor found (`meta.title` prefers the page's own
    /// `<title>`).
    #[serde(skip)]
    pub extracted_title: Option<String>,
    /// See [`Extracted::context`].
    #[serde(skip)]
    pub context: Option<String>,
}

/// Extracts a page's main text and reads its metadata: the one way from
/// HTML to a page, for `webdup extract`, the fingerprinter and the HTTP
/// API. The language is the declared one, else the one detected from the
/// text when detection is sure.
pub fn extract_page(html: &str, url: Option<&str>, config: &ExtractConfig) -> Result<ExtractedPage, ExtractError> {
    extract_page_with(html, url, config, true)
}

/// [`extract_page`], detecting the language of pages that declare none only
/// when `detect_language` is set (fingerprinting has no use for it).
pub fn extract_page_with(
    html: &str,
    url: Option<&str>,
    config: &ExtractConfig,
    detect_language: bool,
) -> Result<ExtractedPage, ExtractError> {
    let e = extract_with_url(html, url, config)?;
    let mut meta = page_meta(&scraper::Html::parse_document(html), url);
    if meta.title.is_none() {
        meta.title = e.title.clone();
    }
    if detect_language && meta.language.is_none() {
        meta.language = webdup_core::shingle::Language::detect(&e.text).map(|l| l.code.to_string());
    }
    Ok(ExtractedPage {
        url: url.map(str::to_string),
        extractor: e.extractor,
        word_count: word_count(&e.text),
        meta,
        text: e.text,
        extracted_title: e.title,
        context: e.context,
    })
}

/// Counts runs of letters and digits.
pub fn word_count(text: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).count()
}

/// The value of `e`'s attribute `name` (one in no namespace), as
/// [`scraper::node::Element::attr`] finds it, by a scan of the element's few
/// attributes: `attr` interns `name` as an atom first, which made it 8% of
/// extraction's instructions, called for a handful of names on every element.
pub(crate) fn attr<'a>(e: &'a scraper::node::Element, name: &str) -> Option<&'a str> {
    e.attrs.iter().find(|(q, _)| q.ns.is_empty() && &*q.local == name).map(|(_, v)| &**v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_found_as_scraper_finds_them() {
        let html = r#"<div id=a CLASS="x y" role=main data-x><svg xlink:role="r" xml:lang="en" class=s></svg><p hidden style="">t</p></div>"#;
        let doc = scraper::Html::parse_fragment(html);
        let mut seen = 0;
        for node in doc.tree.nodes() {
            let Some(e) = node.value().as_element() else { continue };
            for name in ["id", "class", "role", "data-x", "hidden", "style", "lang", "href", "CLASS", ""] {
                assert_eq!(super::attr(e, name), e.attr(name), "{name} of {:?}", e.name());
                seen += usize::from(e.attr(name).is_some());
            }
        }
        assert_eq!(
            seen, 7,
            "the div's four, the svg's class (its xlink:role and xml:lang are namespaced), the p's two"
        );
    }

    #[test]
    fn too_deep_pages_are_refused_not_crashed_on() {
        let limit = PageBudget::default().max_depth;
        let deep = format!("<html><body>{}text</body></html>", "<span>".repeat(100_000));
        assert_eq!(extract(&deep, &ExtractConfig::default()), Err(ExtractError::TooDeep { limit }));
        // The page of issue 16 that crashed every command: `<span/>` nests.
        let spans = format!("<html><body>{}</body></html>", "<span/>".repeat(300_000));
        assert_eq!(extract(&spans, &ExtractConfig::default()), Err(ExtractError::TooDeep { limit }));
    }

    /// The guard's estimate of depth can fall short of the parser's on
    /// crafted markup (the `guard` fuzz target has found SVG mixed with
    /// misnested formatting nesting 2.4 times deeper); the stack must cover
    /// that margin. Run from a test thread (2 MiB of stack), so this also
    /// checks that extraction moves to a stack of its own.
    #[test]
    fn the_extraction_stack_covers_three_times_the_depth_limit() {
        let levels = 3 * PageBudget::default().max_depth;
        let budget = PageBudget { max_depth: 4 * levels, max_nesting_work: u64::MAX, ..PageBudget::default() };
        for tag in ["span", "div"] {
            let html = format!(
                "<html><body>{}the river path was restored this spring</body></html>",
                format!("<{tag}>").repeat(levels)
            );
            for kind in ExtractorKind::ALL {
                let config = ExtractConfig { extractor: kind, budget, ..ExtractConfig::default() };
                let e = extract(&html, &config).unwrap();
                assert!(e.text.contains("river path"), "{tag} {kind}: {}", e.text);
            }
        }
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
    fn pages_trafilatura_rejects_fall_back_and_never_come_out_empty() {
        for kind in ExtractorKind::ALL {
            let e = extract("<html><body><div>Short note</div></body></html>", &ExtractConfig::new(kind)).unwrap();
            assert!(e.text.contains("Short note"), "{kind}: {e:?}");
            // Everything in the page chrome: the `none` extractor finds nothing, the fallback still does.
            let e =
                extract("<html><body><header>Only a header</header></body></html>", &ExtractConfig::new(kind)).unwrap();
            assert!(e.text.contains("Only a header"), "{kind}: {e:?}");
        }
    }

    #[test]
    fn extractor_names_round_trip() {
        for kind in ExtractorKind::ALL {
            assert_eq!(kind.as_str().parse::<ExtractorKind>().unwrap(), kind);
        }
        assert!(matches!("boilerpipe".parse::<ExtractorKind>(), Err(ExtractError::UnknownExtractor(_))));
    }

    #[test]
    fn selectors_narrow_the_page_before_extraction() {
        let body = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(12);
        let html = format!(
            "<html><body><div id=a><p>{body}</p></div><div id=b><p>Unrelated sidebar words</p></div></body></html>"
        );
        let config = ExtractConfig::new(ExtractorKind::None).with_selectors(Some("#b"), None).unwrap();
        let e = extract(&html, &config).unwrap();
        assert_eq!(e.text, "Unrelated sidebar words");
        let config = ExtractConfig::new(ExtractorKind::None).with_selectors(None, Some("#a")).unwrap();
        assert!(!extract(&html, &config).unwrap().text.contains("fox"));
        assert!(ExtractConfig::default().with_selectors(Some("##"), None).is_err());
    }

    #[test]
    fn extract_page_reports_metadata_and_word_count() {
        let body = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(12);
        let html = format!(
            "<html lang=en><head><title>Fox</title><link rel=canonical href=/fox></head>\
             <body><article><h1>Fox news</h1><p>{body}</p></article></body></html>"
        );
        let p = extract_page(&html, Some("https://example.com/x/fox?utm=1"), &ExtractConfig::default()).unwrap();
        assert_eq!(p.meta.canonical.as_deref(), Some("https://example.com/fox"));
        assert_eq!(p.meta.h1.as_deref(), Some("Fox news"));
        assert_eq!(p.meta.title.as_deref(), Some("Fox"));
        assert_eq!(p.word_count, word_count(&p.text));
        assert!(p.word_count >= 12 * 13, "{}", p.word_count);
    }
}
