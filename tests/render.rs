//! `--render`: pages whose text is written by JavaScript, read through a
//! real headless Chromium from a real site on 127.0.0.1.
//!
//! The client-rendered site sends an empty `<div id="root">` and the
//! article as inline JSON; `/app.js` (fetched by the fetcher for Chromium)
//! writes it into the DOM. The pre-rendered site serves the same articles
//! as plain HTML. Skipped (with a message) where no Chromium is installed.

#[path = "support/report.rs"]
mod report;
#[path = "support/site.rs"]
mod site;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use site::{Reply, Site};

const APP_JS: &str = r#"
const data = JSON.parse(document.getElementById('data').textContent);
const article = document.createElement('article');
const h1 = document.createElement('h1');
h1.textContent = data.title;
article.appendChild(h1);
for (const text of data.paragraphs) {
  const p = document.createElement('p');
  p.textContent = text;
  article.appendChild(p);
}
document.getElementById('root').appendChild(article);
"#;

fn chromium() -> Option<String> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"].iter().find_map(|n| {
        std::env::split_paths(&path).map(|d| d.join(n)).find(|p| p.is_file()).map(|p| p.display().to_string())
    })
}

macro_rules! need_chromium {
    () => {
        if chromium().is_none() {
            eprintln!("skipped: no Chromium on PATH (apt install chromium)");
            return;
        }
    };
}

/// Words from a small vocabulary, chosen by a seeded generator: texts that
/// share nothing unless the test makes them.
fn words(seed: u64, n: usize) -> Vec<String> {
    const VOCAB: &[&str] = &[
        "harbour",
        "ferry",
        "island",
        "winter",
        "timetable",
        "bicycle",
        "market",
        "lighthouse",
        "keeper",
        "lamp",
        "channel",
        "storm",
        "coast",
        "village",
        "baker",
        "bread",
        "oven",
        "flour",
        "morning",
        "river",
        "bridge",
        "council",
        "school",
        "garden",
        "orchard",
        "apple",
        "pear",
        "cider",
        "festival",
        "music",
        "choir",
        "church",
        "bell",
        "tower",
        "clock",
        "station",
        "train",
        "platform",
        "ticket",
        "museum",
        "painting",
        "gallery",
        "library",
        "book",
        "reader",
        "poem",
        "author",
        "meadow",
        "sheep",
        "shepherd",
        "hill",
        "valley",
        "stream",
        "mill",
        "wheel",
        "stone",
        "wall",
        "castle",
        "knight",
        "horse",
        "saddle",
        "road",
        "inn",
        "traveller",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            VOCAB[(x % VOCAB.len() as u64) as usize].to_string()
        })
        .collect()
}

/// The articles of the test site: name -> (title, paragraphs). Three
/// near-duplicate versions of one story, two of another, and three that
/// stand alone.
fn articles() -> BTreeMap<String, (String, Vec<String>)> {
    let para = |seed: u64| words(seed, 60).join(" ");
    let story = |seeds: &[u64]| seeds.iter().map(|&s| para(s)).collect::<Vec<_>>();
    let edit = |mut ps: Vec<String>, seed: u64| {
        // A few words changed in one paragraph: a near duplicate.
        let mut w: Vec<String> = ps[1].split(' ').map(str::to_string).collect();
        for (i, new) in words(seed, 3).into_iter().enumerate() {
            w[5 + 17 * i] = new;
        }
        ps[1] = w.join(" ");
        ps
    };
    let ferry = story(&[1, 2, 3, 4]);
    let mill = story(&[11, 12, 13, 14]);
    let mut out = BTreeMap::new();
    out.insert("ferry".into(), ("The ferry".into(), ferry.clone()));
    out.insert("ferry-copy".into(), ("The ferry".into(), edit(ferry.clone(), 100)));
    out.insert("ferry-again".into(), ("The ferry again".into(), edit(ferry, 200)));
    out.insert("mill".into(), ("The mill".into(), mill.clone()));
    out.insert("mill-copy".into(), ("The mill".into(), edit(mill, 300)));
    for (i, name) in ["orchard", "castle", "choir"].iter().enumerate() {
        let s = 1000 + 10 * i as u64;
        out.insert(name.to_string(), (name.to_string(), story(&[s, s + 1, s + 2, s + 3])));
    }
    out
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The client-rendered page of an article: no article text in the HTML.
fn shell(title: &str, paragraphs: &[String]) -> String {
    let data = format!(
        "{{\"title\":{},\"paragraphs\":[{}]}}",
        json_string(title),
        paragraphs.iter().map(|p| json_string(p)).collect::<Vec<_>>().join(",")
    );
    format!(
        "<!doctype html><html><head><title>Site</title></head><body><div id=\"root\"></div>\
         <script type=\"application/json\" id=\"data\">{data}</script><script src=\"/app.js\"></script></body></html>"
    )
}

/// The same article, rendered on the server.
fn plain(title: &str, paragraphs: &[String]) -> String {
    let ps: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<!doctype html><html><head><title>Site</title></head><body><div id=\"root\"><article><h1>{title}</h1>{ps}</article></div></body></html>"
    )
}

