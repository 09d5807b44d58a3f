//! The SEO duplicate-content audit: what `webdup audit` reports.
//!
//! The model, its builder and its writers are webdup-seo's
//! ([`webdup_seo::audit`], re-exported here). This module feeds them: a
//! fresh run ([`build`]: a [`Corpus`] built with [`Config::keep_pages`], its
//! [`Clustering`] and the [`FetchRecord`]s of its URLs) and a crawl kept in
//! an index ([`from_crawl`], with the `store` feature) both become
//! [`AuditPage`]s, the one page model the audit reads, so the same page
//! audits the same whichever way it came.
//!
//! ```
//! use webdup::audit::{self, AuditConfig};
//! use webdup::engine::{self, Config, Corpus, Quiet};
//! use webdup::source::{Format, RawDocument};
//!
//! let config = Config { keep_pages: true, ..Config::default() }.validate().unwrap();
//! let body = "<p>The river path was restored this spring by volunteers from the village.</p>".repeat(20);
//! let pages = vec![
//!     ("https://example.com/a", format!("<html><head><title>Path</title></head><body>{body}</body></html>")),
//!     ("https://example.com/b", format!("<html><head><title>Path</title></head><body>{body}</body></html>")),
//! ];
//! let corpus = Corpus::build(
//!     pages.into_iter().enumerate().collect(),
//!     |(n, (id, html))| Ok(RawDocument { id: id.into(), key: webdup::DocKey::at(n), format: Format::Html, body: html, url: None }),
//!     &config,
//!     &Quiet,
//! );
//! let clustering = engine::find_duplicates(&corpus, &config);
//! let audit = audit::build(&corpus, &clustering, &[], &config, &AuditConfig::default());
//! assert_eq!(audit.summary.exact_groups, 1);
//! assert_eq!(audit.clusters[0].status, "problem");
//! assert_eq!(audit.duplicate_titles[0].pages, vec![0, 1]);
//! ```

#[cfg(feature = "store")]
mod stored;

use std::collections::{HashMap, HashSet};

use crate::engine::{Clustering, Config, Corpus};
use crate::fetch::FetchRecord;
use crate::source::DocKey;
use crate::threads::Threads;
use webdup_core::page::{Exchange, PageRecord};

#[cfg(feature = "store")]
pub use stored::{StoredCrawl, from_crawl, of_crawl};
pub use webdup_seo::audit::*;

/// Builds the audit model of a run. `fetches` may be empty (local files).
/// Pages come in input order, fetched or failed.
pub fn build(
    corpus: &Corpus,
    clustering: &Clustering,
    fetches: &[FetchRecord],
    config: &Config,
    audit: &AuditConfig,
) -> Audit {
    let settings = AuditSettings::new(&config.fingerprint, &config.matching, audit);
    Audit::build(&Threads, &of_run(corpus, fetches), &corpus.docs, clustering, settings)
}

/// The texts of every cluster's members for the report's diff view (see
/// [`mod@texts`]); pages without a kept text are listed as missing.
pub fn texts(corpus: &Corpus, clustering: &Clustering, audit: &Audit) -> AuditTexts {
    AuditTexts::build(&Threads, &corpus.docs, clustering, audit)
}

/// A run's pages as the audit reads them, by key (input order): analysed
/// documents, failures, and inputs folded into another input's page by
/// [`crate::run::fold_redirects`] (their fetch is recorded, their page is
/// another's), each joined by key to its fetch's record.
pub fn of_run(corpus: &Corpus, fetches: &[FetchRecord]) -> Vec<AuditPage> {
    let by_key: HashMap<DocKey, &FetchRecord> = fetches.iter().map(|r| (r.key, r)).collect();
    let exchange = |key: DocKey| by_key.get(&key).map(|r| Exchange::from(*r));
    let mut pages: Vec<(DocKey, AuditPage)> = Vec::with_capacity(corpus.len());
    for d in &corpus.docs {
        let record = PageRecord::observed(d.id.clone(), Some(d), exchange(d.key).as_ref());
        pages.push((d.key, AuditPage { record, content: Content::Doc(d.key) }));
    }
    for e in &corpus.errors {
        let record = PageRecord::observed(e.id.clone(), None, exchange(e.key).as_ref());
        let content = Content::Failed { kind: e.kind.as_str().into(), message: e.message.clone() };
        pages.push((e.key, AuditPage { record, content }));
    }
    let present: HashSet<DocKey> = pages.iter().map(|(key, _)| *key).collect();
    for r in fetches.iter().filter(|r| r.chain.len() > 1 && !present.contains(&r.key)) {
        let url = r.url.clone().unwrap_or_else(|| r.id.clone());
        let record = PageRecord::observed(url, None, Some(&Exchange::from(r)));
        pages.push((r.key, AuditPage { record, content: Content::Redirect }));
    }
    pages.sort_by_key(|(key, _)| *key);
    pages.into_iter().map(|(_, p)| p).collect()
}
