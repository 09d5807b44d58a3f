//! `webdup cluster urls.txt` end to end: the binary fetches the example site
//! from a real HTTP server on 127.0.0.1 and must find the same clusters as
//! when it reads the same pages from disk.

#[path = "support/report.rs"]
mod report;
mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use axum::extract::Path as UrlPath;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

const SITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example");

async fn page(UrlPath(name): UrlPath<String>) -> impl IntoResponse {
    if name == "gone.html" {
        return (StatusCode::GONE, [(header::CONTENT_TYPE, "text/html")], Vec::new());
    }
    match std::fs::read(Path::new(SITE).join(&name)) {
        Ok(body) => (StatusCode::OK, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body),
        Err(_) => (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/html")], Vec::new()),
    }
}

/// Serves `fixtures/example/NAME` at `/site/NAME` and returns the port.
fn serve() -> u16 {
    support::serve_on_loopback(axum::Router::new().route("/site/{name}", axum::routing::get(page)))
}

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().expect("run webdup")
}

/// Clusters as sets of page file names.
fn clusters(o: &Output) -> BTreeSet<BTreeSet<String>> {
    report::cluster_names(&serde_json::from_slice(&o.stdout).expect("JSON report"))
}

#[test]
fn fetched_pages_cluster_like_the_same_files() {
    let port = serve();
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(SITE)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .collect();
    names.sort();
    let mut list = String::from("# the example site, served locally\n\n");
    for n in &names {
        list.push_str(&format!("http://127.0.0.1:{port}/site/{n}\n"));
    }
    // A page gone from the server, and a tracking-parameter duplicate of the first.
    list.push_str(&format!("http://127.0.0.1:{port}/site/gone.html\n"));
    list.push_str(&format!("http://127.0.0.1:{port}/site/{}?utm_source=newsletter\n", names[0]));
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, list).unwrap();

    let from_files = webdup(&["cluster", SITE, "--format", "json"]);
    assert_eq!(from_files.status.code(), Some(0));
    let fetched = webdup(&["cluster", urls.to_str().unwrap(), "--format", "json", "--delay", "0", "--per-host", "4"]);
    assert_eq!(
        fetched.status.code(),
        Some(1),
        "the gone page is a failed input: {}",
        String::from_utf8_lossy(&fetched.stderr)
    );

    let want = clusters(&from_files);
    assert!(!want.is_empty());
    assert_eq!(clusters(&fetched), want);

    let v: serde_json::Value = serde_json::from_slice(&fetched.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0]["id"].as_str().unwrap().ends_with("gone.html"));
    assert!(errors[0]["message"].as_str().unwrap().contains("410"), "{errors:?}");
    let fetches = v["fetches"].as_array().unwrap();
    assert_eq!(fetches.len(), names.len() + 1, "the utm duplicate is fetched once");
    assert!(fetches.iter().any(|f| !f["duplicates"].as_array().unwrap().is_empty()));
    assert!(fetches.iter().filter(|f| f["status"] == 200).count() == names.len());
}

/// Most requests in flight at once at the slow route, and those now.
static SLOW_MAX: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static SLOW_NOW: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn slow(UrlPath(n): UrlPath<u32>) -> impl IntoResponse {
    use std::sync::atomic::Ordering::SeqCst;
    let now = SLOW_NOW.fetch_add(1, SeqCst) + 1;
    SLOW_MAX.fetch_max(now, SeqCst);
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    SLOW_NOW.fetch_sub(1, SeqCst);
    let body =
        format!("<html><body><p>Page {n} of the shop's own site, with words of its own: item {n}.</p></body></html>");
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body)
}

