//! `webdup audit --index FILE --crawl NEW --since OLD` end to end: two
//! crawls of one local site folder kept in a real SQLite index by `webdup
//! index add`, between which one duplicate cluster grows, one appears, one
//! is fixed by a canonical tag, one disappears and one page moves to another
//! URL with the same content. The report's `since` is checked field by
//! field, in report.json, changes.csv and report.html, and two runs write
//! the same bytes.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).output().expect("run webdup")
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// About 120 words on `topic`, in words no other topic uses, so that pages
/// on different topics share no shingle.
fn text(topic: &str) -> String {
    (0..40).map(|i| format!("{topic}{} {topic}word{} {topic}item{} ", i, i * 7 % 40, i * 13 % 40)).collect()
}

fn page(title: &str, topic: &str, head: &str) -> String {
    format!(
        "<html><head><title>{title}</title>{head}</head><body><main><h1>{title}</h1><p>{}</p></main></body></html>",
        text(topic)
    )
}

/// Writes `files` (name, html) into `dir`, after removing every file there.
fn write_site(dir: &Path, files: &[(&str, String)]) {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    for (name, html) in files {
        std::fs::write(dir.join(name), html).unwrap();
    }
}

struct Site {
    dir: tempfile::TempDir,
    /// The site's folder: the same path in both crawls, so a page keeps its URL.
    root: std::path::PathBuf,
    db: std::path::PathBuf,
}

impl Site {
    /// The URL the index keeps for page `name`.
    fn url(&self, name: &str) -> String {
        path_str(&self.root.join(name)).to_string()
    }
}

