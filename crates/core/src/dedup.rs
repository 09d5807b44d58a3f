//! From fingerprints to duplicates: exact groups, candidate pairs,
//! exact verification, clusters, neighbours and pairwise comparison.
//!
//! Each function takes the fingerprints, the [`MatchSettings`] that say how
//! to compare them and the [`FingerprintSettings`] they were made with
//! (their MinHash permutations, their sites' scope), and a [`Units`] runner
//! for its independent parts: the facade runs them on rayon, a dataflow
//! worker or a Python thread one after another. The answer never depends on
//! the runner.

use std::collections::HashMap;

use serde::Serialize;

use crate::candidates::{self, HammingTables, LshParams, Method, lsh};
use crate::cluster;
use crate::doc::DocKey;
use crate::fingerprint::Fingerprint;
use crate::fingerprint::InFingerprints;
use crate::sets::{self, Sketches, Subset};
use crate::settings::{FingerprintSettings, MatchSettings};
use crate::sketch::{minhash, simhash::hamming};
use crate::template;
use crate::units::Units;
use crate::verify::{self, Edge, Measure, Overlap};

/// A member of a [`Cluster`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Member {
    pub key: DocKey,
    /// Exact Jaccard with the representative.
    pub jaccard: f64,
    /// Share of this member's shingles found in the representative.
    pub containment: f64,
    /// The same decoded page as the representative (same bytes).
    pub identical: bool,
    /// The representative's normalized text, not known to be the same page.
    pub same_text: bool,
}

impl Member {
    /// `d` (whose shingles are `set`) as a member of the cluster `rep`
    /// (with `rep_set`) represents.
    fn of(d: &Fingerprint, set: &[u64], rep: &Fingerprint, rep_set: &[u64]) -> Member {
        let o = Overlap::of(set, rep_set);
        Member {
            key: d.key,
            jaccard: o.jaccard(),
            containment: o.containment_a_in_b(),
            identical: d.identical_to(rep),
            same_text: d.same_text_as(rep),
        }
    }

    /// `identical`, `same-text` or `near`: the kind of copy of the
    /// representative this member is.
    pub fn kind(&self) -> &'static str {
        if self.identical {
            IDENTICAL
        } else if self.same_text {
            SAME_TEXT
        } else {
            NEAR
        }
    }
}

/// The kind of a copy whose decoded page is byte for byte the other's.
pub const IDENTICAL: &str = "identical";
/// The kind of a copy with the other's normalized text, from another page
/// (or a page not known to be the same).
pub const SAME_TEXT: &str = "same-text";
/// The kind of a copy whose text is similar, not the same.
pub const NEAR: &str = "near";

/// A group of duplicates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cluster {
    /// 1-based, in order of each cluster's first member's key.
    pub id: usize,
    /// The member with the most confirmed links inside the cluster (ties
    /// go to the lower key): the page most like all the others. Under
    /// containment, a page that contains every other member (see
    /// [`cluster::contained`]).
    pub representative: DocKey,
    /// By key; the representative is among them.
    pub members: Vec<Member>,
}

impl Cluster {
    /// `identical` when every member is the representative's page,
    /// `same-text` when every member has at least its text, else `near`.
    pub fn kind(&self) -> &'static str {
        if self.members.iter().all(|m| m.identical) {
            IDENTICAL
        } else if self.members.iter().all(|m| m.identical || m.same_text) {
            SAME_TEXT
        } else {
            NEAR
        }
    }
}

/// Counts from one clustering run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    pub documents: usize,
    pub exact_duplicates: usize,
    pub candidate_pairs: usize,
    pub confirmed_pairs: usize,
    pub lsh: Option<LshParams>,
    /// The size-class bandings of a containment search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containment: Option<lsh::ContainmentPlan>,
    pub hamming_blocks: Option<usize>,
}

/// A confirmed pair of documents, by key (`a < b`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pair {
    pub a: DocKey,
    pub b: DocKey,
    pub overlap: Overlap,
}

