//! Auditing a crawl kept in an index, from what the index stored: nothing is
//! fetched or extracted again.
//!
//! [`from_index`] reads one crawl's rows back: its pages' records as stored,
//! the fingerprints of those with content (shingles, MD5, MinHash, main text
//! when kept) and the failed pages as [`DocError`]s. The engine's usual
//! stages ([`crate::engine::find_duplicates`]: copies by MD5, LSH
//! candidates, exact Jaccard, clustering) run on them unchanged, and the
//! model is built as for a fresh run: the same [`AuditPage`]s a run makes,
//! read back.
//!
//! ```
//! use webdup::audit::{self, AuditConfig};
//! use webdup::engine::{Config, Fingerprinter};
//! use webdup::store::{Index, Page};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("site.db");
//! let config = Config::default().validate().unwrap();
//! let index = Index::open(&path, &config).unwrap();
//! let fp = Fingerprinter::new(&config);
//! let text = "the river path was restored this spring with new gravel and benches along the bank";
//! for url in ["https://example.com/a", "https://example.com/b"] {
//!     let f = fp.fingerprint_text(url.into(), webdup::DocKey(0), text).unwrap();
//!     let mut page = Page::new("2024-09", url, f);
//!     page.record.text = Some(text.into());
//!     index.insert(&page).unwrap();
//! }
//! drop(index);
//!
//! // Later: audit the newest crawl with the index's own settings.
//! let index = Index::open_existing(&path).unwrap();
//! let config = index.settings().apply(Config::default()).unwrap();
//! let audited = audit::from_index(&index, None, &config, &AuditConfig::default()).unwrap();
//! assert_eq!(audited.audit.summary.identical_groups, 1);
//! assert_eq!(audited.audit.source.as_ref().unwrap().crawl, "2024-09");
//! assert!(audited.texts.missing.is_empty());
//! ```

use super::{Audit, AuditConfig, AuditPage, AuditSettings, AuditSource, AuditTexts, Audited, Content};
use crate::engine::{Config, Corpus, Fingerprint};
use crate::error::{DocError, DocErrorKind};
use crate::source::DocKey;
use crate::store::{self, Index, PageRecord};
use crate::threads::Threads;

