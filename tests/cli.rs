//! The real binary, run in a temp dir or on the bundled fixtures.

use std::path::Path;
use std::process::{Command, Output};

fn webdup(args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run webdup")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", stdout(o)))
}

#[test]
fn example_site_clusters_the_republished_article() {
    let o = webdup(&["cluster", "fixtures/example", "--format", "json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    let clusters = v["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1);
    let ids: Vec<&str> = clusters[0]["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "fixtures/example/river-path-print.html",
            "fixtures/example/river-path-restored.html",
            "fixtures/example/river-path-updated.html",
            "fixtures/example/syndicated-river-path.html",
        ]
    );
}

#[test]
fn json_report_snapshot() {
    let o = webdup(&["cluster", "fixtures/example", "--format", "json"], &[]);
    insta::assert_snapshot!("cluster_json", stdout(&o));
}

#[test]
fn csv_and_tsv_report_snapshots() {
    let o = webdup(&["cluster", "fixtures/example", "--format", "csv"], &[]);
    insta::assert_snapshot!("cluster_csv", stdout(&o));
    let o = webdup(&["cluster", "fixtures/example", "--format", "tsv"], &[]);
    insta::assert_snapshot!("cluster_tsv", stdout(&o));
}

#[test]
fn table_report_snapshot() {
    let o = webdup(&["cluster", "fixtures/example", "--format", "table"], &[]);
    insta::assert_snapshot!("cluster_table", stdout(&o));
}

fn write_generated_corpus(dir: &Path, n: usize) {
    let texts = webdup_eval::synth::corpus(&webdup_eval::synth::SynthConfig {
        documents: n,
        words_per_document: 200,
        copy_share: 0.5,
        ..Default::default()
    });
    for (i, t) in texts.iter().enumerate() {
        std::fs::write(dir.join(format!("doc{i:04}.txt")), t).unwrap();
    }
}

#[test]
fn output_is_byte_identical_across_runs_and_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    write_generated_corpus(dir.path(), 400);
    let d = dir.path().to_str().unwrap();
    for format in ["json", "csv"] {
        let args = ["cluster", d, "fixtures/example", "--method", "both", "--format", format];
        let one = webdup(&args, &[("RAYON_NUM_THREADS", "1")]);
        let two = webdup(&args, &[("RAYON_NUM_THREADS", "2")]);
        let again = webdup(&args, &[("RAYON_NUM_THREADS", "2")]);
        assert_eq!(one.status.code(), Some(0));
        assert!(stdout(&one).matches("near").count() > 10, "the corpus must produce clusters");
        assert_eq!(one.stdout, two.stdout, "{format}: 1 vs 2 threads");
        assert_eq!(two.stdout, again.stdout, "{format}: two runs");
    }
}

