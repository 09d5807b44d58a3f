//! Synthetic corpora with planted near-duplicates, for tests and benchmarks.
//!
//! Words are drawn from a Zipf distribution over a made-up vocabulary, like
//! real text; a share of the documents are edited copies of earlier ones,
//! with a per-copy edit rate drawn at random, so pair similarities spread
//! over the whole range around any threshold.

use webdup_core::sketch::minhash::splitmix64;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    pub documents: usize,
    pub words_per_document: usize,
    pub vocabulary: usize,
    /// Share of documents that are edited copies of an earlier document.
    pub copy_share: f64,
    /// Largest share of words replaced in a copy (drawn uniformly up to it).
    pub max_edit_rate: f64,
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            documents: 1000,
            words_per_document: 500,
            vocabulary: 20_000,
            copy_share: 0.3,
            max_edit_rate: 0.12,
            seed: 1,
        }
    }
}

/// A seeded splitmix64 stream: the generators' only source of chance, so a
/// seed fixes their output (also used by [`crate::corpus`]).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// Generates the documents' texts, in order.
pub fn corpus(config: &SynthConfig) -> Vec<String> {
    let mut rng = Rng(config.seed);
    let vocab: Vec<String> = (0..config.vocabulary.max(1)).map(|i| pseudo_word(i as u64)).collect();
    // Zipf (s = 1) by inverse transform on the cumulative weights.
    let mut cumulative = Vec::with_capacity(vocab.len());
    let mut total = 0.0;
    for rank in 1..=vocab.len() {
        total += 1.0 / rank as f64;
        cumulative.push(total);
    }
    let draw = |rng: &mut Rng| {
        let x = rng.unit() * total;
        cumulative.partition_point(|&c| c < x).min(vocab.len() - 1)
    };
    let mut docs: Vec<Vec<usize>> = Vec::with_capacity(config.documents);
    for _ in 0..config.documents {
        let doc = if !docs.is_empty() && rng.unit() < config.copy_share {
            let mut copy = docs[rng.below(docs.len())].clone();
            let rate = rng.unit() * config.max_edit_rate;
            for w in copy.iter_mut() {
                if rng.unit() < rate {
                    *w = draw(&mut rng);
                }
            }
            // Now and then a paragraph is cut or added, as on real pages.
            if rng.unit() < 0.2 && copy.len() > 40 {
                let at = rng.below(copy.len() - 20);
                let len = rng.below(20);
                copy.drain(at..at + len);
            }
            copy
        } else {
            (0..config.words_per_document).map(|_| draw(&mut rng)).collect()
        };
        docs.push(doc);
    }
    docs.iter().map(|d| d.iter().map(|&w| vocab[w].as_str()).collect::<Vec<_>>().join(" ")).collect()
}

/// A pronounceable made-up word, distinct for each index.
fn pseudo_word(mut i: u64) -> String {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "ru", "ta", "shi", "vo", "pe", "da", "gu", "fi", "zo", "be", "ha", "ji", "qua", "xe",
        "wo", "yu",
    ];
    let mut w = String::new();
    loop {
        w.push_str(SYLLABLES[(i % SYLLABLES.len() as u64) as usize]);
        i /= SYLLABLES.len() as u64;
        if i == 0 {
            break;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_with_copies() {
        let c = SynthConfig { documents: 50, words_per_document: 100, ..Default::default() };
        let a = corpus(&c);
        assert_eq!(a, corpus(&c));
        assert_eq!(a.len(), 50);
        assert!(a[0].split(' ').count() == 100);
        assert_ne!(pseudo_word(3), pseudo_word(23));
    }
}
