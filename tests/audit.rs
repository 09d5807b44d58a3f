//! `webdup audit` end to end: the binary audits `fixtures/audit-site`, served
//! by a real HTTP server on 127.0.0.1 (statuses, `Link` canonicals and
//! `X-Robots-Tag` only exist over HTTP), through its generated sitemap.
//! Expectations stated in the fixture pages' `expect` comments are asserted
//! one by one; the JSON, both CSVs and the HTML's outline are snapshotted;
//! headless Chromium opens the HTML from disk. `webdup index add` then keeps
//! the same site in an index, and `webdup audit --index` must report what the
//! fresh audit reported, from the stored data alone.

mod audit_fixture;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use audit_fixture::{assert_blue_widget_diff, chromium, headless, path_str, read, report_data, run, webdup};

/// The page index of a fixture path.
fn page(path: &str) -> u64 {
    let r = run();
    let url = format!("http://127.0.0.1:{}/{path}", r.port);
    r.json["pages"].as_array().unwrap().iter().find(|p| p["url"] == url.as_str()).unwrap_or_else(|| panic!("{url}"))
        ["page"]
        .as_u64()
        .unwrap()
}

/// The cluster holding a fixture page.
fn cluster_of(path: &str) -> &'static Value {
    let p = page(path);
    run().json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["members"].as_array().unwrap().iter().any(|m| m["page"] == p))
        .unwrap_or_else(|| panic!("{path} is in no cluster"))
}

fn members(c: &Value) -> Vec<u64> {
    let mut m: Vec<u64> = c["members"].as_array().unwrap().iter().map(|m| m["page"].as_u64().unwrap()).collect();
    m.sort();
    m
}

fn codes(c: &Value) -> Vec<&str> {
    c["issues"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap()).collect()
}

fn pages_of(paths: &[&str]) -> Vec<u64> {
    let mut v: Vec<u64> = paths.iter().map(|p| page(p)).collect();
    v.sort();
    v
}

