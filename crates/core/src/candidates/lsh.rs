//! MinHash LSH: signatures cut into `bands` bands of `rows` rows; two
//! documents become candidates when any band agrees entirely (a shared
//! "supershingle", in Broder's words).
//!
//! The chance that a pair with Jaccard `s` becomes a candidate is
//! `1 - (1 - s^rows)^bands`, an S-curve. Like datasketch we pick `(bands,
//! rows)` by minimizing the weighted false-positive area below the threshold
//! plus the false-negative area above it. Unlike datasketch we first demand
//! that the curve reach [`RECALL_FLOOR`] at the threshold itself: every
//! candidate is verified exactly here, so a false positive costs one set
//! intersection while a false negative is a duplicate never reported.
//! (datasketch's choice for t = 0.8 and 128 permutations, 9 bands of 13 rows,
//! finds only 40% of pairs at exactly 0.8.)

use std::sync::{Mutex, PoisonError};

use crate::units::{InTurn, Units};
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The least probability, at the threshold, that a pair becomes a candidate.
pub const RECALL_FLOOR: f64 = 0.995;
const FALSE_POSITIVE_WEIGHT: f64 = 0.5;
const FALSE_NEGATIVE_WEIGHT: f64 = 0.5;

/// A banding of MinHash signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LshParams {
    pub bands: usize,
    pub rows: usize,
}

impl LshParams {
    /// The banding for `threshold` with `permutations` rows in total.
    pub fn optimal(threshold: f64, permutations: usize) -> LshParams {
        let t = threshold.clamp(0.0, 1.0);
        let mut best: Option<(bool, f64, LshParams)> = None;
        for bands in 1..=permutations {
            for rows in 1..=permutations / bands {
                let p = LshParams { bands, rows };
                let meets_floor = p.probability(t) >= RECALL_FLOOR;
                let cost =
                    FALSE_POSITIVE_WEIGHT * p.false_positive_area(t) + FALSE_NEGATIVE_WEIGHT * p.false_negative_area(t);
                // Prefer any choice that meets the floor; among those, the cheapest.
                let better = match best {
                    None => true,
                    Some((best_meets, best_cost, _)) => {
                        (meets_floor && !best_meets) || (meets_floor == best_meets && cost < best_cost)
                    }
                };
                if better {
                    best = Some((meets_floor, cost, p));
                }
            }
        }
        best.map_or(LshParams { bands: 1, rows: 1 }, |b| b.2)
    }

    /// Probability that a pair with Jaccard `s` becomes a candidate.
    pub fn probability(&self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }

    /// Area under the S-curve below the threshold.
    pub fn false_positive_area(&self, t: f64) -> f64 {
        integrate(|s| self.probability(s), 0.0, t)
    }

    /// Area above the S-curve beyond the threshold.
    pub fn false_negative_area(&self, t: f64) -> f64 {
        integrate(|s| 1.0 - self.probability(s), t, 1.0)
    }

    /// Number of signature rows used (at most the permutation count).
    pub fn used_rows(&self) -> usize {
        self.bands * self.rows
    }
}

fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const STEPS: usize = 100;
    let h = (b - a) / STEPS as f64;
    (0..STEPS).map(|i| f(a + (i as f64 + 0.5) * h)).sum::<f64>() * h
}

/// The key of band `band` of a signature.
pub fn band_key(signature: &[u32], params: LshParams, band: usize) -> u64 {
    let rows = &signature[band * params.rows..(band + 1) * params.rows];
    let mut bytes = [0u8; 4 * 64];
    let mut h = band as u64;
    // Hash in fixed-size pieces so any row count works without allocating.
    for chunk in rows.chunks(64) {
        for (i, r) in chunk.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&r.to_le_bytes());
        }
        h = xxh3_64_with_seed(&bytes[..4 * chunk.len()], h);
    }
    h
}

/// All pairs of signatures that agree on at least one band.
///
/// `signatures[i]` must have at least `params.used_rows()` rows.
pub fn candidate_pairs(signatures: &[&[u32]], params: LshParams) -> Vec<(u32, u32)> {
    candidate_pairs_on(&InTurn, signatures, params)
}

/// [`candidate_pairs`] with the bands run by `units`.
pub fn candidate_pairs_on(units: &impl Units, signatures: &[&[u32]], params: LshParams) -> Vec<(u32, u32)> {
    crate::sets::always(candidate_pairs_by(units, signatures.len(), params, &one_by_one(held(signatures))))
}

/// Reads signatures held in memory, one at a time.
fn held<'a>(
    signatures: &'a [&'a [u32]],
) -> impl Fn(u32, &mut Vec<u32>) -> Result<(), std::convert::Infallible> + Sync + 'a {
    |i, buf| {
        buf.clear();
        buf.extend_from_slice(signatures[i as usize]);
        Ok(())
    }
}

