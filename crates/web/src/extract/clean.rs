//! Cleaning Readability's article: captions, share bars, bylines, tag lists,
//! link lists and hidden elements that Readability keeps inside the
//! container it chose.
//!
//! Readability is good at finding the container and fast; trafilatura is
//! precise because it then throws furniture out of it. This module applies
//! trafilatura's discard rules to Readability's container, guarded so that a
//! rule matching the site's own content template (every paragraph of an
//! Elementor page is a "widget") cannot erase the article.

use std::collections::{HashMap, HashSet};

use ego_tree::{NodeId, NodeRef};
use scraper::node::Element;
use scraper::{Html, Node};

use super::visible::{BLOCK, push_break, push_text};

/// Elements whose text is never shown.
const HIDDEN: &[&str] = &["script", "style", "noscript", "template", "svg"];

/// Elements that are page furniture wherever they are and however much text
/// they hold.
const CHROME_TAGS: &[&str] = &["figcaption", "aside", "nav", "footer", "button", "iframe", "select"];

/// Elements the class/id rules apply to (trafilatura's list).
fn boxy(name: &str) -> bool {
    matches!(name, "div" | "dd" | "dt" | "li" | "ul" | "ol" | "dl" | "p" | "section" | "span")
}

/// No single element holding more than this share of the article's text is
/// dropped, and no one rule may drop more than this share in all.
const MAX_SHARE: f64 = 1.0 / 3.0;

/// A block whose text is mostly link text, and short, is a link list.
const MAX_LINK_LIST_CHARS: usize = 400;

/// Returns the text of Readability's article HTML without its furniture.
pub(super) fn clean_article_text(content: &str) -> String {
    let doc = Html::parse_fragment(content);
    let root = doc.tree.root();
    let lengths = text_lengths(root);
    let total = lengths.get(&root.id()).map_or(0, |l| l.0);
    let dropped = furniture(root, &lengths, total);
    let mut out = String::new();
    write_text(root, &dropped, &mut out);
    out.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// The outermost elements to leave out: hidden ones, page chrome (see
/// [`chrome`]), and those a discard rule names furniture, unless the element
/// or all of that rule's matches together hold much of the article.
fn furniture(root: NodeRef<'_, Node>, lengths: &Lengths, total: usize) -> HashSet<NodeId> {
    let mut hidden = HashSet::new();
    let mut candidates: Vec<(NodeId, &'static str, usize)> = Vec::new();
    let mut by_rule: HashMap<&'static str, usize> = HashMap::new();
    let mut skip = 0usize;
    for edge in root.traverse() {
        let node = match edge {
            ego_tree::iter::Edge::Open(node) => node,
            ego_tree::iter::Edge::Close(node) => {
                if skip > 0 && node.value().is_element() {
                    skip -= 1;
                }
                continue;
            }
        };
        let Node::Element(e) = node.value() else { continue };
        if skip > 0 {
            skip += 1;
            continue;
        }
        let (all, linked) = lengths.get(&node.id()).copied().unwrap_or_default();
        if HIDDEN.contains(&e.name()) || chrome(e) {
            hidden.insert(node.id());
        } else if let Some(rule) = rule(e, all, linked).filter(|_| all as f64 <= MAX_SHARE * total as f64) {
            candidates.push((node.id(), rule, all));
            *by_rule.entry(rule).or_default() += all;
        } else {
            continue;
        }
        skip = 1;
    }
    let limit = MAX_SHARE * total as f64;
    hidden.extend(candidates.into_iter().filter(|(_, r, _)| by_rule[r] as f64 <= limit).map(|(id, _, _)| id));
    hidden
}

/// Navigation, footers, sidebars, captions, controls, cookie notices and
/// hidden elements: never the article, even when Readability's container
/// holds little else (on a thin page it can pick the cookie banner and the
/// footer).
fn chrome(e: &Element) -> bool {
    if CHROME_TAGS.contains(&e.name()) || super::attr(e, "aria-hidden") == Some("true") {
        return true;
    }
    let style = super::attr(e, "style").unwrap_or_default();
    if style.contains("display:none") || style.contains("display: none") {
        return true;
    }
    let marked = |w: &str| {
        super::attr(e, "class").is_some_and(|c| c.to_ascii_lowercase().contains(w))
            || e.id().is_some_and(|i| i.to_ascii_lowercase().contains(w))
    };
    boxy(e.name()) && (marked("cookie") || marked("consent"))
}

/// The name of the discard rule `e` matches, if any.
fn rule(e: &Element, all: usize, linked: usize) -> Option<&'static str> {
    let name = e.name();
    if name == "form" {
        return Some("form");
    }
    if let Some(r) = discarded(e) {
        return Some(r);
    }
    (boxy(name) && all > 0 && linked * 2 > all && all < MAX_LINK_LIST_CHARS).then_some("link list")
}

/// trafilatura's discard rules for one element: navigation, share bars,
/// bylines, tags, captions, teasers, comment threads and hidden elements,
/// by `class`, `id`, `role` and `style`. Returns the word that matched.
///
/// Ported from trafilatura-rs 0.6 (`src/selector/discard.rs`, Apache-2.0),
/// itself a port of go-trafilatura and Python trafilatura, whose rules were
/// tuned on many sites.
fn discarded(e: &Element) -> Option<&'static str> {
    let class = super::attr(e, "class").unwrap_or_default();
    let id = e.id().unwrap_or_default();
    if boxy(e.name())
        && let Some(r) = overall_rule(e, class, id)
    {
        return Some(r);
    }
    let id_class = format!("{id}{class}");
    if matches!(e.name(), "div" | "ol" | "ul" | "dl" | "section" | "details")
        && (["comment", "Comment"].iter().any(|p| id.starts_with(p) || class.starts_with(p))
            || class.contains("article-comments")
            || class.contains("post-comments")
            || id.starts_with("disqus_thread")
            || id.starts_with("dsq-comments"))
    {
        return Some("comments");
    }
    const CLASS: &[&str] = &[
        "comments-title",
        "nocomments",
        "-reply-",
        "message",
        "suggest-links",
        "-hide-",
        "hide-print",
        " hidden",
        " hide",
        "noprint",
        "notloaded",
    ];
    if let Some(w) = CLASS.iter().find(|w| class.contains(**w)) {
        return Some(w);
    }
    let style = super::attr(e, "style").unwrap_or_default();
    if id_class.starts_with("reply-")
        || class.starts_with("hide-")
        || id.contains("reader-comments")
        || id_class.contains("akismet")
        || id.contains("hidden")
        || style.contains("hidden")
        || style.contains("display:none")
        || style.contains("display: none")
        || super::attr(e, "aria-hidden") == Some("true")
    {
        return Some("hidden");
    }
    None
}

