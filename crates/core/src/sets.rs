//! Where the verification reads documents' shingle sets from.
//!
//! Candidates come from sketches, which every document keeps; the sets
//! themselves are needed only to confirm a pair and to score a cluster's
//! members. A run over a few thousand pages keeps them in its fingerprints
//! (read through `fingerprint::InFingerprints`); a run over a million
//! writes them to a file as they are made and reads back the two of each
//! candidate pair (the facade's spill). The core reads through [`Sets`] and
//! never knows which.

use std::convert::Infallible;

/// The shingle sets of documents `0..n`, by position.
pub trait Sets: Sync {
    /// Why a set could not be read (a spill file's I/O error).
    type Error: Send;

    /// How many shingles document `i` has.
    fn len(&self, i: u32) -> usize;

    /// Document `i`'s sorted distinct shingles: borrowed when in memory,
    /// else read into `buf`.
    fn get<'a>(&'a self, i: u32, buf: &'a mut Vec<u64>) -> Result<&'a [u64], Self::Error>;
}

/// The same documents' MinHash signatures, by position: a run that keeps
/// its sets on disk keeps its signatures there too (512 bytes a page at
/// 128 permutations), and candidate generation reads them a few bands at a
/// time ([`crate::candidates::lsh::candidate_pairs_by`]).
pub trait Sketches: Sets {
    /// Document `i`'s MinHash signature, into `buf` (replacing what it held).
    fn signature(&self, i: u32, buf: &mut Vec<u32>) -> Result<(), Self::Error>;

    /// The signatures of documents `range`, each handed to `each` in order
    /// with its position: one by one, unless the source can do better (a
    /// spill reads signatures that lie side by side in one read).
    fn signatures(&self, range: std::ops::Range<u32>, each: &mut dyn FnMut(u32, &[u32])) -> Result<(), Self::Error> {
        signature_by_signature(range, |i, buf| self.signature(i, buf), each)
    }
}

/// The signatures of documents `range`, each read with `read(i, buf)` and
/// handed to `each` in order with its position.
pub fn signature_by_signature<E>(
    range: std::ops::Range<u32>,
    read: impl Fn(u32, &mut Vec<u32>) -> Result<(), E>,
    each: &mut dyn FnMut(u32, &[u32]),
) -> Result<(), E> {
    let mut buf = Vec::new();
    for i in range {
        read(i, &mut buf)?;
        each(i, &buf);
    }
    Ok(())
}

/// Sets held in memory.
impl Sets for [&[u64]] {
    type Error = Infallible;

    fn len(&self, i: u32) -> usize {
        self[i as usize].len()
    }

    fn get<'a>(&'a self, i: u32, _: &'a mut Vec<u64>) -> Result<&'a [u64], Infallible> {
        Ok(self[i as usize])
    }
}

/// The sets of some of another source's documents: `i` is `positions[i]` there.
pub struct Subset<'s, S: ?Sized> {
    pub sets: &'s S,
    pub positions: &'s [u32],
}

impl<S: Sets + ?Sized> Sets for Subset<'_, S> {
    type Error = S::Error;

    fn len(&self, i: u32) -> usize {
        self.sets.len(self.positions[i as usize])
    }

    fn get<'a>(&'a self, i: u32, buf: &'a mut Vec<u64>) -> Result<&'a [u64], S::Error> {
        self.sets.get(self.positions[i as usize], buf)
    }
}

impl<S: Sketches + ?Sized> Sketches for Subset<'_, S> {
    fn signature(&self, i: u32, buf: &mut Vec<u32>) -> Result<(), S::Error> {
        self.sets.signature(self.positions[i as usize], buf)
    }
}

/// The value of a result that cannot fail.
pub fn always<T>(r: Result<T, Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}
