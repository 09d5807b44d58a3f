//! Exact confirmation of candidate pairs on the real shingle sets.
//!
//! Sketches only nominate pairs; a similarity that webdup reports is always
//! computed here from the full sets, never estimated.

use serde::{Deserialize, Serialize};

use crate::sets::Sets;
use crate::units::{InTurn, Units};

/// The fewest shared shingles a duplicate verdict may rest on (after
/// template suppression), unless the two pages are identical (the same
/// decoded bytes). Five shingles of five words are nine words in a row: a
/// sentence of a page's own. Below it is what a thin page keeps when its
/// body is lost (a heading, a caption, a byline: one or two shingles), and
/// two such pages sharing it say nothing of their content, whatever their
/// Jaccard. Held in shingles, not words, because shingles are what
/// verification compares.
pub const MIN_SHARED_SHINGLES: usize = 5;

/// Exact overlap of two shingle sets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Overlap {
    /// Shingles in both.
    pub shared: usize,
    pub len_a: usize,
    pub len_b: usize,
}

impl Overlap {
    /// Computes the overlap of two sorted, distinct hash lists.
    pub fn of(a: &[u64], b: &[u64]) -> Overlap {
        Overlap { shared: intersection_len(a, b), len_a: a.len(), len_b: b.len() }
    }

    /// Enough shared text for a verdict: at least [`MIN_SHARED_SHINGLES`].
    pub fn enough_text(&self) -> bool {
        self.shared >= MIN_SHARED_SHINGLES
    }

    /// |A ∩ B| / |A ∪ B|; two empty sets are identical (1.0).
    pub fn jaccard(&self) -> f64 {
        let union = self.len_a + self.len_b - self.shared;
        if union == 0 { 1.0 } else { self.shared as f64 / union as f64 }
    }

    /// Share of A's shingles found in B.
    pub fn containment_a_in_b(&self) -> f64 {
        if self.len_a == 0 { 1.0 } else { self.shared as f64 / self.len_a as f64 }
    }

    /// Share of B's shingles found in A.
    pub fn containment_b_in_a(&self) -> f64 {
        if self.len_b == 0 { 1.0 } else { self.shared as f64 / self.len_b as f64 }
    }

    /// Share of the smaller set's shingles found in the larger: the greater
    /// of the two containments.
    pub fn containment_of_smaller(&self) -> f64 {
        self.containment_a_in_b().max(self.containment_b_in_a())
    }
}

/// A similarity as every report writes it in JSON and CSV: to 6 decimals
/// (tables for people show 4).
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Serializes a similarity through [`round6`].
pub fn serialize_round6<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*x))
}

/// What a similarity threshold is compared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// |A ∩ B| / |A ∪ B|: the two pages are mostly the same text.
    #[default]
    Jaccard,
    /// |A ∩ B| / min(|A|, |B|): the smaller page is mostly found in the
    /// larger (an excerpt, a trimmed copy, an article with comments added).
    Containment,
}

