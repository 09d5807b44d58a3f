//! `--follow` as a user runs it: `webdup cluster --follow URL` against a site
//! the test serves on 127.0.0.1, with duplicate URL variants planted, a
//! calendar trap, robots.txt and a nofollow link; then the same crawl killed
//! and resumed.

use std::process::{Command, Output};
use std::time::Duration;

#[path = "support/site.rs"]
mod site;

use site::{ARTICLE, OTHER, Reply, Site};

fn page(path: &str) -> Reply {
    let html = |title: &str, body: String| {
        Reply::html(format!(
            "<html><head><title>{title}</title></head><body><nav><a href=\"/\">Home</a> <a href=\"/b\">Lighthouse</a></nav><main>{body}</main><footer>Harbour news</footer></body></html>"
        ))
    };
    let article = || html("Ferry timetable", format!("<h1>Ferry timetable</h1><p>{ARTICLE}</p>"));
    match path {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private/\n"),
        "/" => html(
            "Harbour news",
            "<p>Welcome to the harbour news.</p><a href=\"/a\">ferry</a> <a href=\"/a?sort=date\">ferry sorted</a> \
             <a href=\"/a/\">ferry again</a> <a href=\"/print/a\">print</a> <a href=\"/cal?month=0\">events</a> \
             <a href=\"/private/x\">private</a> <a rel=\"nofollow\" href=\"/n\">n</a>"
                .into(),
        ),
        "/a" | "/a/" | "/print/a" | "/a?sort=date" => article(),
        "/b" => html("Lighthouse", format!("<h1>Lighthouse</h1><p>{OTHER}</p>")),
        p if p.starts_with("/cal?month=") => {
            let m: u64 = p["/cal?month=".len()..].parse().unwrap_or(0);
            html(
                "Events",
                format!(
                    "<h1>Events in month {m}</h1><p>There are no events planned for this month yet. Check back \
                     later or subscribe to the calendar feed to hear about new concerts, talks and markets in \
                     the harbour hall and the library garden.</p><a href=\"/cal?month={}\">next month</a>",
                    m + 1
                ),
            )
        }
        _ => Reply::not_found(),
    }
}

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().unwrap()
}

/// A report with the fetch timings left out (how long each fetch took, and
/// whether it came from the cache): everything else must not depend on
/// timing.
fn comparable(json: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(json).unwrap();
    for f in v["fetches"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        f.remove("elapsed");
        f.remove("from_cache");
    }
    v
}

fn cluster_ids(json: &[u8]) -> Vec<Vec<String>> {
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    v["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect())
        .collect()
}

#[test]
fn cluster_follow_finds_the_variants_no_list_names_and_stops_at_the_trap() {
    let site = Site::start(page);
    let start = site.url("/");
    let out = webdup(&["cluster", "--follow", &start, "--own-site", "-f", "json", "-q"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let clusters = cluster_ids(&out.stdout);
    let article: Vec<String> = ["/a", "/a/", "/a?sort=date", "/print/a"].iter().map(|p| site.url(p)).collect();
    let with_article = clusters.iter().find(|c| c.contains(&article[0])).expect("the article's cluster");
    let mut got = with_article.clone();
    got.sort();
    assert_eq!(got, article, "every variant with its article, nothing else");
    assert!(!clusters.iter().flatten().any(|id| id == &site.url("/b")), "the other article stands alone");
    let served = site.served();
    assert!(!served.iter().any(|p| p.starts_with("/private/") || p == "/n"), "{served:?}");
    // The calendar is a trap: a bounded number of months fetched.
    let months = served.iter().filter(|p| p.starts_with("/cal?")).count();
    assert!((10..=13).contains(&months), "{months} calendar pages fetched");
    // Without -q, the crawl says what it left out.
    let out = webdup(&["cluster", "--follow", &start, "--own-site", "-f", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nofollow") && err.contains(&format!("trap 127.0.0.1:{}/cal?month", site.port)), "{err}");
}

#[test]
fn the_same_crawl_one_request_at_a_time_gives_the_same_report() {
    let site = Site::start(page);
    let start = site.url("/");
    let a = webdup(&["cluster", "--follow", &start, "--own-site", "-f", "json", "-q"]);
    let b = webdup(&["cluster", "--follow", &start, "--own-site", "--concurrency", "1", "-f", "json", "-q"]);
    assert!(a.status.success() && b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert_eq!(comparable(&a.stdout), comparable(&b.stdout));
}

fn cached_pages(dir: &std::path::Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            n += cached_pages(&p);
        } else if p.extension().is_some_and(|x| x == "page") {
            n += 1;
        }
    }
    n
}

#[test]
fn a_killed_crawl_resumes_without_fetching_again_and_reports_the_same() {
    let site = Site::start(page);
    let start = site.url("/");
    let whole = webdup(&["cluster", "--follow", &start, "--own-site", "-f", "json", "-q"]);
    assert!(whole.status.success());
    let total = site.pages_served_since(0).len();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("crawl");
    let mark = site.served().len();
    site.set_delay(150);
    let mut child = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "--follow", &start, "--own-site", "--resume", state.to_str().unwrap(), "-f", "json", "-q"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it has fetched some pages but not all.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while site.pages_served_since(mark).len() < 6 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    site.set_delay(0);
    let cached = cached_pages(&state);
    assert!(cached > 0 && cached < total, "killed midway: {cached} of {total} pages kept");
    let mark = site.served().len();
    let resumed =
        webdup(&["cluster", "--follow", &start, "--own-site", "--resume", state.to_str().unwrap(), "-f", "json", "-q"]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(comparable(&resumed.stdout), comparable(&whole.stdout));
    // Only the pages the killed run had not kept are fetched.
    assert_eq!(site.pages_served_since(mark).len(), total - cached);
}

#[test]
fn index_add_and_audit_follow_the_same_site() {
    let site = Site::start(page);
    let start = site.url("/");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let db = db.to_str().unwrap();
    let added = webdup(&["index", "add", "--index", db, "--crawl", "c1", "--follow", &start, "--own-site", "-q"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&added.stdout).unwrap();
    let fetched = site.pages_served_since(0).len();
    assert_eq!(summary["pages"].as_u64(), Some(fetched as u64), "{summary}");
    let out = dir.path().join("audit");
    let audited = webdup(&["audit", "--follow", &start, "--own-site", "--out", out.to_str().unwrap(), "-q"]);
    assert!(audited.status.success(), "{}", String::from_utf8_lossy(&audited.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let urls: Vec<&str> = report["pages"].as_array().unwrap().iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert!(
        urls.contains(&site.url("/print/a").as_str()) && urls.contains(&site.url("/a?sort=date").as_str()),
        "{urls:?}"
    );
    assert!(!urls.iter().any(|u| u.contains("/private/")), "{urls:?}");
}
