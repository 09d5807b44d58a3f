//! A flat folder of three sites' pages (issue 37), for the tests of sites
//! decided without URLs (`sites_without_urls.rs`, `dataflow.rs`): each site
//! has its own template (class names, stylesheet, furniture text); site b
//! holds an edited copy of site a's first story, site c an edited copy of
//! its second, which names its own address (`https://news-c.example/...`).
//! Each copy is about Jaccard 0.65 from its original: above the cross-site
//! threshold (0.5), under the same-site one (0.8).

use std::path::Path;

/// Distinct made-up words: `n` of them from `start`.
fn words(start: usize, n: usize) -> Vec<String> {
    const SYLLABLES: [&str; 16] =
        ["ba", "ke", "lo", "mi", "nu", "pa", "re", "si", "to", "vu", "da", "fe", "go", "hi", "ju", "ka"];
    (start..start + n)
        .map(|i| format!("{}{}{}", SYLLABLES[i % 16], SYLLABLES[(i / 16) % 16], SYLLABLES[(i / 256) % 16]))
        .collect()
}

/// A story's text with every 25th word changed (a copy editor's pass).
fn edited(start: usize, n: usize) -> String {
    let mut w = words(start, n);
    for i in (3..n).step_by(25) {
        w[i] = format!("zz{i}");
    }
    w.join(" ")
}

/// A page in site `s`'s template: its own class names, stylesheet and
/// furniture text; `head` goes into `<head>`.
fn page(s: char, title: &str, text: &str, head: &str) -> String {
    let furniture = words(5000 + 40 * (s as usize - 'a' as usize), 25).join(" ");
    format!(
        "<!doctype html><html><head><title>{title}</title>\
         <link rel=stylesheet href=\"/{s}-theme/style.css?v=3\">{head}</head>\
         <body class=\"{s}-body {s}-layout\"><header class=\"{s}-masthead\"><nav class=\"{s}-menu\">\
         <a href=/>Home</a> <a href=/about>About</a></nav></header>\
         <div id=\"{s}-wrapper\" class=\"{s}-container\"><aside class=\"{s}-promo\"><p>{furniture}.</p></aside>\
         <main class=\"{s}-main\"><article class=\"{s}-article {s}-story\"><h1 class=\"{s}-title\">{title}</h1>\
         <div class=\"{s}-text\"><p>{text}.</p></div></article></main></div>\
         <footer class=\"{s}-footer\"><p>Site {s} footer.</p></footer></body></html>"
    )
}

fn write(dir: &Path, name: &str, html: &str) {
    std::fs::write(dir.join(format!("{name}.html")), html).unwrap();
}

/// Writes the pages into `dir` (which must exist).
pub fn write_flat_dump(dir: &Path) {
    let story = |n: usize| words(1000 * n, 150).join(" ");
    // Site a: two stories and two other articles.
    write(dir, "a-story1", &page('a', "Story one", &story(1), ""));
    write(dir, "a-story2", &page('a', "Story two", &story(2), ""));
    for i in 0..2 {
        write(dir, &format!("a-other{i}"), &page('a', "Other", &story(10 + i), ""));
    }
    // Site b: a copy of story one, edited, and articles of its own.
    write(dir, "b-copy1", &page('b', "Story one", &edited(1000, 150), ""));
    for i in 0..3 {
        write(dir, &format!("b-other{i}"), &page('b', "Other", &story(20 + i), ""));
    }
    // Site c: a copy of story two that names its own address, and articles.
    let canonical = r#"<link rel="canonical" href="https://news-c.example/copy-of-two">"#;
    write(dir, "c-copy2", &page('c', "Story two", &edited(2000, 150), canonical));
    for i in 0..3 {
        write(dir, &format!("c-other{i}"), &page('c', "Other", &story(30 + i), ""));
    }
}