#[test]
fn audit_finds_what_the_fixture_pages_expect() {
    let j = &run().json;
    assert_eq!(j["schema_version"], 3);
    let s = &j["summary"];
    assert_eq!(s["pages"], 22, "20 pages and two 404s");
    assert_eq!(s["errors"], 2);
    assert_eq!(s["clusters"], 5);

    let widgets = cluster_of("widgets/blue-widget.html");
    assert_eq!(
        members(widgets),
        pages_of(&["widgets/blue-widget.html", "widgets/blue-widget-copy.html", "print/blue-widget.html"])
    );
    assert_eq!(widgets["status"], "problem");
    assert_eq!(codes(widgets), ["self_canonical", "missing_canonical"]);

    let garden = cluster_of("guides/garden-guide.html");
    assert_eq!(members(garden).len(), 3);
    assert_eq!(garden["status"], "handled", "{garden:#}");
    assert_eq!(garden["handled_by"], "canonical");
    let print = &j["pages"][page("guides/garden-guide-print.html") as usize];
    assert_eq!(print["canonical_source"], "http");
    assert_eq!(print["indexability"], "canonicalised");

    let festival = cluster_of("news/river-festival.html");
    assert_eq!(members(festival).len(), 3);
    assert_eq!((festival["status"].as_str(), festival["handled_by"].as_str()), (Some("handled"), Some("noindex")));
    assert_eq!(j["pages"][page("tag/river-festival.html") as usize]["noindex_source"], "x-robots-tag");
    assert_eq!(j["pages"][page("news/river-festival-archive.html") as usize]["noindex_source"], "meta");

    let kettle = cluster_of("shop/red-kettle.html");
    assert_eq!(members(kettle), pages_of(&["shop/red-kettle.html", "shop/red-kettle-sale.html"]));
    assert_eq!(codes(kettle), ["canonical_outside_cluster", "conflicting_canonicals"]);

    let market = cluster_of("events/winter-market.html");
    assert_eq!(market["kind"], "same-text", "two pages of one text, not one page");
    assert_eq!(codes(market), ["canonical_non_200"]);
    assert!(market["issues"][0]["message"].as_str().unwrap().contains("HTTP 404"), "{market:#}");

    let groups = |key: &str| -> Vec<Vec<u64>> {
        j[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["pages"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect())
            .collect()
    };
    assert_eq!(groups("duplicate_titles"), [pages_of(&["about.html", "team.html"])]);
    assert_eq!(
        groups("duplicate_descriptions"),
        [
            pages_of(&["about.html", "team.html"]),
            pages_of(&["widgets/blue-widget-copy.html", "widgets/blue-widget.html"])
        ]
    );
    assert_eq!(
        groups("duplicate_h1s"),
        [
            pages_of(&["print/blue-widget.html", "widgets/blue-widget-copy.html", "widgets/blue-widget.html"]),
            pages_of(&["faq.html", "help.html"])
        ]
    );
    let mut thin: Vec<u64> = j["thin_pages"].as_array().unwrap().iter().map(|p| p.as_u64().unwrap()).collect();
    thin.sort();
    assert_eq!(thin, pages_of(&["careers.html", "contact.html"]));

    // The SEO columns: exact copies are each other's closest match at 100%.
    let w = &j["pages"][page("widgets/blue-widget.html") as usize];
    assert_eq!(w["closest_similarity"], 1.0);
    assert_eq!(w["closest_page"], page("widgets/blue-widget-copy.html"));
    assert_eq!(w["near_duplicates"], 2);
    let unique = &j["pages"][page("shop/kettles.html") as usize];
    assert_eq!((unique["near_duplicates"].as_u64(), unique["closest_page"].as_u64()), (Some(0), None));

    let errors = j["errors"].as_array().unwrap();
    assert!(errors.iter().all(|e| e["status"] == 404), "{errors:?}");
}

#[test]
fn audit_json_and_csv_snapshots() {
    insta::assert_snapshot!("audit_report_json", read("report.json"));
    insta::assert_snapshot!("audit_pages_csv", read("pages.csv"));
    insta::assert_snapshot!("audit_clusters_csv", read("clusters.csv"));
}

/// The HTML's structure: headings, section ids, table headers, summary
/// cards, charts (bars and their counts), and the rows of data the script
/// renders; never the whole file.
fn html_outline(html: &str) -> String {
    let doc = scraper::Html::parse_document(html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let text = |e: scraper::ElementRef| e.text().collect::<String>().split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    for e in doc.select(&sel("head > title, h1, h2, section, th, .card, svg.chart, table")) {
        let v = e.value();
        match v.name() {
            "section" => out.push_str(&format!("section #{}\n", v.attr("id").unwrap_or("?"))),
            "table" => out.push_str(&format!("  table #{}\n", v.attr("id").unwrap_or("?"))),
            "th" => out.push_str(&format!("    th {}\n", text(e))),
            "svg" => {
                let counts: Vec<String> = e.select(&sel("text.count")).map(text).collect();
                let bars = e.select(&sel("rect.bar")).count();
                out.push_str(&format!(
                    "  svg #{} bars={bars} counts=[{}]\n",
                    v.attr("id").unwrap_or("?"),
                    counts.join(",")
                ));
            }
            _ if v.classes().any(|c| c == "card") => out.push_str(&format!("  card {}\n", text(e))),
            name => out.push_str(&format!("{name} {}\n", text(e))),
        }
    }
    let data: Value = serde_json::from_str(&doc.select(&sel("#audit-data")).next().unwrap().inner_html()).unwrap();
    for key in ["pages", "clusters", "titles", "descriptions", "h1s", "thin", "errors", "bases", "texts"] {
        out.push_str(&format!("data {key}: {}\n", data[key].as_array().unwrap().len()));
    }
    out
}

#[test]
fn audit_html_is_self_contained_and_keeps_its_outline() {
    let html = read("report.html");
    // Self-contained: no external scripts, styles, images or fonts.
    for needle in ["<script src", "<link", "<img", "@import", "url(http", "<iframe"] {
        assert!(!html.contains(needle), "report.html has {needle}");
    }
    assert_eq!(html.matches("<script").count(), 2, "the data and the inline script");
    // The settings line under the title, each value in its place.
    let meta = format!(
        "webdup {} · similarity threshold 80% (exact Jaccard of 5-word shingles) · thin below 150 words · extractor ",
        env!("CARGO_PKG_VERSION")
    );
    assert!(html.contains(&meta), "{}", &html[html.find("<header>").unwrap_or(0)..][..400]);
    insta::assert_snapshot!("audit_html_outline", html_outline(&html));
}

// ---- A real browser ----

#[test]
fn audit_report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        if std::env::var("WEBDUP_SKIP_BROWSER").is_ok_and(|v| v == "1") {
            return;
        }
        panic!(
            "chromium not found: install it (apt-get install -y chromium; .ci/run does) \
             or set WEBDUP_SKIP_BROWSER=1 to skip this test explicitly"
        );
    };
    let report = run().dir.path().join("report").join("report.html");
    let (a, b) = (page("widgets/blue-widget.html"), page("print/blue-widget.html"));
    let url = format!("file://{}#diff={a},{b}", report.display());
    let dom = headless(&browser, &url, &["--dump-dom"]);

    let doc = scraper::Html::parse_document(&dom);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let errors = doc.select(&sel("#js-errors")).next().unwrap();
    assert_eq!(errors.text().collect::<String>(), "", "the page's script reported errors");
    assert!(dom.contains(r#"data-ready="1""#), "the script did not finish");
    let clusters = doc.select(&sel("#clusters-table tbody tr.cluster")).count();
    assert_eq!(clusters as u64, run().json["summary"]["clusters"].as_u64().unwrap());
    assert!(doc.select(&sel("#pages-table tbody tr")).count() >= 20);
    // The diff view opened from the URL hash: both URLs, and the edits marked.
    assert_blue_widget_diff(&doc);

    // A same-text pair: the texts match word for word, so the view shows the
    // record fields that differ (title, canonical) and the markup's lines.
    let copy = page("widgets/blue-widget-copy.html");
    let same_url = format!("file://{}#diff={a},{copy}", report.display());
    let doc = scraper::Html::parse_document(&headless(&browser, &same_url, &["--dump-dom"]));
    assert_eq!(doc.select(&sel("#js-errors")).next().unwrap().text().collect::<String>(), "");
    assert!(doc.select(&sel("#diff-same-text")).next().is_some(), "the same-text view");
    assert_eq!(doc.select(&sel("#diff-fields tr")).count(), 2, "title and canonical differ");
    let markup = doc.select(&sel("#diff-markup")).next().expect("the markup diff shows");
    let ins: String = markup.select(&sel("ins")).flat_map(|e| e.text()).collect();
    let del: String = markup.select(&sel("del")).flat_map(|e| e.text()).collect();
    assert!(ins.contains(r#"+ <link rel="canonical" href="/widgets/blue-widget-copy.html">"#), "{ins}");
    assert!(del.contains(r#"- <link rel="canonical" href="/widgets/blue-widget.html">"#), "{del}");
    assert!(markup.text().collect::<String>().contains("3 lines only on the left"), "the diff's counts");

    // `#cluster=N` opens that cluster's members: one row per member, a
    // "compare" link for each but the representative, and the any-two picker
    // listing every member in both of its menus.
    let cluster = run().json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["members"].as_array().unwrap().iter().any(|m| m["page"] == a))
        .expect("the blue widget is in a cluster")
        .clone();
    let members: Vec<u64> =
        cluster["members"].as_array().unwrap().iter().map(|m| m["page"].as_u64().unwrap()).collect();
    let rep = cluster["representative"].as_u64().unwrap();
    let cluster_url = format!("file://{}#cluster={}", report.display(), cluster["id"]);
    let dom = headless(&browser, &cluster_url, &["--dump-dom"]);
    let doc = scraper::Html::parse_document(&dom);
    assert_eq!(doc.select(&sel("#js-errors")).next().unwrap().text().collect::<String>(), "");
    let open: Vec<_> = doc.select(&sel("#clusters-table tr.members")).collect();
    assert_eq!(open.len(), 1, "exactly the linked cluster is open");
    assert_eq!(open[0].select(&sel(".member-table tbody tr")).count(), members.len());
    let compare: Vec<String> =
        open[0].select(&sel(".member-table a")).filter_map(|a| a.value().attr("href").map(str::to_string)).collect();
    let expected: Vec<String> = members.iter().filter(|&&m| m != rep).map(|m| format!("#diff={rep},{m}")).collect();
    assert_eq!(compare, expected);
    let menus: Vec<Vec<u64>> = open[0]
        .select(&sel(".pairpick select"))
        .map(|s| s.select(&sel("option")).map(|o| o.value().attr("value").unwrap().parse().unwrap()).collect())
        .collect();
    assert_eq!(menus, [members.clone(), members.clone()]);

    // Screenshots for people to look at, kept under target/.
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/audit-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let top = format!("file://{}", report.display());
    for (name, url) in [("report-top.png", top), ("report-diff.png", url), ("report-cluster.png", cluster_url)] {
        let file = shots.join(name);
        let _ = std::fs::remove_file(&file);
        // Tall enough that the opened cluster shows without scrolling: headless
        // Chromium's screenshots of a scrolled page come out blank above the fold.
        let size = if name == "report-cluster.png" { "--window-size=1400,2000" } else { "--window-size=1400,1000" };
        headless(&browser, &url, &[&format!("--screenshot={}", file.display()), size]);
        let png = std::fs::read(&file).expect("screenshot written");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name} looks empty");
    }
}

#[test]
fn broken_inputs_are_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let body = "<p>The lighthouse keeper wrote down the weather every morning at six for forty years.</p>".repeat(20);
    std::fs::write(site.join("a.html"), format!("<html><head><title>Keeper</title></head><body>{body}</body></html>"))
        .unwrap();
    std::fs::write(site.join("b.html"), format!("<html><head><title>Keeper</title></head><body>{body}</body></html>"))
        .unwrap();
    std::fs::write(site.join("empty.html"), "").unwrap();
    std::fs::write(site.join("binary.html"), b"\x00\x01\x02<html>").unwrap();
    std::fs::write(site.join("deep.html"), "<div>".repeat(100_000)).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["audit", site.to_str().unwrap(), dir.path().join("missing.html").to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(j["summary"]["errors"], 4, "{:#}", j["errors"]);
    assert_eq!(j["summary"]["identical_groups"], 1);
    for f in ["report.html", "pages.csv", "clusters.csv"] {
        assert!(out.join(f).metadata().unwrap().len() > 0, "{f}");
    }

    // An output directory that cannot be created is fatal (exit 2).
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["audit", site.to_str().unwrap(), "--quiet", "--out"])
        .arg(blocker.join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write the report"));
}

// ---- The same audit from an index ----

struct IndexRun {
    dir: tempfile::TempDir,
    db: PathBuf,
    json: Value,
}

/// Indexes the fixture site as `run` fetched it (same server, same sitemap),
/// after an older crawl of two of its pages, and audits the index once per
/// test process.
fn index_run() -> &'static IndexRun {
    static RUN: OnceLock<IndexRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let port = run().port;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("site.db");
        let fetch = ["--delay", "0", "--per-host", "4", "--quiet"];
        let list = dir.path().join("old.txt");
        std::fs::write(&list, format!("http://127.0.0.1:{port}/about.html\nhttp://127.0.0.1:{port}/team.html\n"))
            .unwrap();
        let o = webdup(
            &[&["index", "add", "--crawl", "old", "--index", path_str(&db), path_str(&list)], &fetch[..]].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let sitemap = format!("http://127.0.0.1:{port}/sitemap.xml");
        let o = webdup(&[&["index", "add", "--crawl", "new", "--index", path_str(&db), &sitemap], &fetch[..]].concat());
        assert_eq!(o.status.code(), Some(1), "two pages are 404: {}", String::from_utf8_lossy(&o.stderr));

        let out = dir.path().join("report");
        let o = webdup(&["audit", "--index", path_str(&db), "--out", path_str(&out), "--thin-words", "150", "--quiet"]);
        assert_eq!(o.status.code(), Some(1), "two pages are 404: {}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "the index's settings are the defaults: {}", String::from_utf8_lossy(&o.stderr));
        let json = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        IndexRun { dir, db, json }
    })
}

/// A page's words as the report's script rebuilds them for the diff view.
fn diff_words(data: &Value, page: u64) -> Option<Vec<String>> {
    let t = data["texts"].as_array().unwrap().iter().find(|t| t[0] == page)?;
    let base: Vec<&str> = data["bases"][t[1].as_u64().unwrap() as usize].as_str().unwrap().split(' ').collect();
    let mut out = Vec::new();
    for op in t[2].as_array().unwrap() {
        match op {
            Value::String(w) => out.extend(w.split(' ').map(String::from)),
            _ => {
                let (start, len) = (op[0].as_u64().unwrap() as usize, op[1].as_u64().unwrap() as usize);
                out.extend(base[start..start + len].iter().map(|w| w.to_string()));
            }
        }
    }
    Some(out)
}

#[test]
fn audit_of_the_index_reports_what_the_fresh_audit_reported() {
    let (fresh, stored) = (&run().json, &index_run().json);
    let source = &stored["source"];
    assert_eq!((source["kind"].as_str(), source["crawl"].as_str()), (Some("index"), Some("new")), "the newest crawl");
    assert_eq!(source["index"], path_str(&index_run().db));
    assert_eq!(source["pages_without_text"], 0);
    assert!(fresh.get("source").is_none(), "a fresh run has no source");
    // Everything else is the same model: pages in the same order with the
    // same metadata (canonical and noindex sources included), the same
    // clusters, similarities and canonical verdicts, duplicate values, thin
    // pages and errors.
    // An index keeps no page's markup: the same-text members' markup diffs
    // are the fresh audit's alone, and the index's say why they are missing.
    let (fresh_clusters, fresh_markup) = without_markup(&fresh["clusters"]);
    let (stored_clusters, stored_markup) = without_markup(&stored["clusters"]);
    assert_eq!(stored_clusters, fresh_clusters, "clusters differ");
    assert_eq!(stored_markup.len(), fresh_markup.len());
    assert!(fresh_markup.iter().all(|d| d["hunks"].as_array().is_some_and(|h| !h.is_empty())), "{fresh_markup:?}");
    for d in &stored_markup {
        assert_eq!(d["unavailable"], "markup not available: an index keeps no page's markup");
    }
    for key in [
        "schema_version",
        "settings",
        "summary",
        "duplicate_titles",
        "duplicate_descriptions",
        "duplicate_h1s",
        "thin_pages",
        "errors",
    ] {
        assert_eq!(stored[key], fresh[key], "{key} differs");
    }
    let pages = |j: &'static Value| j["pages"].as_array().unwrap();
    assert_eq!(pages(stored).len(), pages(fresh).len());
    for (s, f) in pages(stored).iter().zip(pages(fresh)) {
        assert_eq!(s, f, "page {} differs", f["url"]);
    }
    assert_eq!(stored["summary"]["clusters"], 5, "the fixture's clusters");

    // The diff view: the same texts, rebuilt from the same edit scripts.
    let fresh_data = report_data(&run().dir.path().join("report"));
    let stored_data = report_data(&index_run().dir.path().join("report"));
    let (a, b) = (page("widgets/blue-widget.html"), page("print/blue-widget.html"));
    let (wa, wb) = (diff_words(&stored_data, a).unwrap(), diff_words(&stored_data, b).unwrap());
    assert_eq!(Some(&wa), diff_words(&fresh_data, a).as_ref());
    assert_eq!(Some(&wb), diff_words(&fresh_data, b).as_ref());
    let text = |w: &[String]| w.join(" ");
    assert!(text(&wa).contains("four hundred grams") && text(&wb).contains("three hundred and ninety grams"));
    for key in ["pages", "bases", "texts", "missing"] {
        assert_eq!(stored_data[key], fresh_data[key], "report.html data {key} differs");
    }
    // A cluster row's members are `[page, similarity, containment, kind, markup]`.
    let members_without_markup = |data: &Value| -> Vec<Value> {
        let rows = data["clusters"].as_array().unwrap().iter();
        rows.flat_map(|c| c[8].as_array().unwrap().iter().map(|m| Value::from(m.as_array().unwrap()[..4].to_vec())))
            .collect()
    };
    assert_eq!(members_without_markup(&stored_data), members_without_markup(&fresh_data));
}

/// Clusters with their members' `markup` taken out, and the markups taken.
fn without_markup(clusters: &Value) -> (Value, Vec<Value>) {
    let mut clusters = clusters.clone();
    let mut taken = Vec::new();
    for c in clusters.as_array_mut().unwrap() {
        for m in c["members"].as_array_mut().unwrap() {
            taken.extend(m.as_object_mut().unwrap().remove("markup"));
        }
    }
    (clusters, taken)
}

#[test]
fn audit_of_an_index_picks_a_crawl_by_name() {
    let r = index_run();
    let out = r.dir.path().join("old-report");
    let o = webdup(&["audit", "--index", path_str(&r.db), "--crawl", "old", "--out", path_str(&out), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(j["source"]["crawl"], "old");
    let urls: Vec<&str> = j["pages"].as_array().unwrap().iter().map(|p| p["url"].as_str().unwrap()).collect();
    let port = run().port;
    assert_eq!(urls, [format!("http://127.0.0.1:{port}/about.html"), format!("http://127.0.0.1:{port}/team.html")]);
    assert_eq!(j["duplicate_titles"][0]["pages"], serde_json::json!([0, 1]));
}

#[test]
fn pages_stored_without_text_are_audited_and_only_their_diff_says_so() {
    let r = index_run();
    // Rows as schema version 2 left them: no text, no canonical or noindex
    // source, and the shingle set kept whole (since schema 11 a row with
    // its text keeps the set as the text's).
    let db = r.dir.path().join("no-text.db");
    std::fs::copy(&r.db, &db).unwrap();
    let port = run().port;
    let print = format!("http://127.0.0.1:{port}/guides/garden-guide-print.html");
    let shingles: Vec<u8> = webdup::store::Index::open_existing(&db)
        .unwrap()
        .crawl_pages("new")
        .unwrap()
        .into_iter()
        .find(|(p, _)| p.url == print)
        .map(|(_, set)| set.iter().flat_map(|h| h.to_le_bytes()).collect())
        .unwrap();
    let changed = rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE pages SET text = NULL, text_deflate = NULL, shingles = ?2, shingles_check = NULL,
                 canonical_source = NULL, noindex_source = NULL WHERE url = ?1",
            (&print, &shingles),
        )
        .unwrap();
    assert_eq!(changed, 1, "the print page is in the new crawl only");
    let out = r.dir.path().join("no-text-report");
    let o = webdup(&["audit", "--index", path_str(&db), "--out", path_str(&out), "--thin-words", "150", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(j["source"]["pages_without_text"], 1);
    let p = page("guides/garden-guide-print.html");
    let row = &j["pages"][p as usize];
    // Everywhere as before, but for where its canonical came from.
    assert_eq!(row["canonical_source"], Value::Null);
    assert_eq!(row["canonical"], index_run().json["pages"][p as usize]["canonical"]);
    assert_eq!(j["clusters"], index_run().json["clusters"], "the same clusters and verdicts");
    assert_eq!(j["thin_pages"], index_run().json["thin_pages"]);
    let data = report_data(&out);
    assert_eq!(data["missing"], serde_json::json!([p]));
    assert!(diff_words(&data, p).is_none());
    let g = page("guides/garden-guide.html");
    assert!(diff_words(&data, g).unwrap().join(" ").contains("vegetable garden"), "the others keep their text");

    let Some(browser) = chromium() else {
        if std::env::var("WEBDUP_SKIP_BROWSER").is_ok_and(|v| v == "1") {
            return;
        }
        panic!("chromium not found: install it, or set WEBDUP_SKIP_BROWSER=1 to skip this part explicitly");
    };
    let url = format!("file://{}#diff={g},{p}", out.join("report.html").display());
    let dom = headless(&browser, &url, &["--dump-dom"]);
    let doc = scraper::Html::parse_document(&dom);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let errors: String = doc.select(&sel("#js-errors")).next().unwrap().text().collect();
    assert_eq!(errors, "", "the page's script reported errors");
    let note: String = doc.select(&sel("#diff-not-stored")).next().expect("the diff explains").text().collect();
    assert!(note.contains("does not hold the text of") && note.contains("garden-guide-print.html"), "{note}");
    assert!(!note.contains("guides/garden-guide.html "), "only the page without text is named: {note}");
}

#[test]
fn audit_index_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let fails = |args: &[&str], needles: &[&str]| {
        let o = webdup(&[args, &["--out", path_str(&out), "-q"][..]].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{args:?}: {n:?} not in {stderr}");
        }
    };

    let missing = dir.path().join("missing.db");
    fails(&["audit", "--index", path_str(&missing)], &[path_str(&missing), "no such file"]);
    assert!(!missing.exists(), "auditing a missing index created it");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database\n").unwrap();
    fails(&["audit", "--index", path_str(&text)], &[path_str(&text), "not a webdup index"]);

    let foreign = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    fails(&["audit", "--index", path_str(&foreign)], &[path_str(&foreign), "not a webdup index"]);

    let empty = dir.path().join("empty.db");
    drop(webdup::store::Index::open(&empty, &webdup::engine::Config::default().validate().unwrap()).unwrap());
    fails(&["audit", "--index", path_str(&empty)], &[path_str(&empty), "empty", "no crawl"]);

    let db = path_str(&index_run().db);
    fails(&["audit", "--index", db, "--crawl", "2019"], &[db, "no crawl named \"2019\"", "its crawls: new, old"]);

    // --crawl belongs to --index; INPUT and --index exclude each other.
    fails(&["audit", "fixtures/example", "--crawl", "new"], &["--crawl", "--index"]);
    fails(&["audit", "fixtures/example", "--index", db], &["cannot be used with"]);
    assert!(!out.exists(), "no report for a failed run");
}

/// A canonical naming a URL that redirects is `canonical_non_200` (HTTP 301)
/// in a fresh audit, and in an audit of the index too: the index keeps each
/// page's redirects.
#[test]
fn a_canonical_to_a_redirecting_url_is_judged_alike_fresh_and_from_the_index() {
    let story = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/extract/articles/article3.txt"))
        .unwrap()
        .lines()
        .map(|l| format!("<p>{l}</p>"))
        .collect::<String>();
    let page = move |title: &str| {
        format!(
            "<html><head><title>{title}</title><link rel=canonical href=/old-story.html></head>\
             <body><article><h1>{title}</h1>{story}</article></body></html>"
        )
    };
    let (story_page, copy_page) = (page("Story"), page("Story, print"));
    let app = axum::Router::new()
        .route("/story.html", axum::routing::get(move || async move { axum::response::Html(story_page) }))
        .route("/story-print.html", axum::routing::get(move || async move { axum::response::Html(copy_page) }))
        .route("/old-story.html", axum::routing::get(|| async { axum::response::Redirect::permanent("/story.html") }));
    let port = support::serve_on_loopback(app);
    let dir = tempfile::tempdir().unwrap();
    let urls = dir.path().join("urls.txt");
    let list: String = ["story.html", "story-print.html", "old-story.html"]
        .iter()
        .map(|p| format!("http://127.0.0.1:{port}/{p}\n"))
        .collect();
    std::fs::write(&urls, list).unwrap();
    let fetch = ["--delay", "0", "--quiet"];
    let issues = |report: &Path| -> Vec<(String, String)> {
        let j: Value = serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap()).unwrap();
        j["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["issues"].as_array().unwrap().clone())
            .map(|i| (i["code"].as_str().unwrap().to_string(), i["message"].as_str().unwrap().to_string()))
            .collect()
    };

    let fresh = dir.path().join("fresh");
    let o = webdup(&[&["audit", path_str(&urls), "--out", path_str(&fresh)][..], &fetch].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fresh_issues = issues(&fresh);
    assert_eq!(fresh_issues.len(), 1, "{fresh_issues:?}");
    assert_eq!(fresh_issues[0].0, "canonical_non_200");
    assert!(fresh_issues[0].1.ends_with("which answered HTTP 308"), "{fresh_issues:?}");

    let db = dir.path().join("site.db");
    let o =
        webdup(&[&["index", "add", "--index", path_str(&db), "--crawl", "c1", path_str(&urls)][..], &fetch].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stored = dir.path().join("stored");
    let o = webdup(&["audit", "--index", path_str(&db), "--out", path_str(&stored), "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(issues(&stored), fresh_issues);
}

/// A copy with a paragraph trimmed falls just under the threshold: no
/// cluster, but each page names the other as its closest match, and the
/// similarity chart starts at 50%.
#[test]
fn near_misses_below_the_threshold_show_as_closest_matches() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let paragraphs: Vec<String> = (0..10)
        .map(|i| {
            format!(
                "<p>Paragraph {i} of the harbour report: the ferry to island {i} left at {} past nine, carrying \
                 {} passengers, {} bicycles and the post for the lighthouse keeper on rock {}.</p>",
                i * 3 + 1,
                i * 17 + 5,
                i * 2 + 1,
                i * 7 + 2
            )
        })
        .collect();
    let page = |title: &str, body: &[String]| {
        format!("<html><head><title>{title}</title></head><body><article>{}</article></body></html>", body.concat())
    };
    std::fs::write(site.join("report.html"), page("Harbour report", &paragraphs)).unwrap();
    std::fs::write(site.join("report-short.html"), page("Harbour report (short)", &paragraphs[..7])).unwrap();
    std::fs::write(
        site.join("other.html"),
        page("Allotments", &["<p>The allotment society meets on Tuesdays to share seeds and tools.</p>".to_string()]),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = webdup(&["audit", site.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(j["clusters"].as_array().unwrap().len(), 0, "{:#}", j["clusters"]);
    let page_of = |name: &str| {
        j["pages"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with(name)).unwrap().clone()
    };
    let short = page_of("report-short.html");
    let similarity = short["closest_similarity"].as_f64().unwrap();
    assert!((0.5..0.8).contains(&similarity), "{short:#}");
    assert!(short["closest_url"].as_str().unwrap().ends_with("/report.html"), "{short:#}");
    assert_eq!(short["near_duplicates"], 0);
    assert!(page_of("other.html")["closest_url"].is_null());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("50–55%"), "the similarity chart starts at 50%");

    // From an index: at its own threshold the same; at a lower one given on
    // the command line, re-clustered from the stored sets.
    let db = dir.path().join("site.db");
    let o = webdup(&["index", "add", "--index", path_str(&db), "--crawl", "one", site.to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let clusters = |extra: &[&str]| {
        let out = dir.path().join(format!("from-index{}", extra.len()));
        let mut args = vec!["audit", "--index", path_str(&db), "--quiet", "--out", path_str(&out)];
        args.extend(extra);
        let o = webdup(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let j: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        (j["clusters"].as_array().unwrap().len(), j["settings"]["threshold"].as_f64().unwrap())
    };
    assert_eq!(clusters(&[]), (0, 0.8));
    assert_eq!(clusters(&["-t", "0.6"]), (1, 0.6));
}

// ---- The paged report of a large audit ----