/// What a range reader of [`candidate_pairs_by`] hands each signature of
/// its range to, in order, with the document's position. A source that
/// keeps signatures side by side reads a range at once
/// ([`crate::sets::Sketches::signatures`]).
pub type ReadRange<'f> = &'f mut dyn FnMut(u32, &[u32]);

/// A range reader that reads each signature with `read(i, buf)`.
pub fn one_by_one<E>(
    read: impl Fn(u32, &mut Vec<u32>) -> Result<(), E> + Sync,
) -> impl Fn(std::ops::Range<u32>, ReadRange<'_>) -> Result<(), E> + Sync {
    move |range, each| crate::sets::signature_by_signature(range, &read, each)
}

/// Bands keyed in one pass over the signatures: each pass reads every
/// signature once, and holds 16 bytes a document for each of its bands.
const BANDS_A_PASS: usize = 4;

/// Signatures read by one unit of a pass.
const SIGNATURES_A_UNIT: usize = 8192;

/// [`candidate_pairs_on`] over `n` signatures that `read(range, each)`
/// hands over a range at a time, from memory or from disk. The signatures
/// are read a few bands at a time ([`BANDS_A_PASS`]), so a run whose
/// signatures wait on disk never holds them all; the pairs are the same
/// however they are read.
pub fn candidate_pairs_by<E, R>(units: &impl Units, n: usize, params: LshParams, read: &R) -> Result<Vec<(u32, u32)>, E>
where
    E: Send,
    R: Fn(std::ops::Range<u32>, ReadRange<'_>) -> Result<(), E> + Sync,
{
    let mut pairs = Vec::new();
    let mut first = 0;
    while first < params.bands {
        let bands = first..(first + BANDS_A_PASS).min(params.bands);
        first = bands.end;
        // Each unit keys its run of signatures on every band of the pass.
        let keyed = units.map(n.div_ceil(SIGNATURES_A_UNIT), |u| -> Result<Vec<Vec<(u64, u32)>>, E> {
            let docs = u * SIGNATURES_A_UNIT..((u + 1) * SIGNATURES_A_UNIT).min(n);
            let mut keys = vec![Vec::with_capacity(docs.len()); bands.len()];
            read(docs.start as u32..docs.end as u32, &mut |i, signature| {
                for (k, band) in bands.clone().enumerate() {
                    keys[k].push((band_key(signature, params, band), i));
                }
            })?;
            Ok(keys)
        });
        let mut per_band: Vec<Vec<(u64, u32)>> = bands.clone().map(|_| Vec::with_capacity(n)).collect();
        for unit in keyed {
            for (band, keys) in per_band.iter_mut().zip(unit?) {
                band.extend(keys);
            }
        }
        // Each band's keys are sorted where they are, by the unit taking them.
        let per_band: Vec<Mutex<Vec<(u64, u32)>>> = per_band.into_iter().map(Mutex::new).collect();
        let found = units.map(per_band.len(), |k| {
            pairs_of_keys(std::mem::take(&mut *per_band[k].lock().unwrap_or_else(PoisonError::into_inner)))
        });
        pairs.extend(found.into_iter().flatten());
    }
    Ok(super::normalize_pairs(pairs))
}

/// The pairs of documents whose band keys agree (unsorted; a pair agreeing
/// on several bands comes out of each), from `(key, document)`.
fn pairs_of_keys(mut keys: Vec<(u64, u32)>) -> Vec<(u32, u32)> {
    keys.sort_unstable();
    let mut pairs = Vec::new();
    for run in keys.chunk_by(|a, b| a.0 == b.0) {
        for (x, a) in run.iter().enumerate() {
            for b in &run[x + 1..] {
                pairs.push((a.1, b.1));
            }
        }
    }
    pairs
}

/// Containment search handles pages up to this many times larger than the
/// page found in them (an excerpt of a 32nd of its source is found, if at
/// all, by chance).
pub const MAX_SIZE_RATIO: usize = 32;

/// The least Jaccard of two sets of sizes `small` ≤ `large` when at least
/// `threshold` of the smaller is in the larger: `t·s / (s + l − t·s)`.
pub fn containment_floor(small: usize, large: usize, threshold: f64) -> f64 {
    let (s, l) = (small as f64, large as f64);
    threshold * s / (s + l - threshold * s)
}

/// The class (power of two) of a shingle count, as [`containment_pairs`] groups them.
pub fn size_class(size: usize) -> usize {
    size.max(1).ilog2() as usize
}

/// The banding for checking a set of `query` shingles against sets in
/// class `class`: the lowest [`containment_floor`] over the class's sizes
/// within [`MAX_SIZE_RATIO`] of the query, or `None` when none is.
pub fn containment_banding(query: usize, class: usize, threshold: f64, permutations: usize) -> Option<LshParams> {
    let query = query.max(1);
    let (lo, hi) = (1usize << class, (1usize << (class + 1)) - 1);
    let floors = [lo, hi]
        .into_iter()
        .filter(|&x| x.max(query) <= x.min(query) * MAX_SIZE_RATIO)
        .map(|x| containment_floor(x.min(query), x.max(query), threshold));
    floors.min_by(f64::total_cmp).map(|j| LshParams::optimal(j, permutations))
}

/// True when two signatures agree on a whole band.
pub fn share_a_band(a: &[u32], b: &[u32], params: LshParams) -> bool {
    (0..params.bands).any(|band| {
        let rows = band * params.rows..(band + 1) * params.rows;
        a.get(rows.clone()).is_some_and(|x| b.get(rows).is_some_and(|y| x == y))
    })
}

/// The bandings run by [`containment_pairs`]: one per pair of size classes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContainmentPlan {
    /// Size classes with documents in them.
    pub classes: usize,
    /// Bandings run, one per pair of classes within [`MAX_SIZE_RATIO`].
    pub passes: usize,
    /// The banding of the pass with the lowest Jaccard threshold.
    pub widest: Option<LshParams>,
}