impl Pair {
    pub fn jaccard(&self) -> f64 {
        self.overlap.jaccard()
    }
}

/// The answer of [`find_duplicates`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clustering {
    pub clusters: Vec<Cluster>,
    /// Every confirmed pair (exact duplicates included), sorted by key.
    pub edges: Vec<Pair>,
    pub stats: Stats,
}

impl MatchSettings {
    /// The lower of the two thresholds: what candidates must cover.
    pub fn lowest_threshold(&self) -> f64 {
        self.cross_site_threshold.map_or(self.threshold, |c| c.min(self.threshold))
    }
}

/// Candidate pairs (positions in `docs`, each `(low, high)`, sorted) and
/// the counts of how they were found.
pub type Candidates = (Vec<(u32, u32)>, Stats);

/// Candidate pairs among `docs` for `threshold`, by the chosen method;
/// `sets` are theirs, by position (for the sizes containment bands by).
pub fn candidate_pairs<S: Sketches + ?Sized>(
    units: &impl Units,
    docs: &[&Fingerprint],
    sets: &S,
    matching: &MatchSettings,
    permutations: usize,
    threshold: f64,
) -> Result<Candidates, S::Error> {
    let mut stats = Stats::default();
    let mut pairs = Vec::new();
    if matches!(matching.method, Method::MinHash | Method::Both) {
        let read = |i: u32, buf: &mut Vec<u32>| sets.signature(i, buf);
        match matching.measure {
            Measure::Jaccard => {
                let params = LshParams::optimal(threshold, permutations);
                let read_range = |range, each: lsh::ReadRange<'_>| sets.signatures(range, each);
                pairs.extend(lsh::candidate_pairs_by(units, docs.len(), params, &read_range)?);
                stats.lsh = Some(params);
            }
            Measure::Containment => {
                let sizes: Vec<usize> = (0..docs.len() as u32).map(|i| sets.len(i)).collect();
                let (found, plan) = lsh::containment_pairs_by(units, &sizes, threshold, permutations, &read)?;
                pairs.extend(found);
                stats.containment = Some(plan);
            }
        }
    }
    if matches!(matching.method, Method::SimHash | Method::Both) {
        let tables = HammingTables::plan(docs.len(), matching.max_hamming);
        let fps: Vec<u64> = docs.iter().map(|d| d.simhash).collect();
        pairs.extend(tables.pairs_within_on(units, &fps));
        stats.hamming_blocks = Some(tables.blocks.len());
    }
    let pairs = candidates::normalize_pairs(pairs);
    stats.candidate_pairs = pairs.len();
    Ok((pairs, stats))
}

/// Exact-duplicate grouping, candidate generation, verification and
/// clustering over `docs`, made with `made_with`.
///
/// The answer is keyed by each fingerprint's [`DocKey`] (distinct keys
/// required) and depends on the set of fingerprints, not on their order in
/// the slice: of several copies of one text the lowest key takes part in
/// the near-duplicate search, and every tie goes to the lower key.
pub fn find_duplicates(
    units: &impl Units,
    docs: &[Fingerprint],
    matching: &MatchSettings,
    made_with: &FingerprintSettings,
) -> Clustering {
    sets::always(find_duplicates_in(units, docs, &InFingerprints(docs), matching, made_with))
}

