//! All pairs of 64-bit fingerprints within Hamming distance `k`, with
//! permuted tables (Manku, Jain, Das Sarma, WWW 2007).
//!
//! The 64 bits are cut into `B > k` blocks. Two fingerprints that differ in at
//! most `k` bits agree exactly on at least `B - k` blocks, so for each choice
//! of `B - k` blocks we sort the fingerprints by those blocks (a "permuted
//! table") and compare only fingerprints whose keys are equal. `B` trades the
//! number of tables, `C(B, k)`, against how many fingerprints share a key
//! (about `n / 2^(64 (B-k) / B)`): [`HammingTables::plan`] picks the cheapest
//! for the corpus size. A pair is reported only by the first table in which
//! it meets, so no pair is found twice.

use crate::units::{InTurn, Units};
use serde::Serialize;

/// A plan: how the 64 bits are cut and which block sets key the tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HammingTables {
    pub max_distance: u32,
    /// `(offset, width)` of each block.
    pub blocks: Vec<(u32, u32)>,
    /// For each table, a bitmask over `blocks` of the blocks that key it.
    pub tables: Vec<u64>,
}

/// Rough costs in nanoseconds, measured on x86-64: building and sorting a
/// table entry, and comparing one candidate pair.
const SORT_COST: f64 = 30.0;
const COMPARE_COST: f64 = 2.0;
/// More tables than this is never cheaper than comparing more candidates.
const MAX_TABLES: u128 = 5_000;

impl HammingTables {
    /// The cheapest plan for `n` fingerprints and distance `max_distance`.
    pub fn plan(n: usize, max_distance: u32) -> HammingTables {
        let k = max_distance.min(63);
        let n = n.max(2) as f64;
        let mut best: Option<(f64, u32)> = None;
        for b in (k + 1)..=64 {
            let tables = binomial(b as u128, k as u128);
            if tables > MAX_TABLES {
                break;
            }
            let key_bits = 64.0 * f64::from(b - k) / f64::from(b);
            let per_table = n * SORT_COST + n * n / 2f64.powf(key_bits) / 2.0 * COMPARE_COST;
            let cost = tables as f64 * per_table;
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, b));
            }
        }
        let b = best.map_or(k + 1, |(_, b)| b);
        Self::with_blocks(b, k)
    }

    /// A plan with exactly `blocks` blocks (`blocks > max_distance`).
    pub fn with_blocks(blocks: u32, max_distance: u32) -> HammingTables {
        let b = blocks.clamp(max_distance + 1, 64);
        let mut cut = Vec::with_capacity(b as usize);
        let mut offset = 0;
        for i in 0..b {
            let width = 64 / b + u32::from(i < 64 % b);
            cut.push((offset, width));
            offset += width;
        }
        let choose = (b - max_distance) as usize;
        let mut tables = Vec::new();
        combinations(b as usize, choose, &mut |set| tables.push(set));
        HammingTables { max_distance, blocks: cut, tables }
    }

    /// The bits of `fp` under the table's blocks, packed into a key.
    fn key(&self, table: u64, fp: u64) -> u64 {
        let mut key = 0u64;
        for (i, &(offset, width)) in self.blocks.iter().enumerate() {
            if table & (1 << i) != 0 {
                let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
                key = key.checked_shl(width).unwrap_or(0) | ((fp >> offset) & mask);
            }
        }
        key
    }

    /// Bitmask of the blocks on which `a` and `b` agree.
    fn agreeing_blocks(&self, a: u64, b: u64) -> u64 {
        let x = a ^ b;
        let mut m = 0;
        for (i, &(offset, width)) in self.blocks.iter().enumerate() {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            if (x >> offset) & mask == 0 {
                m |= 1 << i;
            }
        }
        m
    }

    /// All pairs `(i, j)`, `i < j`, with `hamming(fps[i], fps[j]) <= max_distance`,
    /// sorted.
    pub fn pairs_within(&self, fps: &[u64]) -> Vec<(u32, u32)> {
        self.pairs_within_on(&InTurn, fps)
    }

    /// [`HammingTables::pairs_within`] with the tables run by `units`, one unit per table.
    pub fn pairs_within_on(&self, units: &impl Units, fps: &[u64]) -> Vec<(u32, u32)> {
        let per_table: Vec<Vec<(u32, u32)>> = units.map(self.tables.len(), |t| {
            let table = self.tables[t];
            let mut keyed: Vec<(u64, u32)> =
                fps.iter().enumerate().map(|(i, &fp)| (self.key(table, fp), i as u32)).collect();
            keyed.sort_unstable();
            let mut pairs = Vec::new();
            for run in keyed.chunk_by(|a, b| a.0 == b.0) {
                for (x, &(_, i)) in run.iter().enumerate() {
                    let fi = fps[i as usize];
                    for &(_, j) in &run[x + 1..] {
                        let fj = fps[j as usize];
                        if (fi ^ fj).count_ones() <= self.max_distance && self.first_table(fi, fj) == t {
                            pairs.push((i.min(j), i.max(j)));
                        }
                    }
                }
            }
            pairs
        });
        let mut pairs = per_table.concat();
        pairs.sort_unstable();
        pairs
    }

    /// The first table whose blocks all agree for this pair.
    fn first_table(&self, a: u64, b: u64) -> usize {
        let agree = self.agreeing_blocks(a, b);
        self.tables.iter().position(|&t| t & agree == t).unwrap_or(usize::MAX)
    }
}

