//! 64-bit SimHash (Charikar), over a document's shingles weighted by frequency.
//!
//! Each bit of the fingerprint is the sign of the weighted sum of that bit
//! across all features, so documents with mostly the same words get
//! fingerprints a few bits apart.

use serde::{Deserialize, Serialize};

/// How a word's weight is computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimHashWeighting {
    /// Term frequency in the document.
    #[default]
    Tf,
    /// Term frequency times inverse document frequency over the corpus, so
    /// words every page uses count for little.
    TfIdf,
}

impl SimHashWeighting {
    /// The name in settings and reports (`tf`, `tfidf`).
    pub fn as_str(self) -> &'static str {
        match self {
            SimHashWeighting::Tf => "tf",
            SimHashWeighting::TfIdf => "tfidf",
        }
    }
}

/// The SimHash of weighted features `(hash, weight)`.
pub fn simhash(features: impl IntoIterator<Item = (u64, f32)>) -> u64 {
    let mut sums = [0f32; 64];
    let mut total = 0f32;
    for (h, w) in features {
        total += w;
        for (bit, sum) in sums.iter_mut().enumerate() {
            // Branch-free so the loop vectorizes: add w where the bit is set.
            *sum += w * ((h >> bit) & 1) as f32;
        }
    }
    // The signed sum is (set - unset) = 2*set - total.
    sums.iter().enumerate().fold(0u64, |fp, (bit, &s)| fp | (u64::from(2.0 * s > total) << bit))
}

/// The SimHash of features that each weigh 1 (a word repeated `n` times
/// weighs `n`: term-frequency weighting).
///
/// Bits are counted eight lanes at a time: byte `j` of `SPREAD[b]` is bit `j`
/// of `b`, so adding `SPREAD` entries counts eight bit positions per add.
/// Lanes are flushed before they can overflow.
pub fn simhash_counted(hashes: &[u64]) -> u64 {
    let mut counts = [0u32; 64];
    for chunk in hashes.chunks(255) {
        let mut lanes = [0u64; 8];
        for &h in chunk {
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane += SPREAD[((h >> (8 * i)) & 0xFF) as usize];
            }
        }
        for (i, lane) in lanes.iter().enumerate() {
            for j in 0..8 {
                counts[8 * i + j] += ((lane >> (8 * j)) & 0xFF) as u32;
            }
        }
    }
    let total = hashes.len() as u32;
    counts.iter().enumerate().fold(0u64, |fp, (bit, &c)| fp | (u64::from(2 * c > total) << bit))
}

const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) != 0 {
                t[b] |= 1 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

/// Hamming distance between two fingerprints.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shingle::fmix64;

    #[test]
    fn similar_feature_sets_are_close_and_different_ones_far() {
        let base: Vec<(u64, f32)> = (0..400u64).map(|i| (fmix64(i), 1.0 + (i % 3) as f32)).collect();
        let mut near = base.clone();
        near.truncate(396);
        near.extend((1000..1004u64).map(|i| (fmix64(i), 1.0)));
        let far: Vec<(u64, f32)> = (5000..5400u64).map(|i| (fmix64(i), 1.0)).collect();
        let (a, b, c) = (simhash(base.clone()), simhash(near), simhash(far));
        assert!(hamming(a, b) <= 6, "near distance {}", hamming(a, b));
        assert!(hamming(a, c) >= 16, "far distance {}", hamming(a, c));
        assert_eq!(simhash(base.clone()), a);
    }

    #[test]
    fn counted_equals_weighted_by_frequency() {
        let words: Vec<u64> = (0..1000u64).map(|i| fmix64(i % 300)).collect();
        let mut tf: std::collections::BTreeMap<u64, f32> = Default::default();
        for &w in &words {
            *tf.entry(w).or_default() += 1.0;
        }
        assert_eq!(simhash_counted(&words), simhash(tf.into_iter()));
        assert_eq!(simhash_counted(&[]), 0);
    }

    #[test]
    fn single_feature_is_its_own_hash() {
        assert_eq!(simhash([(0xDEAD_BEEF_u64, 2.0)]), 0xDEAD_BEEF);
    }
}
