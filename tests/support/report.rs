//! Reading `webdup cluster -f json` reports in integration tests.

use std::collections::BTreeSet;

use serde_json::Value;

/// The report's clusters, each as the set of its members' last path
/// segments (a file name, or an article's name in a URL).
pub fn cluster_names(report: &Value) -> BTreeSet<BTreeSet<String>> {
    report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
                .collect()
        })
        .collect()
}
