//! `webdup lost-and-found` against a real site on 127.0.0.1 served in two
//! versions (`fixtures/site-v1`, `fixtures/site-v2`, written by
//! `scripts/gen-site-fixtures.py`). The planted truth is
//! `fixtures/site-truth.csv`: pages moved, renamed, lightly edited, merged,
//! deleted (one pair reusing a quarter of a deleted page), turned into soft
//! 404s, redirected to the home page, or already redirected correctly.

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

struct Site {
    version: AtomicU8,
    /// v2's special answers: path -> (kind, target).
    routes: HashMap<String, (String, String)>,
}

fn html(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

async fn handle(State(site): State<Arc<Site>>, uri: Uri) -> Response {
    let v = site.version.load(Ordering::SeqCst);
    let path = uri.path();
    let root = PathBuf::from(FIXTURES).join(if v == 1 { "site-v1" } else { "site-v2" });
    if v == 2
        && let Some((kind, target)) = site.routes.get(path)
    {
        return match kind.as_str() {
            "gone" => html(StatusCode::GONE, "<html><body><h1>Gone</h1></body></html>".into()),
            "soft404" => html(StatusCode::OK, std::fs::read_to_string(root.join("_soft404.html")).unwrap()),
            "redirect" => (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, target.clone())]).into_response(),
            other => panic!("unknown route kind {other}"),
        };
    }
    let file = if path == "/" { "index.html" } else { path.trim_start_matches('/') };
    if file.contains("..") || file.starts_with('_') {
        return html(StatusCode::NOT_FOUND, String::new());
    }
    match std::fs::read_to_string(root.join(file)) {
        Ok(body) => html(StatusCode::OK, body),
        Err(_) => html(StatusCode::NOT_FOUND, "<html><body><h1>Not Found</h1></body></html>".into()),
    }
}

fn serve(site: Arc<Site>) -> u16 {
    support::serve_on_loopback(axum::Router::new().fallback(handle).with_state(site))
}

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().expect("run webdup")
}

/// Site paths of the pages in `dir`, `/` for the home page.
fn site_paths(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.file_name().unwrap().to_string_lossy().starts_with('_') {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.push(if rel == "index.html" { "/".to_string() } else { format!("/{rel}") });
            }
        }
    }
    out.sort();
    out
}

