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
    /// Where a crawl stands, after each page it fetched: what a progress
    /// line shows while the pages stream in.
    fn crawled(&self, _counts: CrawlCounts) {}
    fn finish(&self) {}
}

/// Where a running crawl stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrawlCounts {
    /// URLs discovered so far (start pages included).
    pub found: u64,
    /// Pages fetched (answered or failed).
    pub fetched: u64,
    /// URLs discovered and not fetched yet.
    pub queued: u64,
    /// Pages whose fetch failed.
    pub errors: u64,
}

/// Progress that goes nowhere.
pub struct Quiet;
impl Progress for Quiet {}