/// [`find_duplicates`] with the documents' shingle sets read through `sets`
/// (by position in `docs`), as a run too large to hold them reads them
/// back from its spill.
pub fn find_duplicates_in<S: Sketches + ?Sized>(
    units: &impl Units,
    docs: &[Fingerprint],
    sets: &S,
    matching: &MatchSettings,
    made_with: &FingerprintSettings,
) -> Result<Clustering, S::Error> {
    // Exact duplicates first: each extra copy links to the first, and only
    // the first of each text takes part in the near-duplicate search.
    let mut first_of: HashMap<CopyOf, u32> = HashMap::new();
    let mut edges: Vec<Edge> = Vec::new();
    let mut uniques: Vec<u32> = Vec::new();
    let mut by_key: Vec<u32> = (0..docs.len() as u32).collect();
    by_key.sort_unstable_by_key(|&i| docs[i as usize].key);
    for i in by_key {
        let d = &docs[i as usize];
        // A page with nothing but its site's template is no one's copy.
        if d.template_only {
            continue;
        }
        let size = sets.len(i);
        let Some(copy_of) = CopyOf::new(d.digest, size, d.page_digest) else {
            uniques.push(i);
            continue;
        };
        match first_of.get(&copy_of) {
            Some(&f) => {
                let overlap = Overlap { shared: size, len_a: size, len_b: size };
                edges.push(Edge { a: f, b: i, overlap });
            }
            None => {
                first_of.insert(copy_of, i);
                uniques.push(i);
            }
        }
    }
    drop(first_of);
    let exact_duplicates = edges.len();
    let unique_docs: Vec<&Fingerprint> = uniques.iter().map(|&i| &docs[i as usize]).collect();
    let unique_sets = Subset { sets, positions: &uniques };
    let lowest = matching.lowest_threshold();
    let (candidates, mut stats) =
        candidate_pairs(units, &unique_docs, &unique_sets, matching, made_with.permutations, lowest)?;
    let mut near = verify::confirm_sets_on(units, matching.measure, &candidates, &unique_sets, lowest)?;
    drop(candidates);
    if let Some(cross) = matching.cross_site_threshold {
        // Each pair against its own rule: across sites, or within one.
        let scope = made_with.template.as_ref().map_or_else(Default::default, |t| t.scope);
        let sites: Vec<Option<String>> = unique_docs.iter().map(|d| d.site(scope).map(|s| s.name)).collect();
        near.retain(|e| {
            let (a, b) = (sites[e.a as usize].as_deref(), sites[e.b as usize].as_deref());
            matching.measure.of(&e.overlap) >= template::pair_threshold(matching.threshold, Some(cross), a, b) - 1e-12
        });
    }
    stats.documents = docs.len();
    stats.exact_duplicates = exact_duplicates;
    stats.confirmed_pairs = near.len();
    edges.extend(near.into_iter().map(|e| Edge { a: uniques[e.a as usize], b: uniques[e.b as usize], ..e }));

    let keys: Vec<DocKey> = docs.iter().map(|d| d.key).collect();
    let groups = match matching.measure {
        Measure::Jaccard => {
            let links: Vec<(u32, u32)> = edges.iter().map(|e| (e.a, e.b)).collect();
            cluster::components(docs.len(), &links, &keys, matching.min_cluster_size)
        }
        Measure::Containment => {
            let links: Vec<(u32, u32, Overlap)> = edges.iter().map(|e| (e.a, e.b, e.overlap)).collect();
            cluster::contained(docs.len(), &links, &keys, matching.min_cluster_size)
        }
    };
    let members = units.map(groups.len(), |n| {
        let g = &groups[n];
        let (mut rep_buf, mut buf) = (Vec::new(), Vec::new());
        let rep = &docs[g.representative as usize];
        let rep_set = sets.get(g.representative, &mut rep_buf)?;
        g.members
            .iter()
            .map(|&m| Ok(Member::of(&docs[m as usize], sets.get(m, &mut buf)?, rep, rep_set)))
            .collect::<Result<Vec<Member>, S::Error>>()
    });
    let mut clusters = Vec::with_capacity(groups.len());
    for (n, (g, members)) in groups.iter().zip(members).enumerate() {
        clusters.push(Cluster { id: n + 1, representative: docs[g.representative as usize].key, members: members? });
    }
    // Copies were taken in key order and the near pairs come over `uniques`
    // (also in key order) with `a < b`, so every edge already has the lower
    // key first.
    let mut edges: Vec<Pair> =
        edges.into_iter().map(|e| Pair { a: keys[e.a as usize], b: keys[e.b as usize], overlap: e.overlap }).collect();
    debug_assert!(edges.iter().all(|e| e.a < e.b), "an edge with its higher key first");
    edges.sort_unstable_by_key(|e| (e.a, e.b));
    Ok(Clustering { clusters, edges, stats })
}

