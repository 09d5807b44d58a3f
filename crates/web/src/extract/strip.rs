//! Dropping what the block classifier never reads before the parser sees
//! it: the contents of `<script>` and `<style>`, `<svg>` drawings and
//! comments. On the pages of the shared data sets they are about 60% of the
//! bytes, and the HTML tokenizer would copy every one of them.
//!
//! The scan follows the tokenizer where it matters: tags end at a `>`
//! outside quoted attribute values, comments at `-->`, and a raw-text
//! element at the first `</name` followed by whitespace, `/` or `>`, as the
//! tokenizer ends it. The start and end tags of scripts and styles are
//! kept (their attributes are harmless), so the tree around them is the
//! same.

use std::borrow::Cow;

use memchr::memchr;

/// Elements whose contents go, their tags staying.
const RAW_TEXT: &[&[u8]] = &[b"script", b"style"];
/// Elements that go whole (no text of theirs is ever content).
const DROPPED: &[&[u8]] = &[b"svg"];
/// Elements whose text is kept but whose contents are not markup: a `<`
/// inside them must not be taken for a tag.
const RCDATA: &[&[u8]] = &[b"title", b"textarea"];

/// `html` without script and style contents, SVG drawings and comments;
/// borrowed when there is nothing to drop.
pub(super) fn strip(html: &str) -> Cow<'_, str> {
    let b = html.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut copied = 0; // bytes of `b` before this are in `out` or dropped
    let mut i = 0;
    while let Some(lt) = memchr(b'<', &b[i..]).map(|p| i + p) {
        let rest = &b[lt + 1..];
        if rest.starts_with(b"!--") {
            // A comment: up to `-->` (or the end); `<!-->` and `<!--->` are empty ones.
            let body = lt + 4;
            let end = if b[body..].starts_with(b">") {
                body + 1
            } else if b[body..].starts_with(b"->") {
                body + 2
            } else {
                find(b, body, b"-->").map_or(b.len(), |e| e + 3)
            };
            drop_range(b, &mut out, &mut copied, lt, end);
            i = end;
            continue;
        }
        let Some(name_len) = tag_name_len(rest) else {
            i = lt + 1;
            continue;
        };
        let name = &rest[..name_len];
        let Some(tag_end) = tag_end(b, lt + 1 + name_len) else { break };
        if let Some(raw) = RAW_TEXT.iter().find(|n| name.eq_ignore_ascii_case(n)) {
            let close = closing_tag(b, tag_end, raw).unwrap_or(b.len());
            drop_range(b, &mut out, &mut copied, tag_end, close);
            i = close;
        } else if let Some(d) = DROPPED.iter().find(|n| name.eq_ignore_ascii_case(n)) {
            let end = if b[..tag_end].ends_with(b"/>") {
                tag_end
            } else {
                closing_tag(b, tag_end, d).and_then(|c| tag_end_after(b, c)).unwrap_or(b.len())
            };
            drop_range(b, &mut out, &mut copied, lt, end);
            i = end;
        } else if let Some(rc) = RCDATA.iter().find(|n| name.eq_ignore_ascii_case(n)) {
            i = closing_tag(b, tag_end, rc).unwrap_or(b.len());
        } else {
            i = tag_end;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(html);
    }
    out.extend_from_slice(&b[copied..]);
    // Only whole ASCII-delimited ranges were dropped, so the rest is UTF-8.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Copies `b[copied..from]` to `out` and skips `b[from..to]`.
fn drop_range(b: &[u8], out: &mut Vec<u8>, copied: &mut usize, from: usize, to: usize) {
    if to <= from {
        return;
    }
    if out.capacity() == 0 {
        out.reserve(b.len() / 2);
    }
    out.extend_from_slice(&b[*copied..from]);
    *copied = to;
}

/// Length of the tag name right after `<` (or `</`): ASCII letters first,
/// then anything up to whitespace, `/` or `>`; `None` when this is no tag.
fn tag_name_len(rest: &[u8]) -> Option<usize> {
    if !rest.first()?.is_ascii_alphabetic() {
        return None;
    }
    Some(rest.iter().position(|c| c.is_ascii_whitespace() || matches!(c, b'/' | b'>')).unwrap_or(rest.len()))
}

/// The index after the `>` ending the tag whose attributes start at `from`,
/// quoted values skipped.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    let mut in_value = false; // after `=`, before the value starts
    while i < b.len() {
        match b[i] {
            b'>' => return Some(i + 1),
            b'=' => in_value = true,
            q @ (b'"' | b'\'') if in_value => {
                i = memchr(q, &b[i + 1..]).map(|p| i + 1 + p)?;
                in_value = false;
            }
            c if !c.is_ascii_whitespace() => in_value = false,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The start of the first `</name` at or after `from` that ends there (a
/// whitespace, `/` or `>` follows), ASCII case ignored.
fn closing_tag(b: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut i = from;
    while let Some(p) = memchr(b'<', &b[i..]).map(|p| i + p) {
        let rest = &b[p + 1..];
        if rest.first() == Some(&b'/')
            && rest.len() > name.len()
            && rest[1..=name.len()].eq_ignore_ascii_case(name)
            && rest.get(name.len() + 1).is_none_or(|c| c.is_ascii_whitespace() || matches!(c, b'/' | b'>'))
        {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// The index after the `>` of the end tag starting at `at`.
fn tag_end_after(b: &[u8], at: usize) -> Option<usize> {
    memchr(b'>', &b[at..]).map(|p| at + p + 1)
}

/// The first index of `needle` in `b` at or after `from`.
fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(&b[from..], needle).map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_styles_svg_and_comments_go_and_the_rest_stays() {
        let html = "<html><head><title>a <b> title</title><style>p{}</style></head><body>\
                    <!-- a note --><p data-x=\"a>b\">Text</p><script type=x>if (a<b) { x = '</p>'; }</script>\
                    <svg viewBox=\"0 0 1 1\"><title>icon</title><path d=\"M0\"/></svg><p>More</p>\
                    <SCRIPT>x</SCRIPT ><textarea><script>kept</script></textarea></body></html>";
        assert_eq!(
            strip(html),
            "<html><head><title>a <b> title</title><style></style></head><body>\
             <p data-x=\"a>b\">Text</p><script type=x></script><p>More</p>\
             <SCRIPT></SCRIPT ><textarea><script>kept</script></textarea></body></html>"
        );
    }

    #[test]
    fn pages_with_nothing_to_drop_are_borrowed_and_broken_endings_do_not_panic() {
        assert!(matches!(strip("<p>plain</p>"), Cow::Borrowed(_)));
        for cut in ["<p>a<script>var", "<p>a<!-- never closed", "<svg><g>", "<p a=\"unterminated>", "<", "<script"] {
            let _ = strip(cut);
        }
        assert_eq!(strip("<p>a</p><script>var x"), "<p>a</p><script>");
    }
}
