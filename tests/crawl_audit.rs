//! `webdup audit --follow` as an SEO user runs it, against a site the test
//! serves on 127.0.0.1 with every duplicate variant a loopback site can
//! have planted beside one article: sort, tracking, session and pagination
//! parameters, a trailing slash, letter case, `/print` and `/amp` copies, an
//! old path that answers 301, a copy whose canonical names the clean URL;
//! thin pages, a calendar trap, robots.txt, a nofollow link, and a sitemap
//! given as a second input that lists an orphan page and leaves out a
//! linked one. The report is checked field by field, then the same audit
//! with one thread and one request at a time must write the same bytes.
//!
//! `http`/`https` and `www` twins cannot be served on loopback (one scheme,
//! no host names): `crates/seo/src/causes.rs`'s unit tests name them.

use std::path::Path;
use std::process::{Command, Output};

#[path = "support/site.rs"]
mod site;

use serde_json::Value;
use site::{ARTICLE, OTHER, Reply, Site};

const ORPHAN: &str = "The rowing club meets on the slipway at dawn on tuesdays and thursdays from april to \
    october. New members borrow a boat for their first month, learn to launch and land it in the surf, \
    and row with a coach along the quay until they can cross the harbour mouth on their own.";

/// The article's variants, each a URL the site answers with the article.
const VARIANTS: [&str; 8] =
    ["/a?sort=date", "/a?sessionid=abc123", "/a?page=1", "/a/", "/A", "/print/a", "/amp/a", "/old-a"];

fn html(title: &str, head: &str, body: &str) -> Reply {
    Reply::html(format!(
        "<html><head><title>{title}</title>{head}</head><body><nav><a href=\"/\">Home</a> <a href=\"/b\">Lighthouse</a></nav>\
         <main>{body}</main><footer>Harbour news</footer></body></html>"
    ))
}

fn page(path: &str) -> Reply {
    let article = |head: &str| html("Ferry timetable", head, &format!("<h1>Ferry timetable</h1><p>{ARTICLE}</p>"));
    match path {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private/\n"),
        "/sitemap.xml" => {
            let locs: String = ["/", "/a", "/thin1", "/thin2", "/orphan"]
                .iter()
                .map(|p| format!("<url><loc>http://127.0.0.1:PORT{p}</loc></url>"))
                .collect();
            Reply::xml(format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>"#
            ))
        }
        "/" => {
            let variants: String = VARIANTS.iter().map(|v| format!("<a href=\"{v}\">ferry</a> ")).collect();
            html(
                "Harbour news",
                "",
                &format!(
                    "<p>Welcome to the harbour news, with the ferry timetable and the lighthouse.</p>\
                     <a href=\"/a\">ferry</a> <a href=\"/a?utm_source=news\">ferry (mail)</a> {variants}\
                     <a href=\"/thin1\">contact</a> <a href=\"/thin2\">hours</a> <a href=\"/cal?month=0\">events</a> \
                     <a href=\"/private/x\">private</a> <a rel=\"nofollow\" href=\"/n\">n</a>"
                ),
            )
        }
        "/old-a" => Reply::redirect(301, "/a"),
        "/amp/a" => article(r#"<link rel="canonical" href="/a">"#),
        "/a" | "/a?sort=date" | "/a?sessionid=abc123" | "/a?page=1" | "/a/" | "/A" | "/print/a" => article(""),
        "/b" => html(
            "Lighthouse",
            "",
            &format!(
                "<h1>Lighthouse</h1><p>{OTHER}</p><a href=\"/a\">ferry</a> <a href=\"/a?sort=date\">ferry by date</a>"
            ),
        ),
        "/thin1" => html("Contact", "", "<h1>Contact</h1><p>Call the harbour office on weekdays.</p>"),
        "/thin2" => html("Hours", "", "<h1>Hours</h1><p>The ticket window opens at half past six.</p>"),
        "/orphan" => html("Rowing club", "", &format!("<h1>Rowing club</h1><p>{ORPHAN}</p>")),
        p if p.starts_with("/cal?month=") => {
            let m: u64 = p["/cal?month=".len()..].parse().unwrap_or(0);
            html(
                "Events",
                "",
                &format!(
                    "<h1>Events in month {m}</h1><p>There are no events planned for this month yet. Check back \
                     later or subscribe to the calendar feed to hear about new concerts, talks and markets in \
                     the harbour hall and the library garden. The hall seats two hundred people and the garden \
                     stays open until dusk from may to september, with chairs set out on the lawn by the \
                     volunteers who look after the roses and the old pear trees along the wall.</p>\
                     <a href=\"/cal?month={}\">next month</a>",
                    m + 1
                ),
            )
        }
        _ => Reply::not_found(),
    }
}

