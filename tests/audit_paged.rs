//! The audit's paged report (issue 38): past `--report-paged-above` pages,
//! `report.html` holds the summary and first screens and loads its tables,
//! sort orders and cluster texts from `report-data/` chunks. The fixture
//! site (`audit_fixture`) is audited with two rows a chunk and driven in
//! headless Chromium from disk: sorting and filtering across chunks, a
//! cluster's diff and members; small reports stay one file.

mod audit_fixture;
mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use audit_fixture::{assert_blue_widget_diff, chromium, headless, path_str, read, report_data, run, webdup};

/// The fixture site audited again with the paged report forced, two rows a
/// chunk (the file holds the first screen; everything else loads from
/// report-data/), once per test process.
fn paged_run() -> &'static (PathBuf, Value) {
    static RUN: OnceLock<(PathBuf, Value)> = OnceLock::new();
    RUN.get_or_init(|| {
        let out = run().dir.path().join("paged");
        let sitemap = format!("http://127.0.0.1:{}/sitemap.xml", run().port);
        let o = webdup(&[
            "audit",
            &sitemap,
            "--out",
            path_str(&out),
            "--delay",
            "0",
            "--per-host",
            "4",
            "--thin-words",
            "150",
            "--quiet",
            "--report-paged-above",
            "0",
            "--report-chunk-rows",
            "2",
        ]);
        assert_eq!(o.status.code(), Some(1), "two pages are 404: {}", String::from_utf8_lossy(&o.stderr));
        let json = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        (out, json)
    })
}

fn browser_or_skip() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() && !std::env::var("WEBDUP_SKIP_BROWSER").is_ok_and(|v| v == "1") {
        panic!("chromium not found: install it, or set WEBDUP_SKIP_BROWSER=1 to skip this part explicitly");
    }
    found
}

fn js_errors(doc: &scraper::Html) -> String {
    let sel = scraper::Selector::parse("#js-errors").unwrap();
    doc.select(&sel).next().expect("the report's error box").text().collect()
}

