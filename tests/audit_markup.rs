//! Issue 37: the audit's same-text pair shows what differs in the markup.
//! Two pages of one text that are not one page (a tracking parameter in a
//! link, another canonical, an inline script) get a line diff of their
//! markup in `report.json`; an identical copy gets none. Local files are read
//! again when the report is made; fetched pages (from a server on
//! 127.0.0.1) come back from the run's spill file; a page that cannot be had
//! again gets a note, never an error.

mod support;

use std::path::Path;
use std::process::Command;

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use serde_json::Value;

const ARTICLE: &str = "<h1>Winter ferry timetable</h1>\
    <p>The harbour office posts the winter ferry timetable on the board by the ticket window every Monday morning, \
    and crossings take forty minutes when the sea is calm and the wind stays in the west.</p>\
    <p>Bicycles travel free on the early boats, and the last ferry back leaves the island at half past six, \
    so walkers who miss it spend the night at the inn beside the old lighthouse.</p>";

/// A page of [`ARTICLE`] whose links carry `query`, with a canonical to
/// `canonical` and, when given, an inline script.
fn page(query: &str, canonical: &str, script: Option<&str>) -> String {
    let script = script.map(|s| format!("<script>{s}</script>")).unwrap_or_default();
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Ferry timetable</title>\n\
         <link rel=\"canonical\" href=\"{canonical}\">{script}</head>\n<body>\n\
         <nav><a href=\"/\">Home</a> <a href=\"/timetable{query}\">Timetable</a> <a href=\"/fares{query}\">Fares</a></nav>\n\
         <main><article>{ARTICLE}</article></main>\n<footer>Harbour office</footer></body></html>\n"
    )
}

/// A page of other text, so the folder is more than one text.
fn other() -> String {
    "<html><head><title>Fares</title></head><body><main><p>Fares for the island ferry are set each spring by the \
     council, with a reduced price for residents, children under twelve and anyone travelling with a bicycle.</p>\
     </main></body></html>"
        .into()
}