/// What makes two pages copies of one another before any shingle is
/// compared: the same text, when there is enough of it to judge
/// ([`verify::MIN_SHARED_SHINGLES`]), else the same decoded page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CopyOf {
    Text([u8; 16]),
    Page([u8; 16], [u8; 16]),
}

impl CopyOf {
    /// What `d`'s copies share; `None` for a page too thin to have copies
    /// but byte-identical ones, whose bytes are unknown.
    pub fn of(d: &Fingerprint) -> Option<CopyOf> {
        CopyOf::new(d.digest, d.shingles.len(), d.page_digest)
    }

    /// [`CopyOf::of`] a page of these digests and number of shingles.
    pub fn new(digest: [u8; 16], shingles: usize, page_digest: Option<[u8; 16]>) -> Option<CopyOf> {
        if shingles >= verify::MIN_SHARED_SHINGLES {
            Some(CopyOf::Text(digest))
        } else {
            page_digest.map(|p| CopyOf::Page(digest, p))
        }
    }
}

/// A similar document found by [`neighbors`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Neighbor {
    pub key: DocKey,
    pub jaccard: f64,
    /// Share of the document's shingles found in this neighbor.
    pub containment: f64,
    /// Share of this neighbor's shingles found in the document.
    pub contained: f64,
}

/// For each document of `docs` (in the slice's order), up to `top` others
/// whose exact [`MatchSettings::measure`] is at least `floor`, most similar
/// first (ties to the lower key).
pub fn neighbors(
    units: &impl Units,
    docs: &[Fingerprint],
    matching: &MatchSettings,
    made_with: &FingerprintSettings,
    floor: f64,
    top: usize,
) -> Vec<Vec<Neighbor>> {
    sets::always(neighbors_in(units, docs, &InFingerprints(docs), matching, made_with, floor, top))
}

/// [`neighbors`] with the documents' shingle sets read through `sets`.
pub fn neighbors_in<S: Sketches + ?Sized>(
    units: &impl Units,
    docs: &[Fingerprint],
    sets: &S,
    matching: &MatchSettings,
    made_with: &FingerprintSettings,
    floor: f64,
    top: usize,
) -> Result<Vec<Vec<Neighbor>>, S::Error> {
    let search = Search { matching, made_with, floor, top };
    search.run(units, docs, sets, |_| true)
}

/// The most similar other document, by exact Jaccard from `floor` up, of
/// each document `wanted` names (`None` for the others): what
/// [`neighbors_in`] finds with `top` 1 for them, without verifying the
/// pairs of two documents nobody asked about.
pub fn nearest_in<S: Sketches + ?Sized>(
    units: &impl Units,
    docs: &[Fingerprint],
    sets: &S,
    matching: &MatchSettings,
    made_with: &FingerprintSettings,
    floor: f64,
    wanted: &[bool],
) -> Result<Vec<Option<Neighbor>>, S::Error> {
    let matching = MatchSettings { measure: Measure::Jaccard, ..matching.clone() };
    let search = Search { matching: &matching, made_with, floor, top: 1 };
    let found = search.run(units, docs, sets, |i| wanted.get(i).copied().unwrap_or(false))?;
    Ok(found.into_iter().map(|list| list.into_iter().next()).collect())
}

/// One neighbour search's settings.
struct Search<'a> {
    matching: &'a MatchSettings,
    made_with: &'a FingerprintSettings,
    floor: f64,
    top: usize,
}

