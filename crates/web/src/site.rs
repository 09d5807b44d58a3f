//! What a page's markup says of its site ([`webdup_core::site`]): the
//! address it names for itself and its template's tokens.
//!
//! Read by a lexical pass over the start tags by the tokenizer's rules
//! ([`crate::lex`]), not a parse: it runs on every local page of a run,
//! beside an extractor that parses it, and needs only attributes.

use crate::lex::{StartTags, is_space, raw_text_end};
use webdup_core::site::{SiteSignals, hint_host, template_sample};

/// The page's site signals: the host of the first absolute http(s) address
/// it names for itself (`<link rel=canonical>`, else `og:url`, else
/// `<base href>`), and hashes of its template tokens: class and id names
/// (digit runs folded, so `post-12` and `post-13` are one token), the
/// addresses of its stylesheets and scripts, and its short link texts.
pub fn site_signals(html: &str) -> SiteSignals {
    let (mut canonical, mut og, mut base) = (None, None, None);
    let mut tokens = Tokens::default();
    let mut tags = StartTags::new(html);
    while let Some(tag) = tags.next_tag() {
        let attr = |name: &[u8]| tag.attrs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|&(_, v)| v);
        for &(name, value) in tag.attrs {
            if name.eq_ignore_ascii_case(b"class") {
                for class in value.split(|c| is_space(*c)).filter(|c| !c.is_empty()) {
                    tokens.push(b'c', class);
                }
            } else if name.eq_ignore_ascii_case(b"id") && !value.trim_ascii().is_empty() {
                tokens.push(b'i', value.trim_ascii());
            }
        }
        let is = |name: &[u8]| tag.name.eq_ignore_ascii_case(name);
        if is(b"a") {
            // Link texts tell apart sister sites built on one theme (the
            // same class names, other menus).
            tokens.link_text(&html[tag.end..]);
        } else if is(b"link") {
            let Some(href) = attr(b"href") else { continue };
            let rel = attr(b"rel").unwrap_or_default();
            let has = |word: &[u8]| rel.split(|c| is_space(*c)).any(|r| r.eq_ignore_ascii_case(word));
            if has(b"canonical") {
                if canonical.is_none() {
                    canonical = host(href);
                }
            } else if has(b"stylesheet") {
                tokens.address(href);
            }
        } else if is(b"script") {
            if let Some(src) = attr(b"src") {
                tokens.address(src);
            }
        } else if is(b"meta") && og.is_none() {
            let named = attr(b"property").or_else(|| attr(b"name"));
            if named.is_some_and(|n| n.trim_ascii().eq_ignore_ascii_case(b"og:url")) {
                og = attr(b"content").and_then(host);
            }
        } else if is(b"base") && base.is_none() {
            base = attr(b"href").and_then(host);
        }
    }
    SiteSignals { hint: canonical.or(og).or(base), template: template_sample(tokens.hashes) }
}

/// The host an attribute value names, if it is an absolute http(s) address.
fn host(value: &[u8]) -> Option<String> {
    // Tags and attribute values end at ASCII bytes, so a value of a `str`
    // page is whole characters.
    let value = std::str::from_utf8(value).ok()?;
    hint_host(&value.replace("&amp;", "&"))
}

/// Template token hashes, made without an allocation per token.
#[derive(Default)]
struct Tokens {
    hashes: Vec<u64>,
    text: String,
}

impl Tokens {
    /// A class or id name's (or link text's) hash, its digit runs folded
    /// into one `0`. The tokens are only compared with each other, within
    /// one run: a multiply-rotate hash per byte (FxHash's) with a final mix
    /// is enough, and several times cheaper than a general hash over a
    /// folded copy (profiled: pages have thousands of class names).
    fn push(&mut self, kind: u8, name: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = u64::from(kind).wrapping_mul(K);
        let mut digits = false;
        for &b in name {
            let digit = b.is_ascii_digit();
            if !(digit && digits) {
                h = (h.rotate_left(5) ^ u64::from(if digit { b'0' } else { b })).wrapping_mul(K);
            }
            digits = digit;
        }
        // murmur3's finalizer, so that nearby names spread over all bits.
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        self.hashes.push(h ^ (h >> 33));
    }

