//! The block classifier: one parse, the page cut into text blocks, each
//! block judged on its own words and where it sits, the page's text the
//! blocks judged content.
//!
//! Extractors that look for the page's largest run of text fail on thin
//! pages: when the page's own text is 20 words, the largest text on it is
//! the site's ticker, link list, cookie notice or teaser column, and two
//! thin pages of one site then come out identical. Here no block is content
//! because it is long. A block is left out when it is page furniture by
//! tag, role or a word of its class or id (`nav`, `footer`, a cookie
//! notice, a share bar, a "related" teaser box: see [`FURNITURE_WORDS`]),
//! unless a survey of the page found that it holds the content (see
//! [`Survey`]), or when it is mostly link text
//! (a ticker, a menu, a list of headlines), as in jusText and boilerpipe.
//! What remains is content when it is a run of at least [`GOOD_WORDS`]
//! words, and short blocks (headings, one-line paragraphs) join it when
//! they sit between content blocks or head one. A page with no such run (a
//! product grid, a listing) keeps its short blocks outside the furniture.

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use ego_tree::iter::Edge;
use scraper::{Html, Node};

use super::Extracted;
use super::visible::BLOCK;

/// Elements whose text is never content: not shown, or controls.
const SKIP: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed", "canvas", "video", "audio",
    "head", "select", "option", "textarea", "button", "label", "input", "dialog",
];

/// ARIA roles of page chrome.
const CHROME_ROLES: &[&str] =
    &["navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "dialog", "alertdialog"];

/// Words a block needs to be content on its own (jusText's `length_low`
/// of 70 characters is about 10 words of English).
pub(super) const GOOD_WORDS: usize = 10;

/// Short blocks in a row, with [`GOOD_WORDS`] words per line on average,
/// are content together (see [`classify`]).
const RUN_LINES: usize = 5;

/// A block whose link text is more than this share of its words is a
/// link list, a ticker or a menu item.
const MAX_LINK_DENSITY: f64 = 1.0 / 3.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A run of words outside the furniture, little of it link text.
    Good,
    /// Too short to judge alone: kept between content, or on a page with none.
    Short,
    /// Mostly link text.
    Linky,
    /// Matched a discard rule (class or id): furniture unless the page has
    /// nothing else.
    Weak,
    /// Navigation, footer, sidebar, banner, cookie notice, hidden.
    Chrome,
}

#[derive(Debug)]
struct Block {
    text: String,
    words: usize,
    linked: usize,
    heading: bool,
    class: Class,
}

/// Walk state: how many open elements of each kind enclose the text.
#[derive(Default)]
struct Depths {
    skip: usize,
    link: usize,
    chrome: usize,
    weak: usize,
    heading: usize,
    main: usize,
}

/// What an open element added to [`Depths`], undone when it closes.
#[derive(Clone, Copy, Default)]
struct Frame {
    link: bool,
    chrome: bool,
    weak: bool,
    heading: bool,
    main: bool,
    boundary: bool,
}

/// The page's main text by block classification, or `None` when no block
/// outside the page chrome has a word.
pub(super) fn blocks(html: &str) -> Option<Extracted> {
    // Scripts, styles and drawings are never content: the parser is spared them.
    let doc = Html::parse_document(&super::strip::strip(html));
    let (mut blocks, title) = segment(&doc, Names::Words);
    classify(&mut blocks);
    let mut text = choose(&blocks)?;
    let kept = count_words(&text);
    let all: usize = blocks.iter().filter(|b| !matches!(b.class, Class::Chrome | Class::Linky)).map(|b| b.words).sum();
    if kept.saturating_mul(super::shortfall::FAR_SMALLER) < all
        && let Some((run, words)) = run_of(&doc)
    {
        text = super::shortfall::joined(text, kept, &run, words);
    }
    // Everything but chrome and link lists, for learning the site's
    // template: what this page left out another page of the site may keep.
    let context = blocks
        .iter()
        .filter(|b| !matches!(b.class, Class::Chrome | Class::Linky))
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    Some(Extracted { text, title, extractor: "blocks", context: Some(context) })
}

/// What the segmentation needs to know about the page before it starts:
/// which elements hold the page's heading or article, and which discard
/// rules match the site's own content template.
struct Survey {
    /// The first `h1` outside the chrome, `article` and `main`, and their
    /// ancestors: the content is in there, whatever their class says.
    exempt: HashSet<NodeId>,
    /// Rules whose matches are at least [`MAX_RULE_SHARE`] of the page's
    /// words in [`MIN_RULE_MATCHES`] or more elements: the site's content
    /// template (every paragraph of an Elementor page is a "widget"), not
    /// furniture.
    ignored: HashSet<&'static str>,
}

/// What the survey measured of one element.
struct Size {
    id: NodeId,
    words: usize,
    paragraphs: usize,
    lines: usize,
    prose: usize,
    /// Named furniture outright (see [`is_named`]).
    furniture: bool,
}

/// See [`Survey::ignored`].
const MAX_RULE_SHARE: f64 = 1.0 / 3.0;
const MIN_RULE_MATCHES: usize = 3;
/// An element holding [`MAX_RULE_SHARE`] of the page's words in at least
/// this many paragraphs is a wrapper of the content, whatever its class
/// (`main right-sidebar`) or inline style (content hidden until a script
/// shows it); a bio box, a teaser or a notice is one or two paragraphs.
const MIN_WRAPPER_PARAGRAPHS: usize = 3;

