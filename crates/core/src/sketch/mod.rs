//! Fixed-size sketches of a shingle set: MinHash signatures (for LSH) and
//! 64-bit SimHash fingerprints (for Hamming-distance search).

pub mod minhash;
pub mod simhash;

pub use minhash::{MinHasher, Signature};
pub use simhash::{SimHashWeighting, simhash};
