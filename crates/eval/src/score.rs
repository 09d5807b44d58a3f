//! How right a clustering is, against labelled truth (`webdup eval cluster`).
//!
//! The truth names each page's true cluster and, optionally, its kind (a
//! mirror, a syndicated copy, a thin page...). The clustering is webdup's
//! own JSON report or any `id<TAB>cluster` file, so other tools' output is
//! scored the same way. Pages the clustering does not mention are taken as
//! clusters of their own: webdup's report lists only pages that have copies.
//!
//! The measures are the usual ones for duplicate detection, over pairs of
//! pages: a pair is *true* when both pages share a true cluster and
//! *predicted* when both share a predicted one. Precision, recall and F1 are
//! computed over those pairs; the adjusted Rand index (Hubert and Arabie,
//! 1985) corrects their agreement for chance. Per kind, recall counts the
//! true pairs with a page of that kind, and false merges the predicted pairs
//! with a page of that kind that are not true: the "thin page merged with
//! its template sibling" failures that a single F1 hides.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// Why a truth or clustering file cannot be scored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreError {
    #[error("truth line {line}: {message}")]
    Truth { line: usize, message: String },
    #[error("the truth names no page")]
    EmptyTruth,
    #[error("clustering: {0}")]
    Clustering(String),
}

/// Each page's true cluster and kind.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    /// Page id, cluster label, kind.
    pages: Vec<(String, String, Option<String>)>,
}

impl Truth {
    /// Reads `id<TAB>cluster[<TAB>kind]` lines; blank lines, `#` comments and
    /// a header line starting `id<TAB>` are skipped.
    pub fn parse(text: &str) -> Result<Truth, ScoreError> {
        let mut pages = Vec::new();
        let mut seen = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') || (n == 0 && line.starts_with("id\t")) {
                continue;
            }
            let mut fields = line.split('\t');
            let (Some(id), Some(cluster)) = (fields.next(), fields.next()) else {
                return Err(ScoreError::Truth { line: n + 1, message: "expected id<TAB>cluster[<TAB>kind]".into() });
            };
            if id.is_empty() || cluster.is_empty() {
                return Err(ScoreError::Truth { line: n + 1, message: "empty id or cluster".into() });
            }
            if let Some(first) = seen.insert(id.to_string(), n + 1) {
                return Err(ScoreError::Truth { line: n + 1, message: format!("{id} is already on line {first}") });
            }
            let kind = fields.next().filter(|k| !k.is_empty()).map(str::to_string);
            pages.push((id.to_string(), cluster.to_string(), kind));
        }
        if pages.is_empty() {
            return Err(ScoreError::EmptyTruth);
        }
        Ok(Truth { pages })
    }
}

/// Which predicted cluster each clustered page is in.
#[derive(Debug, Clone, Default)]
pub struct Clustering {
    cluster_of: HashMap<String, String>,
}

impl Clustering {
    /// Reads webdup's JSON report (`webdup cluster --format json`) or
    /// `id<TAB>cluster` lines.
    pub fn parse(text: &str) -> Result<Clustering, ScoreError> {
        let mut cluster_of = HashMap::new();
        let bad = |m: String| ScoreError::Clustering(m);
        if text.trim_start().starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
            let clusters = v["clusters"].as_array().ok_or_else(|| bad("JSON without a \"clusters\" array".into()))?;
            for c in clusters {
                let id = c["id"].to_string();
                for m in c["members"].as_array().into_iter().flatten() {
                    let member = m["id"].as_str().ok_or_else(|| bad(format!("cluster {id}: a member without id")))?;
                    if cluster_of.insert(member.to_string(), id.clone()).is_some() {
                        return Err(bad(format!("{member} is in two clusters")));
                    }
                }
            }
        } else {
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_end_matches('\r');
                if line.trim().is_empty() || line.starts_with('#') || (n == 0 && line.starts_with("id\t")) {
                    continue;
                }
                let (id, cluster) =
                    line.split_once('\t').ok_or_else(|| bad(format!("line {}: expected id<TAB>cluster", n + 1)))?;
                let cluster = cluster.split('\t').next().unwrap_or_default();
                if cluster_of.insert(id.to_string(), cluster.to_string()).is_some() {
                    return Err(bad(format!("line {}: {id} appears twice", n + 1)));
                }
            }
        }
        Ok(Clustering { cluster_of })
    }
}

/// Pair counts and recall for the pages of one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindScore {
    pub kind: String,
    pub pages: usize,
    /// True pairs with at least one page of this kind.
    pub true_pairs: u64,
    /// Of those, the pairs the clustering also put together.
    pub found_pairs: u64,
    pub recall: f64,
    /// Predicted pairs with a page of this kind that are not true pairs.
    pub false_merge_pairs: u64,
}

/// A clustering's score against the truth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterScore {
    pub pages: usize,
    pub true_clusters: usize,
    pub true_pairs: u64,
    pub predicted_pairs: u64,
    pub correct_pairs: u64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub adjusted_rand_index: f64,
    /// Pages of the clustering that the truth does not name (left out of
    /// the score); many of them usually mean the ids are spelled otherwise.
    pub unknown_ids: Vec<String>,
    /// Per kind, when the truth names kinds, in name order.
    pub kinds: Vec<KindScore>,
}

fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 { 1.0 } else { num as f64 / den as f64 }
}

/// Scores `predicted` against `truth` (see the module docs).
pub fn score(truth: &Truth, predicted: &Clustering) -> ClusterScore {
    let n = truth.pages.len();
    // Dense labels: true clusters, and predicted ones with every page the
    // clustering leaves out in a cluster of its own.
    let mut true_ids: HashMap<&str, usize> = HashMap::new();
    let mut pred_ids: HashMap<&str, usize> = HashMap::new();
    let mut labels = Vec::with_capacity(n);
    for (i, (id, cluster, _)) in truth.pages.iter().enumerate() {
        let next = true_ids.len();
        let t = *true_ids.entry(cluster.as_str()).or_insert(next);
        let p = match predicted.cluster_of.get(id) {
            Some(c) => {
                let next = pred_ids.len();
                *pred_ids.entry(c.as_str()).or_insert(next)
            }
            None => usize::MAX - i,
        };
        labels.push((t, p));
    }
    let mut true_sizes: HashMap<usize, u64> = HashMap::new();
    let mut pred_sizes: HashMap<usize, u64> = HashMap::new();
    let mut cells: HashMap<(usize, usize), u64> = HashMap::new();
    for &(t, p) in &labels {
        *true_sizes.entry(t).or_default() += 1;
        *pred_sizes.entry(p).or_default() += 1;
        *cells.entry((t, p)).or_default() += 1;
    }
    let true_pairs: u64 = true_sizes.values().map(|&s| pairs(s)).sum();
    let predicted_pairs: u64 = pred_sizes.values().map(|&s| pairs(s)).sum();
    let correct_pairs: u64 = cells.values().map(|&s| pairs(s)).sum();
    let precision = ratio(correct_pairs, predicted_pairs);
    let recall = ratio(correct_pairs, true_pairs);
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    let all = pairs(n as u64) as f64;
    let expected = if all == 0.0 { 0.0 } else { true_pairs as f64 * predicted_pairs as f64 / all };
    let max = (true_pairs + predicted_pairs) as f64 / 2.0;
    let adjusted_rand_index =
        if (max - expected).abs() < f64::EPSILON { 1.0 } else { (correct_pairs as f64 - expected) / (max - expected) };

    let kinds = kind_scores(truth, &labels);
    let mut unknown_ids: Vec<String> = {
        let named: std::collections::HashSet<&str> = truth.pages.iter().map(|p| p.0.as_str()).collect();
        predicted.cluster_of.keys().filter(|id| !named.contains(id.as_str())).cloned().collect()
    };
    unknown_ids.sort();
    ClusterScore {
        pages: n,
        true_clusters: true_sizes.len(),
        true_pairs,
        predicted_pairs,
        correct_pairs,
        precision,
        recall,
        f1,
        adjusted_rand_index,
        unknown_ids,
        kinds,
    }
}

/// Per-kind recall and false merges, by walking the pairs inside each true
/// and each predicted cluster (clusters are small next to the corpus).
fn kind_scores(truth: &Truth, labels: &[(usize, usize)]) -> Vec<KindScore> {
    if truth.pages.iter().all(|p| p.2.is_none()) {
        return Vec::new();
    }
    let kind_of: Vec<Option<&str>> = truth.pages.iter().map(|p| p.2.as_deref()).collect();
    let mut scores: BTreeMap<&str, KindScore> = BTreeMap::new();
    for k in kind_of.iter().flatten() {
        scores
            .entry(k)
            .or_insert_with(|| KindScore {
                kind: k.to_string(),
                pages: 0,
                true_pairs: 0,
                found_pairs: 0,
                recall: 1.0,
                false_merge_pairs: 0,
            })
            .pages += 1;
    }
    let group = |key: &dyn Fn(usize) -> usize| {
        let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
        for i in 0..labels.len() {
            groups.entry(key(i)).or_default().push(i);
        }
        groups.into_values().filter(|g| g.len() > 1).collect::<Vec<_>>()
    };
    // Each pair counts once for each distinct kind among its two pages.
    let mut count = |a: usize, b: usize, add: &mut dyn FnMut(&mut KindScore)| {
        let (ka, kb) = (kind_of[a], kind_of[b]);
        for k in [ka, kb.filter(|&k| Some(k) != ka)].into_iter().flatten() {
            if let Some(s) = scores.get_mut(k) {
                add(s);
            }
        }
    };
    for g in group(&|i| labels[i].0) {
        for (x, &a) in g.iter().enumerate() {
            for &b in &g[x + 1..] {
                let found = labels[a].1 == labels[b].1;
                count(a, b, &mut |s| {
                    s.true_pairs += 1;
                    s.found_pairs += u64::from(found);
                });
            }
        }
    }
    for g in group(&|i| labels[i].1) {
        for (x, &a) in g.iter().enumerate() {
            for &b in &g[x + 1..] {
                if labels[a].0 != labels[b].0 {
                    count(a, b, &mut |s| s.false_merge_pairs += 1);
                }
            }
        }
    }
    scores
        .into_values()
        .map(|mut s| {
            s.recall = ratio(s.found_pairs, s.true_pairs);
            s
        })
        .collect()
}