    /// An asset address's hash, its query left out (versions change per
    /// deploy).
    fn address(&mut self, url: &[u8]) {
        let url = url.trim_ascii();
        let end = url.iter().position(|c| matches!(c, b'?' | b'#')).unwrap_or(url.len());
        self.push(b'u', &url[..end]);
    }

    /// The text of a link whose markup starts `rest` (up to its `</a`),
    /// lowercased, its spaces folded; none when empty or long (a link
    /// around a paragraph is content, not a menu).
    fn link_text(&mut self, rest: &str) {
        const LONGEST: usize = 200;
        let end = raw_text_end(&rest.as_bytes()[..rest.len().min(LONGEST)], 0, b"a");
        if end == rest.len().min(LONGEST) {
            return;
        }
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        let (mut inside, mut space) = (false, false);
        // `end` is at a `<`: a character boundary.
        for c in rest[..end].chars() {
            match c {
                '<' => inside = true,
                '>' => inside = false,
                _ if inside => {}
                c if c.is_whitespace() => space = !text.is_empty(),
                c => {
                    if std::mem::take(&mut space) {
                        text.push(' ');
                    }
                    text.extend(c.to_lowercase());
                }
            }
        }
        if !text.is_empty() {
            self.push(b'a', text.as_bytes());
        }
        self.text = text;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_a_page_names_gives_its_host_canonical_first() {
        let page = |head: &str| site_signals(&format!("<html><head>{head}</head><body><p>x</p></body></html>"));
        let all = r#"<base href="https://base.example/"><meta property="og:url" content="https://og.example/a">
                     <link rel="Canonical" href="https://Canon.example/a?x=1&amp;y=2">"#;
        assert_eq!(page(all).hint.as_deref(), Some("canon.example"));
        let no_canonical =
            r#"<link rel=canonical href="/relative"><meta property='og:url' content='https://og.example/a'>"#;
        assert_eq!(page(no_canonical).hint.as_deref(), Some("og.example"));
        assert_eq!(page(r#"<base href=https://base.example/dir/>"#).hint.as_deref(), Some("base.example"));
        assert_eq!(page(r#"<base href="/local/">"#).hint, None);
        // In a script or a comment, it is not the page's.
        let hidden = r#"<script>var s = '<link rel="canonical" href="https://x.example/">';</script>
                        <!-- <base href="https://y.example/"> -->"#;
        assert_eq!(page(hidden).hint, None);
    }

    #[test]
    fn pages_of_one_template_share_their_tokens_whatever_their_text() {
        let page = |n: u32, text: &str| {
            site_signals(&format!(
                r#"<html><head><link rel="stylesheet" href="/theme.css?v={n}"><script src="/app.js"></script></head>
                <body class="single postid-{n}"><div id="post-{n}" class="entry-content widget-wrap">
                <p>{text}</p></div><footer class="site-footer"></footer></body></html>"#
            ))
        };
        let (a, b) = (page(12, "one text"), page(345, "another text entirely"));
        assert_eq!(a.template, b.template);
        assert_eq!(a.template.len(), 8, "theme.css, app.js, 2 body classes, the id, 2 div classes, the footer's");
        // Sister sites on one theme: their menus differ.
        let menu = |items: &str| {
            site_signals(&format!(
                r#"<body class="single"><nav>{items}</nav><main class="content"><p>x</p></main></body>"#
            ))
        };
        let (x, y) =
            (menu("<a href=/a>Camping <b>Gear</b></a><a href=/b>Tents</a>"), menu("<a href=/a>Toothbrushes</a>"));
        assert_eq!((x.template.len(), y.template.len()), (4, 3), "single, content and the link texts");
        assert_eq!(x.template.iter().filter(|t| y.template.contains(t)).count(), 2);
        let other = site_signals(r#"<body class="single"><main class="content-area"><p>one text</p></main></body>"#);
        assert_eq!(other.template.iter().filter(|t| a.template.contains(t)).count(), 1);
    }
}
