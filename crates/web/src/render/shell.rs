//! Whether a page's fetched HTML is a client-rendered shell: the markup a
//! single-page application sends before its scripts write the content.
//!
//! The signs are the ones every such framework shares, not any one site's
//! markup: almost no visible text in the body, at least one script, and
//! either an empty mount point (an element with an application root id,
//! `<app-root>`, `ng-app`...) or far more script than text. A short
//! server-rendered page (a 404, a contact form) has little text too but
//! neither of the other signs; an article has text.

use crate::lex::{self, StartTags};

/// Fewer visible words than this in the body is "little text".
const MAX_SHELL_WORDS: usize = 60;
/// Inline script this many times larger than the visible text is
/// "script-heavy" even without a known mount point.
const SCRIPT_TO_TEXT: usize = 8;
/// Ids frameworks mount their application on (React, Next.js, Nuxt,
/// Gatsby, Vue, Svelte, Angular, Ember and the usual hand-written ones).
const MOUNT_IDS: &[&str] = &[
    "app",
    "root",
    "__next",
    "__nuxt",
    "___gatsby",
    "svelte",
    "app-root",
    "application",
    "main-app",
    "react-root",
    "ember-app",
    "spa-root",
];

/// True if `html` looks like a client-rendered shell: little visible text,
/// at least one script, and an application mount point or mostly script.
/// Cheap (one pass over the bytes, no parse), so it runs on every fetched
/// page: `--render auto` renders only the pages it flags, and a run without
/// `--render` counts them to suggest the flag.
pub fn looks_client_rendered(html: &str) -> bool {
    // Counting stops at "much text": an article is told from a shell by its
    // first words, not by reading it all.
    let signs = Signs::of_until(html, MAX_SHELL_WORDS);
    signs.words < MAX_SHELL_WORDS
        && signs.scripts > 0
        && (signs.mount_point || signs.script_bytes > SCRIPT_TO_TEXT * signs.text_bytes.max(64))
}

/// What [`looks_client_rendered`] reads from a page.
#[derive(Debug, Default)]
struct Signs {
    /// Visible words in the body (outside scripts, styles, templates...).
    words: usize,
    text_bytes: usize,
    /// `<script>` elements, with a `src` or inline (JSON data blocks not counted).
    scripts: usize,
    /// Bytes of inline script, data blocks included (a framework's state).
    script_bytes: usize,
    mount_point: bool,
}

impl Signs {
    #[cfg(test)]
    fn of(html: &str) -> Signs {
        Signs::of_until(html, usize::MAX)
    }

    /// The signs of `html`, read only until `words` visible words are seen
    /// (the other counts then stop short).
    fn of_until(html: &str, words: usize) -> Signs {
        let b = html.as_bytes();
        let mut signs = Signs::default();
        let mut tags = StartTags::new(html);
        // Text is what lies between a tag's end and the next `<`; raw-text
        // elements are passed over by the tag reader, and their insides
        // counted here as script or ignored.
        let mut in_body = !lex::contains_ignoring_case(b, b"<body");
        let mut text_from = 0usize;
        while let Some(tag) = tags.next_tag() {
            let name = tag.name;
            let end = tag.end;
            let start = memchr::memrchr(b'<', &b[..end]).unwrap_or(0);
            if in_body {
                push_text(&b[text_from.min(start)..start], &mut signs);
                if signs.words >= words {
                    return signs;
                }
            }
            if name.eq_ignore_ascii_case(b"body") {
                in_body = true;
            }
            let attr = |n: &[u8]| tag.attrs.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| *v);
            let raw = lex::RAW_TEXT.iter().any(|r| r.eq_ignore_ascii_case(name));
            let raw_end = if raw { lex::raw_text_end(b, end, name) } else { end };
            if name.eq_ignore_ascii_case(b"script") {
                let kind = attr(b"type").map(|t| t.to_ascii_lowercase()).unwrap_or_default();
                let data = kind.ends_with(b"json") || kind == b"text/template";
                if !data {
                    signs.scripts += 1;
                }
                signs.script_bytes += raw_end - end;
            } else if name.eq_ignore_ascii_case(b"app-root")
                || attr(b"ng-app").is_some()
                || attr(b"data-reactroot").is_some()
                || attr(b"id").is_some_and(|id| MOUNT_IDS.iter().any(|m| m.as_bytes().eq_ignore_ascii_case(id)))
            {
                signs.mount_point = true;
            }
            // The tag reader has passed over raw text; text resumes after
            // its end tag (or right after this tag).
            text_from = if raw { lex::find(b, raw_end, b">") } else { end };
        }
        if in_body {
            push_text(&b[text_from.min(b.len())..], &mut signs);
        }
        signs
    }
}

