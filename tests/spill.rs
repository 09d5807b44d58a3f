//! Runs larger than their memory (issue 38): past `--memory`, pages'
//! shingle sets and main texts wait in a temporary file and are read back
//! for template learning, the candidate pairs and the audit's diffs. The
//! reports must be byte for byte those of a run that holds them, on a
//! corpus made from the real pages in `../shared/data` (many sites, their
//! templates, near duplicates of every kind).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use webdup::engine::{BASE_BYTES, Config, Corpus, PAGE_BYTES_HELD, Quiet};
use webdup::source::{DocKey, Format, RawDocument};
use webdup_eval::corpus::{CorpusConfig, generate};

const PAGES: usize = 240;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
}

/// The corpus in `dir/pages/sNNNN/`, one folder per site.
fn corpus(dir: &Path) {
    let config = CorpusConfig {
        pages: PAGES,
        pages_per_template: 4.0,
        seed: 3,
        sources_per_dataset: Some(40),
        ..Default::default()
    };
    generate(&data(), &config).unwrap().write(dir).unwrap();
}

/// A budget these pages pass only with their sets on disk.
fn spilling_budget() -> u64 {
    BASE_BYTES + PAGES as u64 * (8 << 10)
}

fn webdup(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "webdup {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn reports_are_the_same_bytes_with_the_sets_on_disk() {
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path());
    let budget = spilling_budget().to_string();
    let dir = tmp.path();

    let held = webdup(dir, &["cluster", "pages", "-f", "json", "--quiet"]).stdout;
    let spilled = webdup(dir, &["cluster", "pages", "-f", "json", "--quiet", "--memory", &budget]).stdout;
    let report: serde_json::Value = serde_json::from_slice(&held).unwrap();
    assert!(report["clusters"].as_array().unwrap().len() >= 10, "a corpus with clusters to compare");
    assert!(held == spilled, "cluster's report differs with the sets on disk");

    let held = webdup(dir, &["neighbors", "pages", "-f", "json", "--quiet", "--top", "3"]).stdout;
    let spilled =
        webdup(dir, &["neighbors", "pages", "-f", "json", "--quiet", "--top", "3", "--memory", &budget]).stdout;
    assert!(held == spilled, "neighbors' report differs with the sets on disk");

    // Containment bands each pair of size classes on its own: every pass
    // reads the signatures back.
    let args = ["cluster", "pages", "-f", "json", "--quiet", "--measure", "containment"];
    let held = webdup(dir, &args).stdout;
    let spilled = webdup(dir, &[&args[..], &["--memory", &budget]].concat()).stdout;
    let report: serde_json::Value = serde_json::from_slice(&held).unwrap();
    assert!(report["clusters"].as_array().unwrap().len() >= 10, "containment finds the clusters too");
    assert!(held == spilled, "cluster --measure containment differs with the sets on disk");

    // An index built by a run that spilled holds the same pages, sets and
    // signatures: every page found again in it, the same way.
    webdup(dir, &["index", "add", "pages", "--index", "held.db", "--crawl", "c1", "--quiet"]);
    webdup(dir, &["index", "add", "pages", "--index", "spilled.db", "--crawl", "c1", "--quiet", "--memory", &budget]);
    let held = webdup(dir, &["cluster", "pages", "--index", "held.db", "-f", "json", "--quiet"]).stdout;
    let spilled = webdup(dir, &["cluster", "pages", "--index", "spilled.db", "-f", "json", "--quiet"]).stdout;
    let report: serde_json::Value = serde_json::from_slice(&held).unwrap();
    assert!(report["indexed"].as_array().unwrap().len() >= 100, "every page is seen in the index");
    let strip = |v: &[u8]| String::from_utf8_lossy(v).replace("spilled.db", "held.db");
    assert!(strip(&held) == strip(&spilled), "an index made by a spilled run answers differently");

    webdup(dir, &["audit", "pages", "--out", "held", "--quiet"]);
    webdup(dir, &["audit", "pages", "--out", "spilled", "--quiet", "--memory", &budget]);
    let (held, spilled) = (files(&dir.join("held")), files(&dir.join("spilled")));
    assert!(held.iter().any(|(name, _)| name == "report.html"));
    let audit: serde_json::Value =
        serde_json::from_slice(&held.iter().find(|(n, _)| n == "report.json").unwrap().1).unwrap();
    assert!(audit["clusters"].as_array().unwrap().len() >= 10);
    for ((name, a), (other, b)) in held.iter().zip(&spilled) {
        assert_eq!(name, other);
        assert!(a == b, "the audit's {name} differs with the sets and texts on disk");
    }
    assert_eq!(held.len(), spilled.len());
}

#[test]
fn a_run_that_cannot_fit_stops_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.html"), "<p>one page</p>").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "a.html", "--memory", "64M"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("1 pages need about 161 MB") && stderr.contains("--memory"), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "a.html", "--memory", "lots"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"lots\" is not a size"));
}

/// The pages as documents, ids relative to `dir` (their folders are their sites).
fn documents(dir: &Path) -> Vec<RawDocument> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join("pages"))
        .unwrap()
        .flat_map(|site| std::fs::read_dir(site.unwrap().path()).unwrap().map(|p| p.unwrap().path()))
        .collect();
    paths.sort();
    paths
        .iter()
        .enumerate()
        .map(|(n, p)| RawDocument {
            id: p.strip_prefix(dir).unwrap().display().to_string(),
            key: DocKey::at(n),
            format: Format::Html,
            body: std::fs::read_to_string(p).unwrap(),
            url: None,
        })
        .collect()
}

#[test]
fn a_run_that_outgrows_its_budget_spills_the_pages_past_it() {
    let tmp = tempfile::tempdir().unwrap();
    corpus(tmp.path());
    let docs = documents(tmp.path());
    let held_config = Config::tool().validate().unwrap();
    let held = Corpus::build(docs.clone(), Ok, &held_config, &Quiet);
    assert!(held.spill.is_none());
    let expected = webdup::engine::find_duplicates(&held, &held_config).unwrap();

    // Named as ten pages (as an archive or a crawl would be), fitting; the
    // first 50 are held, the rest spill as they come.
    let budget = 4 * (BASE_BYTES + 50 * PAGE_BYTES_HELD);
    let config = Config { memory: Some(budget), ..held_config.clone() };
    let corpus = Corpus::build_streaming(docs.clone().into_iter(), 10, Ok, &config, &Quiet);
    let spilled = corpus.docs.iter().filter(|d| d.shingles.is_empty() && d.minhash.is_empty()).count();
    assert_eq!(spilled, PAGES - 50, "pages past the budget's share are spilled, the first ones held");
    assert!(corpus.spill.is_some());
    assert_eq!(webdup::engine::find_duplicates(&corpus, &config).unwrap(), expected);
    for (a, b) in corpus.docs.iter().zip(&held.docs) {
        assert_eq!(corpus.shingle_count(a), b.shingles.len(), "{}", a.id);
        assert_eq!(*corpus.held(a).unwrap(), *b, "{}", a.id);
    }

    // Named in full and too many to hold: every page spills.
    let config = Config { memory: Some(spilling_budget()), ..held_config };
    let corpus = Corpus::build(docs, Ok, &config, &Quiet);
    assert!(corpus.docs.iter().all(|d| d.shingles.is_empty() && d.minhash.is_empty()), "sets and signatures on disk");
    assert_eq!(webdup::engine::find_duplicates(&corpus, &config).unwrap(), expected);
}