fn js(body: &str) -> Reply {
    Reply { content_type: "application/javascript", ..Reply::html(body) }
}

/// The site: `/csr/NAME` client-rendered, `/ssr/NAME` pre-rendered, plus
/// whatever `extra` answers.
fn site(extra: impl Fn(&str) -> Option<Reply> + Send + Sync + 'static) -> Site {
    let articles = articles();
    Site::start(move |path| {
        if let Some(r) = extra(path) {
            return r;
        }
        if path == "/app.js" {
            return js(APP_JS);
        }
        let (kind, name) = path.trim_start_matches('/').split_once('/').unwrap_or(("", ""));
        match (kind, articles.get(name)) {
            ("csr", Some((t, ps))) => Reply::html(shell(t, ps)),
            ("ssr", Some((t, ps))) => Reply::html(plain(t, ps)),
            _ => Reply::not_found(),
        }
    })
}

/// A page's budget where a test needs every page rendered: a busy CI
/// machine runs these tests beside others, and a browser on two loaded
/// cores can take more than the default 10 s to start and render.
const LOADED: &str = "40";

fn webdup(args: &[&str], list: &[String]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, list.join("\n")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "--format", "json", "--delay", "0", "--per-host", "8"])
        .args(args)
        .arg(&urls)
        .output()
        .expect("run webdup")
}

fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {}", String::from_utf8_lossy(&o.stderr)))
}

/// Clusters as sets of article names.
fn clusters(v: &Value) -> BTreeSet<BTreeSet<String>> {
    report::cluster_names(v)
}