/// Pairs whose smaller set may have at least `threshold` of its shingles in
/// the larger, after LSH Ensemble (Zhu et al., VLDB 2016): containment
/// turns into a Jaccard threshold once the sizes are bounded. Documents are
/// put in size classes (powers of two); for each pair of classes, the
/// lowest Jaccard a contained pair of those sizes can have,
/// `t·q / (q + u − t·q)` for the smallest size `q` of the lower class and
/// the largest `u` of the upper, sets the banding for that pass.
/// `sizes[i]` is the shingle count of `signatures[i]`; each signature must
/// have `permutations` rows.
pub fn containment_pairs(
    signatures: &[&[u32]],
    sizes: &[usize],
    threshold: f64,
    permutations: usize,
) -> (Vec<(u32, u32)>, ContainmentPlan) {
    containment_pairs_on(&InTurn, signatures, sizes, threshold, permutations)
}

/// [`containment_pairs`] with each pass's bands run by `units`.
pub fn containment_pairs_on(
    units: &impl Units,
    signatures: &[&[u32]],
    sizes: &[usize],
    threshold: f64,
    permutations: usize,
) -> (Vec<(u32, u32)>, ContainmentPlan) {
    crate::sets::always(containment_pairs_by(units, sizes, threshold, permutations, &held(signatures)))
}

