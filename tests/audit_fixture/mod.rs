//! The fixture site of the audit tests (`fixtures/audit-site`), served by
//! a real HTTP server on 127.0.0.1 and audited once per test process, and
//! the headless Chromium and command helpers they share (`audit.rs`,
//! `audit_paged.rs`). Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use axum::extract::Path as UrlPath;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

pub const SITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/audit-site");

/// Every page of the fixture site, relative to its root, sorted.
pub fn site_pages() -> Vec<String> {
    let mut out = Vec::new();
    for e in walk(Path::new(SITE)) {
        let rel = e.strip_prefix(SITE).unwrap().to_string_lossy().replace('\\', "/");
        if rel.ends_with(".html") {
            out.push(rel);
        }
    }
    out.sort();
    out
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

pub async fn serve_path(UrlPath(path): UrlPath<String>, headers: HeaderMap) -> Response {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1").to_string();
    if path == "sitemap.xml" {
        let mut xml = String::from(
            r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
        );
        let mut pages = site_pages();
        // Two URLs the server answers with 404.
        pages.push("events/winter-market-old.html".into());
        pages.push("missing.html".into());
        for p in pages {
            xml.push_str(&format!("<url><loc>http://{host}/{p}</loc></url>"));
        }
        xml.push_str("</urlset>");
        return ([(header::CONTENT_TYPE, "application/xml")], xml).into_response();
    }
    if path.split('/').any(|s| s == ".." || s.is_empty()) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let Ok(body) = std::fs::read(Path::new(SITE).join(&path)) else {
        return (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/html")], "<h1>Not found</h1>").into_response();
    };
    let mut response = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    let h = response.headers_mut();
    if path == "guides/garden-guide-print.html" {
        h.insert(header::LINK, HeaderValue::from_static(r#"</guides/garden-guide.html>; rel="canonical""#));
    }
    if path.starts_with("tag/") {
        h.insert("x-robots-tag", HeaderValue::from_static("noindex"));
    }
    response
}

/// Serves the fixture site on 127.0.0.1 and returns the port.
pub fn serve() -> u16 {
    crate::support::serve_on_loopback(axum::Router::new().route("/{*path}", axum::routing::get(serve_path)))
}

pub struct Run {
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub json: Value,
}

/// Audits the site once per test process; the tests read the same report.
pub fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        let port = serve();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["audit", &format!("http://127.0.0.1:{port}/sitemap.xml"), "--out"])
            .arg(&out)
            .args(["--delay", "0", "--per-host", "4", "--thin-words", "150", "--quiet"])
            .output()
            .expect("run webdup");
        assert_eq!(o.status.code(), Some(1), "two pages are 404: {}", String::from_utf8_lossy(&o.stderr));
        let json = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        Run { port, dir, json }
    })
}

pub fn read(name: &str) -> String {
    let r = run();
    std::fs::read_to_string(r.dir.path().join("report").join(name))
        .unwrap()
        .replace(&format!("127.0.0.1:{}", r.port), "127.0.0.1:PORT")
}

pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
    })
}

/// Runs headless Chromium on `url` with `extra` flags and returns stdout.
pub fn headless(browser: &Path, url: &str, extra: &[&str]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            // Lets the report's script finish before the DOM is dumped.
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(o.status.success(), "chromium failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn webdup(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().expect("run webdup")
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The data blob `report.html` renders from.
pub fn report_data(report_dir: &Path) -> Value {
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    let doc = scraper::Html::parse_document(&html);
    let sel = scraper::Selector::parse("#audit-data").unwrap();
    serde_json::from_str(&doc.select(&sel).next().unwrap().inner_html()).unwrap()
}

/// The diff view of the fixture's blue widget and its print copy, opened
/// from `#diff=A,B`: both URLs, and the edits marked ("four hundred grams"
/// became "three hundred and ninety grams": "hundred" is kept).
pub fn assert_blue_widget_diff(doc: &scraper::Html) {
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let head = doc.select(&sel("#diff-a")).next().expect("diff view rendered").text().collect::<String>();
    assert!(head.ends_with("widgets/blue-widget.html"), "{head}");
    let ins: String = doc.select(&sel("#diff-view ins")).flat_map(|e| e.text()).collect();
    let del: String = doc.select(&sel("#diff-view del")).flat_map(|e| e.text()).collect();
    assert!(ins.contains("three") && ins.contains("and ninety") && ins.contains("Printed from"), "{ins}");
    assert_eq!(del, "four");
}