/// An element holding more than this share of the page's words in at least
/// [`RUN_LINES`] blocks is the content's wrapper however short its lines (a
/// forum post of a product's spec lines, in a moderation `form` inside
/// `#comments`); a footer's lines are one block.
const MAJORITY: f64 = 0.5;

/// An element open during the survey.
struct Open {
    id: NodeId,
    /// Words under it, outside links and chrome.
    words: usize,
    /// Words whose nearest block-level element it is.
    own: usize,
    /// Block-level elements under it with [`GOOD_WORDS`] of their own.
    paragraphs: usize,
    /// Block-level elements under it with any words of their own.
    lines: usize,
    /// Words of the block-level elements under it with [`GOOD_WORDS`] of
    /// their own: its share of the page's prose.
    prose: usize,
    rule: Option<&'static str>,
    chrome: bool,
    block: bool,
    /// A `header` outside `main` and `article`: the page's header, chrome
    /// unless it holds the heading, the article or `main` (see [`survey`]).
    header: bool,
    /// What the survey had counted when it opened: a page header's part is
    /// taken back when it closes.
    before: Counted,
}

/// Running counts of the survey, kept at each element's opening.
#[derive(Clone, Copy, Default)]
struct Counted {
    free: usize,
    named_prose: usize,
    rules: usize,
    sizes: usize,
}

fn survey(doc: &Html) -> Survey {
    let mut exempt = HashSet::new();
    // Words of each element a discard rule matched, in closing order.
    let mut rule_words: Vec<(&'static str, usize)> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut blocks: Vec<usize> = Vec::new();
    let mut sizes: Vec<Size> = Vec::new();
    // Prose in elements named furniture outright (`id=sidebar`), which
    // never hold the content while the page has prose of its own elsewhere.
    let mut named_prose = 0usize;
    // Paragraphs outside chrome and outside every element a discard rule
    // matched: the page's own text, when it has any.
    let mut free = 0usize;
    let (mut skip, mut chrome_depth, mut ruled, mut link, mut main) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut found_h1 = false;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    if skip > 0 || SKIP.contains(&e.name()) {
                        skip += 1;
                        continue;
                    }
                    let name = e.name();
                    let is_chrome = chrome(e);
                    chrome_depth += usize::from(is_chrome);
                    link += usize::from(name == "a");
                    let first_h1 = name == "h1" && chrome_depth == 0 && !found_h1;
                    let is_main = matches!(name, "article" | "main") || super::attr(e, "role") == Some("main");
                    main += usize::from(is_main);
                    if first_h1 || is_main {
                        found_h1 |= first_h1;
                        exempt.extend(node.ancestors().map(|a| a.id()));
                        exempt.insert(node.id());
                    }
                    let rule = (ruled == 0 && !is_chrome).then(|| discarded(e)).flatten();
                    ruled += usize::from(rule.is_some());
                    let block = BLOCK.contains(&name);
                    if block {
                        blocks.push(stack.len());
                    }
                    stack.push(Open {
                        id: node.id(),
                        words: 0,
                        own: 0,
                        paragraphs: 0,
                        lines: 0,
                        prose: 0,
                        rule,
                        chrome: is_chrome,
                        block,
                        header: name == "header" && main == 0,
                        before: Counted { free, named_prose, rules: rule_words.len(), sizes: sizes.len() },
                    });
                }
                Node::Text(t) if skip == 0 && chrome_depth == 0 && link == 0 => {
                    let n = count_words(t);
                    if let Some(top) = stack.last_mut() {
                        top.words += n;
                    }
                    if let Some(&b) = blocks.last() {
                        stack[b].own += n;
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                let Node::Element(e) = node.value() else { continue };
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let Some(mut o) = stack.pop() else { continue };
                chrome_depth -= usize::from(o.chrome);
                link -= usize::from(e.name() == "a");
                main -= usize::from(matches!(e.name(), "article" | "main") || super::attr(e, "role") == Some("main"));
                if o.block {
                    blocks.pop();
                    free += usize::from(o.own >= GOOD_WORDS && ruled == 0);
                    o.paragraphs += usize::from(o.own >= GOOD_WORDS);
                    o.lines += usize::from(o.own > 0);
                    o.prose += if o.own >= GOOD_WORDS { o.own } else { 0 };
                }
                if let Some(r) = o.rule {
                    ruled -= 1;
                    rule_words.push((r, o.words));
                }
                // A page header that holds neither the heading, the article
                // nor `main` is chrome, as the segmentation reads it: on a
                // thin page its cart, account menu or notices outweigh the
                // page's own words, and must not pass for the content's
                // wrapper nor for text of the page's own.
                if o.header && !exempt.contains(&o.id) {
                    free = o.before.free;
                    named_prose = o.before.named_prose;
                    rule_words.truncate(o.before.rules);
                    sizes.truncate(o.before.sizes);
                    continue;
                }
                let furniture = o.rule.is_some_and(|r| !HOLDS_POSTS.contains(&r) && is_named(e, r));
                named_prose += if furniture { o.prose } else { 0 };
                sizes.push(Size {
                    id: o.id,
                    words: o.words,
                    paragraphs: o.paragraphs,
                    lines: o.lines,
                    prose: o.prose,
                    furniture,
                });
                if let Some(top) = stack.last_mut() {
                    top.words += o.words;
                    top.paragraphs += o.paragraphs;
                    top.lines += o.lines;
                    top.prose += o.prose;
                }
            }
        }
    }
    let total = sizes.last().map_or(0, |s| s.words).max(1) as f64;
    let prose = sizes.last().map_or(0, |s| s.prose).saturating_sub(named_prose) as f64;
    exempt.extend(
        sizes
            .into_iter()
            .filter(|s| {
                let w = s.words as f64;
                let big = (w >= MAX_RULE_SHARE * total && s.paragraphs >= MIN_WRAPPER_PARAGRAPHS)
                    || (w > MAJORITY * total && s.lines >= RUN_LINES)
                    // On a page whose every paragraph is inside elements
                    // a furniture word matched, the one holding most of
                    // that prose, however little: a thin post's paragraphs
                    // in `category-popular` or `sidebar-and-content-body`.
                    || (free == 0 && s.paragraphs > 0 && s.prose as f64 > MAJORITY * prose);
                // An element that names itself furniture (`id=sidebar`)
                // holds the content only on a page with no paragraph of its
                // own elsewhere: on a thin page the sidebar's reviews or the
                // teaser column outweigh the page's own words by far, and
                // are still furniture.
                big && (!s.furniture || free == 0)
            })
            .map(|s| s.id),
    );
    let mut by_rule: HashMap<&'static str, (usize, usize)> = HashMap::new();
    for (r, words) in rule_words {
        let entry = by_rule.entry(r).or_default();
        entry.0 += words;
        entry.1 += 1;
    }
    let ignored = by_rule
        .into_iter()
        .filter(|(_, (words, matches))| *matches >= MIN_RULE_MATCHES && *words as f64 >= MAX_RULE_SHARE * total)
        .map(|(r, _)| r)
        .collect();
    Survey { exempt, ignored }
}