/// trafilatura's `overallDiscardedContentRule1`, with its caption and teaser
/// rules, for `div`, `p`, `li`, `section` and the like.
fn overall_rule(e: &Element, class: &str, id: &str) -> Option<&'static str> {
    const CLASS: &[&str] = &[
        "elated",
        "share-",
        "sociable",
        "embedded",
        "embed",
        "subnav",
        "tag-list",
        "bar",
        "meta",
        "menu",
        "avigation",
        "navbar",
        "navbox",
        "rating",
        "widget",
        "attachment",
        "timestamp",
        "user-info",
        "user-profile",
        "-ad-",
        "-icon",
        "article-infos",
        "nfoline",
        "outbrain",
        "taboola",
        "criteo",
        "options",
        "expand",
        "consent",
        "modal-content",
        " ad ",
        "permission",
        "next-",
        "-stories",
        "most-popular",
        "mol-factbox",
        "slide",
        "viewport",
        "overlay",
        "paid-content",
        "paidcontent",
        "obfuscated",
        "blurred",
        "caption",
    ];
    const ID_CLASS: &[&str] = &[
        "viral",
        "social",
        "syndication",
        "newsletter",
        "cookie",
        "tags",
        "sidebar",
        "banner",
        "breadcrumb",
        "bread-crumb",
        "author",
        "button",
        "message-container",
    ];
    const ID: &[&str] = &["related", "menu", "premium", "caption"];
    let (lower_id, lower_class) = (id.to_lowercase(), class.to_lowercase());
    let role = super::attr(e, "role").unwrap_or_default().to_lowercase();
    if lower_id.contains("footer") || lower_class.contains("footer") {
        return Some("footer");
    }
    if lower_id.contains("teaser") || lower_class.contains("teaser") {
        return Some("teaser");
    }
    if lower_id.contains("share") || id.starts_with("shar") || (id.is_empty() && class.starts_with("shar")) {
        return Some("share");
    }
    if lower_id.contains("nav") || role.contains("nav") || class.starts_with("nav") || class.starts_with("post-nav") {
        return Some("nav");
    }
    if lower_class.contains("byline") {
        return Some("byline");
    }
    if id.starts_with("jp-") || id.starts_with("dpsp-content") {
        return Some("share");
    }
    if super::attr(e, "data-component").is_some_and(|c| c.contains("MostPopularStories")) {
        return Some("most-popular");
    }
    let id_class = format!("{id}{class}");
    CLASS
        .iter()
        .find(|w| class.contains(**w))
        .or_else(|| ID_CLASS.iter().find(|w| id_class.contains(**w)))
        .or_else(|| ID.iter().find(|w| id.contains(**w)))
        .copied()
}

