//! Containment as a measure users search on (issue 13): an excerpt, and an
//! article with readers' letters appended, found by `--measure containment`
//! in `cluster`, `neighbors`, `audit`, `cluster --index` and `index query`,
//! and by none of them under the Jaccard default. Real article texts (AEB
//! ground truth from `../shared/data`), real HTML pages, a real SQLite index.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

fn webdup(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).current_dir(dir).output().expect("run webdup");
    assert!(o.status.success(), "webdup {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn page(site: &str, title: &str, paragraphs: &[&str]) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{}</p>\n", escape(p))).collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><nav><a href=/>{site} home</a> \
         <a href=/news>News</a></nav><main><article><h1>{title}</h1>{body}</article></main>\
         <footer>Copyright {site}, all rights reserved.</footer></body></html>"
    )
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Two long articles' paragraphs, in data-set order.
fn articles() -> (Vec<String>, Vec<String>) {
    let (samples, _) = webdup_eval::corpus::load_samples(&data(), Some(40)).expect("the shared data sets");
    let mut long = samples.into_iter().map(|(_, s)| s.truth).filter_map(|t| {
        let paragraphs: Vec<String> =
            t.lines().map(str::trim).filter(|p| p.split_whitespace().count() >= 12).map(str::to_string).collect();
        let words: usize = paragraphs.iter().map(|p| p.split_whitespace().count()).sum();
        (paragraphs.len() >= 8 && words >= 600).then_some(paragraphs)
    });
    (long.next().expect("a long article"), long.next().expect("a second long article"))
}