#[test]
fn redirect_map_finds_moved_content_with_high_precision_and_recall() {
    let routes = std::fs::read_to_string(Path::new(FIXTURES).join("site-v2/_routes.txt")).unwrap();
    let routes = routes
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[1].to_string(), (f[0].to_string(), f.get(2).unwrap_or(&"").to_string()))
        })
        .collect();
    let site = Arc::new(Site { version: AtomicU8::new(1), routes });
    let port = serve(site.clone());
    let base = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let db = db.to_str().unwrap();
    let fetch = ["-q", "--delay", "0", "--per-host", "8", "--retries", "0"];

    let v1 = site_paths(&Path::new(FIXTURES).join("site-v1"));
    let v2 = site_paths(&Path::new(FIXTURES).join("site-v2"));
    let list = |name: &str, paths: &[&String]| {
        let p = dir.path().join(name);
        std::fs::write(&p, paths.iter().map(|s| format!("{base}{s}\n")).collect::<String>()).unwrap();
        p.to_str().unwrap().to_string()
    };
    let v1_list = list("v1.txt", &v1.iter().collect::<Vec<_>>());
    // A crawler revisits the old URLs and follows the new site's links.
    let all: BTreeSet<&String> = v1.iter().chain(&v2).collect();
    let v2_list = list("v2.txt", &all.into_iter().collect::<Vec<_>>());

    let o = webdup(&[&["index", "add", "--index", db, "--crawl", "v1"][..], &fetch, &[&v1_list]].concat());
    assert!(o.status.success(), "v1 crawl: {}", String::from_utf8_lossy(&o.stderr));
    site.version.store(2, Ordering::SeqCst);
    let o = webdup(&[&["index", "add", "--index", db, "--crawl", "v2"][..], &fetch, &[&v2_list]].concat());
    // Old URLs now answering 404 or 410 count as failed inputs.
    assert_eq!(o.status.code(), Some(1), "v2 crawl: {}", String::from_utf8_lossy(&o.stderr));

    let o = webdup(&["lost-and-found", "--index", db, "--old", "v1", "--new", "v2", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let map: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let strip = |u: &serde_json::Value| u.as_str().unwrap().strip_prefix(&base).unwrap().to_string();
    let proposed: BTreeMap<String, String> =
        map["redirects"].as_array().unwrap().iter().map(|r| (strip(&r["old_url"]), strip(&r["new_url"]))).collect();
    let unmatched: BTreeSet<String> =
        map["unmatched"].as_array().unwrap().iter().map(|u| strip(&u["old_url"])).collect();
    let already: BTreeMap<String, String> = map["already_redirected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (strip(&a["old_url"]), strip(&a["final_url"])))
        .collect();

    let truth = std::fs::read_to_string(Path::new(FIXTURES).join("site-truth.csv")).unwrap();
    let (mut relevant, mut correct) = (0usize, 0usize);
    let mut misses = Vec::new();
    for line in truth.lines().skip(1) {
        let [old, expected, kind] = line.split(',').collect::<Vec<_>>()[..] else { panic!("bad truth row {line}") };
        match expected {
            "same" => assert!(
                !proposed.contains_key(old) && !unmatched.contains(old),
                "{old} is unchanged but was reported ({kind})"
            ),
            "none" => {
                if !unmatched.contains(old) {
                    misses.push(format!("{old} ({kind}) should be unmatched, got {:?}", proposed.get(old)));
                }
            }
            e if e.starts_with("already:") => {
                assert_eq!(already.get(old).map(String::as_str), Some(&e["already:".len()..]), "{old} ({kind})");
            }
            target => {
                relevant += 1;
                if proposed.get(old).map(String::as_str) == Some(target) {
                    correct += 1;
                } else {
                    misses.push(format!("{old} ({kind}) should go to {target}, got {:?}", proposed.get(old)));
                }
            }
        }
    }
    let precision = correct as f64 / proposed.len().max(1) as f64;
    let recall = correct as f64 / relevant as f64;
    println!(
        "lost-and-found: {} redirects proposed, {correct} correct of {relevant} planted; precision {precision:.3}, recall {recall:.3}; {} unmatched, {} already redirected",
        proposed.len(),
        unmatched.len(),
        already.len()
    );
    for m in &misses {
        println!("  miss: {m}");
    }
    assert!(relevant >= 20, "the fixture plants at least 20 moves");
    assert!(precision >= 0.95, "precision {precision:.3}: {misses:#?}");
    assert!(recall >= 0.95, "recall {recall:.3}: {misses:#?}");

    // The gone reasons are the ones planted.
    let reason_of = |old: &str| {
        map["redirects"]
            .as_array()
            .unwrap()
            .iter()
            .chain(map["unmatched"].as_array().unwrap())
            .find(|r| strip(&r["old_url"]) == old)
            .map(|r| r["reason"].as_str().unwrap().to_string())
    };
    assert_eq!(reason_of("/guides/old-name-0.html").as_deref(), Some("http_410"));
    assert_eq!(reason_of("/notes/moved-0.html").as_deref(), Some("http_404"));
    assert_eq!(reason_of("/shop/item-0.html").as_deref(), Some("soft_404"));
    assert_eq!(reason_of("/news/story-0.html").as_deref(), Some("redirect_to_home"));

    // CSV: one row per old URL reported, with a header.
    let o = webdup(&["lost-and-found", "--index", db, "--old", "v1", "--new", "v2", "--format", "csv"]);
    assert!(o.status.success());
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("kind,old_url,new_url,reason,jaccard,containment,confidence,evidence\n"));
    assert_eq!(csv.lines().count(), 1 + proposed.len() + unmatched.len() + already.len());

    // Server configuration: one entry per proposed redirect, each matching
    // its old URL (host and path) and sending it to the new one.
    let full = |path: &str| format!("{base}{path}");
    let config = |format: &str| {
        let o = webdup(&["lost-and-found", "--index", db, "--old", "v1", "--new", "v2", "--format", format]);
        assert!(o.status.success(), "{format}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let nginx = config("nginx");
    assert!(nginx.contains("map $host$request_uri $webdup_redirect {") && nginx.trim_end().ends_with('}'), "{nginx}");
    let apache = config("apache");
    let rules: Vec<&str> = apache.lines().filter(|l| l.starts_with("RewriteRule ")).collect();
    assert_eq!(rules.len(), proposed.len(), "{apache}");
    let bulk = config("bulk-csv");
    assert_eq!(bulk.lines().count(), proposed.len(), "{bulk}");
    for (old, new) in &proposed {
        // nginx's $host has no port; the map key is what the request names.
        let key = format!("\"127.0.0.1{old}\" \"{}\";", full(new));
        assert!(nginx.contains(&key), "{key} not in {nginx}");
        // Bulk redirects match no port either.
        assert!(bulk.lines().any(|l| l == format!("127.0.0.1{old},{},301", full(new))), "{old} not in {bulk}");
        let matching = rules.iter().filter(|r| r.ends_with(&format!(" {} [R=301,L,QSD,NE]", full(new)))).filter(|r| {
            let pattern = r.split(' ').nth(1).unwrap();
            regex::Regex::new(pattern).unwrap().is_match(&old[1..])
        });
        assert_eq!(matching.count(), 1, "{old} -> {new} in {apache}");
    }

    // Unknown crawls are named in the error.
    let o = webdup(&["lost-and-found", "--index", db, "--old", "v1", "--new", "v3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'v3'"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 40, item 7: an old URL the apache format cannot express (a space
/// in its path) was skipped after its `RewriteCond` lines were written, and
/// they bound to the next rule, which then asked for the skipped URL's host
/// and query as well as its own: it never fired. A skipped URL now leaves no
/// line, and each rule has only its own conditions.
#[test]
fn apache_map_leaves_no_condition_of_a_skipped_url_before_the_next_rule() {
    use webdup::engine::{Config, Fingerprinter};
    use webdup::store::{Index, Page};
    use webdup_eval::synth::{SynthConfig, corpus};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let config = Config::default().validate().unwrap();
    let index = Index::open(&db, &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let texts =
        corpus(&SynthConfig { documents: 2, words_per_document: 200, copy_share: 0.0, seed: 11, ..Default::default() });
    let page = |crawl: &str, url: &str, text: &str| {
        Page::new(crawl, url, fp.fingerprint_text(url.into(), webdup::DocKey(0), text).unwrap())
    };
    for (crawl, url, text) in [
        ("old", "https://skipped.test/old%20page?id=1", &texts[0]),
        ("old", "https://kept.test/old-page", &texts[1]),
        ("new", "https://skipped.test/new-page", &texts[0]),
        ("new", "https://kept.test/new-page", &texts[1]),
    ] {
        index.insert(&page(crawl, url, text)).unwrap();
    }
    drop(index);
    let o = webdup(&[
        "lost-and-found",
        "--index",
        db.to_str().unwrap(),
        "--old",
        "old",
        "--new",
        "new",
        "--format",
        "apache",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("left https://skipped.test/old%20page?id=1 out of the map"), "{err}");
    let apache = String::from_utf8(o.stdout).unwrap();
    let rules: Vec<&str> = apache.lines().filter(|l| !l.starts_with('#') && *l != "RewriteEngine On").collect();
    assert_eq!(rules.len(), 2, "{apache}");
    assert_eq!(rules[0], r"RewriteCond %{HTTP_HOST} ^kept\.test$ [NC]", "{apache}");
    assert!(rules[1].starts_with("RewriteRule ") && rules[1].contains(" https://kept.test/new-page "), "{apache}");
}