#[test]
fn small_reports_stay_one_file() {
    let dir = run().dir.path().join("report");
    assert!(!dir.join("report-data").exists(), "a 21-page audit got a report-data folder");
    let data = report_data(&dir);
    assert_eq!(data["pages"].as_array().unwrap().len() as u64, run().json["summary"]["pages"].as_u64().unwrap());
    assert!(!read("report.html").contains("<script src"), "the single file loads nothing");

    // A paged report written first, then a small one into the same folder:
    // the stale chunks go.
    let out = run().dir.path().join("stale");
    let site = run().dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("a.html"), "<html><body><p>One page alone.</p></body></html>").unwrap();
    for extra in [&["--report-paged-above", "0", "--report-chunk-rows", "1"][..], &[]] {
        let o = webdup(&[&["audit", path_str(&site), "--quiet", "--out", path_str(&out)], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(out.join("report-data").exists(), !extra.is_empty());
    }
}

#[test]
fn paged_report_keeps_its_rows_in_chunks_and_shows_the_first_screen() {
    let (out, json) = paged_run();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let manifest = report_data(out);
    assert!(manifest.get("pages").is_none() && manifest.get("texts").is_none(), "rows are not in the file");
    let chunks = std::fs::read_dir(out.join("report-data")).unwrap().count();
    assert!(chunks > 20, "two rows a chunk: {chunks} chunk files");
    // The summary is in the file, as in the single one.
    assert!(html.contains(r#"<section id="summary">"#));

    let Some(browser) = browser_or_skip() else { return };
    let dom = headless(&browser, &format!("file://{}", out.join("report.html").display()), &["--dump-dom"]);
    let doc = scraper::Html::parse_document(&dom);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    assert_eq!(js_errors(&doc), "", "the page's script reported errors");
    assert!(dom.contains(r#"data-ready="1""#), "the script did not finish");
    let clusters = doc.select(&sel("#clusters-table tbody tr.cluster")).count();
    assert_eq!(clusters as u64, json["summary"]["clusters"].as_u64().unwrap());
    let pages = doc.select(&sel("#pages-table tbody tr")).count();
    assert_eq!(pages as u64, json["summary"]["pages"].as_u64().unwrap());
    // Worst first, as the single file orders them.
    let mut by_severity: Vec<(u64, u64)> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["severity"].as_u64().unwrap(), c["id"].as_u64().unwrap()))
        .collect();
    by_severity.sort();
    let shown: Vec<u64> = doc
        .select(&sel("#clusters-table tbody tr.cluster"))
        .map(|r| r.value().attr("data-cluster").unwrap().parse().unwrap())
        .collect();
    assert_eq!(shown, by_severity.iter().map(|c| c.1).collect::<Vec<_>>());
}

/// Opens the paged report in a frame (headless Chromium, file access
/// allowed between local files), clicks and types as a reader would, and
/// returns what each step showed.
fn drive_paged_report(browser: &Path, out: &Path) -> Value {
    let harness = out.join("harness.html");
    std::fs::write(
        &harness,
        r##"<!DOCTYPE html><html><body><iframe id="f" src="report.html" style="width:1400px;height:900px"></iframe><pre id="out"></pre>
<script>
var f = document.getElementById("f"), res = {};
function wait(cond, then) { var t = setInterval(function () { if (cond()) { clearInterval(t); then(); } }, 10); }
function after(d, id, act, then) {
  var sec = d.getElementById(id), n = +sec.getAttribute("data-drawn");
  act(sec);
  wait(function () { return +sec.getAttribute("data-drawn") > n; }, then);
}
function cells(d, id, col) {
  return Array.prototype.map.call(d.querySelectorAll("#" + id + "-table tbody tr"), function (tr) { return tr.cells[col].textContent; });
}
f.onload = function () {
  var d = f.contentDocument;
  wait(function () { return d.body.getAttribute("data-ready") === "1"; }, function () {
    var th = function (id, c) { return function (sec) { sec.querySelector('th[data-sort="' + c + '"]').click(); }; };
    after(d, "pages", th("pages", 0), function () {
      res.asc = cells(d, "pages", 0);
      after(d, "pages", th("pages", 0), function () {
        res.desc = cells(d, "pages", 0);
        after(d, "pages", function (sec) { var i = sec.querySelector(".filter"); i.value = "widget"; i.dispatchEvent(new Event("input")); }, function () {
          res.filtered = cells(d, "pages", 0);
          after(d, "clusters", th("clusters", 3), function () {
            res.bySize = cells(d, "clusters", 1);
            res.errors = d.getElementById("js-errors").textContent;
            document.getElementById("out").textContent = JSON.stringify(res);
          });
        });
      });
    });
  });
};
</script></body></html>"##,
    )
    .unwrap();
    let dom =
        headless(browser, &format!("file://{}", harness.display()), &["--allow-file-access-from-files", "--dump-dom"]);
    let doc = scraper::Html::parse_document(&dom);
    let text: String = doc.select(&scraper::Selector::parse("#out").unwrap()).next().unwrap().text().collect();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("the harness did not finish: {dom}"))
}

#[test]
fn paged_report_sorts_and_filters_across_chunks() {
    let Some(browser) = browser_or_skip() else { return };
    let (out, json) = paged_run();
    let got = drive_paged_report(&browser, out);
    assert_eq!(got["errors"], "", "the page's script reported errors");
    let strings =
        |v: &Value| -> Vec<String> { v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect() };
    let pages = json["pages"].as_array().unwrap();
    let mut urls: Vec<String> = pages.iter().map(|p| p["url"].as_str().unwrap().to_string()).collect();
    urls.sort();
    // Rows from eleven chunks, in the order of the precomputed sort.
    assert_eq!(strings(&got["asc"]), urls);
    urls.reverse();
    assert_eq!(strings(&got["desc"]), urls);
    let title = |u: &String| -> String {
        let p = pages.iter().find(|p| p["url"] == u.as_str()).unwrap();
        p["title"].as_str().unwrap_or("").to_lowercase()
    };
    let widgets: Vec<String> =
        urls.iter().filter(|u| u.to_lowercase().contains("widget") || title(u).contains("widget")).cloned().collect();
    assert!(widgets.len() >= 3, "{widgets:?}");
    assert_eq!(strings(&got["filtered"]), widgets, "the filter keeps the sort");
    // Clusters by number of pages, most first.
    let size = |id: &str| -> u64 {
        let id: u64 = id.trim_start_matches('#').parse().unwrap();
        json["clusters"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["size"].as_u64().unwrap()
    };
    let sizes: Vec<u64> = strings(&got["bySize"]).iter().map(|id| size(id)).collect();
    assert_eq!(sizes.len() as u64, json["summary"]["clusters"].as_u64().unwrap());
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    assert!(sizes[0] > *sizes.last().unwrap(), "clusters of different sizes: {sizes:?}");
}

#[test]
fn paged_report_opens_a_clusters_diff_and_members() {
    let Some(browser) = browser_or_skip() else { return };
    let (out, json) = paged_run();
    let page = |path: &str| -> u64 {
        let port = run().port;
        let url = format!("http://127.0.0.1:{port}/{path}");
        json["pages"].as_array().unwrap().iter().find(|p| p["url"] == url.as_str()).unwrap()["page"].as_u64().unwrap()
    };
    let report = out.join("report.html");
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    // The text diff: the two pages' rows and their cluster's texts load first.
    let (a, b) = (page("widgets/blue-widget.html"), page("print/blue-widget.html"));
    let doc = scraper::Html::parse_document(&headless(
        &browser,
        &format!("file://{}#diff={a},{b}", report.display()),
        &["--dump-dom"],
    ));
    assert_eq!(js_errors(&doc), "");
    assert_blue_widget_diff(&doc);

    // The markup diff of a same-text pair.
    let copy = page("widgets/blue-widget-copy.html");
    let doc = scraper::Html::parse_document(&headless(
        &browser,
        &format!("file://{}#diff={a},{copy}", report.display()),
        &["--dump-dom"],
    ));
    assert_eq!(js_errors(&doc), "");
    let markup = doc.select(&sel("#diff-markup")).next().expect("the markup diff shows");
    let ins: String = markup.select(&sel("ins")).flat_map(|e| e.text()).collect();
    assert!(ins.contains(r#"+ <link rel="canonical" href="/widgets/blue-widget-copy.html">"#), "{ins}");

    // `#cluster=N`: that cluster's chunk loads and its members show.
    let cluster = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["members"].as_array().unwrap().iter().any(|m| m["page"] == a))
        .unwrap();
    let doc = scraper::Html::parse_document(&headless(
        &browser,
        &format!("file://{}#cluster={}", report.display(), cluster["id"]),
        &["--dump-dom"],
    ));
    assert_eq!(js_errors(&doc), "");
    let open: Vec<_> = doc.select(&sel("#clusters-table tr.members")).collect();
    assert_eq!(open.len(), 1, "exactly the linked cluster is open");
    assert_eq!(open[0].select(&sel(".member-table tbody tr")).count(), cluster["members"].as_array().unwrap().len());
}