/// The pages whose fetch record says they were rendered, by path.
fn rendered(v: &Value) -> BTreeSet<String> {
    v["fetches"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter(|r| r["rendered"] == Value::Bool(true))
                .map(|r| {
                    r["id"]
                        .as_str()
                        .unwrap()
                        .split_once("/csr/")
                        .or(r["id"].as_str().unwrap().split_once("/ssr/"))
                        .map_or(String::new(), |(_, n)| n.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A mixed site: every other article client-rendered (the shells, by
/// name), the rest pre-rendered; and the URLs of all of them.
fn mixed(site: &Site) -> (BTreeSet<String>, Vec<String>) {
    let names: Vec<String> = articles().into_keys().collect();
    let shells: BTreeSet<String> = names.iter().step_by(2).cloned().collect();
    let list =
        names.iter().map(|n| site.url(&format!("/{}/{n}", if shells.contains(n) { "csr" } else { "ssr" }))).collect();
    (shells, list)
}

/// The articles' names, and their URLs on `site` client-rendered (`/csr/`)
/// and pre-rendered (`/ssr/`).
fn articles_at(site: &Site) -> (Vec<String>, Vec<String>, Vec<String>) {
    let names: Vec<String> = articles().into_keys().collect();
    let at = |kind: &str| names.iter().map(|n| site.url(&format!("/{kind}/{n}"))).collect();
    let (csr, ssr) = (at("csr"), at("ssr"));
    (names, csr, ssr)
}

fn expected_clusters() -> BTreeSet<BTreeSet<String>> {
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    BTreeSet::from([set(&["ferry", "ferry-again", "ferry-copy"]), set(&["mill", "mill-copy"])])
}

#[test]
fn rendered_site_clusters_like_the_prerendered_one() {
    need_chromium!();
    let site = site(|_| None);
    let (names, csr, ssr) = articles_at(&site);

    let plain = report(&webdup(&[], &ssr));
    assert_eq!(clusters(&plain), expected_clusters(), "the pre-rendered site");

    let out = webdup(&["--render", "on", "--render-timeout", LOADED], &csr);
    let v = report(&out);
    assert!(v["errors"].as_array().unwrap().is_empty(), "{}", v["errors"]);
    assert_eq!(clusters(&v), expected_clusters(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(rendered(&v), names.iter().cloned().collect::<BTreeSet<_>>());

    // Without --render the shells have no text, and the run says why.
    let out = webdup(&[], &csr);
    let v = report(&out);
    assert_ne!(clusters(&v), expected_clusters());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("8 of 8 fetched pages look client-rendered") && stderr.contains("--render"), "{stderr}");
    assert!(rendered(&v).is_empty());
}

#[test]
fn render_auto_renders_only_the_shells() {
    need_chromium!();
    let site = site(|_| None);
    let (shells, list) = mixed(&site);
    let out = webdup(&["--render", "auto", "--render-timeout", LOADED], &list);
    let v = report(&out);
    assert!(v["errors"].as_array().unwrap().is_empty(), "{}", v["errors"]);
    assert_eq!(rendered(&v), shells, "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(clusters(&v), expected_clusters());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("rendered {} of 8 fetched pages", shells.len())), "{stderr}");
}

/// The audit marks the pages it rendered, and without `--render` says how
/// many look client-rendered and which flag reads them.
#[test]
fn the_audit_marks_rendered_pages_and_names_the_shells() {
    need_chromium!();
    let site = site(|_| None);
    let (shells, list) = mixed(&site);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("urls.txt"), list.join("\n")).unwrap();
    let audit = |args: &[&str], out: &str| -> (Value, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["audit", "--delay", "0", "--per-host", "8", "--quiet", "--out"])
            .arg(dir.path().join(out))
            .args(args)
            .arg(dir.path().join("urls.txt"))
            .output()
            .unwrap();
        let read = |f: &str| std::fs::read_to_string(dir.path().join(out).join(f));
        let json = read("report.json").unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        (serde_json::from_str(&json).unwrap(), read("report.html").unwrap())
    };
    let name = |p: &Value| p["url"].as_str().unwrap().rsplit('/').next().unwrap().to_string();

    let (v, html) = audit(&["--render", "auto", "--render-timeout", LOADED], "auto");
    let marked: BTreeSet<String> =
        v["pages"].as_array().unwrap().iter().filter(|p| p["rendered"] == Value::Bool(true)).map(name).collect();
    assert_eq!(marked, shells);
    assert_eq!(v["summary"]["rendered_pages"], shells.len());
    assert!(v["summary"].get("client_rendered_pages").is_none(), "{}", v["summary"]);
    assert!(html.contains(&format!("{} pages were rendered", shells.len())));

    let (v, html) = audit(&[], "plain");
    assert!(v["pages"].as_array().unwrap().iter().all(|p| p.get("rendered").is_none()));
    assert_eq!(v["summary"]["client_rendered_pages"], shells.len());
    assert!(
        html.contains(&format!("{} of 8 pages look client-rendered", shells.len())) && html.contains("--render auto")
    );
}

/// Bad pages: each fails alone (or is kept with the intrusion refused),
/// within its budget, and the good pages around them are kept.
#[test]
fn hostile_pages_fail_alone_within_the_budget() {
    need_chromium!();
    let (ferry_title, ferry) = articles()["ferry"].clone();
    let (mill_title, mill) = articles()["mill"].clone();
    let with = move |script: &str| -> Reply {
        let page = shell(&ferry_title, &ferry)
            .replace("<script src=\"/app.js\">", &format!("<script>{script}</script><script src=\"/app.js\">"));
        Reply::html(page)
    };
    let good = Reply::html(shell(&mill_title, &mill));
    let site = site(move |path| {
        Some(match path {
            "/bad/loop" => with("while (true) {}"),
            "/bad/dialog" => with("alert('hello'); confirm('sure?');"),
            "/bad/popup" => with("window.open('/popup-target', '_blank');"),
            "/bad/away" => with("location.href = '/elsewhere';"),
            "/bad/download" => with(
                "const a = document.createElement('a'); a.href = '/file.bin'; a.download = 'f.bin'; document.body.appendChild(a); a.click();",
            ),
            // Out of layout (display: none): the DOM is large, not slow to lay out.
            "/bad/huge" => with(
                "const d = document.createElement('div'); d.style.display = 'none'; d.textContent = 'x '.repeat(3000000); document.body.appendChild(d);",
            ),
            "/bad/private" => {
                with("fetch('http://10.0.0.1/secret').catch(() => {}); fetch('http://127.0.0.1:9/x').catch(() => {});")
            }
            "/good/1" | "/good/2" => good.clone(),
            _ => return None,
        })
    });
    let bad = ["loop", "dialog", "popup", "away", "download", "huge", "private"];
    let mut list: Vec<String> = bad.iter().map(|b| site.url(&format!("/bad/{b}"))).collect();
    list.push(site.url("/good/1"));
    list.push(site.url("/good/2"));
    let start = Instant::now();
    // 10 s a page: the well-behaved pages share the budget with the hostile
    // ones, and 5 s (Chromium's start included) left one of them unrendered
    // on a loaded machine now and then.
    let out = webdup(&["--render", "on", "--render-timeout", "10", "--max-bytes", "2000000"], &list);
    let elapsed = start.elapsed();
    let v = report(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: BTreeMap<String, String> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().rsplit('/').next().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let kept: BTreeSet<String> = rendered(&v);
    let get = |k: &str| errors.get(k).cloned().unwrap_or_default();
    assert!(get("loop").contains("did not stop"), "loop: {errors:?}\n{stderr}");
    assert!(get("away").contains("opens") && get("away").contains("/elsewhere"), "{errors:?}");
    // A download is a request for another document in the page: refused alike.
    assert!(get("download").contains("opens") && get("download").contains("/file.bin"), "{errors:?}");
    assert!(get("huge").contains("over the 2000000 byte limit"), "{errors:?}");
    for k in ["loop", "away", "download", "huge"] {
        assert!(
            v["errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["id"].as_str().unwrap().ends_with(k) && e["kind"] == "render")
        );
    }
    // A dialog is dismissed, a new window closed, a request to an
    // internal address refused: the page itself renders.
    for k in ["dialog", "popup", "private"] {
        assert!(!errors.contains_key(k), "{k}: {errors:?}");
    }
    // Each page's own "rendered" says which pages are kept as rendered.
    let records: Vec<&Value> = v["fetches"].as_array().unwrap().iter().collect();
    let rendered_ids: BTreeSet<String> = records
        .iter()
        .filter(|r| r["rendered"] == Value::Bool(true))
        .map(|r| r["id"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    for k in ["dialog", "popup", "private", "1", "2"] {
        assert!(rendered_ids.contains(k), "{k} not rendered: {rendered_ids:?} {kept:?}");
    }
    let served = site.served();
    for never in ["/popup-target", "/elsewhere", "/file.bin"] {
        assert!(!served.iter().any(|p| p == never), "{never} was fetched: {served:?}");
    }
    // The budget is 10 s a page: the pages that fail take it (the loop) or
    // less; with two tabs or more the run stays well under the sum of the
    // nine pages' budgets (90 s), Chromium's start included.
    assert!(elapsed < Duration::from_secs(45), "took {elapsed:?}");
}

/// Chromium killed while a page renders: that page fails, the next pages
/// start a new browser and render.
#[test]
fn a_killed_chromium_fails_only_its_page() {
    need_chromium!();
    let webdup_pid = Arc::new(AtomicU32::new(0));
    let pid = webdup_pid.clone();
    let (title, ps) = articles()["castle"].clone();
    let boom = Reply::html(shell(&title, &ps).replace("/app.js", "/boom.js"));
    let site = site(move |path| {
        if path == "/k/3" {
            return Some(boom.clone());
        }
        if path == "/boom.js" {
            kill_children(pid.load(Ordering::SeqCst));
            return Some(js(APP_JS));
        }
        None
    });
    let names = ["ferry", "mill", "", "orchard", "choir"];
    let list: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| if n.is_empty() { site.url(&format!("/k/{}", i + 1)) } else { site.url(&format!("/csr/{n}")) })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, list.join("\n")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args([
            "cluster",
            "--format",
            "json",
            "--delay",
            "0",
            "--concurrency",
            "1",
            "--render",
            "on",
            "--render-tabs",
            "1",
        ])
        .arg(&urls)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    webdup_pid.store(child.id(), Ordering::SeqCst);
    let out = child.wait_with_output().unwrap();
    let v = report(&out);
    let errors: Vec<(String, String)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e["message"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].0.ends_with("/k/3") && errors[0].1.contains("Chromium exited"), "{errors:?}");
    assert_eq!(rendered(&v), ["choir", "ferry", "mill", "orchard"].map(String::from).into_iter().collect());
}

/// SIGKILL to every child process of `parent` (the browser webdup started).
fn kill_children(parent: u32) {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so read after ")".
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        let pid = entry.file_name().to_string_lossy().parse::<i32>();
        if let (Some(true), Ok(pid)) = (ppid.map(|p| p == parent), pid) {
            // SAFETY: kill has no memory preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[test]
fn a_missing_chromium_stops_the_run_before_any_fetch() {
    let site = site(|_| None);
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "--render", "on", "--chromium", "/nonexistent/chromium", &site.url("/csr/ferry")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/chromium"), "{stderr}");
    assert!(site.served().is_empty());
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .env("PATH", "/nonexistent")
        .args(["cluster", "--render", "on", &site.url("/csr/ferry")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("apt install chromium") && stderr.contains("--chromium"), "{stderr}");
    assert!(site.served().is_empty());
}

/// `--follow` reads links from the rendered DOM: the start page's links
/// are written by its script, so only a rendered crawl finds them.
#[test]
fn follow_reads_links_from_the_rendered_dom() {
    need_chromium!();
    let nav = "<!doctype html><html><body><div id=\"app\"></div><script>\
        for (const n of ['ferry', 'mill']) { const a = document.createElement('a'); a.href = '/csr/' + n; \
        a.textContent = n; document.getElementById('app').appendChild(a); }</script></body></html>";
    let site = site(move |path| (path == "/start").then(|| Reply::html(nav)));
    let crawl = |render: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["cluster", "--format", "json", "--delay", "0", "--follow", "--render", render])
            .arg(site.url("/start"))
            .output()
            .unwrap();
        let v = report(&out);
        v["fetches"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect::<BTreeSet<_>>()
    };
    let fetched = crawl("on");
    assert!(fetched.contains(&site.url("/csr/ferry")) && fetched.contains(&site.url("/csr/mill")), "{fetched:?}");
    assert_eq!(crawl("off"), BTreeSet::from([site.url("/start")]));
}

/// `index add --render`: the client-rendered pages are stored as a browser
/// shows them, so the pre-rendered copies of the same articles are found
/// in the index; stored as fetched, the shells hold no text and nothing is.
#[test]
fn index_add_stores_rendered_pages() {
    need_chromium!();
    let site = site(|_| None);
    let (names, csr, ssr) = articles_at(&site);
    let dir = tempfile::tempdir().unwrap();
    let seen = |render: &str| {
        let db = dir.path().join(format!("{render}.db"));
        let db = db.to_str().unwrap();
        let add = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["index", "add", "--index", db, "--crawl", "c1", "--delay", "0", "--quiet"])
            .args(["--render", render, "--render-timeout", LOADED])
            .args(&csr)
            .output()
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["cluster", "--index", db, "-f", "json", "--delay", "0", "--quiet"])
            .args(&ssr)
            .output()
            .unwrap();
        let v = report(&out);
        let stderr = String::from_utf8_lossy(&add.stderr);
        v["indexed"]
            .as_array()
            .unwrap_or_else(|| panic!("no index rows: {v}; index add: {stderr}"))
            .iter()
            .map(|r| r["doc"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect::<BTreeSet<String>>()
    };
    assert_eq!(seen("on"), names.iter().cloned().collect::<BTreeSet<_>>(), "every article found, rendered");
    assert!(seen("off").is_empty(), "the shells' text is never read without --render");
}

/// `Fetcher::render`: a page the caller already fetched (a crawler's
/// response) goes through the same render step as a fetched page. Its own
/// origin is trusted as named (its script on 127.0.0.1 is fetched), any
/// other internal address refused (a script on another loopback port is
/// never asked for), `auto` leaves a server-rendered page alone, and a
/// page that navigates away fails with a typed `render` error.
#[test]
fn a_page_handed_over_renders_under_the_same_policy() {
    use webdup::fetch::{FetchConfig, FetchErrorKind, Fetcher};
    use webdup::render::{RenderConfig, RenderMode};
    need_chromium!();
    let other = site(|_| None);
    let site = site(|_| None);
    let fetcher = |mode| {
        let render = RenderConfig { mode, timeout: Duration::from_secs(10), ..RenderConfig::default() };
        Fetcher::new(FetchConfig { delay: Duration::ZERO, render, ..FetchConfig::default() }).unwrap()
    };
    let (title, ps) = articles()["ferry"].clone();
    let on = fetcher(RenderMode::On);

    let start = Instant::now();
    let page = on.render(&site.url("/csr/ferry"), shell(&title, &ps)).unwrap();
    eprintln!("rendered a handed-over page in {:?} (Chromium's start included)", start.elapsed());
    assert!(page.rendered && page.shell);
    assert!(page.html.contains(&ps[0]) && page.html.contains("<article>"), "{}", page.html);
    // The page itself is not fetched again; its script is, by webdup.
    let served = site.served();
    assert!(served.iter().any(|p| p == "/app.js"), "{served:?}");
    assert!(!served.iter().any(|p| p.starts_with("/csr/")), "the page was fetched again: {served:?}");

    // A script on another internal origin (another port of 127.0.0.1) is
    // refused before any connection: the page renders without its text.
    let cross = shell(&title, &ps).replace("\"/app.js\"", &format!("\"{}\"", other.url("/app.js")));
    let page = on.render(&site.url("/csr/cross"), cross).unwrap();
    // (The shell's inline JSON holds the text; only the script writes the article.)
    assert!(page.rendered && !page.html.contains("<article>"), "{}", page.html);
    assert!(other.served().is_empty(), "the other port was reached: {:?}", other.served());

    // Auto: a server-rendered page is left as it is, a shell rendered.
    let auto = fetcher(RenderMode::Auto);
    let html = plain(&title, &ps);
    let page = auto.render(&site.url("/ssr/ferry"), html.clone()).unwrap();
    assert!(!page.rendered && !page.shell && page.html == html);
    assert!(auto.render(&site.url("/csr/ferry"), shell(&title, &ps)).unwrap().html.contains("<article>"));
    // Off: nothing rendered, no browser needed.
    let off = fetcher(RenderMode::Off).render(&site.url("/csr/ferry"), shell(&title, &ps)).unwrap();
    assert!(!off.rendered && off.shell);

    // A page that navigates away: a typed render error; the fetcher goes on.
    let away = shell(&title, &ps).replace("<script src=", "<script>location.href = '/elsewhere';</script><script src=");
    let e = on.render(&site.url("/csr/away"), away).unwrap_err();
    assert_eq!(e.kind, FetchErrorKind::Render, "{e}");
    assert!(e.message.contains("/elsewhere"), "{e}");
    assert!(on.render(&site.url("/csr/ferry"), shell(&title, &ps)).unwrap().rendered);
    let e = on.render("ftp://127.0.0.1/x", shell(&title, &ps)).unwrap_err();
    assert_eq!(e.kind, FetchErrorKind::Scheme);
}

/// The crawler facade renders before it fingerprints (`Crawler::with_render`):
/// the shells of two near copies are told apart from a third story only
/// when rendered; a page that cannot be rendered fails alone.
#[test]
fn the_crawler_renders_pages_before_checking_them() {
    use webdup::crawler::{CrawledPage, Crawler};
    use webdup::fetch::FetchConfig;
    use webdup::render::{RenderConfig, RenderMode};
    need_chromium!();
    let site = site(|_| None);
    let dir = tempfile::tempdir().unwrap();
    let config = webdup::Config::default().validate().unwrap();
    let index = Arc::new(webdup::store::Index::open(dir.path().join("i.db"), &config).unwrap());
    let render = RenderConfig { mode: RenderMode::Auto, ..RenderConfig::default() };
    let crawler = Crawler::new(index, &config, "test")
        .with_render(FetchConfig { delay: Duration::ZERO, render, ..FetchConfig::default() })
        .unwrap();
    assert!(crawler.renders());
    let page = |name: &str| {
        let (t, ps) = articles()[name].clone();
        CrawledPage::html(site.url(&format!("/csr/{name}")), shell(&t, &ps))
    };
    let first = crawler.check_and_insert(&page("mill")).unwrap();
    assert!(!first.result.seen());
    let copy = crawler.check_and_insert(&page("mill-copy")).unwrap();
    assert_eq!(copy.result.best().map(|m| m.url.as_str()), Some(site.url("/csr/mill").as_str()));
    assert!(!crawler.check(&page("castle")).unwrap().seen(), "another story is new");
    let orchard = page("orchard");
    let rendered = crawler.render(&orchard).unwrap();
    assert!(rendered.rendered && rendered.html.as_deref().unwrap().contains("<article>"));
    let (t, ps) = articles()["choir"].clone();
    let away = CrawledPage::html(
        site.url("/csr/away"),
        shell(&t, &ps).replace("<script src=", "<script>location.href = '/elsewhere';</script><script src="),
    );
    let e = crawler.check_and_insert(&away).unwrap_err().to_string();
    assert!(e.contains("[render]") && e.contains("/elsewhere"), "{e}");
    assert!(!crawler.check_and_insert(&page("choir")).unwrap().result.seen());
}
