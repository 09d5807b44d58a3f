//! MinHash signatures.
//!
//! Permutation `i` maps a 64-bit shingle hash `x` to the high 32 bits of
//! `a_i * x + b_i` (mod 2^64), with `a_i` odd: the multiply-shift family,
//! which is cheap enough to vectorize. Signatures keep 32-bit minima, as rensa
//! does; collisions at that width shift a Jaccard estimate by far less than
//! the sampling error of 128 permutations. Parameters come from a seeded
//! SplitMix64 stream, so signatures are identical across runs and machines.

/// A MinHash signature: one minimum per permutation.
pub type Signature = Vec<u32>;

/// Number of permutations processed together; signatures are padded to a
/// multiple internally and truncated on output.
const LANES: usize = 16;

/// Computes signatures for one (permutations, seed) setting.
#[derive(Debug, Clone)]
pub struct MinHasher {
    permutations: usize,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl MinHasher {
    /// `permutations` must be at least 1.
    pub fn new(permutations: usize, seed: u64) -> Self {
        let padded = permutations.max(1).div_ceil(LANES) * LANES;
        let mut state = seed;
        let mut a = Vec::with_capacity(padded);
        let mut b = Vec::with_capacity(padded);
        for _ in 0..padded {
            a.push(splitmix64(&mut state) | 1);
            b.push(splitmix64(&mut state));
        }
        MinHasher { permutations: permutations.max(1), a, b }
    }

    pub fn permutations(&self) -> usize {
        self.permutations
    }

    /// The signature of a set of shingle hashes. An empty set gives all
    /// `u32::MAX`, which matches nothing but another empty set.
    pub fn sketch(&self, shingles: &[u64]) -> Signature {
        let mut out = vec![u32::MAX; self.a.len()];
        dispatch(&self.a, &self.b, shingles, &mut out);
        out.truncate(self.permutations);
        out
    }
}

/// Estimated Jaccard similarity: the share of permutations whose minima agree.
pub fn estimate(a: &[u32], b: &[u32]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    same as f64 / n as f64
}

/// Picks the widest vector unit the CPU has; the body is the same portable
/// code, compiled once per target feature set.
fn dispatch(a: &[u64], b: &[u64], shingles: &[u64], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512dq") && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the features were just detected on this CPU.
            return unsafe { sketch_avx512(a, b, shingles, out) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: as above.
            return unsafe { sketch_avx2(a, b, shingles, out) };
        }
    }
    sketch_portable(a, b, shingles, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2")]
unsafe fn sketch_avx512(a: &[u64], b: &[u64], shingles: &[u64], out: &mut [u32]) {
    sketch_portable(a, b, shingles, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sketch_avx2(a: &[u64], b: &[u64], shingles: &[u64], out: &mut [u32]) {
    sketch_portable(a, b, shingles, out)
}

#[inline(always)]
fn sketch_portable(a: &[u64], b: &[u64], shingles: &[u64], out: &mut [u32]) {
    for ((a, b), out) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)).zip(out.chunks_exact_mut(LANES)) {
        let a: &[u64; LANES] = a.try_into().expect("chunk of LANES");
        let b: &[u64; LANES] = b.try_into().expect("chunk of LANES");
        let mut mins = [u32::MAX; LANES];
        for &x in shingles {
            for j in 0..LANES {
                let h = (a[j].wrapping_mul(x).wrapping_add(b[j]) >> 32) as u32;
                mins[j] = mins[j].min(h);
            }
        }
        out.copy_from_slice(&mins);
    }
}

/// SplitMix64: a seeded stream of well-mixed 64-bit values.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| crate::shingle::fmix64(i + 1)).collect()
    }

    #[test]
    fn deterministic_and_sized() {
        let m = MinHasher::new(100, 7);
        let s = set(0..50);
        assert_eq!(m.sketch(&s).len(), 100);
        assert_eq!(m.sketch(&s), MinHasher::new(100, 7).sketch(&s));
        assert_ne!(m.sketch(&s), MinHasher::new(100, 8).sketch(&s));
    }

    #[test]
    fn vectorized_and_portable_paths_agree() {
        let m = MinHasher::new(128, 1);
        let s = set(0..300);
        let mut portable = vec![u32::MAX; 128];
        sketch_portable(&m.a, &m.b, &s, &mut portable);
        assert_eq!(m.sketch(&s), portable);
    }

    #[test]
    fn estimate_tracks_jaccard() {
        // |A ∩ B| = 600, |A ∪ B| = 1000: J = 0.6.
        let m = MinHasher::new(512, 3);
        let a = m.sketch(&set(0..800));
        let b = m.sketch(&set(200..1000));
        let est = estimate(&a, &b);
        assert!((est - 0.6).abs() < 0.07, "estimate {est}");
        assert_eq!(estimate(&a, &a), 1.0);
    }
}