/// Which class and id names make an element furniture.
#[derive(Clone, Copy)]
enum Names {
    /// A furniture word in any of them ([`named`]).
    Words,
    /// Only a furniture word that is a whole class or id ([`is_named`]).
    Whole,
}

/// The page's longest run of content blocks and its words, read with
/// furniture known by tag, role and whole names only: the page's own prose,
/// whatever its wrappers' classes say. See [`super::shortfall`].
pub(super) fn longest_run(html: &str) -> Option<(String, usize)> {
    run_of(&Html::parse_document(&super::strip::strip(html)))
}

/// [`longest_run`] of a parsed page.
fn run_of(doc: &Html) -> Option<(String, usize)> {
    let (mut blocks, _) = segment(doc, Names::Whole);
    classify(&mut blocks);
    let mut best: Option<(usize, usize, usize)> = None;
    let mut i = 0;
    while i < blocks.len() {
        if blocks[i].class != Class::Good {
            i += 1;
            continue;
        }
        let start = i;
        let mut words = 0;
        while i < blocks.len() && blocks[i].class == Class::Good {
            words += blocks[i].words;
            i += 1;
        }
        if best.is_none_or(|(_, _, w)| words > w) {
            best = Some((start, i, words));
        }
    }
    let (start, end, words) = best?;
    let text: Vec<&str> = blocks[start..end].iter().map(|b| b.text.as_str()).collect();
    Some((text.join("\n"), words))
}

/// Cuts the page into blocks: at block-level elements and at the borders of
/// furniture, so that a block is furniture or not as a whole.
fn segment(doc: &Html, names: Names) -> (Vec<Block>, Option<String>) {
    let survey = survey(doc);
    let mut blocks = Vec::new();
    let mut title = None;
    let mut d = Depths::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut current = Block { text: String::new(), words: 0, linked: 0, heading: false, class: Class::Short };
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    let name = e.name();
                    // The document's title is in <head>, which is skipped.
                    let in_head =
                        node.parent().and_then(|p| p.value().as_element()).is_some_and(|p| p.name() == "head");
                    if name == "title" && in_head && title.is_none() {
                        let t: String = node.children().filter_map(|c| c.value().as_text().map(|t| &**t)).collect();
                        title = Some(t.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|t| !t.is_empty());
                    }
                    if d.skip > 0 {
                        d.skip += 1;
                        continue;
                    }
                    let exempt = survey.exempt.contains(&node.id());
                    if SKIP.contains(&name) || (hidden(e) && !exempt) {
                        d.skip = 1;
                        continue;
                    }
                    let main = matches!(name, "article" | "main") || super::attr(e, "role") == Some("main");
                    let is_chrome = chrome(e) || (name == "header" && d.main == 0 && !exempt);
                    let weak = !is_chrome
                        && !exempt
                        && (name == "form"
                            || discarded(e).is_some_and(|r| match names {
                                Names::Words => !survey.ignored.contains(r),
                                Names::Whole => !HOLDS_POSTS.contains(&r) && is_named(e, r),
                            }));
                    let heading = matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
                    let f = Frame {
                        link: name == "a",
                        chrome: is_chrome,
                        weak,
                        heading,
                        main,
                        boundary: BLOCK.contains(&name) || is_chrome || weak,
                    };
                    if f.boundary {
                        flush(&mut current, &d, &mut blocks);
                    }
                    d.link += usize::from(f.link);
                    d.chrome += usize::from(f.chrome);
                    d.weak += usize::from(f.weak);
                    d.heading += usize::from(f.heading);
                    d.main += usize::from(f.main);
                    frames.push(f);
                }
                Node::Text(t) if d.skip == 0 => {
                    let words = count_words(t);
                    current.words += words;
                    if d.link > 0 {
                        current.linked += words;
                    }
                    super::visible::push_text(&mut current.text, t);
                }
                _ => {}
            },
            Edge::Close(node) => {
                if !node.value().is_element() {
                    continue;
                }
                if d.skip > 0 {
                    d.skip -= 1;
                    continue;
                }
                let Some(f) = frames.pop() else { continue };
                if f.boundary {
                    flush(&mut current, &d, &mut blocks);
                }
                d.link -= usize::from(f.link);
                d.chrome -= usize::from(f.chrome);
                d.weak -= usize::from(f.weak);
                d.heading -= usize::from(f.heading);
                d.main -= usize::from(f.main);
            }
        }
    }
    flush(&mut current, &d, &mut blocks);
    (blocks, title)
}

