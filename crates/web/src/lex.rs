//! The HTML tokenizer's rules for passing over a page's bytes without a
//! parse: where a tag, its attributes, a comment or raw text end. Shared by
//! the page-cost guard ([`crate::extract::guard`]) and the site signals
//! ([`crate::site`]), so both read a page's tags as html5ever does.

/// Elements whose content the tokenizer reads as text up to their end tag.
/// `noscript` is one: html5ever parses with scripting on, as browsers do.
pub(crate) const RAW_TEXT: &[&[u8]] =
    &[b"script", b"style", b"xmp", b"iframe", b"noembed", b"noframes", b"noscript", b"textarea", b"title"];

/// The tokenizer's white space.
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Where a tag name ends: at white space, `/` or `>` (the tokenizer's rule:
/// `<div"x>` is an element named `div"x`).
pub(crate) fn tag_name_end(b: &[u8], from: usize) -> usize {
    b[from..].iter().position(|&c| is_space(c) || c == b'/' || c == b'>').map_or(b.len(), |p| from + p)
}

/// Reads a tag's attributes from `p` (just after its name) as the tokenizer
/// does: quoted values may hold `>`. Returns the position after `>` (past the
/// end of `b` when the page ends inside the tag), the attribute count and
/// whether the tag closed with `/>`.
pub(crate) fn tag_end(b: &[u8], p: usize) -> (usize, u64, bool) {
    let mut attrs = Attrs::new(b, p);
    let count = attrs.by_ref().count() as u64;
    let (end, self_closing) = attrs.end();
    (end, count, self_closing)
}

/// A tag's attributes, read from just after its name: each name (as
/// written: any case, and its first character may be `=`) and value (its
/// quotes taken off, not unescaped; empty when it has none), in order. Once
/// it has run out, [`Attrs::end`] says where the tag ends.
pub(crate) struct Attrs<'a> {
    b: &'a [u8],
    p: usize,
    end: Option<(usize, bool)>,
}

impl<'a> Attrs<'a> {
    pub(crate) fn new(b: &'a [u8], p: usize) -> Self {
        Attrs { b, p, end: None }
    }

    /// The position after the tag's `>` (past the end of the page when it
    /// ends inside the tag) and whether the tag closed with `/>`; reads the
    /// attributes left first.
    pub(crate) fn end(&mut self) -> (usize, bool) {
        while self.next().is_some() {}
        self.end.unwrap_or((self.b.len() + 1, false))
    }

    fn skip_space(&mut self) {
        while self.b.get(self.p).is_some_and(|&c| is_space(c)) {
            self.p += 1;
        }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.end.is_some() {
            return None;
        }
        let b = self.b;
        loop {
            self.skip_space();
            match b.get(self.p) {
                None => {
                    self.end = Some((b.len() + 1, false));
                    return None;
                }
                Some(b'>') => {
                    self.end = Some((self.p + 1, false));
                    return None;
                }
                Some(b'/') => {
                    self.p += 1;
                    if b.get(self.p) == Some(&b'>') {
                        self.end = Some((self.p + 1, true));
                        return None;
                    }
                }
                Some(_) => break,
            }
        }
        let start = self.p;
        self.p += 1; // the first character belongs to the name, even `=`
        while b.get(self.p).is_some_and(|&c| !(is_space(c) || c == b'/' || c == b'>' || c == b'=')) {
            self.p += 1;
        }
        let name = &b[start..self.p];
        self.skip_space();
        if b.get(self.p) != Some(&b'=') {
            return Some((name, &[]));
        }
        self.p += 1;
        self.skip_space();
        let value = match b.get(self.p) {
            Some(&q @ (b'"' | b'\'')) => match memchr::memchr(q, &b[self.p + 1..]) {
                Some(e) => {
                    let value = &b[self.p + 1..self.p + 1 + e];
                    self.p += 1 + e + 1;
                    value
                }
                None => {
                    // The page ends inside the value: the tag is never closed.
                    self.end = Some((b.len() + 1, false));
                    &b[self.p + 1..]
                }
            },
            _ => {
                let from = self.p;
                while b.get(self.p).is_some_and(|&c| !(is_space(c) || c == b'>')) {
                    self.p += 1;
                }
                &b[from..self.p]
            }
        };
        Some((name, value))
    }
}

/// A start tag met by [`StartTags`].
pub(crate) struct StartTag<'t, 'a> {
    /// The name as written (any case).
    pub name: &'a [u8],
    /// Its attributes, as [`Attrs`] reads them.
    pub attrs: &'t [(&'a [u8], &'a [u8])],
    /// The position after its `>`.
    pub end: usize,
}

/// A page's start tags in order, read by the tokenizer's rules: comments,
/// declarations, processing instructions, end tags and the insides of
/// raw-text elements passed over. Unlike the guard's scan it keeps no tree,
/// so it does not know foreign content (CDATA sections in SVG read as
/// declarations) or `plaintext`; a tag the page ends inside is not one.
pub(crate) struct StartTags<'a> {
    b: &'a [u8],
    at: usize,
    attrs: Vec<(&'a [u8], &'a [u8])>,
}

impl<'a> StartTags<'a> {
    pub(crate) fn new(html: &'a str) -> Self {
        StartTags { b: html.as_bytes(), at: 0, attrs: Vec::new() }
    }