/// The site, its sitemap naming the port it was given.
fn start() -> Site {
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let p = port.clone();
    let site = Site::start(move |path| {
        let mut r = page(path);
        if path == "/sitemap.xml" {
            r.body = r.body.replace("PORT", &p.get().copied().unwrap_or_default().to_string());
        }
        r
    });
    port.set(site.port).unwrap();
    site
}

fn audit(site: &Site, out: &Path, extra: &[&str]) -> Output {
    let (start, sitemap) = (site.url("/"), site.url("/sitemap.xml"));
    let mut args = vec!["audit", "--follow", &start, &sitemap, "--own-site", "--thin-words", "30", "-q"];
    args.extend(extra);
    let o = Command::new(env!("CARGO_BIN_EXE_webdup")).args(&args).arg("--out").arg(out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

struct Report<'a> {
    site: &'a Site,
    json: Value,
}

impl Report<'_> {
    fn page(&self, path: &str) -> &Value {
        let url = self.site.url(path);
        self.json["pages"].as_array().unwrap().iter().find(|p| p["url"] == url.as_str()).unwrap_or_else(|| {
            panic!("{url} is no page of the report: {:#}", self.json["pages"]);
        })
    }

    fn cluster_of(&self, path: &str) -> Option<&Value> {
        let id = self.page(path)["cluster"].as_u64()?;
        self.json["clusters"].as_array().unwrap().iter().find(|c| c["id"] == id)
    }

    fn urls(&self, paths: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = paths.iter().map(|p| self.site.url(p)).collect();
        v.sort();
        v
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn audit_follow_names_each_duplicate_its_cause_and_the_url_to_keep() {
    let site = start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    audit(&site, &out, &[]);
    let r =
        Report { site: &site, json: serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap() };
    let j = &r.json;
    assert_eq!(j["schema_version"], 3);

    // Every variant is grouped with its article; the old path is a redirect.
    let article = r.cluster_of("/a").expect("the article is in a cluster");
    let mut members: Vec<String> =
        article["members"].as_array().unwrap().iter().map(|m| m["url"].as_str().unwrap().to_string()).collect();
    members.sort();
    let variants: Vec<&str> = VARIANTS.iter().copied().filter(|v| *v != "/old-a").chain(["/a"]).collect();
    assert_eq!(members, r.urls(&variants), "the article and every variant served at its own URL");
    let old = r.page("/old-a");
    assert_eq!((old["indexability"].as_str(), old["status"].as_u64()), (Some("redirect"), Some(301)));
    assert!(old["cluster"].is_null());

    // The clean URL is kept, with its reason, and is the representative.
    assert_eq!(article["keep"]["url"], site.url("/a"));
    assert_eq!(article["keep"]["reason"], "declared canonical of 1 member; 2 internal links");
    assert_eq!(article["representative"], r.page("/a")["page"]);
    for m in article["members"].as_array().unwrap() {
        let kept = m["url"] == site.url("/a").as_str();
        assert_eq!(m["representative"].as_bool(), Some(kept), "{m}");
        assert_eq!(m["similarity"], 1.0, "every variant is the same text: {m}");
    }
    assert_eq!(r.page("/a")["inlinks"], 2, "the home page and the lighthouse link to it");

    // Its causes, named.
    assert_eq!(
        article["cause"],
        "parameter `page` (pagination); parameter `sessionid` (session); parameter `sort` (sort/filter); \
         trailing slash; letter case; path segment `amp` | `print`"
    );
    let kinds: Vec<&str> = article["causes"].as_array().unwrap().iter().map(|c| c["cause"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["parameter", "parameter", "parameter", "trailing_slash", "letter_case", "path_segment"]);

    // The calendar's months that were fetched are one cluster, by their parameter.
    let calendar = r.cluster_of("/cal?month=0").expect("the calendar's months are duplicates");
    assert_eq!(calendar["cause"], "parameter `month` (other)");
    assert_eq!(calendar["keep"]["url"], site.url("/cal?month=0"));

    // Thin pages stay apart, from each other and from the rest.
    for p in ["/thin1", "/thin2"] {
        assert!(r.page(p)["thin"].as_bool().unwrap() && r.page(p)["cluster"].is_null(), "{}", r.page(p));
    }
    assert!(r.page("/b")["cluster"].is_null() && r.page("/orphan")["cluster"].is_null());

    // The parameters that make duplicates, with their kind and advice.
    let params: Vec<(String, String, u64, u64)> = j["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert!(!p["advice"].as_str().unwrap().is_empty(), "{p}");
            (
                p["name"].as_str().unwrap().into(),
                p["kind"].as_str().unwrap().into(),
                p["duplicate_urls"].as_u64().unwrap(),
                p["clusters"].as_u64().unwrap(),
            )
        })
        .collect();
    let months = calendar["size"].as_u64().unwrap() - 1;
    let row = |n: &str, k: &str, urls: u64| (n.to_string(), k.to_string(), urls, 1);
    assert_eq!(
        params,
        [
            row("month", "other", months),
            row("page", "pagination", 1),
            row("sessionid", "session", 1),
            row("sort", "sort/filter", 1)
        ]
    );

    // The rollup: one line per way of differing.
    let rollup = j["cause_rollup"].as_array().unwrap();
    assert_eq!(rollup.len(), 2, "{rollup:#?}");
    assert!(rollup.iter().any(|l| l["cause"] == article["cause"] && l["clusters"] == 1 && l["pages"] == 8));

    // Links to fix: every internal link to a variant, with the URL to link instead.
    let fixes: Vec<(String, String, String)> = j["links_to_fix"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["to"] == site.url("/a").as_str())
        .map(|l| {
            (l["from"].as_str().unwrap().into(), l["link"].as_str().unwrap().into(), l["to"].as_str().unwrap().into())
        })
        .collect();
    let mut want: Vec<(String, String, String)> = VARIANTS
        .iter()
        .filter(|v| **v != "/old-a")
        .map(|v| (site.url("/"), site.url(v), site.url("/a")))
        .chain([(site.url("/b"), site.url("/a?sort=date"), site.url("/a"))])
        .collect();
    want.sort();
    assert_eq!(fixes, want);
    let csv = std::fs::read_to_string(out.join("links_to_fix.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + j["links_to_fix"].as_array().unwrap().len());
    assert!(std::fs::read_to_string(out.join("parameters.csv")).unwrap().starts_with("parameter,kind,"));

    // The crawl: the trap stopped, nofollow and robots.txt obeyed.
    let crawl = &j["crawl"];
    let traps = crawl["traps"].as_array().unwrap();
    assert_eq!(traps.len(), 1, "{crawl:#}");
    assert_eq!(traps[0]["pattern"], format!("127.0.0.1:{}/cal?month", site.port));
    assert!(traps[0]["skipped"].as_u64().unwrap() >= 1);
    assert_eq!(traps[0]["fetched"].as_u64(), Some(calendar["size"].as_u64().unwrap()));
    assert_eq!(
        (crawl["not_followed"]["robots"].as_u64(), crawl["not_followed"]["nofollow"].as_u64()),
        (Some(1), Some(1))
    );
    let served = site.served();
    assert!(!served.iter().any(|p| p.starts_with("/private/") || p == "/n"), "{served:?}");
    assert!(!served.iter().any(|p| p.contains("utm_source")), "{served:?}");

    // The tracking parameter never fetched: folded, and said so.
    let folded = j["folded"].as_array().unwrap();
    assert!(
        folded.iter().any(|f| f["link"] == site.url("/a?utm_source=news").as_str()
            && f["folded_into"] == site.url("/a").as_str()
            && f["cause"] == "parameter `utm_source` (tracking)"),
        "{folded:#?}"
    );

    // The sitemap: an orphan page nothing links to, linked pages it leaves
    // out (duplicates aside: they are reported as such).
    assert_eq!(strings(&j["orphan_pages"]), r.urls(&["/orphan"]));
    assert_eq!(strings(&j["unlisted_pages"]), r.urls(&["/b", "/cal?month=0"]));
    assert_eq!((r.page("/a")["in_sitemap"].as_bool(), r.page("/b")["in_sitemap"].as_bool()), (Some(true), Some(false)));
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_reports_are_byte_identical_whatever_the_threads_and_the_fetch_timing() {
    let site = start();
    let dir = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 3] = [&[], &["--threads", "1"], &["--concurrency", "1"]];
    let reports: Vec<Vec<(String, Vec<u8>)>> = runs
        .iter()
        .enumerate()
        .map(|(i, extra)| {
            let out = dir.path().join(format!("r{i}"));
            audit(&site, &out, extra);
            files(&out)
        })
        .collect();
    let names: Vec<&str> = reports[0].iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["clusters.csv", "links_to_fix.csv", "pages.csv", "parameters.csv", "report.html", "report.json"]
    );
    for (i, r) in reports.iter().enumerate().skip(1) {
        for ((name, a), (_, b)) in reports[0].iter().zip(r) {
            assert!(a == b, "{name} differs with {:?}", runs[i]);
        }
    }
}

#[test]
fn thread_counts_out_of_range_are_refused() {
    for n in ["0", "257"] {
        let o =
            Command::new(env!("CARGO_BIN_EXE_webdup")).args(["cluster", "--threads", n, "x.html"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--threads") && err.contains("1..=256"), "{err}");
    }
}

/// A parameter name is page data: decoded from a link, it reaches the
/// causes, the parameters table and the HTML, where it must stay text.
#[test]
fn a_hostile_parameter_name_is_text_in_every_report() {
    const NAME: &str = "=<img src=x onerror=alert(1)>";
    let site = Site::start(|path| match path {
        "/" => html(
            "Harbour news",
            "",
            "<p>Welcome to the harbour news, with the ferry timetable and the lighthouse.</p><a href=\"/a\">ferry</a> <a href=\"/a?%3D%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E=1\">x</a>",
        ),
        "/b" => html("Lighthouse", "", &format!("<h1>Lighthouse</h1><p>{OTHER}</p>")),
        p if p == "/a" || p.starts_with("/a?") => {
            html("Ferry timetable", "", &format!("<h1>Ferry timetable</h1><p>{ARTICLE}</p>"))
        }
        _ => Reply::not_found(),
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["audit", "--follow", &site.url("/"), "--own-site", "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert!(o.status.success(), "{}", json["errors"]);
    assert_eq!(json["parameters"][0]["name"], NAME, "{:#}", json["parameters"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("<img"), "markup from a URL reached the HTML");
    assert!(html.contains("\\u003cimg src=x onerror=alert(1)>"), "the name is in the report's data, escaped");
    let csv = std::fs::read_to_string(out.join("parameters.csv")).unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with("'=<img"), "{csv}");
}