/// Ends the block being collected, judging it by the furniture around it.
fn flush(current: &mut Block, d: &Depths, blocks: &mut Vec<Block>) {
    if current.words == 0 {
        current.text.clear();
        current.linked = 0;
        return;
    }
    let class = if d.chrome > 0 {
        Class::Chrome
    } else if d.weak > 0 {
        Class::Weak
    } else {
        Class::Short
    };
    let text = std::mem::take(&mut current.text).trim().to_string();
    blocks.push(Block { text, words: current.words, linked: current.linked, heading: d.heading > 0, class });
    current.words = 0;
    current.linked = 0;
}

/// Words in `class` and `id` that name page furniture wherever they are.
/// Whole words only (`right-sidebar` matches, `sidebarless` does not), and
/// only words that name one thing: trafilatura's substring rules (`bar`,
/// `widget`, `message`, `expand`) are precise inside an article already
/// found, but page-wide they match the content's own wrappers (Elementor
/// puts every paragraph in a "widget", forums every post in a "message").
/// Lowercase and at most 16 bytes, as [`named`] packs them.
const FURNITURE_WORDS: &[&str] = &[
    "advert",
    "advertisement",
    "author",
    "banner",
    "bio",
    "breadcrumb",
    "breadcrumbs",
    "byline",
    "comment",
    "comments",
    "consent",
    "cookie",
    "cookies",
    "footer",
    "menu",
    "modal",
    "nav",
    "navbar",
    "navigation",
    "newsletter",
    "popular",
    "popup",
    "promo",
    "recommended",
    "related",
    "share",
    "sharing",
    "sidebar",
    "social",
    "sponsored",
    "subnav",
    "subscribe",
    "subscription",
    "tags",
    "teaser",
    "teasers",
    "toolbar",
    "trending",
];

/// Furniture words that may name the holder of a page's own text: a forum
/// thread's replies or a question's answers are in `#comments`, an author
/// page's text in `.author`. The others (`sidebar`, `related`, `newsletter`,
/// ...) never hold it, however much of a thin page they are.
const HOLDS_POSTS: &[&str] = &["comment", "comments", "author", "bio"];

/// Parts of a `class` or `id` that make an element chrome: never content,
/// however much of the page it holds (`CookieBanner`, `cmp-consent`).
const CONSENT_WORDS: &[&str] = &["cookie", "consent", "gdpr"];

/// Parts of a class or id that make it describe the page's layout rather
/// than name a piece of furniture: `c-layout-sidebar-left`,
/// `l-sidebar-fixed` (a BEM layout block), `has-sidebar`, `with-sidebar`
/// hold the content *beside* a sidebar. (`footer-wrap` or
/// `sidebar-container` are still the footer and the sidebar.)
const LAYOUT_PARTS: &[&str] = &["l", "layout", "has", "with"];

/// The furniture word (of [`FURNITURE_WORDS`]) that one of `e`'s classes,
/// or its id, contains as a whole word, unless that class or id describes a
/// layout ([`LAYOUT_PARTS`]). Every element with a class passes here: each
/// part is lowercased into a 128-bit number and looked up among numbers.
fn named(e: &scraper::node::Element) -> Option<&'static str> {
    static FURNITURE: std::sync::LazyLock<Vec<(u128, &'static str)>> = std::sync::LazyLock::new(|| {
        let mut packed: Vec<_> = FURNITURE_WORDS.iter().filter_map(|w| Some((packed(w.as_bytes())?, *w))).collect();
        packed.sort_unstable();
        packed
    });
    static LAYOUT: std::sync::LazyLock<Vec<u128>> =
        std::sync::LazyLock::new(|| LAYOUT_PARTS.iter().filter_map(|w| packed(w.as_bytes())).collect());
    let find = |token: &str| {
        let mut found = None;
        for part in token.as_bytes().split(|c| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
            // No layout part or furniture word is too long to pack.
            let Some(key) = packed(part) else { continue };
            if LAYOUT.contains(&key) {
                return None;
            }
            if found.is_none() {
                found = FURNITURE.binary_search_by_key(&key, |&(k, _)| k).ok().map(|i| FURNITURE[i].1);
            }
        }
        found
    };
    let class = super::attr(e, "class").and_then(|c| c.split_ascii_whitespace().find_map(find));
    class.or_else(|| e.id().and_then(find))
}

