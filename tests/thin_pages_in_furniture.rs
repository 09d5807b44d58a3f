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

/// A site of five pages where the extractor found nothing on three but the
/// site's tagline (their own text is an image): once the tagline is learned
/// as the site's template they have no text of their own, so they are no
/// one's duplicates, and `cluster`, `audit` and the index say they are
/// template only (issue 37).
#[test]
fn pages_that_are_only_their_sites_tagline_are_template_only_and_never_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let site = root.join("site");
    std::fs::create_dir(&site).unwrap();
    let tagline = words(4000, 14);
    let page = |title: &str, body: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title></head><body>\
             <header><nav><a href=/>Home</a> <a href=/about>About</a></nav></header>\
             <main><p class=tagline>{tagline}.</p>{body}</main>\
             <footer><p>All rights reserved.</p></footer></body></html>"
        )
    };
    write(&site, "story-a.html", &page("A", &format!("<article><p>{}.</p></article>", words(0, 120))));
    write(&site, "story-b.html", &page("B", &format!("<article><p>{}.</p></article>", words(500, 120))));
    for (name, title) in [("photo-1.html", "One"), ("photo-2.html", "Two"), ("photo-3.html", "Three")] {
        write(&site, name, &page(title, &format!("<figure><img src=/{title}.jpg alt=\"\"></figure>")));
    }
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).current_dir(root).output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let json = |o: std::process::Output| -> serde_json::Value { serde_json::from_slice(&o.stdout).unwrap() };
    let photos = ["site/photo-1.html", "site/photo-2.html", "site/photo-3.html"];

    let v = json(run(&["cluster", "site", "-f", "json", "-q"]));
    assert_eq!(v["clusters"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["template_only"], serde_json::json!(photos), "{v:#}");
    let csv = String::from_utf8(run(&["cluster", "site", "-f", "csv", "-q"]).stdout).unwrap();
    assert!(csv.contains(",template only,site/photo-2.html,"), "{csv}");

    run(&["audit", "site", "-q", "--out", "audit"]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("audit/report.json")).unwrap()).unwrap();
    let pages = report["pages"].as_array().unwrap();
    let template_only: Vec<&str> =
        pages.iter().filter(|p| p["thin_reason"] == "template only").map(|p| p["url"].as_str().unwrap()).collect();
    assert_eq!(template_only, photos, "{:#}", report["pages"]);
    assert!(pages.iter().filter(|p| p["thin_reason"] == "template only").all(|p| p["thin"] == true));
    assert_eq!(report["clusters"], serde_json::json!([]), "{:#}", report["clusters"]);

    // Stored with the others, a fourth such page is never seen on its tagline.
    let stored = ["site/story-a.html", "site/story-b.html", "site/photo-1.html", "site/photo-2.html"];
    let mut add = vec!["index", "add", "--index", "pages.db", "--crawl", "first"];
    add.extend(stored);
    run(&add);
    let v = json(run(&["index", "query", "site/photo-3.html", "--index", "pages.db"]));
    for kind in ["identical", "same_text", "near"] {
        assert_eq!(v[kind], serde_json::json!([]), "{kind}: {v:#}");
    }
    assert_eq!(v["template_only"], true, "{v:#}");
}
