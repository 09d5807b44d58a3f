//! The tokenizer's rules the scan follows to skip a tag, a comment or raw text.

use super::names::is_space;

/// Where a tag name ends: at white space, `/` or `>` (the tokenizer's rule:
/// `<div"x>` is an element named `div"x`).
pub(super) fn tag_name_end(b: &[u8], from: usize) -> usize {
    b[from..].iter().position(|&c| is_space(c) || c == b'/' || c == b'>').map_or(b.len(), |p| from + p)
}

/// Reads a tag's attributes from `p` (just after its name) as the tokenizer
/// does: quoted values may hold `>`. Returns the position after `>` (past the
/// end of `b` when the page ends inside the tag), the attribute count and
/// whether the tag closed with `/>`.
pub(super) fn tag_end(b: &[u8], mut p: usize) -> (usize, u64, bool) {
    let mut attrs = 0u64;
    loop {
        while b.get(p).is_some_and(|&c| is_space(c)) {
            p += 1;
        }
        match b.get(p) {
            None => return (b.len() + 1, attrs, false),
            Some(b'>') => return (p + 1, attrs, false),
            Some(b'/') => {
                p += 1;
                if b.get(p) == Some(&b'>') {
                    return (p + 1, attrs, true);
                }
            }
            Some(_) => {
                attrs += 1;
                p += 1; // the first character belongs to the name, even `=`
                while b.get(p).is_some_and(|&c| !(is_space(c) || c == b'/' || c == b'>' || c == b'=')) {
                    p += 1;
                }
                while b.get(p).is_some_and(|&c| is_space(c)) {
                    p += 1;
                }
                if b.get(p) == Some(&b'=') {
                    p += 1;
                    while b.get(p).is_some_and(|&c| is_space(c)) {
                        p += 1;
                    }
                    match b.get(p) {
                        Some(&q @ (b'"' | b'\'')) => match memchr::memchr(q, &b[p + 1..]) {
                            Some(e) => p = p + 1 + e + 1,
                            None => return (b.len() + 1, attrs, false),
                        },
                        _ => {
                            while b.get(p).is_some_and(|&c| !(is_space(c) || c == b'>')) {
                                p += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The end of a comment whose `<!--` ends just before `p`: `-->`, `--!>`, or
/// at once for `<!-->` and `<!--->`.
pub(super) fn comment_end(b: &[u8], p: usize) -> usize {
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
pub(super) fn raw_text_end(b: &[u8], mut p: usize, name: &[u8]) -> usize {
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

pub(super) fn find(b: &[u8], from: usize, needle: &[u8]) -> usize {
    let from = from.min(b.len());
    memchr::memmem::find(&b[from..], needle).map_or(b.len(), |p| from + p + needle.len())
}
