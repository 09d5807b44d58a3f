//! 64-bit SimHash (Charikar), over a document's words weighted by frequency.
//!
//! Each bit of the fingerprint is the sign of the weighted sum of that bit
//! across all features, so documents with mostly the same words get
//! fingerprints a few bits apart.

use serde::Serialize;

/// How a word's weight is computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SimHashWeighting {
    /// Term frequency in the document.
    #[default]
    Tf,
    /// Term frequency times inverse document frequency over the corpus, so
    /// words every page uses count for little.
    TfIdf,
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
    fn single_feature_is_its_own_hash() {
        assert_eq!(simhash([(0xDEAD_BEEF_u64, 2.0)]), 0xDEAD_BEEF);
    }
}
