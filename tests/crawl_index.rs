//! A crawl kept in the index (`webdup index add --follow ... --crawl c1`)
//! audited later (`webdup audit --index FILE --crawl c1`) reports what the
//! crawl saw as an audit of a fresh crawl of the same site does: inlinks,
//! the URL kept and why, links to fix, folded URLs, the sitemap's orphan and
//! unlisted pages, traps and links not followed. The site is served on
//! 127.0.0.1 by the test; the index is a real SQLite file written by the
//! binary.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

#[path = "support/site.rs"]
mod site;

use serde_json::Value;
use site::{ARTICLE, OTHER, Reply, Site};

const ORPHAN: &str = "The rowing club meets on the slipway at dawn on tuesdays and thursdays from april to \
    october. New members borrow a boat for their first month, learn to launch and land it in the surf, \
    and row with a coach along the quay until they can cross the harbour mouth on their own.";

fn html(title: &str, body: &str) -> Reply {
    Reply::html(format!(
        "<html><head><title>{title}</title></head><body><nav><a href=\"/\">Home</a></nav>\
         <main>{body}</main></body></html>"
    ))
}

fn page(path: &str, port: u16) -> Reply {
    match path {
        "/sitemap.xml" => {
            let locs: String = ["/", "/a", "/orphan"]
                .iter()
                .map(|p| format!("<url><loc>http://127.0.0.1:{port}{p}</loc></url>"))
                .collect();
            Reply::xml(format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>"#
            ))
        }
        "/" => html(
            "Harbour news",
            "<p>Welcome to the harbour news, with the ferry timetable and the lighthouse.</p>\
             <a href=\"/a\">ferry</a> <a href=\"/a?utm_source=news\">ferry (mail)</a> \
             <a href=\"/a?sort=date\">ferry by date</a> <a href=\"/b\">lighthouse</a> \
             <a href=\"/cal?month=0\">events</a> <a rel=\"nofollow\" href=\"/n\">n</a>",
        ),
        "/a" | "/a?sort=date" => html("Ferry timetable", &format!("<h1>Ferry timetable</h1><p>{ARTICLE}</p>")),
        "/b" => html("Lighthouse", &format!("<h1>Lighthouse</h1><p>{OTHER}</p><a href=\"/a\">ferry</a>")),
        "/orphan" => html("Rowing club", &format!("<h1>Rowing club</h1><p>{ORPHAN}</p>")),
        p if p.starts_with("/cal?month=") => {
            let m: u64 = p["/cal?month=".len()..].parse().unwrap_or(0);
            html(
                "Events",
                &format!(
                    "<h1>Events in month {m}</h1><p>There are no events planned for this month yet. Check back \
                     later or subscribe to the calendar feed to hear about new concerts, talks and markets in \
                     the harbour hall and the library garden. The hall seats two hundred people and the garden \
                     stays open until dusk from may to september.</p><a href=\"/cal?month={}\">next month</a>",
                    m + 1
                ),
            )
        }
        _ => Reply::not_found(),
    }
}

fn start() -> Site {
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let p = port.clone();
    let site = Site::start(move |path| page(path, p.get().copied().unwrap_or_default()));
    port.set(site.port).unwrap();
    site
}

fn webdup(args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().unwrap();
    assert!(matches!(o.status.code(), Some(0 | 2)), "webdup {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

fn report(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// Each cluster's URL kept and why, by its members' URLs (cluster ids and
/// page numbers are the audit's own).
fn kept(r: &Value) -> BTreeMap<Vec<String>, Value> {
    r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut members: Vec<String> =
                c["members"].as_array().unwrap().iter().map(|m| m["url"].as_str().unwrap().to_string()).collect();
            members.sort();
            (members, c["keep"].clone())
        })
        .collect()
}

fn inlinks(r: &Value) -> BTreeMap<String, Value> {
    r["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["url"].as_str().unwrap().to_string(), p["inlinks"].clone()))
        .collect()
}

#[test]
fn audit_of_a_crawl_kept_in_the_index_reports_its_links_as_a_fresh_crawl_does() {
    let site = start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let (from_index, fresh) = (dir.path().join("a"), dir.path().join("b"));
    let (start, sitemap) = (site.url("/"), site.url("/sitemap.xml"));
    let db_arg = db.to_str().unwrap();
    webdup(&["index", "add", "--index", db_arg, "--crawl", "c1", "--follow", &start, &sitemap, "--own-site", "-q"]);
    webdup(&["audit", "--index", db_arg, "--crawl", "c1", "-q", "--out", from_index.to_str().unwrap()]);
    webdup(&["audit", "--follow", &start, &sitemap, "--own-site", "-q", "--out", fresh.to_str().unwrap()]);
    let (a, b) = (report(&from_index), report(&fresh));
    assert_eq!(a["source"]["crawl"], "c1", "the first report is the index's");

    // The crawl's facts are there, not just equal (two empty reports would be).
    let fixes = a["links_to_fix"].as_array().expect("links to fix");
    assert!(
        fixes.iter().any(|l| l["link"] == site.url("/a?sort=date").as_str() && l["to"] == site.url("/a").as_str()),
        "the links to the sort variant are to fix: {fixes:?}"
    );
    assert_eq!(a["orphan_pages"], serde_json::json!([site.url("/orphan")]));
    assert!(strings(&a["unlisted_pages"]).contains(&site.url("/b")), "{}", a["unlisted_pages"]);
    assert!(a["folded"].as_array().is_some_and(|f| !f.is_empty()), "the tracked link is folded: {}", a["folded"]);
    assert!(a["crawl"]["traps"].as_array().is_some_and(|t| !t.is_empty()), "the calendar is a trap: {}", a["crawl"]);
    assert_eq!(a["crawl"]["not_followed"]["nofollow"], 1);
    assert_eq!(inlinks(&a)[&site.url("/a")], 2, "the home page and the lighthouse link to the article");
    let reasons: Vec<String> =
        kept(&a).values().map(|k| k["reason"].as_str().unwrap_or_default().to_string()).collect();
    assert!(reasons.iter().any(|r| r.contains("internal link")), "{reasons:?}");

    // ... and equal to the fresh crawl's in every crawl-derived field.
    for field in ["links_to_fix", "folded", "orphan_pages", "unlisted_pages", "crawl"] {
        assert_eq!(a[field], b[field], "{field}");
    }
    assert_eq!(kept(&a), kept(&b), "each cluster's URL kept and why");
    assert_eq!(inlinks(&a), inlinks(&b), "each page's inlinks");
}

#[test]
fn a_crawl_kept_without_following_links_reports_no_links() {
    let site = start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let out = dir.path().join("a");
    let db_arg = db.to_str().unwrap();
    let (home, article, variant) = (site.url("/"), site.url("/a"), site.url("/a?sort=date"));
    webdup(&["index", "add", "--index", db_arg, "--crawl", "c1", &home, &article, &variant, "--own-site", "-q"]);
    webdup(&["audit", "--index", db_arg, "--crawl", "c1", "-q", "--out", out.to_str().unwrap()]);
    let r = report(&out);
    assert!(r["crawl"].is_null(), "{}", r["crawl"]);
    assert!(r["links_to_fix"].as_array().is_none_or(|l| l.is_empty()), "{}", r["links_to_fix"]);
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().map(|s| s.as_str().unwrap().to_string()).collect()
}
