//! Thin pages whose few words sit in a block the extractor judges furniture
//! (issue 13). Forum software puts a topic's posts in `#comments`; on a
//! long topic they are most of the page and the extractor takes them, on a
//! topic of one short post it keeps the site's notices instead, the same on
//! every such page. Template learning sees all of each page's text, so it
//! learns those notices, and a page left with little but template is known
//! by what the rest of it has beyond the template: its post.

use std::path::Path;
use std::process::Command;

/// Distinct made-up words: `n` of them from `start`, so that texts made
/// from different ranges share no shingle.
fn words(start: usize, n: usize) -> String {
    const SYLLABLES: [&str; 16] =
        ["ba", "ke", "lo", "mi", "nu", "pa", "re", "si", "to", "vu", "da", "fe", "go", "hi", "ju", "ka"];
    (start..start + n)
        .map(|i| format!("{}{}{}", SYLLABLES[i % 16], SYLLABLES[(i / 16) % 16], SYLLABLES[(i / 256) % 16]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A forum page: the site's notices (the same on every page, outside any
/// navigation or footer), then the topic's title and posts in `#comments`.
fn page(title: &str, posts: &[String]) -> String {
    let notices: String = (0..4).map(|i| format!("<p>{}.</p>", words(3000 + 20 * i, 20))).collect();
    let posts: String = posts.iter().map(|p| format!("<div class=post><p>{p}.</p></div>")).collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\
         <header><nav><a href=/>Forum</a> <a href=/new>New topics</a></nav></header>\
         <main><div class=notice>{notices}</div>\
         <div id=comments><div class=topic-title>{title}</div><form method=post>{posts}</form></div>\
         <div class=help><p>{}.</p></div></main>\
         <footer><p>Forum software, all rights reserved.</p></footer></body></html>",
        words(3200, 20)
    )
}

fn write(dir: &Path, name: &str, html: &str) {
    std::fs::write(dir.join(name), html).unwrap();
}

#[test]
fn thin_forum_topics_keep_their_own_post_and_copies_of_one_still_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("forum");
    std::fs::create_dir(&site).unwrap();
    // Six long topics: eight posts of 25 words each.
    for t in 0..6 {
        let posts: Vec<String> = (0..8).map(|p| words(200 * t + 25 * p, 25)).collect();
        write(&site, &format!("topic{t}.html"), &page(&format!("Long topic {t}"), &posts));
    }
    // Four topics of one post of 12 words, and a copy of the first.
    for t in 0..4 {
        let html = page(&format!("Short topic {t}"), &[words(2000 + 50 * t, 12)]);
        write(&site, &format!("short{t}.html"), &html);
        if t == 0 {
            write(&site, "short0-copy.html", &html);
        }
    }

    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "forum", "-f", "json", "--quiet"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let clusters: Vec<Vec<String>> = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut ids: Vec<String> =
                c["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
            ids.sort();
            ids
        })
        .collect();
    assert_eq!(
        clusters,
        vec![vec!["forum/short0-copy.html".to_string(), "forum/short0.html".to_string()]],
        "only the copied short topic has a duplicate: {report:#}"
    );
}