impl Measure {
    /// This measure of an overlap.
    pub fn of(self, o: &Overlap) -> f64 {
        match self {
            Measure::Jaccard => o.jaccard(),
            Measure::Containment => o.containment_of_smaller(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Measure::Jaccard => "jaccard",
            Measure::Containment => "containment",
        }
    }
}

/// Size of the intersection of two sorted, distinct lists.
pub fn intersection_len(a: &[u64], b: &[u64]) -> usize {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return 0;
    }
    // Galloping pays off when one set is much smaller than the other.
    if large.len() / small.len() >= 32 {
        return small.iter().filter(|x| large.binary_search(x).is_ok()).count();
    }
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < small.len() && j < large.len() {
        let (x, y) = (small[i], large[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

/// A confirmed pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Edge {
    pub a: u32,
    pub b: u32,
    pub overlap: Overlap,
}

impl Edge {
    pub fn jaccard(&self) -> f64 {
        self.overlap.jaccard()
    }
}

/// Keeps the candidate pairs whose exact Jaccard is at least `threshold`.
/// The output keeps the (sorted) order of `candidates`.
pub fn confirm(candidates: &[(u32, u32)], sets: &[&[u64]], threshold: f64) -> Vec<Edge> {
    confirm_by(Measure::Jaccard, candidates, sets, threshold)
}

/// Keeps the candidate pairs whose exact `measure` is at least `threshold`.
pub fn confirm_by(measure: Measure, candidates: &[(u32, u32)], sets: &[&[u64]], threshold: f64) -> Vec<Edge> {
    confirm_by_on(&InTurn, measure, candidates, sets, threshold)
}

/// Candidate pairs per unit of [`confirm_by_on`]: enough work to be worth a
/// task, few enough that the units spread over the threads.
pub const PAIRS_PER_UNIT: usize = 4096;

/// [`confirm_by`] with the pairs run by `units`, [`PAIRS_PER_UNIT`] per unit.
pub fn confirm_by_on(
    units: &impl Units,
    measure: Measure,
    candidates: &[(u32, u32)],
    sets: &[&[u64]],
    threshold: f64,
) -> Vec<Edge> {
    crate::sets::always(confirm_sets_on(units, measure, candidates, sets, threshold))
}

/// [`confirm_by_on`] over sets read through `sets` (held in memory or read
/// back from a spill): each unit reads a pair's first set once for all its
/// pairs in a row (candidates are sorted), and only the pairs the sizes
/// leave possible are read at all.
pub fn confirm_sets_on<S: Sets + ?Sized>(
    units: &impl Units,
    measure: Measure,
    candidates: &[(u32, u32)],
    sets: &S,
    threshold: f64,
) -> Result<Vec<Edge>, S::Error> {
    let chunks = candidates.len().div_ceil(PAIRS_PER_UNIT);
    let per_chunk = units.map(chunks, |c| {
        let chunk = &candidates[c * PAIRS_PER_UNIT..((c + 1) * PAIRS_PER_UNIT).min(candidates.len())];
        let (mut buf_a, mut buf_b) = (Vec::new(), Vec::new());
        let mut edges = Vec::new();
        for run in chunk.chunk_by(|x, y| x.0 == y.0) {
            let a = run[0].0;
            let mut bs =
                run.iter().map(|&(_, b)| b).filter(|&b| possible(measure, sets.len(a), sets.len(b), threshold));
            let Some(first) = bs.next() else { continue };
            let sa = sets.get(a, &mut buf_a)?;
            for b in std::iter::once(first).chain(bs) {
                let sb = sets.get(b, &mut buf_b)?;
                edges.extend(confirm_sets(measure, a, b, sa, sb, threshold));
            }
        }
        Ok(edges)
    });
    let mut edges = Vec::new();
    for chunk in per_chunk {
        edges.extend(chunk?);
    }
    Ok(edges)
}

/// Whether sets of these sizes can reach `threshold`: enough shingles to
/// judge, and for Jaccard, no more than the ratio of the sizes.
fn possible(measure: Measure, a: usize, b: usize, threshold: f64) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    lo >= MIN_SHARED_SHINGLES && (measure != Measure::Jaccard || (lo as f64) >= threshold * hi as f64 - 1e-9)
}

/// The edge between documents `a` and `b` when their exact `measure`
/// reaches `threshold` on enough shared text ([`Overlap::enough_text`]).
pub fn confirm_pair(measure: Measure, a: u32, b: u32, sets: &[&[u64]], threshold: f64) -> Option<Edge> {
    let (sa, sb) = (sets[a as usize], sets[b as usize]);
    if !possible(measure, sa.len(), sb.len(), threshold) {
        return None;
    }
    confirm_sets(measure, a, b, sa, sb, threshold)
}

fn confirm_sets(measure: Measure, a: u32, b: u32, sa: &[u64], sb: &[u64], threshold: f64) -> Option<Edge> {
    let overlap = Overlap::of(sa, sb);
    (overlap.enough_text() && measure.of(&overlap) >= threshold).then_some(Edge { a, b, overlap })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_measures() {
        let o = Overlap::of(&[1, 2, 3, 4], &[3, 4, 5]);
        assert_eq!(o.shared, 2);
        assert!((o.jaccard() - 0.4).abs() < 1e-12);
        assert_eq!(o.containment_a_in_b(), 0.5);
        assert!((o.containment_b_in_a() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Overlap::of(&[], &[]).jaccard(), 1.0);
    }

    #[test]
    fn galloping_and_merge_agree() {
        let large: Vec<u64> = (0..10_000).map(|i| i * 3).collect();
        let small = vec![0, 3, 4, 9_000, 29_997, 40_000];
        assert_eq!(intersection_len(&small, &large), 4);
        assert_eq!(intersection_len(&large, &small), 4);
    }

    #[test]
    fn confirm_keeps_pairs_at_or_above_threshold() {
        let a: Vec<u64> = (0..10).collect();
        let b: Vec<u64> = (0..8).collect();
        let c: Vec<u64> = (100..110).collect();
        let sets: Vec<&[u64]> = vec![&a, &b, &c];
        let edges = confirm(&[(0, 1), (0, 2), (1, 2)], &sets, 0.8);
        assert_eq!(edges.len(), 1);
        assert_eq!((edges[0].a, edges[0].b), (0, 1));
        assert_eq!(edges[0].jaccard(), 0.8);
        // An excerpt: 5 of 10 shingles, all found in the page.
        let excerpt: Vec<u64> = (2..7).collect();
        let sets: Vec<&[u64]> = vec![&a, &excerpt];
        assert!(confirm(&[(0, 1)], &sets, 0.8).is_empty());
        let edges = confirm_by(Measure::Containment, &[(0, 1)], &sets, 0.8);
        assert_eq!(edges.len(), 1);
        assert_eq!(Measure::Containment.of(&edges[0].overlap), 1.0);
    }

    #[test]
    fn no_pair_is_confirmed_on_fewer_shared_shingles_than_the_floor() {
        // Two thin pages of one shared shingle (a heading) and an excerpt
        // of four: each measure is 1.0, but too little text to judge.
        let heading: Vec<u64> = vec![7];
        let four: Vec<u64> = (0..MIN_SHARED_SHINGLES as u64 - 1).collect();
        let page: Vec<u64> = (0..40).collect();
        let sets: Vec<&[u64]> = vec![&heading, &heading, &four, &page];
        for measure in [Measure::Jaccard, Measure::Containment] {
            assert!(confirm_by(measure, &[(0, 1), (2, 3)], &sets, 0.5).is_empty(), "{measure:?}");
        }
        assert!(!Overlap::of(&heading, &heading).enough_text());
        assert!(Overlap::of(&page, &page).enough_text());
    }
}