/// [`containment_pairs_on`] with document `i`'s signature put in `buf` by
/// `read(i, buf)`, as [`candidate_pairs_by`] reads them.
pub fn containment_pairs_by<E, R>(
    units: &impl Units,
    sizes: &[usize],
    threshold: f64,
    permutations: usize,
    read: &R,
) -> Result<(Vec<(u32, u32)>, ContainmentPlan), E>
where
    E: Send,
    R: Fn(u32, &mut Vec<u32>) -> Result<(), E> + Sync,
{
    let mut classes: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for (i, &s) in sizes.iter().enumerate() {
        classes.entry(size_class(s)).or_default().push(i as u32);
    }
    let classes: Vec<(usize, Vec<u32>)> = classes.into_iter().collect();
    let bounds: Vec<(usize, usize)> = classes
        .iter()
        .map(|(_, ids)| {
            let sizes = ids.iter().map(|&i| sizes[i as usize]);
            (sizes.clone().min().unwrap_or(1).max(1), sizes.max().unwrap_or(1).max(1))
        })
        .collect();
    let mut plan = ContainmentPlan { classes: classes.len(), passes: 0, widest: None };
    let mut lowest = f64::INFINITY;
    let mut pairs = Vec::new();
    for x in 0..classes.len() {
        for y in x..classes.len() {
            let (q, u) = (bounds[x].0, bounds[y].1);
            if u > q * MAX_SIZE_RATIO {
                break;
            }
            let jaccard = containment_floor(q, u, threshold);
            let params = LshParams::optimal(jaccard, permutations);
            if jaccard < lowest {
                lowest = jaccard;
                plan.widest = Some(params);
            }
            plan.passes += 1;
            let ids: Vec<u32> =
                classes[x].1.iter().chain(if x == y { &[][..] } else { &classes[y].1[..] }).copied().collect();
            let found = candidate_pairs_by(units, ids.len(), params, &one_by_one(|k, buf| read(ids[k as usize], buf)))?;
            pairs.extend(found.into_iter().map(|(a, b)| (ids[a as usize], ids[b as usize])));
        }
    }
    Ok((super::normalize_pairs(pairs), plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimal_params_meet_the_recall_floor_and_use_at_most_n_rows() {
        for &(t, n) in &[(0.5, 128), (0.8, 128), (0.9, 128), (0.95, 256), (0.8, 64)] {
            let p = LshParams::optimal(t, n);
            assert!(p.used_rows() <= n);
            assert!(p.probability(t) >= RECALL_FLOOR, "{t} {n}: {p:?} gives {}", p.probability(t));
            // And it still filters: pairs far below the threshold rarely collide.
            assert!(p.probability(t / 4.0) < 0.1, "{t} {n}: {p:?}");
        }
    }

    #[test]
    fn containment_search_finds_excerpts_and_leaves_unrelated_pages() {
        use crate::sketch::MinHasher;
        let hasher = MinHasher::new(128, 42);
        let page: Vec<u64> = (0..1000).collect();
        let excerpt: Vec<u64> = (300..450).collect();
        let extended: Vec<u64> = (0..1600).collect();
        let other: Vec<u64> = (5000..5150).collect();
        let sets = [&page, &excerpt, &extended, &other];
        let sigs: Vec<Vec<u32>> = sets.iter().map(|s| hasher.sketch(s)).collect();
        let sig_refs: Vec<&[u32]> = sigs.iter().map(Vec::as_slice).collect();
        let sizes: Vec<usize> = sets.iter().map(|s| s.len()).collect();
        // Jaccard of the excerpt and the page is 0.15: far below any
        // Jaccard banding, found by containment's.
        let (pairs, plan) = containment_pairs(&sig_refs, &sizes, 0.8, 128);
        for want in [(0, 1), (0, 2), (1, 2)] {
            assert!(pairs.contains(&want), "{want:?} not in {pairs:?}");
        }
        assert!(plan.passes >= 3 && plan.widest.is_some(), "{plan:?}");
        assert!(!candidate_pairs(&sig_refs, LshParams::optimal(0.8, 128)).contains(&(0, 1)));
        // One query against one stored set, as an index checks.
        let banding = containment_banding(150, size_class(1000), 0.8, 128).unwrap();
        assert!(share_a_band(&sigs[1], &sigs[0], banding));
        assert!(containment_banding(10, size_class(1000), 0.8, 128).is_none(), "100 times larger");
    }

    #[test]
    fn candidates_share_a_band() {
        let p = LshParams { bands: 2, rows: 2 };
        let a = [1, 2, 3, 4];
        let b = [1, 2, 9, 9];
        let c = [7, 7, 3, 4];
        let d = [5, 6, 7, 8];
        let sigs: Vec<&[u32]> = vec![&a, &b, &c, &d];
        assert_eq!(candidate_pairs(&sigs, p), [(0, 1), (0, 2)]);
    }

    /// Signatures read back a few bands a pass, by several units: the pairs
    /// are those found by grouping each band's rows themselves.
    #[test]
    fn signatures_read_in_passes_give_the_pairs_that_share_a_band() {
        use crate::sketch::minhash::splitmix64;
        let params = LshParams { bands: 2 * BANDS_A_PASS + 1, rows: 2 };
        let n = SIGNATURES_A_UNIT + 1808;
        let mut seed = 7u64;
        let sigs: Vec<Vec<u32>> =
            (0..n).map(|_| (0..params.used_rows()).map(|_| (splitmix64(&mut seed) % 100) as u32).collect()).collect();
        let mut want = Vec::new();
        for band in 0..params.bands {
            let mut by_rows: std::collections::HashMap<&[u32], Vec<u32>> = Default::default();
            for (i, s) in sigs.iter().enumerate() {
                by_rows.entry(&s[band * params.rows..(band + 1) * params.rows]).or_default().push(i as u32);
            }
            for ids in by_rows.values() {
                for (x, &a) in ids.iter().enumerate() {
                    want.extend(ids[x + 1..].iter().map(|&b| (a, b)));
                }
            }
        }
        let want = super::super::normalize_pairs(want);
        assert!(want.len() > 1000, "{} pairs", want.len());
        let read = |i: u32, buf: &mut Vec<u32>| -> Result<(), ()> {
            buf.clear();
            buf.extend_from_slice(&sigs[i as usize]);
            Ok(())
        };
        assert_eq!(candidate_pairs_by(&InTurn, n, params, &one_by_one(read)).unwrap(), want);
        let refs: Vec<&[u32]> = sigs.iter().map(Vec::as_slice).collect();
        assert_eq!(candidate_pairs(&refs, params), want);
        // A signature that cannot be read is the pass's error.
        let failing = |i: u32, buf: &mut Vec<u32>| {
            buf.clear();
            buf.extend_from_slice(&sigs[i as usize]);
            if i == 9000 { Err(i) } else { Ok(()) }
        };
        assert_eq!(candidate_pairs_by(&InTurn, n, params, &one_by_one(failing)), Err(9000));
    }
}