impl std::fmt::Display for ClusterScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} pages in {} true clusters: {} true pairs, {} predicted, {} correct",
            self.pages, self.true_clusters, self.true_pairs, self.predicted_pairs, self.correct_pairs
        )?;
        writeln!(
            f,
            "precision {:.4}  recall {:.4}  F1 {:.4}  adjusted Rand index {:.4}",
            self.precision, self.recall, self.f1, self.adjusted_rand_index
        )?;
        if !self.kinds.is_empty() {
            writeln!(
                f,
                "\n{:<20} {:>6} {:>10} {:>8} {:>8} {:>13}",
                "kind", "pages", "true pairs", "found", "recall", "false merges"
            )?;
            for k in &self.kinds {
                writeln!(
                    f,
                    "{:<20} {:>6} {:>10} {:>8} {:>8.4} {:>13}",
                    k.kind, k.pages, k.true_pairs, k.found_pairs, k.recall, k.false_merge_pairs
                )?;
            }
        }
        if !self.unknown_ids.is_empty() {
            let shown: Vec<&str> = self.unknown_ids.iter().take(3).map(String::as_str).collect();
            writeln!(
                f,
                "\n{} clustered ids are not in the truth and were left out (e.g. {}): check how ids are spelled",
                self.unknown_ids.len(),
                shown.join(", ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(truth: &str, predicted: &str) -> ClusterScore {
        score(&Truth::parse(truth).unwrap(), &Clustering::parse(predicted).unwrap())
    }

    #[test]
    fn pair_counts_and_measures() {
        // Truth: {a,b,c} {d,e} {f}. Predicted: {a,b} {c,d} and the rest alone.
        let truth =
            "id\tcluster\tkind\na\t1\toriginal\nb\t1\tmirror\nc\t1\tthin\nd\t2\toriginal\ne\t2\tmirror\nf\t3\tthin\n";
        let s = run(truth, "a\tx\nb\tx\nc\ty\nd\ty\n");
        assert_eq!((s.true_pairs, s.predicted_pairs, s.correct_pairs), (4, 2, 1));
        assert_eq!((s.precision, s.recall), (0.5, 0.25));
        assert!((s.f1 - 1.0 / 3.0).abs() < 1e-12);
        let thin = s.kinds.iter().find(|k| k.kind == "thin").unwrap();
        // c's true pairs: a-c, b-c, none found; c-d is a false merge.
        assert_eq!((thin.pages, thin.true_pairs, thin.found_pairs, thin.false_merge_pairs), (2, 2, 0, 1));
        let mirror = s.kinds.iter().find(|k| k.kind == "mirror").unwrap();
        // a-b (found), b-c, d-e.
        assert_eq!((mirror.true_pairs, mirror.found_pairs, mirror.false_merge_pairs), (3, 1, 0));
    }

    #[test]
    fn perfect_and_chance_clusterings() {
        let truth = "a\t1\nb\t1\nc\t2\nd\t2\ne\t3\n";
        let s = run(truth, "a\tp\nb\tp\nc\tq\nd\tq\n");
        assert_eq!((s.precision, s.recall, s.f1, s.adjusted_rand_index), (1.0, 1.0, 1.0, 1.0));
        assert!(s.kinds.is_empty());
        // Everything in one cluster: recall 1, precision 2/10, ARI 0.
        let s = run(truth, "a\tz\nb\tz\nc\tz\nd\tz\ne\tz\n");
        assert_eq!((s.recall, s.precision), (1.0, 0.2));
        assert!(s.adjusted_rand_index.abs() < 1e-12, "{}", s.adjusted_rand_index);
        // Nothing clustered: no pair claimed, none found.
        let s = run(truth, "");
        assert_eq!((s.precision, s.recall, s.f1), (1.0, 0.0, 0.0));
    }

    #[test]
    fn webdup_json_reports_are_read_and_unknown_ids_listed() {
        let json = r#"{"clusters": [{"id": 1, "members": [{"id": "a"}, {"id": "b"}, {"id": "zz"}]}]}"#;
        let s = run("a\t1\nb\t1\nc\t2\n", json);
        assert_eq!((s.correct_pairs, s.predicted_pairs), (1, 1));
        assert_eq!(s.unknown_ids, ["zz"]);
    }

    #[test]
    fn malformed_input_is_named() {
        assert_eq!(
            Truth::parse("a\t1\nb\n").unwrap_err(),
            ScoreError::Truth { line: 2, message: "expected id<TAB>cluster[<TAB>kind]".into() }
        );
        assert!(matches!(Truth::parse("a\t1\na\t2\n"), Err(ScoreError::Truth { line: 2, .. })));
        assert_eq!(Truth::parse("# nothing\n").unwrap_err(), ScoreError::EmptyTruth);
        assert!(Clustering::parse("{ not json").is_err());
        assert!(Clustering::parse("a b\n").is_err());
    }
}
