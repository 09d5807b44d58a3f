//! Words kept apart as a browser shows them (issue 37): the whitespace
//! between inline elements separates words (`<span>a</span> <span>b</span>`),
//! adjacent inline elements without it do not (`<b>a</b><i>b</i>`), and
//! block boundaries and the lines of a `<pre>` do. Highlighted code is where
//! this shows: Pygments (Sphinx), rustdoc, Prism and highlight.js put every
//! token in a `<span>` and the spaces between them.

use webdup_web::extract::{ExtractConfig, ExtractorKind, extract_with_url, visible_text};

/// A fixture page (written for these tests) with the word sequences it must
/// give and the glued forms it must not.
struct Page {
    file: &'static str,
    html: &'static str,
    spaced: &'static [&'static str],
    glued: &'static [&'static str],
    whole: &'static [&'static str],
}

const PAGES: &[Page] = &[
    Page {
        file: "sphinx.html",
        html: include_str!("../../../fixtures/extract/code/sphinx.html"),
        spaced: &["import numpy as np", "np a = np.arange(15)", "print(a.shape)"],
        glued: &["importnumpy", "numpyas", "npa", "a=np"],
        whole: &["dataframe"],
    },
    Page {
        file: "rustdoc.html",
        html: include_str!("../../../fixtures/extract/code/rustdoc.html"),
        spaced: &["fn main() {", "let mut count = 0;", "for line in text.lines() {", "count += 1;", "println!"],
        glued: &["fnmain", "letmut", "mutcount", "lineintext"],
        whole: &["HashMap"],
    },
    Page {
        file: "prism.html",
        html: include_str!("../../../fixtures/extract/code/prism.html"),
        spaced: &[
            "export async function loadUser(id) {",
            "const response = await fetch(",
            "return response.json();",
            "def load_user(user_id):",
            "if user_id not in USERS:",
            "return None",
        ],
        glued: &["exportasync", "asyncfunction", "functionloadUser", "returnNone", "notin"],
        whole: &["JavaScript"],
    },
];

/// `text` with every run of whitespace made one space.
fn spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What is wrong with `text` as `what`'s reading of `page`.
fn check(what: &str, page: &Page, text: &str) -> Vec<String> {
    let text = spaces(text);
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
    let missing = page.spaced.iter().filter(|s| !text.contains(*s)).map(|s| format!("`{s}` missing"));
    let glued = page.glued.iter().filter(|g| words.contains(g)).map(|g| format!("glued `{g}`"));
    let split = page.whole.iter().filter(|w| !words.contains(w)).map(|w| format!("`{w}` split"));
    missing.chain(glued).chain(split).map(|m| format!("{what} on {}: {m} in {text}", page.file)).collect()
}

#[test]
fn every_extractor_keeps_the_spaces_between_highlighted_code_tokens() {
    let mut failures = Vec::new();
    for page in PAGES {
        for kind in ExtractorKind::ALL {
            let e = extract_with_url(page.html, Some("https://docs.example.org/guide/page"), &ExtractConfig::new(kind))
                .unwrap();
            failures.extend(check(&format!("{kind} (as {})", e.extractor), page, &e.text));
        }
        failures.extend(check("visible", page, &visible_text(page.html).0));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn inline_elements_join_or_separate_words_as_a_browser_renders_them() {
    let html = "<html><body><p><span>two</span> <span>words</span> and <b>o</b><i>ne</i></p>\
                <div>block</div><div>apart</div><ul><li>cell</li><li>by</li></ul>line<br>break\
                <pre>first\nsecond</pre></body></html>";
    assert_eq!(spaces(&visible_text(html).0), "two words and one block apart cell by line break first second");
}