#[test]
fn containment_finds_excerpts_and_extended_copies_where_jaccard_does_not() {
    let (story, other) = articles();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for site in ["news", "blog", "misc"] {
        std::fs::create_dir(root.join(site)).unwrap();
    }
    let story_refs = refs(&story);
    // The article, and the same article with readers' letters below it
    // (half its length again): one site.
    std::fs::write(root.join("news/story.html"), page("news", "The story", &story_refs)).unwrap();
    let words: usize = story.iter().map(|p| p.split_whitespace().count()).sum();
    let letters: Vec<String> = (0..words / 2 / 25)
        .map(|i| {
            format!(
                "Letter {i}: reader number {i} writes that the council should publish the minutes of meeting \
                 {i} before the vote on item {} and asks why nobody replied to letter {}.",
                i * 7 + 3,
                i * 11 + 5
            )
        })
        .collect();
    let mut with_letters = story_refs.clone();
    with_letters.extend(letters.iter().map(String::as_str));
    std::fs::write(root.join("news/story-letters.html"), page("news", "The story", &with_letters)).unwrap();
    // An excerpt on another site: a third of the paragraphs.
    let excerpt = &story_refs[story_refs.len() / 3..story_refs.len() * 2 / 3];
    std::fs::write(root.join("blog/excerpt.html"), page("blog", "Worth reading", excerpt)).unwrap();
    std::fs::write(root.join("misc/other.html"), page("misc", "Another story", &refs(&other))).unwrap();

    let inputs = ["news", "blog", "misc"];
    let cluster = |extra: &[&str]| {
        let mut args = vec!["cluster", "-f", "json", "--quiet"];
        args.extend(inputs);
        args.extend(extra);
        let v = json(&webdup(root, &args));
        let mut ids: Vec<Vec<String>> = v["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let mut m: Vec<String> =
                    c["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
                m.sort();
                m
            })
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(cluster(&[]), Vec::<Vec<String>>::new(), "Jaccard finds neither");
    assert_eq!(
        cluster(&["--measure", "containment"]),
        vec![vec!["blog/excerpt.html", "news/story-letters.html", "news/story.html"]]
    );

    // neighbors: the excerpt's closest page holds all of it.
    let v = json(&webdup(
        root,
        &["neighbors", "news", "blog", "misc", "--measure", "containment", "-f", "json", "--quiet"],
    ));
    assert_eq!(v["measure"], "containment");
    let excerpt_row = v["documents"].as_array().unwrap().iter().find(|d| d["id"] == "blog/excerpt.html").unwrap();
    let first = &excerpt_row["neighbors"][0];
    assert!(first["containment"].as_f64().unwrap() >= 0.95, "{excerpt_row:#}");
    assert!(first["jaccard"].as_f64().unwrap() < 0.5, "{excerpt_row:#}");

    // audit: the same cluster in the report.
    let out = root.join("audit");
    let mut args = vec!["audit", "--measure", "containment", "--quiet", "--out", "audit"];
    args.extend(inputs);
    webdup(root, &args);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let sizes: Vec<u64> = report["clusters"].as_array().unwrap().iter().map(|c| c["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [3], "{:#}", report["clusters"]);

    // An index of the article and the other story; the excerpt and the
    // extended copy are found in it by containment only.
    webdup(root, &["index", "add", "--index", "pages.db", "--crawl", "first", "news/story.html", "misc/other.html"]);
    let query = |target: &str, extra: &[&str]| {
        let mut args = vec!["index", "query", target, "--index", "pages.db"];
        args.extend(extra);
        json(&webdup(root, &args))
    };
    for target in ["blog/excerpt.html", "news/story-letters.html"] {
        assert_eq!(query(target, &[])["near"], Value::Array(vec![]), "{target} by Jaccard");
        let v = query(target, &["--measure", "containment"]);
        let near = v["near"].as_array().unwrap();
        assert_eq!(near.len(), 1, "{target}: {v:#}");
        assert_eq!(near[0]["url"], "news/story.html");
        let score = near[0]["containment"].as_f64().unwrap().max(near[0]["contained"].as_f64().unwrap());
        assert!(score >= 0.95, "{target}: {v:#}");
    }
    let v = json(&webdup(
        root,
        &["cluster", "--index", "pages.db", "--measure", "containment", "-f", "json", "--quiet", "blog/excerpt.html"],
    ));
    assert_eq!(v["indexed"][0]["near"][0]["url"], "news/story.html", "{v:#}");
}

/// A section of reference text about function `f`: words of its own only.
fn section(f: usize) -> String {
    (0..60).map(|i| format!("fn{f}word{i}")).collect::<Vec<_>>().join(" ")
}

/// A documentation site where each module page documents two neighbouring
/// functions, each with a page of its own: F0 ⊂ M0 ⊃ F1 ⊂ M1 ⊃ F2 …, one
/// chain of pairs from the first function to the last (issue 37).
#[test]
fn containment_clusters_do_not_chain_pages_that_share_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    for f in 0..6 {
        std::fs::write(root.join(format!("docs/f{f}.html")), page("docs", &format!("fn{f}"), &[&section(f)])).unwrap();
    }
    for m in 0..5 {
        let (a, b) = (section(m), section(m + 1));
        std::fs::write(root.join(format!("docs/m{m}.html")), page("docs", &format!("module {m}"), &[&a, &b])).unwrap();
    }
    let v = json(&webdup(root, &["cluster", "docs", "--measure", "containment", "-f", "json", "--quiet"]));
    let clusters = v["clusters"].as_array().unwrap();
    let shapes: Vec<(String, Vec<String>)> = clusters
        .iter()
        .map(|c| {
            for m in c["members"].as_array().unwrap() {
                assert!(m["containment"].as_f64().unwrap() >= 0.8, "{m} in {}: {c:#}", c["representative"]);
            }
            assert_eq!(c["kind"], "contained", "{c:#}");
            let ids = c["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string());
            (c["representative"].as_str().unwrap().to_string(), ids.collect())
        })
        .collect();
    // M0 holds F0 and F1, M2 the next two, M4 the last two; M1 and M3
    // hold nothing left and share only half of themselves with the rest.
    let expect = |m: usize| {
        (
            format!("docs/m{m}.html"),
            vec![format!("docs/f{m}.html"), format!("docs/f{}.html", m + 1), format!("docs/m{m}.html")],
        )
    };
    assert_eq!(shapes, [expect(0), expect(2), expect(4)]);
    let table = webdup(root, &["cluster", "docs", "--measure", "containment", "-f", "table", "--quiet"]);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("docs/f1.html  (contained in representative 0.98)"), "{table}");
}
