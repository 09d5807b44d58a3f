//! Progress of long stages, reported to whoever drives them: the library
//! never draws anything itself.

/// Reports progress of long stages.
pub trait Progress: Sync {
    fn start(&self, _stage: &'static str, _total: u64) {}
    fn advance(&self, _n: u64) {}
    /// The stage's total is now `total` (a crawl found more pages to fetch).
    fn grow(&self, _total: u64) {}
    /// `n` of the items advanced so far failed (they are in the report's errors).
    fn fail(&self, _n: u64) {}
    fn finish(&self) {}
}

/// Progress that goes nowhere.
pub struct Quiet;
impl Progress for Quiet {}
