//! Auditing a crawl kept in an index, from what the index stored: nothing is
//! fetched or extracted again.
//!
//! [`StoredCrawl::load`] reads one crawl's pages back as a [`Corpus`] (the
//! fingerprints as stored: shingles, MD5, MinHash, main text when kept) and
//! the failed pages as [`DocError`]s; the engine's usual stages
//! ([`crate::engine::find_duplicates`]: exact groups by MD5, LSH candidates,
//! exact Jaccard, clustering) run on it unchanged, and [`from_crawl`]
//! builds the same model as a fresh run from the stored records: the same
//! [`AuditPage`]s a run makes, read back.
//!
//! ```
//! use webdup::audit::{self, AuditConfig, StoredCrawl};
//! use webdup::engine::{self, Config, Fingerprinter};
//! use webdup::store::{Index, Page};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("site.db");
//! let config = Config::default().validate().unwrap();
//! let index = Index::open(&path, &config).unwrap();
//! let fp = Fingerprinter::new(&config);
//! let text = "the river path was restored this spring with new gravel and benches along the bank";
//! for url in ["https://example.com/a", "https://example.com/b"] {
//!     let mut f = fp.fingerprint_text(url.into(), webdup::DocKey(0), text, None, "none").unwrap();
//!     f.text = Some(text.into());
//!     index.insert(&Page::new("2024-09", url, f)).unwrap();
//! }
//! drop(index);
//!
//! // Later: audit the newest crawl with the index's own settings.
//! let index = Index::open_existing(&path).unwrap();
//! let config = index.settings().apply(Config::default()).unwrap();
//! let crawl = StoredCrawl::load(&index, None).unwrap();
//! let clustering = engine::find_duplicates(&crawl.corpus, &config);
//! let audit = audit::from_crawl(&crawl, &clustering, &config, &AuditConfig::default());
//! let texts = audit::texts(&crawl.corpus, &clustering, &audit);
//! assert_eq!(audit.summary.exact_groups, 1);
//! assert_eq!(audit.source.as_ref().unwrap().crawl, "2024-09");
//! assert!(texts.missing.is_empty());
//! ```

use super::{Audit, AuditConfig, AuditPage, AuditSettings, AuditSource, Content};
use crate::engine::Fingerprint;
use crate::engine::{Clustering, Config, Corpus};
use crate::error::{DocError, DocErrorKind};
use crate::source::DocKey;
use crate::store::{self, Index, StoredPage};
use crate::threads::Threads;

/// One crawl of an index, read back for an audit.
#[derive(Debug)]
pub struct StoredCrawl {
    /// The index file.
    pub index: String,
    pub crawl: String,
    /// Every page of the crawl, in the order it was stored.
    pub pages: Vec<StoredPage>,
    /// The pages with content as fingerprints, and the failed ones as
    /// errors; keys are positions in `pages`.
    pub corpus: Corpus,
}

impl StoredCrawl {
    /// Reads crawl `name` of `index`, or its newest crawl (see
    /// [`Index::choose_crawl`]). A row that cannot be decoded is an error of
    /// its page (kind `io`, naming the row), and the rest is read. Fails with [`store::Error::UnknownCrawl`] or
    /// [`store::Error::Empty`], both naming the file.
    pub fn load(index: &Index, name: Option<&str>) -> store::Result<StoredCrawl> {
        let crawl = index.choose_crawl(name)?;
        // A row that cannot be decoded is its page's failure, named in the
        // report; the rest of the crawl is audited.
        let stored: Vec<(StoredPage, Result<Option<Fingerprint>, store::Error>)> =
            index.crawl_rows(&crawl)?.into_iter().map(|r| (r.page, r.fingerprint)).collect();
        // One page per final URL, as in a run: a page stored under an old
        // URL that redirected to another stored page is a redirect.
        let ends: Vec<(Option<&str>, bool)> = stored
            .iter()
            .map(|(p, f)| (matches!(f, Ok(Some(_))).then(|| p.effective_url()), !p.redirects.is_empty()))
            .collect();
        let folded: Vec<bool> = webdup_core::page::fold_redirects(&ends).iter().map(Option::is_some).collect();
        let mut pages = Vec::new();
        let mut corpus = Corpus::default();
        for (n, ((page, fingerprint), folded)) in stored.into_iter().zip(folded).enumerate() {
            match fingerprint {
                Ok(Some(_)) if folded => {}
                Ok(Some(f)) => corpus.docs.push(f),
                Ok(None) => corpus.errors.push(doc_error(&page, DocKey::at(n))),
                Err(e) => corpus.errors.push(DocError::new(
                    &page.url,
                    DocKey::at(n),
                    DocErrorKind::Io,
                    format!("cannot be read from the index: {e}"),
                )),
            }
            pages.push(page);
        }
        Ok(StoredCrawl { index: index.path().display().to_string(), crawl, pages, corpus })
    }
}

