//! Pages written to trick the reports: formulas in titles, canonicals that
//! are not web addresses, pages without a word. Each runs the real binary.

use std::path::Path;
use std::process::{Command, Output};

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().expect("run webdup")
}

fn story() -> String {
    "<p>The lighthouse keeper wrote down the weather every morning at six for forty years, \
     and the logbooks now fill a whole shelf of the harbour museum.</p>"
        .repeat(15)
}

fn write_page(dir: &Path, name: &str, title: &str, head: &str) {
    let page =
        format!("<html><head><title>{title}</title>{head}</head><body><article>{}</article></body></html>", story());
    std::fs::write(dir.join(name), page).unwrap();
}

/// A title starting with `=` would run as a formula when pages.csv is opened
/// in a spreadsheet; every CSV and TSV webdup writes quotes such cells.
#[test]
fn csv_cells_that_start_a_formula_are_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    write_page(&site, "a.html", "=HYPERLINK(&quot;http://evil.example&quot;,&quot;x&quot;)", "");
    write_page(&site, "b.html", "@SUM(A1:A9)", "");
    std::fs::write(site.join("-c.html"), "<html><body><p>a short page of its own words</p></body></html>").unwrap();
    let out = dir.path().join("out");
    let o = webdup(&["audit", site.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pages = csv::Reader::from_path(out.join("pages.csv")).unwrap();
    let title = pages.headers().unwrap().iter().position(|h| h == "title").unwrap();
    let titles: Vec<String> = pages.records().map(|r| r.unwrap()[title].to_string()).collect();
    assert!(titles.contains(&"'=HYPERLINK(\"http://evil.example\",\"x\")".to_string()), "{titles:?}");
    assert!(titles.contains(&"'@SUM(A1:A9)".to_string()), "{titles:?}");
    for cell in std::fs::read_to_string(out.join("pages.csv")).unwrap().split([',', '\n']) {
        assert!(!cell.starts_with(['=', '@', '+']), "unquoted formula cell {cell:?}");
    }

    // The cluster report's CSV: a document id starting with `-` is quoted, numbers are not.
    let c = site.join("-c.html");
    let o = webdup(&["cluster", site.to_str().unwrap(), c.to_str().unwrap(), "--format", "csv"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.lines().any(|l| l.starts_with('-')), "{text}");
}

/// `javascript:` and `data:` canonicals name no page: search engines ignore
/// them, so the audit treats the pages as having no canonical at all.
#[test]
fn javascript_and_data_canonicals_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    write_page(&site, "a.html", "Keeper", "<link rel=canonical href=\"javascript:alert(document.domain)\">");
    write_page(&site, "b.html", "Keeper", "<link rel=canonical href=\"data:text/html,hello\">");
    let out = dir.path().join("out");
    let o = webdup(&["audit", site.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    for p in j["pages"].as_array().unwrap() {
        assert!(p["canonical"].is_null(), "{p}");
    }
    let codes: Vec<&str> =
        j["clusters"][0]["issues"].as_array().unwrap().iter().map(|i| i["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["missing_canonical"], "{:#}", j["clusters"]);
}

/// `webdup extract` on a page without a single word says so and exits 1,
/// rather than printing nothing and exiting 0.
#[test]
fn extract_of_a_page_without_words_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("pictures.html");
    std::fs::write(&empty, "<html><body><img src=a.png><img src=b.png> ... </body></html>").unwrap();
    let o = webdup(&["extract", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("pictures.html") && err.contains("no words"), "{err}");
}
