//! What a page's markup says of its site ([`webdup_core::site`]): the
//! address it names for itself and its template's tokens.
//!
//! Read by a lexical pass over the tags, not a parse: it runs on every
//! local page of a run, beside an extractor that has already parsed it, and
//! needs only attributes.

use webdup_core::site::{SiteSignals, hint_host};

/// The page's site signals: the host of the first absolute http(s) address
/// it names for itself (`<link rel=canonical>`, else `og:url`, else
/// `<base href>`), and hashes of its template tokens: class and id names
/// (digit runs folded, so `post-12` and `post-13` are one token) and the
/// addresses of its stylesheets and scripts.
pub fn site_signals(html: &str) -> SiteSignals {
    let (mut canonical, mut og, mut base) = (None, None, None);
    let mut template = Vec::new();
    for tag in Tags::new(html) {
        let attr = |name: &str| tag.attrs.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v);
        for (name, value) in &tag.attrs {
            if name.eq_ignore_ascii_case("class") {
                template.extend(value.split_ascii_whitespace().map(|c| token(b'c', c)));
            } else if name.eq_ignore_ascii_case("id") && !value.trim().is_empty() {
                template.push(token(b'i', value.trim()));
            }
        }
        match tag.name.as_str() {
            "link" => {
                let rel = attr("rel").map(|r| r.to_ascii_lowercase()).unwrap_or_default();
                let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                if let Some(href) = attr("href") {
                    if rels.contains(&"canonical") && canonical.is_none() {
                        canonical = hint_host(&unescape(href));
                    } else if rels.contains(&"stylesheet") {
                        template.push(address(href));
                    }
                }
            }
            "script" => template.extend(attr("src").map(|s| address(s))),
            // Link texts tell apart sister sites built on one theme (the
            // same class names, other menus).
            "a" => template.extend(link_text(&html[tag.end..]).map(|t| token(b'a', &t))),
            "meta" if og.is_none() => {
                let named = attr("property").or_else(|| attr("name"));
                if named.is_some_and(|n| n.trim().eq_ignore_ascii_case("og:url")) {
                    og = attr("content").and_then(|c| hint_host(&unescape(c)));
                }
            }
            "base" if base.is_none() => base = attr("href").and_then(|h| hint_host(&unescape(h))),
            _ => {}
        }
    }
    template.sort_unstable();
    template.dedup();
    SiteSignals { hint: canonical.or(og).or(base), template }
}

/// The text of a link whose markup starts `rest` (up to its `</a`),
/// lowercased, its spaces folded; `None` when empty or long (a link around
/// a paragraph is content, not a menu).
fn link_text(rest: &str) -> Option<String> {
    const LONGEST: usize = 200;
    let end = find_ascii_ci(&rest[..floor_boundary(rest, LONGEST)], "</a")?;
    let (mut text, mut inside) = (String::new(), false);
    for c in rest[..end].chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            _ if !inside => text.push(c),
            _ => {}
        }
    }
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    (!folded.is_empty()).then_some(folded)
}

fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A class or id name's hash, its digit runs folded into one `0`.
fn token(kind: u8, name: &str) -> u64 {
    let mut folded = vec![kind];
    let mut digits = false;
    for b in name.bytes() {
        if b.is_ascii_digit() {
            if !digits {
                folded.push(b'0');
            }
            digits = true;
        } else {
            folded.push(b);
            digits = false;
        }
    }
    xxhash_rust::xxh3::xxh3_64(&folded)
}

/// An asset address's hash, its query left out (versions change per deploy).
fn address(url: &str) -> u64 {
    let url = url.trim();
    let url = url.split(['?', '#']).next().unwrap_or(url);
    token(b'u', url)
}

fn unescape(s: &str) -> String {
    s.replace("&amp;", "&")
}

/// A start tag: its lowercase name, its attributes as written and where
/// it ends.
struct Tag<'a> {
    name: String,
    attrs: Vec<(&'a str, &'a str)>,
    end: usize,
}

/// The start tags of a page, in order; comments, declarations and the
/// insides of `script`, `style` and `textarea` passed over.
struct Tags<'a> {
    html: &'a str,
    at: usize,
}

impl<'a> Tags<'a> {
    fn new(html: &'a str) -> Self {
        Tags { html, at: 0 }
    }

    fn skip_past(&mut self, needle: &str) {
        let rest = &self.html[self.at..];
        self.at = match find_ascii_ci(rest, needle) {
            Some(i) => self.at + i + needle.len(),
            None => self.html.len(),
        };
    }
}

fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    let first = n[0].to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = memchr::memchr2(first, first.to_ascii_uppercase(), &h[from..]) {
        let at = from + i;
        if h.len() - at >= n.len() && h[at..at + n.len()].eq_ignore_ascii_case(n) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

impl<'a> Iterator for Tags<'a> {
    type Item = Tag<'a>;

    fn next(&mut self) -> Option<Tag<'a>> {
        let bytes = self.html.as_bytes();
        loop {
            let open = memchr::memchr(b'<', &bytes[self.at..])? + self.at;
            self.at = open + 1;
            let rest = &self.html[self.at..];
            if rest.starts_with("!--") {
                self.skip_past("-->");
                continue;
            }
            if !rest.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
                // An end tag, a declaration or a stray `<`.
                continue;
            }
            let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'-').count();
            let name = rest[..name_len].to_ascii_lowercase();
            self.at += name_len;
            let attrs = self.attributes();
            let end = self.at;
            match name.as_str() {
                "script" | "style" | "textarea" => {
                    let end = format!("</{name}");
                    self.skip_past(&end);
                }
                _ => {}
            }
            return Some(Tag { name, attrs, end });
        }
    }
}

impl<'a> Tags<'a> {
    /// Reads attributes up to the tag's `>`.
    fn attributes(&mut self) -> Vec<(&'a str, &'a str)> {
        let html = self.html;
        let bytes = html.as_bytes();
        let mut attrs = Vec::new();
        loop {
            while self.at < bytes.len() && (bytes[self.at].is_ascii_whitespace() || bytes[self.at] == b'/') {
                self.at += 1;
            }
            if self.at >= bytes.len() {
                return attrs;
            }
            if bytes[self.at] == b'>' {
                self.at += 1;
                return attrs;
            }
            let start = self.at;
            while self.at < bytes.len()
                && !matches!(bytes[self.at], b'=' | b'>' | b'/')
                && !bytes[self.at].is_ascii_whitespace()
            {
                self.at += 1;
            }
            let name = &html[start..self.at];
            while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
            if self.at >= bytes.len() || bytes[self.at] != b'=' {
                attrs.push((name, ""));
                continue;
            }
            self.at += 1;
            while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
                self.at += 1;
            }
            let value = match bytes.get(self.at) {
                Some(&q @ (b'"' | b'\'')) => {
                    let from = self.at + 1;
                    let end = memchr::memchr(q, &bytes[from..]).map_or(bytes.len(), |i| from + i);
                    self.at = (end + 1).min(bytes.len());
                    &html[from..end]
                }
                _ => {
                    let from = self.at;
                    while self.at < bytes.len() && bytes[self.at] != b'>' && !bytes[self.at].is_ascii_whitespace() {
                        self.at += 1;
                    }
                    &html[from..self.at]
                }
            };
            attrs.push((name, value));
        }
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