/// An ASCII word of at most 16 letters and digits, lowercased, as one
/// number (the bytes after it zero, which no such word has).
fn packed(word: &[u8]) -> Option<u128> {
    let mut bytes = [0u8; 16];
    bytes.get_mut(..word.len())?.copy_from_slice(word);
    bytes.make_ascii_lowercase();
    Some(u128::from_le_bytes(bytes))
}

/// True when `word` is the whole of `e`'s id or one of its classes: the
/// element *is* the sidebar (`id=sidebar`, `class="widget-area sidebar"`),
/// where a class such as `l-sidebar-fixed` or `has-sidebar` may describe a
/// layout that holds the content beside one.
fn is_named(e: &scraper::node::Element, word: &str) -> bool {
    e.id().is_some_and(|id| id.eq_ignore_ascii_case(word))
        || super::attr(e, "class").is_some_and(|c| c.split_ascii_whitespace().any(|t| t.eq_ignore_ascii_case(word)))
}

/// The furniture word `e`'s class or id contains, if any (never for `html`
/// and `body`, whose classes describe the page: `has-sidebar`).
fn discarded(e: &scraper::node::Element) -> Option<&'static str> {
    if is_page(e) {
        return None;
    }
    named(e)
}

/// `html` and `body`: the whole page, whatever their classes say of it.
fn is_page(e: &scraper::node::Element) -> bool {
    matches!(e.name(), "html" | "body")
}

/// Page chrome by tag, role or a consent notice's class. (Hidden elements
/// are [`hidden`]'s, which spares a hidden wrapper of the content.) `html`
/// and `body` hold the whole page whatever state their classes record
/// (`cookie-banner-visible`, `has-consent-bar`).
fn chrome(e: &scraper::node::Element) -> bool {
    matches!(e.name(), "nav" | "footer" | "aside" | "figcaption")
        || super::attr(e, "role").is_some_and(|r| CHROME_ROLES.contains(&r.trim()))
        || !is_page(e)
            && [super::attr(e, "class"), e.id()]
                .into_iter()
                .flatten()
                .any(|v| CONSENT_WORDS.iter().any(|w| crate::lex::contains_ignoring_case(v.as_bytes(), w.as_bytes())))
}

/// Hidden by attribute or inline style.
pub fn hidden(e: &scraper::node::Element) -> bool {
    if super::attr(e, "hidden").is_some() || super::attr(e, "aria-hidden") == Some("true") {
        return true;
    }
    super::attr(e, "style").is_some_and(|s| declares(s, "display", "none") || declares(s, "visibility", "hidden"))
}

/// `b` without its leading ASCII whitespace.
fn skip_spaces(b: &[u8]) -> &[u8] {
    b.iter().position(|c| !c.is_ascii_whitespace()).map_or(&[], |i| &b[i..])
}

/// True when the inline style `style` sets `property` to `value` (ASCII
/// case and spaces ignored), without allocating: this runs on every element.
fn declares(style: &str, property: &str, value: &str) -> bool {
    let bytes = style.as_bytes();
    (0..bytes.len()).any(|i| {
        let rest = &bytes[i..];
        if rest.len() < property.len() || !rest[..property.len()].eq_ignore_ascii_case(property.as_bytes()) {
            return false;
        }
        let Some((b':', tail)) = skip_spaces(&rest[property.len()..]).split_first() else { return false };
        let v = skip_spaces(tail);
        v.len() >= value.len() && v[..value.len()].eq_ignore_ascii_case(value.as_bytes())
    })
}

/// Runs of letters and digits; each Han or kana character counts as a word,
/// since those scripts put no spaces between words.
pub(super) fn count_words(text: &str) -> usize {
    // Every text of a page is counted, some twice: eight ASCII bytes are
    // taken at once (see [`ascii_alnum`]), the rest a character at a time.
    let mut n = 0;
    let mut in_word = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(eight) = bytes.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
            let x = u64::from_le_bytes(eight);
            if x & HIGH_BITS == 0 {
                let alnum = ascii_alnum(x);
                // A word starts at a letter or digit whose byte before is not one.
                let before = (alnum << 8) | (u64::from(in_word) << 7);
                n += (alnum & !before).count_ones() as usize;
                in_word = alnum >> 63 == 1;
                i += 8;
                continue;
            }
        }
        if bytes[i].is_ascii() {
            let alnum = bytes[i].is_ascii_alphanumeric();
            n += usize::from(alnum && !in_word);
            in_word = alnum;
            i += 1;
            continue;
        }
        let Some(c) = text[i..].chars().next() else { break };
        i += c.len_utf8();
        if is_ideograph(c) {
            n += 1;
            in_word = false;
        } else if c.is_alphanumeric() {
            if !in_word {
                n += 1;
            }
            in_word = true;
        } else {
            in_word = false;
        }
    }
    n
}

