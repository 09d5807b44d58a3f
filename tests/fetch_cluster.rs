//! `webdup cluster urls.txt` end to end: the binary fetches the example site
//! from a real HTTP server on 127.0.0.1 and must find the same clusters as
//! when it reads the same pages from disk.

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
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    v["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
                .collect()
        })
        .collect()
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
