//! webdup finds duplicate and near-duplicate web pages.
//!
//! The pipeline, one module a stage, data flowing one way:
//!
//! [`source`] (inputs, local files) → [`decode`] (charsets) → [`extract`]
//! (main content) → [`shingle`] (normalized words, shingles, MD5) →
//! [`template`] (site-template shingles dropped) → [`sketch`] (MinHash, SimHash) → [`index`] (LSH bands, permuted Hamming
//! tables) → [`verify`] (exact Jaccard) → [`cluster`] (union-find) →
//! [`report`] (table, JSON, CSV). [`engine`] strings the stages together.
//!
//! ```
//! use webdup::engine::{Config, Fingerprinter, compare};
//!
//! let config = Config::default().validate().unwrap();
//! let fp = Fingerprinter::new(&config);
//! let text = "the quick brown fox jumps over the lazy dog by the river bank today";
//! let a = fp.fingerprint_text("a".into(), webdup::DocKey(0), text).unwrap();
//! let b = fp.fingerprint_text("b".into(), webdup::DocKey(1), &text.replace("today", "again")).unwrap();
//! let c = compare(&a, &b, config.matching.threshold);
//! assert!(c.jaccard > 0.8 && !c.same_text && !c.identical);
//! ```

// The library reports through return values; only the binary prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

// The engine floor lives in webdup-core; its modules keep their paths here.
pub use webdup_core::candidates;
pub use webdup_core::{cluster, dedup, shingle, sketch, template, units, verify};
// So do webdup-web's.
#[cfg(feature = "warc")]
pub use webdup_web::warc;
pub use webdup_web::{crawl, decode, error, extract, fetch, render, source};

pub mod audit;
#[cfg(feature = "store")]
pub mod crawler;
pub mod engine;
pub mod report;
#[cfg(feature = "http")]
pub mod run;
#[cfg(feature = "serve")]
pub mod serve;
pub mod spill;
/// The crawl index (webdup-store).
///
/// ```
/// use webdup::engine::{Config, Fingerprinter};
/// use webdup::store::{Index, Page};
///
/// let dir = tempfile::tempdir().unwrap();
/// let config = Config::default().validate().unwrap();
/// let index = Index::open(dir.path().join("webdup.db"), &config).unwrap();
/// let fp = Fingerprinter::new(&config);
/// let text = "the river path was restored this spring with new gravel and benches along the bank";
/// let page = fp.fingerprint_text("https://example.com/a".into(), webdup::DocKey(0), text).unwrap();
/// index.insert(&Page::new("monday", "https://example.com/a", page)).unwrap();
///
/// // Later, another URL with the same text:
/// let seen = fp.fingerprint_text("https://example.com/b".into(), webdup::DocKey(0), text).unwrap();
/// let result = index.check(&seen).unwrap();
/// assert_eq!(result.identical[0].url, "https://example.com/a");
/// assert_eq!(index.stats().unwrap().pages, 1);
/// ```
#[cfg(feature = "store")]
pub mod store {
    pub use webdup_store::*;
    #[cfg(feature = "http")]
    mod pages;
    #[cfg(feature = "http")]
    pub use pages::pages_of;

    /// Lost and found over an index's crawls: [`mod@webdup_seo::lost_and_found`]
    /// fed by [`Index::crawl`].
    pub mod lost_and_found {
        pub use webdup_seo::lost_and_found::*;

        use super::{Error, Index, Result};

        /// Builds the redirect map from crawl `old` to crawl `new` of `index`.
        pub fn lost_and_found(index: &Index, old: &str, new: &str, options: &Options) -> Result<RedirectMap> {
            let (old, new) = (index.crawl(old)?, index.crawl(new)?);
            webdup_seo::lost_and_found(&old, &new, options).map_err(|e| match e {
                webdup_seo::Error::EmptyCrawl(name) => {
                    Error::InvalidPage(format!("crawl '{name}' has no pages in {}", index.path().display()))
                }
            })
        }
    }
}
/// SEO reports over recorded crawls (webdup-seo).
pub use webdup_seo as seo;
pub mod threads;

pub use engine::{Cluster, Clustering, Config, Corpus, Fingerprint, Method};
pub use error::{DocError, DocErrorKind, Error, Result};
pub use webdup_core::DocKey;