/// The top bit of each of eight bytes.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// For eight ASCII bytes read as one number, the top bit of each byte that
/// is a letter or a digit (others zero). A byte below 0x80 plus `0x80 - lo`
/// reaches its top bit exactly when it is at least `lo`, and never carries
/// into the next byte.
fn ascii_alnum(x: u64) -> u64 {
    const fn splat(b: u8) -> u64 {
        b as u64 * 0x0101_0101_0101_0101
    }
    let in_range = |v: u64, lo: u8, hi: u8| v.wrapping_add(splat(0x80 - lo)) & !v.wrapping_add(splat(0x7F - hi));
    (in_range(x | splat(0x20), b'a', b'z') | in_range(x, b'0', b'9')) & HIGH_BITS
}

fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// Judges each block on its own, then short blocks by their neighbours.
fn classify(blocks: &mut [Block]) {
    for b in blocks.iter_mut() {
        if b.class != Class::Short {
            continue;
        }
        b.class = if b.linked as f64 > MAX_LINK_DENSITY * b.words as f64 {
            Class::Linky
        } else if b.words >= GOOD_WORDS && !b.heading {
            Class::Good
        } else {
            Class::Short
        };
    }
    // A run of short lines that are not links (a spec list, ingredients, a
    // poem) is text as a paragraph is: a menu or a ticker would be link text.
    let mut i = 0;
    while i < blocks.len() {
        if blocks[i].class != Class::Short {
            i += 1;
            continue;
        }
        let mut end = i;
        let (mut lines, mut words) = (0, 0);
        while end < blocks.len() && matches!(blocks[end].class, Class::Short | Class::Chrome | Class::Weak) {
            if blocks[end].class == Class::Short {
                lines += 1;
                words += blocks[end].words;
            }
            end += 1;
        }
        if lines >= RUN_LINES && words >= RUN_LINES * GOOD_WORDS {
            for b in blocks[i..end].iter_mut().filter(|b| b.class == Class::Short) {
                b.class = Class::Good;
            }
        }
        i = end;
    }
    // A short block between content blocks is content (a one-line
    // paragraph, a subheading, a closing line before the footer); a heading
    // right before content heads it. Furniture is out of the text's flow and
    // does not count as a neighbour; the text's start or end counts as
    // content.
    let judged: Vec<Class> = blocks.iter().map(|b| b.class).collect();
    let in_flow = |c: &&Class| matches!(c, Class::Good | Class::Linky);
    for i in 0..blocks.len() {
        if judged[i] != Class::Short {
            continue;
        }
        let prev = judged[..i].iter().rev().find(in_flow);
        let next = judged[i + 1..].iter().find(in_flow);
        let good = |c: Option<&Class>| c == Some(&Class::Good);
        let heads = blocks[i].heading && good(next);
        let between = (good(prev) || prev.is_none()) && (good(next) || next.is_none()) && (good(prev) || good(next));
        if heads || between {
            blocks[i].class = Class::Good;
        }
    }
}