/// Crawl `old`, then crawl `new` of the changed folder, into one index.
fn two_crawls() -> Site {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    std::fs::create_dir(&root).unwrap();
    let db = dir.path().join("site.db");
    let add = |crawl: &str| {
        let o = webdup(&["index", "add", "--crawl", crawl, "--index", path_str(&db), path_str(&root), "-q"]);
        assert_eq!(o.status.code(), Some(0), "index add {crawl}: {}", String::from_utf8_lossy(&o.stderr));
    };
    write_site(
        &root,
        &[
            ("grow-1.html", page("Ferry", "ferry", "")),
            ("grow-2.html", page("Ferry", "ferry", "")),
            ("fix-1.html", page("Kettle", "kettle", "")),
            ("fix-2.html", page("Kettle", "kettle", "")),
            ("gone-1.html", page("Lantern", "lantern", "")),
            ("gone-2.html", page("Lantern", "lantern", "")),
            ("moved-old.html", page("Orchard", "orchard", "")),
            ("solo.html", page("Quarry", "quarry", "")),
        ],
    );
    add("old");
    let canonical = format!(r#"<link rel="canonical" href="{}">"#, path_str(&root.join("fix-1.html")));
    write_site(
        &root,
        &[
            ("grow-1.html", page("Ferry", "ferry", "")),
            ("grow-2.html", page("Ferry", "ferry", "")),
            ("grow-3.html", page("Ferry", "ferry", "")),
            ("fix-1.html", page("Kettle", "kettle", "")),
            ("fix-2.html", page("Kettle", "kettle", &canonical)),
            ("new-1.html", page("Meadow", "meadow", "")),
            ("new-2.html", page("Meadow", "meadow", "")),
            ("moved-new.html", page("Orchard", "orchard", "")),
            ("solo.html", page("Quarry", "quarry", "")),
        ],
    );
    add("new");
    Site { dir, root, db }
}

fn audit_since(site: &Site, out: &str) -> Value {
    let out = site.dir.path().join(out);
    let db = path_str(&site.db);
    let o = webdup(&["audit", "--index", db, "--crawl", "new", "--since", "old", "--out", path_str(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(
            "since crawl old: 1 clusters new, 1 grown, 0 regressed, 1 fixed, 1 gone, 0 otherwise changed; 1 pages moved"
        ),
        "{stderr}"
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

#[test]
fn changes_since_an_older_crawl_in_json_csv_and_html() {
    let site = two_crawls();
    let json = audit_since(&site, "report");
    let since = &json["since"];
    assert_eq!((since["old_crawl"].as_str(), since["new_crawl"].as_str()), (Some("old"), Some("new")));
    assert_eq!(
        since["summary"],
        json!({"new": 1, "split": 0, "regressed": 0, "grown": 1, "changed": 0, "shrunk": 0, "merged": 0,
               "fixed": 1, "gone": 1, "unchanged": 0, "moved": 1})
    );

    // The new crawl's clusters by their representative's file, to name them.
    let id_of = |file: &str| -> Value {
        let c = json["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["members"].as_array().unwrap().iter().any(|m| m["url"] == site.url(file).as_str()))
            .unwrap_or_else(|| panic!("no cluster holds {file}"));
        c["id"].clone()
    };
    let urls = |files: &[&str]| -> Value { files.iter().map(|f| site.url(f)).collect() };
    let changes = since["clusters"].as_array().unwrap();
    assert_eq!(changes.len(), 4, "{changes:#?}");
    let change = |kind: &str| changes.iter().find(|c| c["change"] == kind).unwrap_or_else(|| panic!("no {kind}"));

    let new = change("new");
    assert_eq!((&new["old_cluster"], &new["new_cluster"]), (&Value::Null, &id_of("new-1.html")));
    assert_eq!((&new["old_size"], &new["new_size"], &new["new_status"]), (&json!(0), &json!(2), &json!("problem")));
    assert_eq!((&new["added"], &new["removed"]), (&urls(&["new-1.html", "new-2.html"]), &json!([])));

    let grown = change("grown");
    assert_eq!(grown["new_cluster"], id_of("grow-1.html"));
    assert!(grown["old_cluster"].is_u64());
    assert_eq!((&grown["old_size"], &grown["new_size"]), (&json!(2), &json!(3)));
    assert_eq!((&grown["old_status"], &grown["new_status"]), (&json!("problem"), &json!("problem")));
    assert_eq!((&grown["added"], &grown["removed"]), (&urls(&["grow-3.html"]), &json!([])));

    let fixed = change("fixed");
    assert_eq!(fixed["new_cluster"], id_of("fix-1.html"));
    assert_eq!((&fixed["old_size"], &fixed["new_size"]), (&json!(2), &json!(2)));
    assert_eq!((&fixed["old_status"], &fixed["new_status"]), (&json!("problem"), &json!("handled")));
    assert_eq!((&fixed["added"], &fixed["removed"]), (&json!([]), &json!([])));
    let handled = json["clusters"].as_array().unwrap().iter().find(|c| c["id"] == fixed["new_cluster"]).unwrap();
    assert_eq!(handled["handled_by"], "canonical", "the canonical tag fixed it");

    let gone = change("gone");
    assert_eq!((&gone["new_cluster"], &gone["old_size"], &gone["new_size"]), (&Value::Null, &json!(2), &json!(0)));
    assert_eq!((&gone["old_status"], &gone["new_status"]), (&json!("problem"), &Value::Null));
    assert_eq!((&gone["added"], &gone["removed"]), (&json!([]), &urls(&["gone-1.html", "gone-2.html"])));
    assert_eq!(gone["representative"], site.url("gone-1.html"));
    let listed: Vec<&str> = changes.iter().map(|c| c["change"].as_str().unwrap()).collect();
    assert_eq!(listed, ["new", "grown", "fixed", "gone"], "listed in change order");

    let moved = since["moved"].as_array().unwrap();
    assert_eq!(moved.len(), 1, "{moved:#?}");
    let m = &moved[0];
    assert_eq!(
        (&m["old_url"], &m["new_url"]),
        (&json!(site.url("moved-old.html")), &json!(site.url("moved-new.html")))
    );
    assert_eq!((&m["redirected"], &m["reason"], &m["confidence"]), (&json!(false), &json!("absent"), &json!("high")));
    assert_eq!((&m["jaccard"], &m["containment"]), (&json!(1.0), &json!(1.0)));
    assert_eq!((&m["old_cluster"], &m["new_cluster"]), (&Value::Null, &Value::Null));

    // changes.csv: a row per cluster change, then the moved page.
    let out = site.dir.path().join("report");
    let csv = std::fs::read_to_string(out.join("changes.csv")).unwrap();
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    let cell = |r: &Vec<String>, i: usize| r[i].clone();
    let summary: Vec<(String, String, String, String, String)> =
        rows.iter().map(|r| (cell(r, 0), cell(r, 3), cell(r, 4), cell(r, 5), cell(r, 6))).collect();
    let s = |v: &str| v.to_string();
    assert_eq!(
        summary,
        [
            (s("new"), s("0"), s("2"), s(""), s("problem")),
            (s("grown"), s("2"), s("3"), s("problem"), s("problem")),
            (s("fixed"), s("2"), s("2"), s("problem"), s("handled")),
            (s("gone"), s("2"), s("0"), s("problem"), s("")),
            (s("moved"), s(""), s(""), s(""), s("")),
        ]
    );
    assert_eq!(rows[1][12], site.url("grow-3.html"), "grown: the page added");
    assert_eq!(rows[3][13], format!("{} {}", site.url("gone-1.html"), site.url("gone-2.html")));
    assert_eq!((rows[4][7].clone(), rows[4][8].clone()), (site.url("moved-old.html"), site.url("moved-new.html")));
    assert_eq!((rows[4][9].as_str(), rows[4][10].as_str(), rows[4][11].as_str()), ("false", "1.0000", "high"));

    // report.html: the section, its rows and the moved page.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let doc = scraper::Html::parse_document(&html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let section = doc.select(&sel("section#since")).next().expect("the changes section");
    let heading: String = section.select(&sel("h2")).next().unwrap().text().collect();
    assert_eq!(heading, "Changes since crawl old 4");
    let intro: String = section.select(&sel("p.intro")).next().unwrap().text().collect();
    assert!(
        intro.starts_with("Crawl new against crawl old: 1 new · 1 grown · 1 fixed · 1 gone · 1 pages moved."),
        "{intro}"
    );
    let kinds: Vec<String> =
        section.select(&sel("#since-table tbody tr td:first-child")).map(|td| td.text().collect()).collect();
    assert_eq!(kinds, ["new", "grown", "fixed", "gone"]);
    let moved_cells: Vec<String> =
        section.select(&sel("#moved-table tbody td")).map(|td| td.text().collect()).collect();
    assert_eq!(moved_cells[..3], [site.url("moved-old.html"), site.url("moved-new.html"), s("no (absent)")]);

    // The same command writes the same bytes.
    let again = site.dir.path().join("again");
    let o = webdup(&["audit", "--index", path_str(&site.db), "--since", "old", "--out", path_str(&again), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["report.json", "pages.csv", "clusters.csv", "changes.csv", "report.html"] {
        assert!(std::fs::read(out.join(name)).unwrap() == std::fs::read(again.join(name)).unwrap(), "{name} differs");
    }
}

#[test]
fn without_since_there_is_no_since_field_nor_changes_csv() {
    let site = two_crawls();
    let out = site.dir.path().join("plain");
    let o = webdup(&["audit", "--index", path_str(&site.db), "--out", path_str(&out), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let json: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert!(json.get("since").is_none());
    assert!(!out.join("changes.csv").exists());
    assert!(!std::fs::read_to_string(out.join("report.html")).unwrap().contains(r#"id="since""#));
}

#[test]
fn since_names_a_crawl_of_the_index_other_than_the_one_audited() {
    let site = two_crawls();
    let out = site.dir.path().join("out");
    let db = path_str(&site.db);
    let fails = |args: &[&str], needles: &[&str]| {
        let o = webdup(&[args, &["--out", path_str(&out), "-q"][..]].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{args:?}: {n:?} not in {stderr}");
        }
    };
    fails(&["audit", "--index", db, "--since", "2019"], &[db, "no crawl named \"2019\"", "its crawls: new, old"]);
    // The newest crawl is audited by default: it cannot be its own past.
    fails(&["audit", "--index", db, "--since", "new"], &["--since new names the crawl being audited", db]);
    fails(
        &["audit", "--index", db, "--crawl", "old", "--since", "old"],
        &["--since old names the crawl being audited"],
    );
    fails(&["audit", path_str(&site.root), "--since", "old"], &["--since", "--index"]);
    assert!(!out.exists(), "no report for a failed run");
}