/// Counts the text of `chunk` (markup between tags: comments and end tags
/// taken out) into `signs`: its words (runs between whitespace with a
/// letter or digit) and its bytes, each piece as if followed by a space.
fn push_text(chunk: &[u8], signs: &mut Signs) {
    let mut count = |piece: &[u8]| {
        let text = String::from_utf8_lossy(piece);
        signs.text_bytes += text.len() + 1;
        signs.words += text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count();
    };
    let mut p = 0;
    while p < chunk.len() {
        match memchr::memchr(b'<', &chunk[p..]) {
            Some(off) => {
                count(&chunk[p..p + off]);
                let at = p + off + 1;
                p = if chunk[at.min(chunk.len())..].starts_with(b"!--") {
                    lex::comment_end(chunk, at + 3)
                } else {
                    lex::find(chunk, at, b">")
                };
            }
            None => {
                count(&chunk[p..]);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE: &str = "The river rose through the night and by morning the lower town was under water. \
        Volunteers filled sandbags at the school while the council opened the sports hall to families \
        who had left their homes. Forecasters expect the level to fall slowly over the weekend, though \
        more rain is due on Monday and the bridge will stay closed until engineers have inspected it.";

    #[test]
    fn framework_shells_are_flagged() {
        let shells = [
            // React (create-react-app)
            r#"<!doctype html><html><head><title>Shop</title><script defer src="/static/js/main.3f2a.js"></script></head>
               <body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>"#,
            // Next.js client page: state in a JSON block
            r#"<html><head><script src="/_next/static/chunks/main.js" defer></script></head><body><div id="__next"></div>
               <script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}}}</script></body></html>"#,
            // Vue / Nuxt
            r#"<html><body><div id="app"><!-- rendered by vue --></div><script src="/js/app.js"></script></body></html>"#,
            r#"<html><body><div id="__nuxt"><div class="loading">Loading...</div></div><script>window.__NUXT__={}</script></body></html>"#,
            // Angular
            r#"<html><head><base href="/"></head><body><app-root></app-root><script src="runtime.js" type="module"></script></body></html>"#,
            // No known id, but nothing but script
            &format!("<html><body><main class=x></main><script>{}</script></body></html>", "var a=1;".repeat(200)),
        ];
        for s in shells {
            assert!(looks_client_rendered(s), "not flagged: {s}");
        }
    }

    #[test]
    fn server_rendered_pages_are_not_flagged() {
        let pages = [
            // An article in a React app rendered on the server: root id, scripts, text.
            format!(
                r#"<html><body><div id="root"><article><h1>Flood</h1><p>{ARTICLE}</p></article></div><script src="/app.js"></script></body></html>"#
            ),
            // A short page with no script at all.
            "<html><body><h1>Not found</h1><p>This page does not exist.</p></body></html>".to_string(),
            // A short page with analytics but no mount point and little script.
            r#"<html><body><h1>Contact</h1><form><input name=q></form><script>ga('send')</script></body></html>"#
                .to_string(),
            // Text, with a big script.
            format!("<html><body><p>{ARTICLE}</p><script>{}</script></body></html>", "x();".repeat(5000)),
        ];
        for p in &pages {
            assert!(!looks_client_rendered(p), "flagged: {p}");
        }
    }

    #[test]
    fn text_inside_scripts_and_comments_is_not_visible_text() {
        let s = Signs::of(&format!(
            "<html><head><title>{ARTICLE}</title></head><body><!-- {ARTICLE} --><script>var t = \"{ARTICLE}\"</script><div id=app>Hi there</div></body></html>"
        ));
        assert_eq!(s.words, 2, "{s:?}");
        assert!(s.mount_point);
        assert_eq!(s.scripts, 1);
    }

    /// The real pages of the extraction benchmarks (articles, products,
    /// forums, listings...), when `../shared/data` is there: every AEB
    /// article is server-rendered and none may be flagged; of the varied
    /// WCXB pages, at most a few in a thousand.
    #[test]
    fn real_pages_are_not_flagged() {
        use std::io::Read;
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
        let read = |dir: &str| -> Vec<(String, String)> {
            let Ok(entries) = std::fs::read_dir(data.join(dir).join("html")) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for e in entries.flatten() {
                let mut gz = flate2::read::GzDecoder::new(std::fs::File::open(e.path()).unwrap());
                let mut s = String::new();
                if gz.read_to_string(&mut s).is_ok() {
                    out.push((e.path().display().to_string(), s));
                }
            }
            out
        };
        let aeb = read("aeb");
        if aeb.is_empty() {
            // No benchmark data on this machine (CI): nothing to check.
            return;
        }
        let flagged: Vec<_> = aeb.iter().filter(|(_, h)| looks_client_rendered(h)).map(|(p, _)| p).collect();
        assert!(flagged.is_empty(), "AEB articles flagged: {flagged:?}");
        let wcxb = read("wcxb-dev");
        let flagged: Vec<_> = wcxb.iter().filter(|(_, h)| looks_client_rendered(h)).map(|(p, _)| p).collect();
        assert!(
            flagged.len() * 1000 <= wcxb.len() * 3,
            "{} of {} WCXB pages flagged: {flagged:?}",
            flagged.len(),
            wcxb.len()
        );
    }
}