#[test]
fn bad_inputs_are_reported_per_document_and_the_run_completes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for name in ["river-path-restored.html", "river-path-updated.html", "comet-autumn.html"] {
        std::fs::copy(Path::new("fixtures/example").join(name), p.join(name)).unwrap();
    }
    std::fs::write(p.join("empty.html"), "").unwrap();
    std::fs::write(p.join("binary.html"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(p.join("latin1.txt"), b"caf\xe9 cr\xe8me br\xfbl\xe9e").unwrap();
    let big =
        format!("<html><body>{}</body></html>", "<p>word after word after word</p>\n".repeat(50 * 1024 * 1024 / 35));
    std::fs::write(p.join("big.html"), big).unwrap();
    std::fs::write(p.join("deep.html"), format!("<html><body>{}deep</body></html>", "<div>".repeat(100_000))).unwrap();
    let missing = p.join("missing.html");
    let o = webdup(&["cluster", p.to_str().unwrap(), missing.to_str().unwrap(), "--format", "json"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "some inputs failed: exit 1; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v = json(&o);
    let kind_of = |suffix: &str| {
        v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"].as_str().unwrap().ends_with(suffix))
            .map(|e| (e["kind"].as_str().unwrap().to_string(), e["message"].as_str().unwrap().to_string()))
            .unwrap_or_else(|| panic!("no error for {suffix}: {v}"))
    };
    assert_eq!(kind_of("empty.html").0, "empty");
    assert_eq!(kind_of("binary.html").0, "binary");
    assert_eq!(kind_of("latin1.txt").0, "encoding");
    assert_eq!(kind_of("big.html").0, "too_large");
    assert_eq!(kind_of("deep.html").0, "too_deep");
    let (kind, message) = kind_of("missing.html");
    assert_eq!(kind, "io");
    assert!(message.contains("no such file"), "{message}");
    assert_eq!(v["summary"]["fingerprinted"], 3);
    assert_eq!(v["clusters"].as_array().unwrap().len(), 1, "the good documents still cluster");
    // Failed documents appear in CSV too.
    let o = webdup(&["cluster", p.to_str().unwrap(), "--format", "csv"], &[]);
    assert!(stdout(&o).lines().any(|l| l.contains("deep.html") && l.contains("too_deep")));
}

#[test]
fn compare_reports_every_measure() {
    let o = webdup(
        &[
            "compare",
            "fixtures/example/river-path-restored.html",
            "fixtures/example/river-path-updated.html",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let j = v["jaccard"].as_f64().unwrap();
    assert!(j > 0.8 && j < 1.0, "{v}");
    assert!((v["minhash_estimate"].as_f64().unwrap() - j).abs() < 0.15);
    assert!(v["simhash_distance"].as_u64().unwrap() < 20);
    assert_eq!(v["duplicate"], true);
    assert!(v["identical"] == false && v["same_text"] == false, "{v}");
    assert!(v["shared_shingles"].as_u64().unwrap() > 100);
    let o = webdup(
        &["compare", "fixtures/example/comet-autumn.html", "fixtures/example/home-baked-bread.html", "-f", "table"],
        &[],
    );
    assert!(stdout(&o).contains("not a duplicate"), "{}", stdout(&o));
}

#[test]
fn neighbors_lists_the_closest_documents_first() {
    let o =
        webdup(&["neighbors", "fixtures/example", "--top", "2", "--min-similarity", "0.5", "--format", "json"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let docs = v["documents"].as_array().unwrap();
    let updated = docs.iter().find(|d| d["id"].as_str().unwrap().ends_with("river-path-updated.html")).unwrap();
    let n = updated["neighbors"].as_array().unwrap();
    assert_eq!(n.len(), 2);
    assert!(n[0]["jaccard"].as_f64() >= n[1]["jaccard"].as_f64());
    let comet = docs.iter().find(|d| d["id"].as_str().unwrap().ends_with("comet-autumn.html")).unwrap();
    assert!(comet["neighbors"].as_array().unwrap().is_empty());
}

#[test]
fn invalid_settings_are_rejected_with_exit_2() {
    for args in [
        &["cluster", "fixtures/example", "--threshold", "1.5"][..],
        &["cluster", "fixtures/example", "--shingle-size", "0"],
        &["cluster", "fixtures/example", "--language", "xx", "--stem"],
    ] {
        let o = webdup(args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("webdup: error"), "{args:?}");
    }
}

#[test]
fn explain_prints_the_banding_to_stderr() {
    let o = webdup(&["cluster", "fixtures/example", "--explain", "--format", "json"], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bands x") && err.contains("<- threshold"), "{err}");
    json(&o);
    // Also when clustering against an index.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let o = webdup(&["cluster", "fixtures/example", "--index", db.to_str().unwrap(), "--explain", "-f", "json"], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bands x") && err.contains("<- threshold"), "{err}");
    json(&o);
}

#[test]
fn broken_pipe_exits_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    write_generated_corpus(dir.path(), 300);
    let mut child = Command::new(env!("CARGO_BIN_EXE_webdup"))
        // Word-level shingles make every pair similar: far more output than a pipe holds.
        .args([
            "neighbors",
            dir.path().to_str().unwrap(),
            "--shingle-size",
            "1",
            "--min-similarity",
            "0.01",
            "--top",
            "100",
        ])
        .args(["--format", "csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is now closed: further writes fail with EPIPE.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn extract_prints_main_text_and_metadata() {
    let o = webdup(&["extract", "fixtures/example/comet-autumn.html"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.contains("faint comet discovered in March"));
    assert!(!text.contains("Most read"), "sidebar kept: {text}");
    assert!(!text.contains("All rights reserved"), "footer kept: {text}");
    let o = webdup(&["extract", "fixtures/example/comet-autumn.html", "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["h1"], "Comet may be visible this autumn");
    assert_eq!(v["canonical"], "https://riverside-daily.example/comet-may-be-visible-this-autumn");
    assert!(matches!(v["extractor"].as_str(), Some("trafilatura" | "rs-trafilatura")), "{v}");
    assert!(v["word_count"].as_u64().unwrap() > 150);
    let o = webdup(&["extract", "fixtures/example/comet-autumn.html", "--include-selector", "aside"], &[]);
    assert!(stdout(&o).contains("Most read") && !stdout(&o).contains("comet"), "{}", stdout(&o));
    let o = webdup(&["extract", "fixtures/example/no-such.html"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such.html"));
}

#[test]
fn index_stats_query_and_remove_use_the_settings_the_index_was_built_with() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let db = db.to_str().unwrap();
    // Built with settings other than the defaults.
    let built = ["--shingle-size", "4", "--extractor", "readability"];
    let o = webdup(&[&["index", "add", "--crawl", "c1", "--index", db, "fixtures/example"][..], &built].concat(), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // No settings repeated on the command line.
    let o = webdup(&["index", "stats", "--index", db], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = json(&o);
    assert_eq!(stats["pages"], 7, "{stats}");
    // Times are ISO 8601 in UTC, not epoch seconds.
    let first = stats["crawls"][0]["first_fetched_at"].as_str().unwrap_or_else(|| panic!("{stats}"));
    assert!(
        first.len() == 20 && first.starts_with("20") && first.ends_with('Z') && first.as_bytes()[10] == b'T',
        "{first}"
    );
    let o = webdup(&["index", "query", "--index", db, "fixtures/example/river-path-updated.html"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let q = json(&o);
    // A Jaccard of 1 with itself: the query was shingled like the stored pages (4-word shingles).
    assert_eq!(q["identical"][0]["url"], "fixtures/example/river-path-updated.html", "{q}");
    assert_eq!(q["identical"][0]["jaccard"], 1.0, "{q}");
    let o = webdup(&["index", "remove", "--index", db, "fixtures/example/contact.html"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["removed"], 1);

    // stats and remove never create a file; a missing one is named.
    let missing = dir.path().join("missing.db");
    let o = webdup(&["index", "stats", "--index", missing.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.db"));
    assert!(!missing.exists());
}

/// An index made with another extractor (`auto`, the default before
/// `blocks`) keeps it when `index add` names none; naming another is an
/// error that says why.
#[test]
fn index_add_keeps_the_extractor_the_index_was_made_with_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let db = db.to_str().unwrap();
    let add = |crawl: &str, extra: &[&str]| {
        webdup(&[&["index", "add", "--crawl", crawl, "--index", db, "fixtures/example"][..], extra].concat(), &[])
    };
    let o = add("c1", &["--extractor", "auto"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = add("c2", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = json(&webdup(&["index", "stats", "--index", db], &[]));
    assert_eq!(stats["pages"], 14, "{stats}");
    let o = add("c3", &["--extractor", "fast"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("extractor = auto"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn csv_bom_starts_csv_and_tsv_output_and_the_audits_csv_files() {
    let bom = "\u{feff}";
    for format in ["csv", "tsv"] {
        let o = webdup(&["cluster", "fixtures/example", "-f", format, "--csv-bom"], &[]);
        assert_eq!(o.status.code(), Some(0));
        assert!(stdout(&o).starts_with(bom), "{format}");
        let plain = webdup(&["cluster", "fixtures/example", "-f", format], &[]);
        assert_eq!(stdout(&plain), stdout(&o)[bom.len()..]);
    }
    // JSON is never prefixed.
    let o = webdup(&["cluster", "fixtures/example", "-f", "json", "--csv-bom"], &[]);
    assert!(stdout(&o).starts_with('{'));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = webdup(&["audit", "fixtures/example", "--csv-bom", "--quiet", "--out", out.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["pages.csv", "clusters.csv"] {
        assert!(std::fs::read_to_string(out.join(f)).unwrap().starts_with(bom), "{f}");
    }
    assert!(std::fs::read_to_string(out.join("report.json")).unwrap().starts_with('{'));
}

#[test]
fn cluster_with_an_index_prints_a_table_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let db = db.to_str().unwrap();
    let o = webdup(&["index", "add", "--index", db, "--crawl", "first", "fixtures/example", "--quiet"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let o = webdup(&["cluster", "fixtures/example", "--index", db, "-f", "table"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(!out.trim_start().starts_with('{'), "{out}");
    assert!(out.contains("cluster 1 ·") && out.contains(&format!("seen in {db}")), "{out}");
    assert!(out.contains("  identical  jaccard 1.0000"), "{out}");
}

/// Issue 14, defect 2: template suppression ran per `--batch`, so what
/// `index add` stored depended on which pages shared a batch, and `index
/// query` (a corpus of one page) was never suppressed at all: a copy of a
/// stored page with two words changed was not found. Now each site's
/// template is learned over the whole add, stored with the crawl, and
/// applied to a page checked alone.
#[test]
fn index_query_finds_a_lightly_edited_page_whatever_the_batch_size() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let mut state = 1u64;
    let mut word = || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        format!("w{}", (z ^ (z >> 31)) % 5000)
    };
    let footer =
        ["subscribe to our newsletter for weekly ferry news and harbour updates from the island council office"; 3]
            .join(" ");
    let mut p00 = String::new();
    for i in 0..41 {
        let body: Vec<String> = (0..150).map(|_| word()).collect();
        let text = format!("{} {footer}", body.join(" "));
        if i == 0 {
            p00 = text.clone();
        }
        std::fs::write(site.join(format!("p{i:02}.txt")), text).unwrap();
    }
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).current_dir(dir.path()).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        json(&o)
    };
    // 41 pages: --batch 4 leaves one page alone in its last batch, --batch 1 every page.
    let mut stored = Vec::new();
    for batch in ["1", "4", "256"] {
        let db = format!("b{batch}.db");
        let summary = run(&["index", "add", "--crawl", "c", "--index", &db, "--batch", batch, "site", "-q"]);
        assert_eq!(summary["pages"], 41, "{summary}");
        let index = webdup::store::Index::open_existing(dir.path().join(&db)).unwrap();
        let pages: Vec<(String, Vec<u64>)> =
            index.crawl_pages("c").unwrap().into_iter().map(|(p, shingles)| (p.url, shingles)).collect();
        stored.push(pages);
    }
    // Compared whole, reported by count: the sets are long.
    let counts = |pages: &[(String, Vec<u64>)]| pages.iter().map(|(_, s)| s.len()).collect::<Vec<_>>();
    assert!(
        stored[0] == stored[1],
        "--batch 1 and 4 stored {:?} and {:?} shingles",
        counts(&stored[0]),
        counts(&stored[1])
    );
    assert!(
        stored[1] == stored[2],
        "--batch 4 and 256 stored {:?} and {:?} shingles",
        counts(&stored[1]),
        counts(&stored[2])
    );
    let (_, p00_stored) = stored[2].iter().find(|(url, _)| url == "site/p00.txt").unwrap();
    let unsuppressed = run(&["compare", "site/p00.txt", "site/p01.txt", "-f", "json", "-q"]);
    assert!(
        (p00_stored.len() as u64)
            < unsuppressed["shared_shingles"].as_u64().unwrap() + unsuppressed["only_in_a"].as_u64().unwrap(),
        "the footer was not suppressed: {} shingles stored; {unsuppressed}",
        p00_stored.len()
    );

    // Two words changed, in a new file of the same site, checked alone.
    let mut words: Vec<&str> = p00.split(' ').collect();
    words[10] = "changed";
    words[50] = "edited";
    std::fs::write(site.join("p00-edited.txt"), words.join(" ")).unwrap();
    for batch in ["1", "4", "256"] {
        let q = run(&["index", "query", "site/p00-edited.txt", "--index", &format!("b{batch}.db"), "-q"]);
        let near: Vec<&str> = q["near"].as_array().unwrap().iter().filter_map(|m| m["url"].as_str()).collect();
        assert_eq!(near, ["site/p00.txt"], "--batch {batch}: {q}");
        assert_eq!(q["template"], "learned", "the add learned the site's template: {q}");
    }
    // One site, one template learned and kept.
    let summary = run(&["index", "add", "--crawl", "d", "--index", "b1.db", "site", "-q"]);
    assert_eq!(summary["templates"], 1, "{summary}");
}

/// Shell completions and the man page come from the same clap definition
/// as the help, so every subcommand and flag is in them.
#[test]
fn completions_and_the_man_page_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = webdup(&["completions", shell], &[]);
        assert!(o.status.success(), "{shell}: {}", String::from_utf8_lossy(&o.stderr));
        let script = stdout(&o);
        for word in ["cluster", "audit", "lost-and-found", "template-min-pages"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let o = webdup(&["man"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = stdout(&o);
    assert!(page.contains(".TH webdup 1"), "{page}");
    for word in ["cluster", "audit", "serve", "completions"] {
        assert!(page.contains(word), "the man page lacks {word}");
    }
    let o = webdup(&["completions", "tcsh"], &[]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is a usage error");
}

/// Each subcommand lists only the flags it uses: `serve` never fetches, and
/// `index stats` / `index remove` use the index's own settings.
#[test]
fn help_lists_only_the_flags_a_command_uses() {
    let help = |args: &[&str]| stdout(&webdup(args, &[]));
    let serve = help(&["serve", "--help"]);
    assert!(serve.contains("--shingle-size") && serve.contains("--bind"), "{serve}");
    for unused in ["--delay", "--user-agent", "--concurrency", "--own-site", "--cache"] {
        assert!(!serve.contains(unused), "serve --help lists {unused}");
    }
    for sub in ["stats", "remove"] {
        let text = help(&["index", sub, "--help"]);
        for unused in ["--threshold", "--shingle-size", "--delay", "--extractor"] {
            assert!(!text.contains(unused), "index {sub} --help lists {unused}");
        }
    }
    let cluster = help(&["cluster", "--help"]);
    assert!(cluster.contains("--delay") && cluster.contains("--shingle-size"), "{cluster}");
}

/// Issue 40, item 7: one row whose fingerprint blob was damaged made `audit
/// --index` fail whole. Now that page is an error naming its URL and row,
/// and the rest of the crawl is audited (exit 1: some pages failed).
#[test]
fn a_corrupt_index_row_is_that_pages_failure_not_the_audits() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let d = db.to_str().unwrap();
    let o = webdup(&["index", "add", "--crawl", "c", "--index", d, "fixtures/example", "-q"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let ids: Vec<(i64, String)> = conn
        .prepare("SELECT id, url FROM pages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(ids.len() >= 4, "{ids:?}");
    // A blob of a length no signature has, and a signature cut short (it
    // would index past its end).
    conn.execute("UPDATE pages SET shingles = x'0102030405' WHERE id = ?1", [ids[0].0]).unwrap();
    conn.execute("UPDATE pages SET minhash = x'0102030405060708' WHERE id = ?1", [ids[1].0]).unwrap();
    drop(conn);
    let out = dir.path().join("out");
    let o = webdup(&["audit", "--index", d, "--out", out.to_str().unwrap(), "--quiet"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let urls: Vec<&str> = j["pages"].as_array().unwrap().iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ids.iter().map(|(_, u)| u.as_str()).collect::<Vec<_>>(), "every page is in the report");
    let errors = j["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{errors:?}");
    for (e, (id, url)) in errors.iter().zip(&ids) {
        assert_eq!(e["url"], url.as_str());
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(&format!("corrupt index row {id}")), "{message}");
    }
    assert!(j["errors"][0]["message"].as_str().unwrap().contains("shingle blob of 5 bytes"), "{errors:?}");
    assert!(j["errors"][1]["message"].as_str().unwrap().contains("MinHash signature of 2 values"), "{errors:?}");
}

/// Issue 40, item 7: a file name with an escape sequence reached the
/// terminal raw through the table output. Control characters are shown as
/// `\x1b`, in the cluster table and in the failures listed.
#[test]
fn file_names_cannot_send_escape_codes_to_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = "<html><body><article><p>The lighthouse keeper logs every passing ship in a leather book.</p></article></body></html>";
    std::fs::write(dir.path().join("a\x1b[2Jclear.html"), text).unwrap();
    std::fs::write(dir.path().join("b\x1b]0;title\x07.html"), text).unwrap();
    std::fs::write(dir.path().join("c\r\nfake row.html"), "").unwrap();
    let o = webdup(&["cluster", dir.path().to_str().unwrap(), "--format", "table"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let table = stdout(&o);
    assert!(!table.bytes().any(|b| b == 0x1b || b == 0x07 || b == b'\r'), "{table:?}");
    assert!(table.contains("a\\x1b[2Jclear.html") && table.contains("b\\x1b]0;title\\x07.html"), "{table}");
    assert!(table.contains("c\\x0d\\x0afake row.html  [empty]"), "{table}");
}

/// Issue 40, item 7: `webdup extract FILE | head -1` exited 2 with an error
/// on stderr; a broken pipe exits 0 quietly, as for every command.
#[test]
fn extract_into_a_closed_pipe_exits_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let paragraphs: String = (0..4000)
        .map(|i| format!("<p>Paragraph {i} of the long harbour chronicle tells of boats, tides and the keepers.</p>\n"))
        .collect();
    // Two pages: JSON is a line a page, and the second line must meet the closed pipe.
    let pages: Vec<String> = (0..2)
        .map(|n| {
            let page = dir.path().join(format!("long-{n}.html"));
            std::fs::write(&page, format!("<html><body><article>{paragraphs}</article></body></html>")).unwrap();
            page.to_str().unwrap().to_string()
        })
        .collect();
    for format in ["text", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .arg("extract")
            .args(&pages)
            .args(["--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        // The reader is gone: further writes fail with EPIPE.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{format}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