fn binomial(n: u128, k: u128) -> u128 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1u128, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Calls `f` with each `choose`-subset of `0..n` as a bitmask, in
/// lexicographic order.
fn combinations(n: usize, choose: usize, f: &mut dyn FnMut(u64)) {
    fn rec(start: usize, n: usize, left: usize, acc: u64, f: &mut dyn FnMut(u64)) {
        if left == 0 {
            f(acc);
            return;
        }
        for i in start..=(n - left) {
            rec(i + 1, n, left - 1, acc | (1 << i), f);
        }
    }
    rec(0, n, choose, 0, f);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::minhash::splitmix64;

    fn brute(fps: &[u64], k: u32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for i in 0..fps.len() {
            for j in i + 1..fps.len() {
                if (fps[i] ^ fps[j]).count_ones() <= k {
                    out.push((i as u32, j as u32));
                }
            }
        }
        out
    }

    fn corpus(n: usize, seed: u64) -> Vec<u64> {
        let mut s = seed;
        let mut fps: Vec<u64> = (0..n).map(|_| splitmix64(&mut s)).collect();
        // Plant near neighbours at every distance up to 6.
        for i in 0..n / 4 {
            let flips = (splitmix64(&mut s) % 7) as u32;
            let mut fp = fps[i];
            for _ in 0..flips {
                fp ^= 1 << (splitmix64(&mut s) % 64);
            }
            fps.push(fp);
        }
        fps
    }

    #[test]
    fn matches_brute_force_for_every_plan_shape() {
        let fps = corpus(1500, 11);
        for k in [0, 1, 3, 5] {
            let want = brute(&fps, k);
            for blocks in [k + 1, k + 2, k + 3] {
                let got = HammingTables::with_blocks(blocks, k).pairs_within(&fps);
                assert_eq!(got, want, "k={k} blocks={blocks}");
            }
            assert_eq!(HammingTables::plan(fps.len(), k).pairs_within(&fps), want, "planned k={k}");
        }
    }

    #[test]
    fn duplicates_are_pairs_too() {
        assert_eq!(HammingTables::plan(3, 3).pairs_within(&[5, 5, 5]), [(0, 1), (0, 2), (1, 2)]);
    }

    #[test]
    fn plan_grows_blocks_with_corpus_size() {
        assert_eq!(HammingTables::plan(1_000_000, 3).blocks.len(), 4);
        assert!(HammingTables::plan(100_000_000, 3).blocks.len() > 4);
    }
}