/// Audits crawl `crawl` of `index`, or its newest crawl (see
/// [`Index::choose_crawl`]), as [`super::run`] audits a run: pages in stored
/// order, metadata and redirects as stored, one page per final URL (a page
/// stored under an old URL that redirected to another stored page is a
/// redirect). A row that cannot be decoded is an error of its page (kind
/// `io`, naming the row), and the rest is read. For pages stored before
/// schema version 5 no redirects were kept, so a canonical naming a URL that
/// redirected is judged by the crawl's pages alone. A crawl stored by `index
/// add --follow` (schema version 9 on) is audited with what the crawl saw
/// ([`Index::crawl_facts`]), as a fresh crawl is. Fails with
/// [`store::Error::UnknownCrawl`] or [`store::Error::Empty`], both naming the
/// file.
pub fn from_index(index: &Index, crawl: Option<&str>, config: &Config, audit: &AuditConfig) -> store::Result<Audited> {
    let crawl = index.choose_crawl(crawl)?;
    // A row that cannot be decoded is its page's failure, named in the
    // report; the rest of the crawl is audited.
    let stored: Vec<(PageRecord, Result<Option<Fingerprint>, store::Error>)> =
        index.crawl_rows(&crawl)?.into_iter().map(|r| (r.page, r.fingerprint)).collect();
    let ends: Vec<(Option<&str>, bool)> = stored
        .iter()
        .map(|(p, f)| (matches!(f, Ok(Some(_))).then(|| p.effective_url()), !p.redirects.is_empty()))
        .collect();
    let folded: Vec<bool> = webdup_core::page::fold_redirects(&ends).iter().map(Option::is_some).collect();
    let mut pages = Vec::with_capacity(stored.len());
    let mut corpus = Corpus::default();
    for (n, ((record, fingerprint), folded)) in stored.into_iter().zip(folded).enumerate() {
        let key = DocKey::at(n);
        let failed = |e: DocError| Content::Failed { kind: e.kind.as_str().into(), message: e.message };
        let content = match fingerprint {
            Ok(Some(_)) if folded => Content::Redirect,
            Ok(Some(f)) => {
                corpus.docs.push(f);
                Content::Doc(key)
            }
            Ok(None) => {
                let e = doc_error(&record, key);
                corpus.errors.push(e.clone());
                failed(e)
            }
            Err(e) => {
                let e =
                    DocError::new(&record.url, key, DocErrorKind::Io, format!("cannot be read from the index: {e}"));
                corpus.errors.push(e.clone());
                failed(e)
            }
        };
        pages.push(AuditPage { record, content });
    }
    // A crawl read from an index holds its sets: nothing to read back.
    let mut clustering =
        webdup_core::dedup::find_duplicates(&Threads, &corpus.docs, &config.matching, &config.fingerprint);
    clustering.stats.documents = corpus.len();
    let facts = index.crawl_facts(&crawl)?;
    let settings = AuditSettings::new(&config.fingerprint, &config.matching, audit);
    let pages_without_text =
        pages.iter().filter(|p| matches!(p.content, Content::Doc(_)) && p.record.text.is_none()).count();
    let (mut built, pages) = Audit::build(&Threads, pages, &corpus.docs, &clustering, facts.as_ref(), settings);
    built.source =
        Some(AuditSource { kind: "index", index: index.path().display().to_string(), crawl, pages_without_text });
    let texts = AuditTexts::build(&Threads, &pages, &clustering, &built);
    webdup_seo::audit::markup::fill(&Threads, &mut built, &|_| Err("an index keeps no page's markup".into()));
    Ok(Audited { corpus, clustering, audit: built, texts })
}

/// Audits crawl `crawl` of `index` as [`from_index`] does, with what
/// changed since crawl `old` ([`Audit::since`](super::Audit::since)): the
/// old crawl audited with the same settings, lost-and-found's map from it to
/// the audited crawl, and the two compared ([`super::since::compare`]).
/// Fails with [`store::Error::UnknownCrawl`] when either crawl is not in
/// the index. Comparing a crawl with itself reports every cluster unchanged.
pub fn since(
    index: &Index,
    crawl: Option<&str>,
    old: &str,
    config: &Config,
    audit: &AuditConfig,
) -> store::Result<Audited> {
    let (new, old) = (index.choose_crawl(crawl)?, index.choose_crawl(Some(old))?);
    let mut audited = from_index(index, Some(&new), config, audit)?;
    let before = from_index(index, Some(&old), config, audit)?.audit;
    let moves = store::lost_and_found::lost_and_found(index, &old, &new, &Default::default())?;
    audited.audit.since = Some(super::since::compare(&before, &audited.audit, &moves));
    Ok(audited)
}

/// The failure a fresh run would have reported for a stored failed page.
/// The index keeps the fetcher's own kind (`http_status`, `dns`, ...) where
/// a run reports kind `fetch` with that kind leading the message; other
/// kinds (`no_text`, `too_deep`, ... on pages that arrived) are the run's.
fn doc_error(page: &PageRecord, key: DocKey) -> DocError {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RecordMeta;

    fn failed(kind: &str, message: &str, status: Option<u16>) -> PageRecord {
        PageRecord {
            id: 1,
            crawl: "c".into(),
            url: "https://example.com/x".into(),
            final_url: status.map(|_| "https://example.com/x".into()),
            status,
            fetched_at: 0,
            error_kind: Some(kind.into()),
            error: Some(message.into()),
            meta: RecordMeta::default(),
            redirects: Vec::new(),
            word_count: 0,
            digest: None,
            simhash: None,
            shingle_count: 0,
            text: None,
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
