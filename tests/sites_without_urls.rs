//! Sites without URLs (issue 37): pages of three sites saved into one flat
//! folder. Their folder says nothing of their site, so before, every pair
//! was held to the same-site rule (0.8) and a copy in another site's
//! template (Jaccard about 0.65) was missed. The pages of a site share their
//! template (class names, stylesheets), and one page names its own address;
//! `cluster` finds the cross-site copies and says what decided each site.
//!
//! <!-- expect: dump/a-story1 ~ dump/b-copy1 and dump/a-story2 ~ dump/c-copy2 (cross-site, jaccard < 0.8);
//!      no other cluster; sites from template, and canonical for dump/c-copy2 -->

use std::path::Path;
use std::process::Command;

mod flat_sites;

fn run(dir: &Path, format: &str) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "dump", "-f", format, "--quiet"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn copies_across_sites_in_one_flat_folder_are_found_by_template_and_canonical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dump");
    std::fs::create_dir(&dir).unwrap();
    flat_sites::write_flat_dump(&dir);

    let report: serde_json::Value = serde_json::from_slice(&run(tmp.path(), "json")).unwrap();
    let mut clusters: Vec<Vec<(String, String, String)>> = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut members: Vec<(String, String, String)> = c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let field = |k: &str| m[k].as_str().unwrap_or_default().to_string();
                    (field("id"), field("site"), field("site_from"))
                })
                .collect();
            members.sort();
            members
        })
        .collect();
    clusters.sort();
    let member = |id: &str, site: &str, from: &str| (id.to_string(), site.to_string(), from.to_string());
    assert_eq!(
        clusters,
        vec![
            vec![
                member("dump/a-story1.html", "dir:dump#a-other0.html", "template"),
                member("dump/b-copy1.html", "dir:dump#b-copy1.html", "template"),
            ],
            vec![
                member("dump/a-story2.html", "dir:dump#a-other0.html", "template"),
                member("dump/c-copy2.html", "news-c.example", "canonical"),
            ],
        ],
        "{report:#}"
    );
    for c in report["clusters"].as_array().unwrap() {
        let j = c["members"].as_array().unwrap().iter().filter_map(|m| m["jaccard"].as_f64()).fold(1.0, f64::min);
        assert!(j > 0.5 && j < 0.8, "a copy the same-site rule would miss: {j}");
    }

    // The CSV says the same, in its last two columns.
    let csv = String::from_utf8(run(tmp.path(), "csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",error,site,site_from"), "{csv}");
    assert!(csv.lines().any(|l| l.contains("dump/c-copy2.html") && l.ends_with(",,news-c.example,canonical")), "{csv}");
}