type Lengths = HashMap<NodeId, (usize, usize)>;

/// Characters of text under each element, and how many of them are link text.
fn text_lengths(root: NodeRef<'_, Node>) -> Lengths {
    let mut lengths = Lengths::new();
    let mut stack: Vec<(NodeId, usize, usize, bool)> = Vec::new();
    let mut in_link = 0usize;
    for edge in root.traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                Node::Text(t) => {
                    let n = t.trim().chars().count();
                    if let Some(top) = stack.last_mut() {
                        top.1 += n;
                        if in_link > 0 {
                            top.2 += n;
                        }
                    }
                }
                value => {
                    let link = value.as_element().is_some_and(|e| e.name() == "a");
                    in_link += usize::from(link);
                    stack.push((node.id(), 0, 0, link));
                }
            },
            ego_tree::iter::Edge::Close(node) => {
                if !matches!(node.value(), Node::Text(_))
                    && let Some((id, all, linked, link)) = stack.pop()
                {
                    in_link -= usize::from(link);
                    lengths.insert(id, (all, linked));
                    if let Some(top) = stack.last_mut() {
                        top.1 += all;
                        top.2 += linked;
                    }
                }
            }
        }
    }
    lengths
}

/// Appends the text under `root` outside `dropped`, blocks on their own lines.
fn write_text(root: NodeRef<'_, Node>, dropped: &HashSet<NodeId>, out: &mut String) {
    let mut skip = 0usize;
    for edge in root.traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    if skip > 0 || dropped.contains(&node.id()) {
                        skip += 1;
                    } else if BLOCK.contains(&e.name()) {
                        push_break(out);
                    }
                }
                Node::Text(t) if skip == 0 => push_text(out, t),
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) => {
                if let Node::Element(e) = node.value() {
                    if skip > 0 {
                        skip -= 1;
                    } else if BLOCK.contains(&e.name()) {
                        push_break(out);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORY: &str = "The council approved the new ferry timetable on Tuesday after a year of complaints from \
                         island residents, who waited up to three hours for a boat in the busiest weeks.";

    #[test]
    fn captions_share_bars_bylines_link_lists_and_hidden_text_are_dropped() {
        let html = format!(
            "<div><p>{STORY}</p>\
             <figure><img src=a.jpg><figcaption>The north pier at dawn. Photo: J. Smith</figcaption></figure>\
             <div class=\"share-buttons\">Share on Facebook Share on X</div>\
             <p class=byline>By Ann Author</p>\
             <ul><li><a href=/a>Ferry fares to rise</a></li><li><a href=/b>Pier repairs finished</a></li></ul>\
             <p aria-hidden=true>Advertisement</p>\
             <p>{STORY}</p></div>"
        );
        let text = clean_article_text(&html);
        assert_eq!(text, format!("{STORY}\n{STORY}"));
    }

    #[test]
    fn a_rule_matching_the_sites_content_template_does_not_erase_the_article() {
        // Every text block of an Elementor page is a "widget", which
        // trafilatura's rules call furniture: together they are the article.
        let block = |n: usize| {
            format!("<div class=\"elementor-widget elementor-widget-text-editor\"><p>{n}. {STORY}</p></div>")
        };
        let html = format!("<div>{}{}{}<div class=widget-area>Sign up</div></div>", block(1), block(2), block(3));
        let text = clean_article_text(&html);
        for n in 1..=3 {
            assert!(text.contains(&format!("{n}. The council")), "{text}");
        }
    }

    #[test]
    fn a_wrapper_of_most_of_the_article_is_kept_whatever_its_class() {
        let html = format!("<div class=\"post-meta-wrapper\"><p>{STORY}</p><p>{STORY}</p></div><p>Short.</p>");
        assert!(clean_article_text(&html).contains("three hours"));
    }

    #[test]
    fn chrome_and_cookie_notices_go_even_when_they_are_most_of_the_text() {
        let html =
            format!("<div><div class=cookie-notice>{STORY}</div><footer>{STORY}</footer><p>Boats resume.</p></div>");
        assert_eq!(clean_article_text(&html), "Boats resume.");
    }

    #[test]
    fn link_text_inside_a_paragraph_is_kept() {
        let html = format!("<p>{STORY} Read <a href=/t>the timetable</a>.</p>");
        assert!(clean_article_text(&html).ends_with("Read the timetable."));
    }
}