/// `--own-site` drops the delay and lets 8 requests run at once against the
/// site; the default stays at 2. robots.txt is still asked for.
#[test]
fn own_site_fetches_a_site_you_run_without_the_politeness_delay() {
    use std::sync::atomic::Ordering::SeqCst;
    static ROBOTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let app = axum::Router::new().route("/slow/{n}", axum::routing::get(slow)).route(
        "/robots.txt",
        axum::routing::get(|| async {
            ROBOTS.fetch_add(1, SeqCst);
            "User-agent: *\nAllow: /\n"
        }),
    );
    let port = support::serve_on_loopback(app);
    let urls: Vec<String> = (0..16).map(|i| format!("http://127.0.0.1:{port}/slow/{i}")).collect();
    let run = |extra: &[&str]| {
        SLOW_MAX.store(0, SeqCst);
        let mut args = vec!["cluster", "-f", "json", "--quiet"];
        args.extend(urls.iter().map(String::as_str));
        args.extend(extra);
        let o = webdup(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        SLOW_MAX.load(SeqCst)
    };
    assert!(run(&[]) <= 2);
    let robots_before = ROBOTS.load(SeqCst);
    assert!(run(&["--own-site"]) > 2);
    assert!(ROBOTS.load(SeqCst) > robots_before, "robots.txt was not read");
    let o = webdup(&["cluster", "--own-site", "--delay", "1", "x.html"]);
    assert_eq!(o.status.code(), Some(2), "--own-site sets the delay itself");
}

/// Issue 17, item 2: old URLs beside the new ones (the migration workflow).
/// An old URL that 301s to a page of the run is that page, not a duplicate
/// of it: one page per final URL, the redirect reported with its chain.
#[test]
fn a_redirect_and_its_target_are_one_page_not_a_duplicate_cluster() {
    let moved = |UrlPath(name): UrlPath<String>| async move {
        (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, format!("/site/{name}"))], Vec::<u8>::new())
    };
    let port = support::serve_on_loopback(
        axum::Router::new()
            .route("/site/{name}", axum::routing::get(page))
            .route("/old/{name}", axum::routing::get(moved)),
    );
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("urls.txt");
    let base = format!("http://127.0.0.1:{port}");
    let urls = [
        format!("{base}/old/river-path-updated.html"),
        format!("{base}/site/river-path-updated.html"),
        format!("{base}/site/contact.html"),
        // Only the old URL asked for: it stands for its page.
        format!("{base}/old/home-baked-bread.html"),
    ];
    std::fs::write(&list, urls.join("\n")).unwrap();
    let o = webdup(&["cluster", list.to_str().unwrap(), "-f", "json", "-q", "--delay", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["documents"], 3, "{}", v["summary"]);
    assert!(clusters(&o).is_empty(), "a redirect was clustered with its target: {}", v["clusters"]);
    let redirected = v["redirected"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(redirected.len(), 1, "{redirected:?}");
    assert_eq!(redirected[0]["id"], urls[0].as_str());
    assert_eq!(redirected[0]["same_as"], urls[1].as_str());
    let statuses: Vec<u64> =
        redirected[0]["chain"].as_array().unwrap().iter().map(|h| h["status"].as_u64().unwrap()).collect();
    assert_eq!(statuses, [301, 200]);

    let o = webdup(&["cluster", list.to_str().unwrap(), "-f", "table", "-q", "--delay", "0"]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("redirects to pages already in this run (1)"), "{table}");

    // The audit, fresh and from an index: a redirect row, no cluster.
    let db = dir.path().join("i.db");
    let o = webdup(&["index", "add", "--crawl", "c", "--index", db.to_str().unwrap(), list.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (name, args) in [
        ("fresh", vec!["audit", list.to_str().unwrap(), "--delay", "0"]),
        ("index", vec!["audit", "--index", db.to_str().unwrap()]),
    ] {
        let out = dir.path().join(format!("audit-{name}"));
        let mut args = args.clone();
        args.extend(["-q", "--out", out.to_str().unwrap()]);
        let o = webdup(&args);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let rows: Vec<(String, String, Option<u64>)> = report["pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["url"].as_str().unwrap().to_string(),
                    p["indexability"].as_str().unwrap().to_string(),
                    p["status"].as_u64(),
                )
            })
            .collect();
        let redirects: Vec<&(String, String, Option<u64>)> = rows.iter().filter(|r| r.1 == "redirect").collect();
        assert_eq!(redirects.len(), 1, "{name}: {rows:?}");
        assert_eq!((redirects[0].0.as_str(), redirects[0].2), (urls[0].as_str(), Some(301)), "{name}");
        assert_eq!(rows.len(), 4, "{name}: every input has a row: {rows:?}");
        assert_eq!(report["summary"]["clusters"], 0, "{name}: {}", report["summary"]);
        assert_eq!(report["summary"]["missing_titles"], 0, "{name}: {}", report["summary"]);
    }
}
