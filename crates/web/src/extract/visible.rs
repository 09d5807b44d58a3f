//! The `none` extractor: every piece of text a browser would show.

use scraper::{Html, Node};

/// Elements whose text is never shown, or is page furniture rather than content.
const HIDDEN: &[&str] = &["script", "style", "noscript", "template", "head", "svg", "iframe", "object"];

/// Elements that start a new line when rendered.
pub(super) const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "caption",
    "center",
    "dd",
    "details",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "legend",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// Page furniture that the `none` extractor leaves out: the elements and the
/// ARIA landmark roles of site navigation, banners, footers and sidebars.
const CHROME: &[&str] = &["nav", "header", "footer", "aside"];
const CHROME_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "complementary"];

/// Returns the visible text of a page (blocks on their own lines) and its `<title>`.
///
/// The walk is iterative, so any nesting depth is safe.
pub fn visible_text(html: &str) -> (String, Option<String>) {
    visible_text_with(html, false)
}

/// Like [`visible_text`]; with `skip_chrome`, the text inside `nav`, `header`,
/// `footer` and `aside` (and their ARIA roles) is left out too.
pub fn visible_text_with(html: &str, skip_chrome: bool) -> (String, Option<String>) {
    let doc = Html::parse_document(html);
    visible_text_of(&doc, skip_chrome)
}

/// Visible text without navigation, footers and sidebars (`nav`, `footer`,
/// `aside` and their ARIA roles), but with `header`, which some site
/// builders use as a wrapper for the content itself.
pub(crate) fn visible_text_without_nav_footer_aside(html: &str) -> String {
    let doc = Html::parse_document(html);
    walk(&doc, &["nav", "footer", "aside"], &["navigation", "contentinfo", "complementary"]).0
}

/// [`visible_text_with`] over an already parsed document.
pub fn visible_text_of(doc: &Html, skip_chrome: bool) -> (String, Option<String>) {
    if skip_chrome { walk(doc, CHROME, CHROME_ROLES) } else { walk(doc, &[], &[]) }
}

fn walk(doc: &Html, chrome_tags: &[&str], chrome_roles: &[&str]) -> (String, Option<String>) {
    let mut out = String::new();
    let mut title = None;
    let mut hidden_depth = 0usize;
    for edge in doc.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => match node.value() {
                Node::Element(e) => {
                    let name = e.name();
                    let chrome = chrome_tags.contains(&name)
                        || super::attr(e, "role").is_some_and(|r| chrome_roles.contains(&r.trim()));
                    if hidden_depth > 0 || HIDDEN.contains(&name) || chrome {
                        hidden_depth += 1;
                    } else if BLOCK.contains(&name) {
                        push_break(&mut out);
                    }
                    if name == "title" && title.is_none() {
                        let t: String =
                            node.children().filter_map(|c| c.value().as_text().map(|t| t.to_string())).collect();
                        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
                        title = Some(t).filter(|t| !t.is_empty());
                    }
                }
                Node::Text(t) if hidden_depth == 0 => push_text(&mut out, t),
                _ => {}
            },
            ego_tree::iter::Edge::Close(node) => {
                if let Node::Element(e) = node.value() {
                    if hidden_depth > 0 {
                        hidden_depth -= 1;
                    } else if BLOCK.contains(&e.name()) {
                        push_break(&mut out);
                    }
                }
            }
        }
    }
    let text = out.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
    (text, title)
}

/// Appends a text node's words, keeping a space where the node had one at
/// either end (`<b>bold</b> word`). A node of whitespace alone separates
/// words as a browser shows it: highlighted code puts the space between
/// `<span>import</span> <span>numpy</span>` in a node of its own.
pub(super) fn push_text(out: &mut String, text: &str) {
    if text.trim().is_empty() {
        if !text.is_empty() && !out.is_empty() && !out.ends_with(['\n', ' ']) {
            out.push(' ');
        }
        return;
    }
    if !out.is_empty() && !out.ends_with(['\n', ' ']) && text.starts_with(char::is_whitespace) {
        out.push(' ');
    }
    push_words(out, text);
    if text.ends_with(char::is_whitespace) {
        out.push(' ');
    }
}

/// Appends `text`'s words (as `split_whitespace` has them) one space apart:
/// a byte at a time over ASCII, since every text node of a page passes here.
fn push_words(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut word: Option<usize> = None;
    let mut first = true;
    let mut end_word = |out: &mut String, from: usize, to: usize| {
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(&text[from..to]);
    };
    let mut i = 0;
    while i < bytes.len() {
        let (space, len) = if bytes[i].is_ascii() {
            (matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C), 1)
        } else {
            let Some(c) = text[i..].chars().next() else { break };
            (c.is_whitespace(), c.len_utf8())
        };
        match (space, word) {
            (true, Some(from)) => {
                end_word(out, from, i);
                word = None;
            }
            (false, None) => word = Some(i),
            _ => {}
        }
        i += len;
    }
    if let Some(from) = word {
        end_word(out, from, bytes.len());
    }
}

/// Starts a new line unless one was just started.
pub(super) fn push_break(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

#[cfg(test)]
mod chrome_tests {
    use super::*;

    #[test]
    fn words_are_those_split_whitespace_finds() {
        let mut texts = vec![
            String::new(),
            " \t\n".into(),
            "one".into(),
            "  two  words ".into(),
            "a\u{0B}b\u{0C}c\rd\u{1C}e\u{1F}f".into(),
            "caf\u{E9}\u{A0}na\u{EF}ve\u{2003}\u{3000}\u{6771}\u{4EAC} \u{85}end\u{2028}".into(),
        ];
        texts.push((0u8..=127).map(char::from).collect());
        for text in &texts {
            let mut out = String::new();
            push_words(&mut out, text);
            assert_eq!(out, text.split_whitespace().collect::<Vec<_>>().join(" "), "{text:?}");
        }
    }

    #[test]
    fn chrome_is_skipped_only_when_asked() {
        let html = "<body><header>Site</header><nav>Menu</nav><p>Text</p><aside>Side</aside>\
                    <div role=navigation>Crumbs</div><footer>Foot</footer></body>";
        assert_eq!(visible_text_with(html, true).0, "Text");
        assert_eq!(visible_text_with(html, false).0, "Site\nMenu\nText\nSide\nCrumbs\nFoot");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_styles_and_head_are_hidden_and_blocks_break_lines() {
        let (text, title) = visible_text(
            "<html><head><title> My  page </title><style>p{}</style></head>\
             <body><h1>Head</h1><p>One <b>bold</b> word</p><script>var x;</script><div>Two</div></body></html>",
        );
        assert_eq!(text, "Head\nOne bold word\nTwo");
        assert_eq!(title.as_deref(), Some("My page"));
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let html = format!("{}deep", "<span>".repeat(50_000));
        assert_eq!(visible_text(&html).0, "deep");
    }
}