impl Search<'_> {
    /// The neighbours of each document `wanted` says yes to; the others'
    /// lists stay empty and pairs of two of them are not verified.
    fn run<S: Sketches + ?Sized>(
        &self,
        units: &impl Units,
        docs: &[Fingerprint],
        sets: &S,
        wanted: impl Fn(usize) -> bool,
    ) -> Result<Vec<Vec<Neighbor>>, S::Error> {
        let Search { matching, made_with, floor, top } = *self;
        let refs: Vec<&Fingerprint> = docs.iter().collect();
        let (mut candidates, _) = candidate_pairs(units, &refs, sets, matching, made_with.permutations, floor)?;
        candidates.retain(|&(a, b)| {
            let (a, b) = (a as usize, b as usize);
            !docs[a].template_only && !docs[b].template_only && (wanted(a) || wanted(b))
        });
        let edges = verify::confirm_sets_on(units, matching.measure, &candidates, sets, floor)?;
        let mut out: Vec<Vec<Neighbor>> = vec![Vec::new(); docs.len()];
        for e in edges {
            let o = e.overlap;
            // Each side of a pair, seen from itself: its containment in the other, and the other's in it.
            let sides = [
                (e.a, e.b, o.containment_a_in_b(), o.containment_b_in_a()),
                (e.b, e.a, o.containment_b_in_a(), o.containment_a_in_b()),
            ];
            for (this, other, containment, contained) in sides {
                if wanted(this as usize) {
                    out[this as usize].push(Neighbor {
                        key: docs[other as usize].key,
                        jaccard: o.jaccard(),
                        containment,
                        contained,
                    });
                }
            }
        }
        let score = |n: &Neighbor| match matching.measure {
            Measure::Jaccard => n.jaccard,
            // The containment of the smaller page in the larger.
            Measure::Containment => n.containment.max(n.contained),
        };
        for list in &mut out {
            list.sort_by(|x, y| score(y).total_cmp(&score(x)).then(x.key.cmp(&y.key)));
            list.truncate(top);
            // A run of a million pages keeps one neighbour each, not the room
            // that collecting them left.
            list.shrink_to_fit();
        }
        Ok(out)
    }
}

/// Everything known about how two documents relate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    #[serde(serialize_with = "verify::serialize_round6")]
    pub jaccard: f64,
    #[serde(serialize_with = "verify::serialize_round6")]
    pub minhash_estimate: f64,
    pub simhash_distance: u32,
    #[serde(serialize_with = "verify::serialize_round6")]
    pub containment_a_in_b: f64,
    #[serde(serialize_with = "verify::serialize_round6")]
    pub containment_b_in_a: f64,
    pub shared_shingles: usize,
    pub only_in_a: usize,
    pub only_in_b: usize,
    /// The same decoded page (same bytes).
    pub identical: bool,
    /// The same normalized text, not known to be the same page.
    pub same_text: bool,
    pub threshold: f64,
    /// Identical, or Jaccard at or above the threshold on at least
    /// [`verify::MIN_SHARED_SHINGLES`] shared shingles.
    pub duplicate: bool,
}