/// The content blocks' text; on a page without any, the short blocks
/// outside the furniture, then those a discard rule matched.
fn choose(blocks: &[Block]) -> Option<String> {
    let levels: [&[Class]; 3] =
        [&[Class::Good], &[Class::Good, Class::Short], &[Class::Good, Class::Short, Class::Linky, Class::Weak]];
    levels.iter().find_map(|classes| {
        let text: Vec<&str> = blocks.iter().filter(|b| classes.contains(&b.class)).map(|b| b.text.as_str()).collect();
        (!text.is_empty()).then(|| text.join("\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTE: &str = "The reading room reopens on Monday with longer hours and a new catalogue terminal.";

    fn text(html: &str) -> String {
        blocks(html).map(|e| e.text).unwrap_or_default()
    }

    #[test]
    fn a_thin_page_keeps_its_own_words_and_not_the_sites_ticker() {
        let ticker: String = (1..=15)
            .map(|i| format!("<li><a href=/p{i}>12.03.2025 Latest article number {i} about the new phones</a></li>"))
            .collect();
        let html = format!(
            "<html><body><header><a href=/>Blog</a></header><div class=main><h1>Reading room</h1><p>{NOTE}</p></div>\
             <div class=col><h3>Letzte Artikel</h3><ul>{ticker}</ul></div>\
             <div id=cookie-notice><p>We use cookies to improve your experience on this site and for analytics.</p></div>\
             <footer><p>Copyright 2025 Example Blog, all rights reserved, imprint and privacy policy.</p></footer></body></html>"
        );
        assert_eq!(text(&html), format!("Reading room\n{NOTE}"));
    }

    #[test]
    fn a_sidebar_outweighing_a_thin_pages_own_words_is_still_furniture() {
        let review = "Great service and friendly staff, the tent arrived early and everything worked as planned.";
        let reviews: String = (1..=8).map(|i| format!("<div class=card><p>{review} Review {i}.</p></div>")).collect();
        let thin = format!(
            "<html><body><div id=main><h1>Tent rental</h1><p>{NOTE}</p></div>\
             <div id=sidebar><h4>What our customers say</h4>{reviews}</div></body></html>"
        );
        assert_eq!(text(&thin), format!("Tent rental\n{NOTE}"));
        // A layout class that names a sidebar beside the content (`l-sidebar-fixed`)
        // still wraps it, and so do a forum thread's replies in `#comments`.
        let paragraphs: String = (1..=6).map(|i| format!("<p>{NOTE} Paragraph {i}.</p>")).collect();
        let article = format!(
            "<body><h1>Reading room</h1><p>{NOTE} Standfirst.</p><div class=\"l-sidebar-fixed\">{paragraphs}</div></body>"
        );
        assert!(text(&article).contains("Paragraph 6."), "{}", text(&article));
        let forum = format!(
            "<body><h1>Reading room</h1><div class=post><p>{NOTE} First post.</p></div>\
             <section id=comments>{paragraphs}</section></body>"
        );
        assert!(text(&forum).contains("Paragraph 6."), "{}", text(&forum));
    }

    #[test]
    fn a_page_headers_cart_outweighing_a_thin_post_is_still_chrome() {
        let cart = "<div class=minicart><div class=notice>Please remove this item from your basket before you \
                    place your order with us</div><div class=notice>We are sorry, there is limited stock of this \
                    item, please change the quantity to go on</div><div>Quantity</div><div>Unit price</div>\
                    <div>Item total</div><div>Estimated shipping cost: worked out at checkout</div></div>";
        let html = format!(
            "<html><body><header><a href=/>Shop</a>{cart}</header><main><article class=\"post category-popular\">\
             <div class=sidebar-and-content-body><p>{NOTE}</p></div></article></main>\
             <footer><p>Copyright 2025 Example Shop, all rights reserved.</p></footer></body></html>"
        );
        assert_eq!(text(&html), NOTE);
        // A header that holds the page's heading is no chrome.
        let html = format!("<body><header><h1>Reading room</h1><p>{NOTE}</p></header></body>");
        assert_eq!(text(&html), format!("Reading room\n{NOTE}"));
    }

    #[test]
    fn a_layout_class_naming_a_sidebar_is_no_furniture() {
        let html = format!(
            "<body><nav><a href=/>Home</a> <a href=/guide>Guide</a></nav><div class=\"c-layout-sidebar-left\">\
             <div class=\"c-layout-main\"><p>{NOTE}</p></div></div><div class=\"footer-wrap\">\
             <p>Copyright 2025 Example Library, all rights reserved, imprint and privacy policy.</p></div></body>"
        );
        assert_eq!(text(&html), NOTE);
        for layout in ["l-sidebar-fixed", "has-sidebar", "page with-sidebar"] {
            assert_eq!(text(&format!("<body><div class=\"{layout}\"><p>{NOTE}</p></div></body>")), NOTE, "{layout}");
        }
    }

    #[test]
    fn the_context_holds_the_text_left_out_but_not_chrome_or_link_lists() {
        let ticker: String =
            (1..=6).map(|i| format!("<li><a href=/p{i}>Latest article number {i} about phones</a></li>")).collect();
        let html = format!(
            "<html><body><nav><a href=/>Home</a> <a href=/about>About this forum</a></nav>\
             <div class=notice><p>{NOTE}</p></div><ul>{ticker}</ul>\
             <div id=comments><p>A short reply of mine, seven words.</p></div>\
             <footer><p>Copyright 2025 Example Forum, all rights reserved, imprint and privacy.</p></footer></body></html>"
        );
        let e = blocks(&html).unwrap();
        assert_eq!(e.text, NOTE);
        assert_eq!(e.context.as_deref(), Some(format!("{NOTE}\nA short reply of mine, seven words.").as_str()));
    }

    #[test]
    fn short_blocks_between_paragraphs_are_kept_and_link_text_inside_a_paragraph_counts_as_text() {
        let html = format!(
            "<article><h2>Hours</h2><p>{NOTE}</p><p>Doors at nine.</p><p>{NOTE} See <a href=/t>the timetable</a>.</p></article>"
        );
        assert_eq!(text(&html), format!("Hours\n{NOTE}\nDoors at nine.\n{NOTE} See the timetable."));
    }

    #[test]
    fn a_page_without_a_paragraph_keeps_its_short_blocks_outside_the_chrome() {
        let html = "<body><nav><a href=/>Home</a></nav><ul><li>Red kettle, 1.7 l</li><li>Blue kettle, 1 l</li></ul>\
                    <footer>Shop Ltd</footer></body>";
        assert_eq!(text(html), "Red kettle, 1.7 l\nBlue kettle, 1 l");
        assert_eq!(text("<body><nav>Home</nav></body>"), "");
    }

    #[test]
    fn a_run_of_short_lines_is_content_and_a_run_of_links_is_not() {
        let specs: String = (1..=6).map(|i| format!("<p>- Sensor {i} records crisp video in low light</p>")).collect();
        let menu: String = (1..=6).map(|i| format!("<p><a href=/c{i}>Cameras and lenses, part {i}</a></p>")).collect();
        let html = format!(
            "<body><div>{menu}</div><form>{specs}</form><div><h2>Sign in</h2><p>Sign up for a new account in our \
             community, it is easy and takes a minute.</p></div></body>"
        );
        let got = text(&html);
        assert!(got.contains("- Sensor 1 records") && got.contains("- Sensor 6 records"), "{got}");
        assert!(!got.contains("Cameras and lenses"), "{got}");
        // Two short lines are not a run.
        let html = format!("<body><p>{NOTE}</p><div><p>Open today</p><p>Closed on Sunday</p></div></body>");
        assert_eq!(text(&html), format!("{NOTE}\nOpen today\nClosed on Sunday"));
    }

    #[test]
    fn the_pages_own_classes_do_not_make_it_furniture() {
        let html = format!(
            "<html class=\"js cookie-banner-visible\"><body class=\"single has-sidebar\"><p>{NOTE}</p>\
             <div id=\"onetrust-consent-sdk\"><p>We and our partners store and access information on a device, \
             such as cookies, and process personal data for personalised advertising.</p></div></body></html>"
        );
        assert_eq!(text(&html), NOTE);
    }

    #[test]
    fn hidden_text_and_controls_are_never_content() {
        let html = format!(
            "<body><p>{NOTE}</p><div style=\"display: none\">{NOTE} hidden</div><p hidden>{NOTE} too</p>\
             <form><label>Your name (required)</label><button>Send</button></form></body>"
        );
        assert_eq!(text(&html), NOTE);
    }

    #[test]
    fn the_title_is_the_documents_not_an_svg_tooltip() {
        let html = format!(
            "<html><head><title> Reading  room </title></head><body><svg><title>Icon</title></svg><p>{NOTE}</p></body></html>"
        );
        assert_eq!(blocks(&html).unwrap().title.as_deref(), Some("Reading room"));
    }

    #[test]
    fn inline_styles_are_read_as_css_is() {
        assert!(declares("color: red; DISPLAY : None !important", "display", "none"));
        assert!(declares("visibility:hidden", "visibility", "hidden"));
        assert!(!declares("display: block; --none: 1", "display", "none"));
        assert!(!declares("display", "display", "none"));
    }

    #[test]
    fn words_are_counted_in_scripts_without_spaces() {
        assert_eq!(count_words("state-of-the-art, 2 words"), 6);
        assert_eq!(count_words("東京都の図書館"), 7);
    }

    #[test]
    fn consent_words_are_found_in_any_case_anywhere() {
        for (value, found) in [
            ("CookieBanner", true),
            ("cmp-consent", true),
            ("x-GDPR", true),
            ("cook", false),
            ("", false),
            ("ééconsent", true),
        ] {
            assert_eq!(
                CONSENT_WORDS.iter().any(|w| crate::lex::contains_ignoring_case(value.as_bytes(), w.as_bytes())),
                found,
                "{value}"
            );
        }
        assert!(CONSENT_WORDS.iter().all(|w| !w.is_empty() && *w == w.to_ascii_lowercase()));
    }

    #[test]
    fn furniture_words_are_lowercase_and_short_enough_to_pack() {
        for w in FURNITURE_WORDS.iter().chain(LAYOUT_PARTS) {
            assert!(packed(w.as_bytes()).is_some() && *w == w.to_ascii_lowercase(), "{w}");
        }
        assert_eq!(packed(b"SideBar"), packed(b"sidebar"));
        assert_ne!(packed(b"sidebar"), packed(b"sidebar0"));
        assert_eq!(packed(b"seventeen-letters"), None);
        let element = |html: &str| {
            let doc = scraper::Html::parse_fragment(html);
            let e = doc.tree.nodes().filter_map(|n| n.value().as_element().cloned()).find(|e| e.name() == "div");
            e.and_then(|e| named(&e))
        };
        assert_eq!(element(r#"<div class="x Right-Sidebar">"#), Some("sidebar"));
        assert_eq!(element(r#"<div class="sidebarless">"#), None);
        assert_eq!(element(r#"<div class="l-sidebar-fixed">"#), None);
        assert_eq!(element(r#"<div class="a-very-long-class-name-of-many-parts footer">"#), Some("footer"));
        assert_eq!(element(r#"<div id="site_navigation">"#), Some("navigation"));
    }

    #[test]
    fn words_are_counted_as_a_character_at_a_time() {
        let reference = |text: &str| {
            let (mut n, mut in_word) = (0, false);
            for c in text.chars() {
                let ideograph = is_ideograph(c);
                n += usize::from(ideograph || (c.is_alphanumeric() && !in_word));
                in_word = !ideograph && c.is_alphanumeric();
            }
            n
        };
        let all_ascii: String = (0u8..=127).map(char::from).collect();
        for text in ["", "a", " a-b c ", "naïve café x2", "Zürich東京3k", "ab\u{0301}cd éé", "½ ² ٣ x", &all_ascii]
        {
            assert_eq!(count_words(text), reference(text), "{text:?}");
        }
        // Every slice of a text that mixes eight-byte runs of ASCII, words
        // across their edges and other scripts.
        let text =
            format!("{all_ascii} The river rose, by 2024 [x]{{y}} `z` @a Zürich東京 naïve\u{00A0}café 三3 {all_ascii}");
        for from in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
            for to in (from..text.len().min(from + 40)).filter(|&i| text.is_char_boundary(i)) {
                assert_eq!(count_words(&text[from..to]), reference(&text[from..to]), "{:?}", &text[from..to]);
            }
        }
    }
}
