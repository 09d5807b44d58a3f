//! `webdup eval cluster`: the real binary scores its own clustering of the
//! example site, and a wrong truth file, against labelled truth.

use std::process::{Command, Output};

fn webdup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run webdup")
}

const EXAMPLE_TRUTH: &str = "id\tcluster\tkind
fixtures/example/river-path-print.html\triver\tmirror
fixtures/example/river-path-restored.html\triver\tmirror
fixtures/example/river-path-updated.html\triver\trevision
fixtures/example/syndicated-river-path.html\triver\tsyndicated
fixtures/example/comet-autumn.html\tcomet\toriginal
fixtures/example/home-baked-bread.html\tbread\toriginal
fixtures/example/contact.html\tcontact\tthin
";

#[test]
fn eval_cluster_scores_webdups_own_json_and_a_tab_separated_clustering() {
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("truth.tsv");
    std::fs::write(&truth, EXAMPLE_TRUTH).unwrap();
    let o = webdup(&["cluster", "fixtures/example", "--format", "json"]);
    assert!(o.status.success());
    let report = dir.path().join("report.json");
    std::fs::write(&report, &o.stdout).unwrap();
    let o = webdup(&["eval", "cluster", truth.to_str().unwrap(), report.to_str().unwrap(), "-f", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (s["pages"].as_u64(), s["true_pairs"].as_u64(), s["correct_pairs"].as_u64()),
        (Some(7), Some(6), Some(6))
    );
    assert_eq!((s["precision"].as_f64(), s["recall"].as_f64(), s["f1"].as_f64()), (Some(1.0), Some(1.0), Some(1.0)));

    // Another tool's output: the thin contact page merged into the comet
    // story, the syndicated copy missed.
    let other = dir.path().join("other.tsv");
    std::fs::write(
        &other,
        "fixtures/example/river-path-print.html\t1\nfixtures/example/river-path-restored.html\t1\n\
         fixtures/example/river-path-updated.html\t1\nfixtures/example/comet-autumn.html\t2\n\
         fixtures/example/contact.html\t2\n",
    )
    .unwrap();
    let o = webdup(&["eval", "cluster", truth.to_str().unwrap(), other.to_str().unwrap(), "-f", "json"]);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((s["predicted_pairs"].as_u64(), s["correct_pairs"].as_u64()), (Some(4), Some(3)));
    let kind = |k: &str| s["kinds"].as_array().unwrap().iter().find(|x| x["kind"] == k).unwrap().clone();
    assert_eq!(kind("thin")["false_merge_pairs"], 1);
    assert_eq!(
        (kind("syndicated")["true_pairs"].as_u64(), kind("syndicated")["found_pairs"].as_u64()),
        (Some(3), Some(0))
    );
    let table = webdup(&["eval", "cluster", truth.to_str().unwrap(), other.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("precision 0.7500  recall 0.5000"), "{:?}", table);

    // A malformed truth line is named, exit 2.
    std::fs::write(&truth, "a\t1\nb\n").unwrap();
    let o = webdup(&["eval", "cluster", truth.to_str().unwrap(), report.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("truth.tsv") && err.contains("line 2"), "{err}");
}