    /// The next start tag, or `None` at the end of the page.
    pub(crate) fn next_tag(&mut self) -> Option<StartTag<'_, 'a>> {
        let b = self.b;
        loop {
            let i = self.at + memchr::memchr(b'<', b.get(self.at..)?)? + 1;
            self.at = match b.get(i) {
                Some(b'!') if b[i..].starts_with(b"!--") => comment_end(b, i + 3),
                Some(b'!' | b'?') => find(b, i, b">"),
                Some(b'/') if b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) => tag_end(b, tag_name_end(b, i + 1)).0,
                Some(b'/') => find(b, i, b">"),
                Some(c) if c.is_ascii_alphabetic() => {
                    let name_end = tag_name_end(b, i);
                    let name = &b[i..name_end];
                    self.attrs.clear();
                    let mut attrs = Attrs::new(b, name_end);
                    self.attrs.extend(attrs.by_ref());
                    let (end, _) = attrs.end();
                    if end > b.len() {
                        self.at = b.len();
                        return None;
                    }
                    self.at = if RAW_TEXT.iter().any(|r| r.eq_ignore_ascii_case(name)) {
                        raw_text_end(b, end, name)
                    } else {
                        end
                    };
                    return Some(StartTag { name, attrs: &self.attrs, end });
                }
                // A `<` that opens no tag is text.
                _ => i,
            };
        }
    }
}

/// The end of a comment whose `<!--` ends just before `p`: `-->`, `--!>`, or
/// at once for `<!-->` and `<!--->`.
pub(crate) fn comment_end(b: &[u8], p: usize) -> usize {
    if b[p.min(b.len())..].starts_with(b">") {
        return p + 1;
    }
    if b[p.min(b.len())..].starts_with(b"->") {
        return p + 2;
    }
    let mut q = p;
    while let Some(off) = memchr::memmem::find(&b[q.min(b.len())..], b"--") {
        let at = q + off;
        if b.get(at + 2) == Some(&b'>') {
            return at + 3;
        }
        if b[at + 2..].starts_with(b"!>") {
            return at + 4;
        }
        q = at + 1;
    }
    b.len()
}

/// The start of the first `</name` after `p`, matched without case: the
/// parser ends a raw-text element there or later, so the scan never skips
/// markup the parser reads as tags.
pub(crate) fn raw_text_end(b: &[u8], mut p: usize, name: &[u8]) -> usize {
    while let Some(off) = memchr::memmem::find(&b[p.min(b.len())..], b"</") {
        let at = p + off;
        let n = &b[at + 2..];
        if n.len() >= name.len() && n[..name.len()].eq_ignore_ascii_case(name) {
            return at;
        }
        p = at + 2;
    }
    b.len()
}

pub(crate) fn find(b: &[u8], from: usize, needle: &[u8]) -> usize {
    let from = from.min(b.len());
    memchr::memmem::find(&b[from..], needle).map_or(b.len(), |p| from + p + needle.len())
}

/// True when `haystack` contains `needle`, ignoring ASCII case: each place
/// the needle's first byte (in either case) is found is compared.
pub(crate) fn contains_ignoring_case(haystack: &[u8], needle: &[u8]) -> bool {
    let Some(first) = needle.first() else { return true };
    memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), haystack)
        .any(|i| haystack[i..].get(..needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(html: &str) -> Vec<String> {
        let mut tags = StartTags::new(html);
        let mut out = Vec::new();
        while let Some(t) = tags.next_tag() {
            let attrs: Vec<String> = t
                .attrs
                .iter()
                .map(|(n, v)| format!("{}={}", String::from_utf8_lossy(n), String::from_utf8_lossy(v)))
                .collect();
            out.push(format!("{}[{}]", String::from_utf8_lossy(t.name), attrs.join(",")));
        }
        out
    }

    #[test]
    fn attributes_are_read_as_the_tokenizer_reads_them() {
        let b = br#"<a href="x>y" data-x = 'q' checked =z/>rest"#;
        let mut attrs = Attrs::new(b, 2);
        let read: Vec<_> = attrs.by_ref().collect();
        assert_eq!(read, [(&b"href"[..], &b"x>y"[..]), (b"data-x", b"q"), (b"checked", b"z/")]);
        assert_eq!(attrs.end(), (b.len() - 4, false));
        assert_eq!(tag_end(b"<br/>", 3), (5, 0, true));
        // A page that ends inside a quoted value never closes the tag; the
        // attribute still counts (the guard's cost).
        assert_eq!(tag_end(br#"<p a="never closed"#, 2), (19, 1, false));
        assert_eq!(tag_end(b"<p =x>", 2), (6, 1, false), "a name may start with =");
    }

    #[test]
    fn start_tags_pass_over_comments_raw_text_and_end_tags() {
        let page = r#"<!doctype html><!-- <p class=hidden> --><TITLE><b>not a tag</b></title>
            <script>if (a<b) document.write("<div id=x>")</script></p class="<i>"><Div Class="a b">text
            <noscript><img src=n></noscript><?php echo 1 ?><a href=/>x</a><p unclosed="..."#;
        assert_eq!(names(page), ["TITLE[]", "script[]", "Div[Class=a b]", "noscript[]", "a[href=/]"]);
        assert!(names("a < b and <3").is_empty());
    }
}