fn audit(inputs: &[&str], out: &Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .arg("audit")
        .args(inputs)
        .args(["--delay", "0", "--quiet", "--out"])
        .arg(out)
        .output()
        .expect("run webdup");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// The page whose URL ends with `name`.
fn page_no(j: &Value, name: &str) -> u64 {
    j["pages"].as_array().unwrap().iter().find(|p| p["url"].as_str().unwrap().ends_with(name)).unwrap()["page"]
        .as_u64()
        .unwrap()
}

/// The cluster member that is page `p`.
fn member(j: &Value, p: u64) -> &Value {
    j["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["members"].as_array().unwrap())
        .find(|m| m["page"] == p)
        .unwrap_or_else(|| panic!("page {p} is in no cluster: {j:#}"))
}

/// The changed lines of a member's markup diff, as `-line` / `+line` with
/// the representative's lines (`-`) first.
fn changed(m: &Value) -> Vec<String> {
    let d = &m["markup"];
    assert!(d["unavailable"].is_null(), "{d:#}");
    d["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap())
        .map(|l| l.as_str().unwrap().to_string())
        .filter(|l| !l.starts_with(' '))
        .collect()
}

#[test]
fn a_same_text_pair_of_local_files_shows_its_markup_diff_and_an_identical_copy_none() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let plain = page("", "https://harbour.test/ferry", None);
    std::fs::write(site.join("ferry.html"), &plain).unwrap();
    std::fs::write(site.join("ferry-copy.html"), &plain).unwrap();
    std::fs::write(
        site.join("ferry-mail.html"),
        page("?utm_source=newsletter", "https://harbour.test/ferry?utm_source=newsletter", Some("track('mail');")),
    )
    .unwrap();
    std::fs::write(site.join("fares.html"), other()).unwrap();
    let j = audit(&[site.to_str().unwrap()], &dir.path().join("out"));

    let (ferry, copy, mail) =
        (page_no(&j, "/ferry.html"), page_no(&j, "/ferry-copy.html"), page_no(&j, "/ferry-mail.html"));
    let (m_copy, m_mail) = (member(&j, copy), member(&j, mail));
    let rep = |m: &Value| m["markup"]["against"].as_u64();
    // Whichever of the two plain copies represents the cluster, the other is
    // identical to it: no markup diff. The newsletter page is same text.
    let (rep_page, identical) =
        if member(&j, ferry)["representative"] == true { (ferry, m_copy) } else { (copy, member(&j, ferry)) };
    assert_eq!(identical["identical"], true, "{j:#}");
    assert!(identical.get("markup").is_none(), "an identical copy has no markup diff: {identical:#}");
    assert_eq!((m_mail["same_text"].as_bool(), m_mail["identical"].as_bool()), (Some(true), Some(false)));
    assert_eq!(rep(m_mail), Some(rep_page));
    assert_eq!(
        changed(m_mail),
        [
            "-<link rel=\"canonical\" href=\"https://harbour.test/ferry\">",
            "+<link rel=\"canonical\" href=\"https://harbour.test/ferry?utm_source=newsletter\">",
            "+<script>",
            "+track('mail');",
            "+</script>",
            "-<a href=\"/timetable\">",
            "+<a href=\"/timetable?utm_source=newsletter\">",
            "-<a href=\"/fares\">",
            "+<a href=\"/fares?utm_source=newsletter\">",
        ]
    );
    let d = &m_mail["markup"];
    assert_eq!((d["removed"].as_u64(), d["added"].as_u64(), d["truncated"].as_bool()), (Some(3), Some(6), Some(false)));
    // Each hunk's first line is where it says in the representative's markup.
    let first = &d["hunks"][0];
    assert_eq!(first["a"], 6, "two lines of context before the canonical, line 8: {first:#}");
}

#[test]
fn a_same_text_pair_fetched_from_loopback_shows_its_markup_diff() {
    let (plain, mail) = (page("", "/ferry", None), page("?utm_source=newsletter", "/ferry", None));
    let app = Router::new()
        .route("/ferry", get(move || async move { Html(plain) }))
        .route("/ferry-mail", get(move || async move { Html(mail) }))
        .route("/fares", get(|| async { Html(other()) }));
    let port = support::serve_on_loopback(app);
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> =
        ["ferry", "ferry-mail", "fares"].iter().map(|p| format!("http://127.0.0.1:{port}/{p}")).collect();
    let inputs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let j = audit(&inputs, &dir.path().join("out"));

    let (ferry, mail) = (page_no(&j, "/ferry"), page_no(&j, "/ferry-mail"));
    // The canonical names the plain page: it is kept and represents the cluster.
    assert_eq!(member(&j, ferry)["representative"], true, "{j:#}");
    let m = member(&j, mail);
    assert_eq!(m["same_text"], true);
    assert_eq!(m["markup"]["against"], ferry);
    assert_eq!(
        changed(m),
        [
            "-<a href=\"/timetable\">",
            "+<a href=\"/timetable?utm_source=newsletter\">",
            "-<a href=\"/fares\">",
            "+<a href=\"/fares?utm_source=newsletter\">",
        ]
    );
}

#[test]
fn a_file_changed_after_it_was_read_gets_a_note_not_a_diff_nor_an_error() {
    use webdup::audit::{self, AuditConfig};
    use webdup::engine::{Config, Quiet};
    use webdup::run::{Run, RunConfig};
    use webdup::template::Templates;

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.html"), page("", "/ferry", None)).unwrap();
    std::fs::write(dir.path().join("b.html"), page("?ref=home", "/ferry", None)).unwrap();
    let config = Config { keep_pages: true, keep_markup: true, ..Config::tool() }.validate().unwrap();
    let inputs = [dir.path().display().to_string()];
    let loaded =
        Run::new(RunConfig::default()).load_all(&inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet);
    // Both files change, one goes away, between the run and its report.
    std::fs::remove_file(dir.path().join("a.html")).unwrap();
    std::fs::write(dir.path().join("b.html"), page("?ref=elsewhere", "/ferry", None)).unwrap();
    let audited = audit::run(loaded.unwrap(), &config, &AuditConfig::default()).unwrap();

    let cluster = &audited.audit.clusters[0];
    let member = cluster.members.iter().find(|m| !m.representative).unwrap();
    let note = member.markup.as_ref().and_then(|d| d.unavailable.as_deref()).unwrap_or_default().to_string();
    assert!(note.starts_with("markup not available: "), "{:?}", member.markup);
    assert!(note.contains("could not be read again") || note.contains("changed since it was read"), "{note}");
}