/// Compares two fingerprints exactly and by each sketch.
pub fn compare(a: &Fingerprint, b: &Fingerprint, threshold: f64) -> Comparison {
    let o = Overlap::of(&a.shingles, &b.shingles);
    Comparison {
        jaccard: o.jaccard(),
        minhash_estimate: minhash::estimate(&a.minhash, &b.minhash),
        simhash_distance: hamming(a.simhash, b.simhash),
        containment_a_in_b: o.containment_a_in_b(),
        containment_b_in_a: o.containment_b_in_a(),
        shared_shingles: o.shared,
        only_in_a: o.len_a - o.shared,
        only_in_b: o.len_b - o.shared,
        identical: a.identical_to(b),
        same_text: a.same_text_as(b),
        threshold,
        duplicate: a.identical_to(b) || (o.enough_text() && o.jaccard() >= threshold),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::{ShingleConfig, Shingler};
    use crate::sketch::MinHasher;
    use crate::units::InTurn;

    fn settings() -> (MatchSettings, FingerprintSettings) {
        let matching = MatchSettings::default();
        let made_with = FingerprintSettings::default();
        (matching, made_with)
    }

    /// Keys far from positions, so a test mixing the two fails.
    fn doc(id: &str, n: u64, words: &[String]) -> Fingerprint {
        let s = Shingler::new(ShingleConfig::default()).shingle(&words.join(" "));
        let minhash = MinHasher::new(128, 42).sketch(&s.hashes);
        Fingerprint::from_parts(id.into(), DocKey(100 + 10 * n), words.len(), s.hashes, s.digest, minhash, 0)
    }

    /// A story, a copy with every 24th word changed (Jaccard about 0.6), an
    /// exact copy and an unrelated text.
    fn docs(copy_site: &str) -> Vec<Fingerprint> {
        let story: Vec<String> = (0..120).map(|i| format!("w{i}")).collect();
        let mut copy = story.clone();
        for i in (0..120).step_by(24) {
            copy[i] = format!("x{i}");
        }
        let other: Vec<String> = (0..120).map(|i| format!("z{i}")).collect();
        vec![
            doc("a/story.txt", 0, &story),
            doc(&format!("{copy_site}/copy.txt"), 1, &copy),
            doc("a/again.txt", 2, &story),
            doc("c/other.txt", 3, &other),
        ]
    }

    #[test]
    fn copies_cluster_by_their_sites_rule_and_exact_copies_always() {
        let (matching, made_with) = settings();
        let across = find_duplicates(&InTurn, &docs("b"), &matching, &made_with);
        assert_eq!(across.clusters.len(), 1);
        let members: Vec<(u64, bool)> = across.clusters[0].members.iter().map(|m| (m.key.0, m.same_text)).collect();
        assert_eq!(members, [(100, true), (110, false), (120, true)]);
        let pairs: Vec<(u64, u64)> = across.edges.iter().map(|e| (e.a.0, e.b.0)).collect();
        assert_eq!(pairs, [(100, 110), (100, 120)]);
        assert_eq!((across.stats.documents, across.stats.exact_duplicates), (4, 1));
        // Within one site the copy is held to 0.8; the exact copy stays.
        let within = find_duplicates(&InTurn, &docs("a"), &matching, &made_with);
        let members: Vec<u64> = within.clusters[0].members.iter().map(|m| m.key.0).collect();
        assert_eq!(members, [100, 120]);
    }

    #[test]
    fn the_answer_depends_on_the_keys_not_on_the_order_of_the_slice() {
        let (matching, made_with) = settings();
        let docs = docs("b");
        let forward = find_duplicates(&InTurn, &docs, &matching, &made_with);
        for shift in 1..docs.len() {
            let mut turned = docs.clone();
            turned.rotate_left(shift);
            assert_eq!(find_duplicates(&InTurn, &turned, &matching, &made_with), forward, "rotated by {shift}");
            turned.reverse();
            assert_eq!(find_duplicates(&InTurn, &turned, &matching, &made_with), forward, "reversed");
        }
    }

    #[test]
    fn neighbours_come_most_similar_first_and_compare_agrees() {
        let (matching, made_with) = settings();
        let docs = docs("a");
        let found = neighbors(&InTurn, &docs, &matching, &made_with, 0.5, 5);
        let of_story: Vec<u64> = found[0].iter().map(|n| n.key.0).collect();
        assert_eq!(of_story, [120, 110]);
        assert!(found[3].is_empty());
        let c = compare(&docs[0], &docs[1], 0.8);
        assert!((c.jaccard - found[0][1].jaccard).abs() < 1e-12 && !c.duplicate && !c.same_text);
        let again = compare(&docs[0], &docs[2], 0.8);
        assert!(again.same_text && !again.identical && again.duplicate);
    }

    #[test]
    fn the_nearest_of_the_wanted_documents_is_their_first_neighbour() {
        let (matching, made_with) = settings();
        let docs = docs("a");
        let all = neighbors(&InTurn, &docs, &matching, &made_with, 0.5, 1);
        let wanted = [false, true, false, true];
        let sets = InFingerprints(&docs);
        let nearest = sets::always(nearest_in(&InTurn, &docs, &sets, &matching, &made_with, 0.5, &wanted));
        assert_eq!(nearest[1].as_ref(), all[1].first());
        assert_eq!(nearest[1].as_ref().map(|n| n.key.0), Some(100));
        assert_eq!(nearest[3], None);
        // Not asked for: no answer, though the story has neighbours.
        assert!(!all[0].is_empty() && nearest[0].is_none() && nearest[2].is_none());
    }

    /// `doc` made from a page: its decoded bytes `page`, its main text `text`.
    fn page(id: &str, n: u64, page: &str, text: &str) -> Fingerprint {
        let words: Vec<String> = text.split_whitespace().map(String::from).collect();
        let mut f = doc(id, n, &words);
        f.page_digest = Some(crate::fingerprint::page_digest(page));
        f
    }

    /// A wiki's stub: 22 words after one line that tells two stubs apart,
    /// which the extractor leaves out.
    const STUB: &str = "this article about a small village in the northern hills is a stub you can help \
                        the wiki by adding to it today";

    #[test]
    fn two_stubs_with_one_text_are_same_text_and_a_copy_of_one_page_is_identical() {
        let (matching, made_with) = settings();
        let docs = vec![
            page("w/alder.html", 0, &format!("<p>Alder, a hamlet</p><p>{STUB}</p>"), STUB),
            page("w/birch.html", 1, &format!("<p>Birch, a hamlet</p><p>{STUB}</p>"), STUB),
            page("w/birch-copy.html", 2, &format!("<p>Birch, a hamlet</p><p>{STUB}</p>"), STUB),
        ];
        let found = find_duplicates(&InTurn, &docs, &matching, &made_with);
        assert_eq!(found.clusters.len(), 1);
        let c = &found.clusters[0];
        assert_eq!(c.kind(), SAME_TEXT);
        let kinds: Vec<&str> = c.members.iter().map(Member::kind).collect();
        let rep = c.members.iter().position(|m| m.key == c.representative).unwrap();
        assert_eq!(kinds[rep], IDENTICAL, "the representative is its own page");
        let birch = compare(&docs[1], &docs[2], 0.8);
        assert!(birch.identical && !birch.same_text && birch.duplicate);
        let stubs = compare(&docs[0], &docs[1], 0.8);
        assert!(stubs.same_text && !stubs.identical && stubs.jaccard == 1.0);
        let pair = find_duplicates(&InTurn, &docs[1..], &matching, &made_with);
        assert_eq!(pair.clusters[0].kind(), IDENTICAL);
    }

    #[test]
    fn thin_pages_sharing_a_heading_are_never_duplicates_unless_identical() {
        // What a thin page keeps when its body is lost: a two-word heading
        // (one shingle), or the heading and a caption (two).
        let (matching, made_with) = settings();
        let docs = vec![
            page("a/one.html", 0, "<article><h2>Popular posts</h2><p>one</p></article>", "popular posts"),
            page("a/two.html", 1, "<article><h2>Popular posts</h2><p>two</p></article>", "popular posts"),
            page("b/three.html", 2, "<h2>Popular posts</h2><figure>a pier</figure>", "popular posts a pier at dusk"),
        ];
        assert!(docs.iter().all(|d| d.shingles.len() < verify::MIN_SHARED_SHINGLES));
        let found = find_duplicates(&InTurn, &docs, &matching, &made_with);
        assert!(found.clusters.is_empty() && found.edges.is_empty(), "{found:?}");
        assert!(neighbors(&InTurn, &docs, &matching, &made_with, 0.1, 5).iter().all(Vec::is_empty));
        let c = compare(&docs[0], &docs[1], 0.8);
        assert!(c.same_text && c.jaccard == 1.0 && !c.duplicate, "the numbers, not the verdict: {c:?}");
        // The same page fetched twice is a duplicate however thin.
        let mut again = docs.clone();
        again[1] = page("a/two.html", 1, "<article><h2>Popular posts</h2><p>one</p></article>", "popular posts");
        let found = find_duplicates(&InTurn, &again, &matching, &made_with);
        assert_eq!(found.clusters.len(), 1);
        assert_eq!((found.clusters[0].kind(), found.clusters[0].members.len()), (IDENTICAL, 2));
        assert!(compare(&again[0], &again[1], 0.8).duplicate);
    }

    /// Doc pages chained by what they share: B holds A and C, D holds C
    /// and E, and a copy of E; A, C and E share nothing, nor do B and D
    /// enough to be a pair.
    #[test]
    fn containment_clusters_hold_every_member_in_their_representative() {
        let words = |p: &str| -> Vec<String> { (0..40).map(|i| format!("{p}{i}")).collect() };
        let (a, c, e) = (words("a"), words("c"), words("e"));
        let both = |x: &[String], y: &[String]| -> Vec<String> { x.iter().chain(y).cloned().collect() };
        let docs = vec![
            doc("s/a.html", 0, &a),
            doc("s/b.html", 1, &both(&a, &c)),
            doc("s/c.html", 2, &c),
            doc("s/d.html", 3, &both(&c, &e)),
            doc("s/e.html", 4, &e),
            doc("s/e-copy.html", 5, &e),
        ];
        let matching = MatchSettings { measure: Measure::Containment, ..MatchSettings::default() };
        let made_with = FingerprintSettings::default();
        let found = find_duplicates(&InTurn, &docs, &matching, &made_with);
        for cluster in &found.clusters {
            for m in &cluster.members {
                assert!(
                    m.containment >= matching.threshold,
                    "{:?} in {:?}: {cluster:?}",
                    m.key,
                    cluster.representative
                );
            }
        }
        let shapes: Vec<(u64, Vec<u64>)> =
            found.clusters.iter().map(|c| (c.representative.0, c.members.iter().map(|m| m.key.0).collect())).collect();
        // D holds three pages (C, E and its copy), B two: D goes first.
        assert_eq!(shapes, [(110, vec![100, 110]), (130, vec![120, 130, 140, 150])]);
        let mut turned = docs.clone();
        turned.reverse();
        assert_eq!(find_duplicates(&InTurn, &turned, &matching, &made_with), found);
    }

    /// A site of five pages where the extractor kept only the tagline on
    /// three: once the tagline is dropped as the site's template, those
    /// three have nothing of their own and are no one's duplicates.
    #[test]
    fn pages_that_are_only_their_sites_template_are_never_duplicates() {
        let tagline: Vec<String> = "the harbour gazette news and views from the island every day since 1921"
            .split(' ')
            .map(String::from)
            .collect();
        let template = Shingler::new(ShingleConfig::default()).shingle(&tagline.join(" ")).hashes;
        let article =
            |p: &str| -> Vec<String> { tagline.iter().cloned().chain((0..80).map(|i| format!("{p}{i}"))).collect() };
        let mut docs = vec![
            doc("s/one.html", 0, &article("ferry")),
            doc("s/two.html", 1, &tagline),
            doc("s/three.html", 2, &article("council")),
            doc("s/four.html", 3, &tagline),
            doc("s/five.html", 4, &tagline),
        ];
        for d in &mut docs {
            d.drop_template(&template);
            d.minhash = MinHasher::new(128, 42).sketch(&d.shingles);
        }
        let only: Vec<bool> = docs.iter().map(|d| d.template_only).collect();
        assert_eq!(only, [false, true, false, true, true]);
        let (matching, made_with) = settings();
        let found = find_duplicates(&InTurn, &docs, &matching, &made_with);
        assert_eq!(found.clusters, [], "{found:?}");
        assert!(found.edges.is_empty() && found.stats.exact_duplicates == 0);
        let near = neighbors(&InTurn, &docs, &matching, &made_with, 0.1, 5);
        assert!(near.iter().all(Vec::is_empty), "{near:?}");
    }
}
