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

use rayon::prelude::*;
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
    let per_band: Vec<Vec<(u32, u32)>> = (0..params.bands)
        .into_par_iter()
        .map(|band| {
            let mut keys: Vec<(u64, u32)> =
                signatures.iter().enumerate().map(|(i, s)| (band_key(s, params, band), i as u32)).collect();
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
        })
        .collect();
    super::normalize_pairs(per_band.concat())
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
    fn candidates_share_a_band() {
        let p = LshParams { bands: 2, rows: 2 };
        let a = [1, 2, 3, 4];
        let b = [1, 2, 9, 9];
        let c = [7, 7, 3, 4];
        let d = [5, 6, 7, 8];
        let sigs: Vec<&[u32]> = vec![&a, &b, &c, &d];
        assert_eq!(candidate_pairs(&sigs, p), [(0, 1), (0, 2)]);
    }
}