/// The failure a fresh run would have reported for a stored failed page.
/// The index keeps the fetcher's own kind (`http_status`, `dns`, ...) where
/// a run reports kind `fetch` with that kind leading the message; other
/// kinds (`no_text`, `too_deep`, ... on pages that arrived) are the run's.
fn doc_error(page: &StoredPage, key: DocKey) -> DocError {
    let kind = page.error_kind.as_deref().unwrap_or("fetch");
    let message = page.error.clone().unwrap_or_else(|| "no content stored".into());
    // `too_large` names both a fetch failure and a local file over the limit;
    // only the fetch has an HTTP status.
    let fetched = page.status.is_some() || page.final_url.is_some();
    match DocErrorKind::from_name(kind) {
        Some(k) if !(k == DocErrorKind::TooLarge && fetched) => DocError::new(&page.url, key, k, message),
        _ => DocError::new(&page.url, key, DocErrorKind::Fetch, format!("{kind}: {message}")),
    }
}

/// A stored crawl's pages as the audit reads them, in stored order: the
/// records as stored, with pages folded into another stored page (an old
/// URL that redirected to it) as redirects.
pub fn of_crawl(crawl: &StoredCrawl) -> Vec<AuditPage> {
    let corpus = &crawl.corpus;
    let (mut docs, mut failures) = (corpus.docs.iter().peekable(), corpus.errors.iter().peekable());
    crawl
        .pages
        .iter()
        .enumerate()
        .map(|(n, p)| {
            let key = DocKey::at(n);
            let content = if docs.next_if(|d| d.key == key).is_some() {
                Content::Doc(key)
            } else if let Some(e) = failures.next_if(|e| e.key == key) {
                Content::Failed { kind: e.kind.as_str().into(), message: e.message.clone() }
            } else {
                // Folded into another stored page (see `StoredCrawl::load`).
                Content::Redirect
            };
            AuditPage { record: p.clone(), content }
        })
        .collect()
}

/// Builds the audit model of a stored crawl, as [`super::build`] does for a
/// run: pages in stored order, metadata and redirects as stored. For pages
/// stored before schema version 5 no redirects were kept, so a canonical
/// naming a URL that redirected is judged by the crawl's pages alone.
pub fn from_crawl(crawl: &StoredCrawl, clustering: &Clustering, config: &Config, audit: &AuditConfig) -> Audit {
    let corpus = &crawl.corpus;
    let settings = AuditSettings::new(&config.fingerprint, &config.matching, audit);
    let mut built = Audit::build(&Threads, &of_crawl(crawl), &corpus.docs, clustering, settings);
    built.source = Some(AuditSource {
        kind: "index",
        index: crawl.index.clone(),
        crawl: crawl.crawl.clone(),
        pages_without_text: corpus.docs.iter().filter(|d| d.text.is_none()).count(),
    });
    built
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PageMeta;

    fn failed(kind: &str, message: &str, status: Option<u16>) -> StoredPage {
        StoredPage {
            id: 1,
            crawl: "c".into(),
            url: "https://example.com/x".into(),
            final_url: status.map(|_| "https://example.com/x".into()),
            status,
            fetched_at: 0,
            error_kind: Some(kind.into()),
            error: Some(message.into()),
            meta: PageMeta::default(),
            redirects: Vec::new(),
            word_count: 0,
            digest: None,
            simhash: None,
            shingle_count: 0,
        }
    }

    #[test]
    fn stored_failures_read_as_the_run_reported_them() {
        let e = doc_error(&failed("http_status", "HTTP 404 Not Found", Some(404)), DocKey(3));
        assert_eq!(
            (e.kind, e.message.as_str(), e.key),
            (DocErrorKind::Fetch, "http_status: HTTP 404 Not Found", DocKey(3))
        );
        let e = doc_error(&failed("no_text", "no words found in the document's text", Some(200)), DocKey(0));
        assert_eq!(e.kind, DocErrorKind::NoText);
        // A body over the limit over HTTP is the fetcher's; a local file's is the reader's.
        assert_eq!(
            doc_error(&failed("too_large", "body over 10 bytes", Some(200)), DocKey(0)).kind,
            DocErrorKind::Fetch
        );
        assert_eq!(doc_error(&failed("too_large", "file over 10 bytes", None), DocKey(0)).kind, DocErrorKind::TooLarge);
        assert_eq!(doc_error(&failed("dns", "no such host", None), DocKey(0)).message, "dns: no such host");
    }
}
