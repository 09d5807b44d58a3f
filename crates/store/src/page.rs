//! A page as the index takes it ([`Page`]: its record and its content) and
//! as it reads a page row back (the core's page record).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use webdup_core::fingerprint::Fingerprint;
use webdup_core::page::{CanonicalSource, Exchange, NoindexSource, PageRecord, PageView, RecordMeta};

use crate::{Error, Result, Unsuppressed};

/// One page of one crawl, to be inserted: its record (the core's
/// [`PageRecord`]: address, exchange, redirects, metadata) and its content.
/// What is read back is that record, with the row's id.
#[derive(Debug, Clone)]
pub struct Page {
    pub record: PageRecord,
    /// The content; `None` for pages that could not be fetched or read.
    /// The record's `text`, when set, is stored too (for the audit's diff
    /// view).
    pub fingerprint: Option<Fingerprint>,
    /// The fingerprint before its site's template was dropped, when the
    /// page came alone: the index then learns the site's template from it
    /// (see [`Page::with_unsuppressed`]).
    pub unsuppressed: Option<Unsuppressed>,
}

/// Seconds since the Unix epoch, now.
pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs() as i64
}

impl Page {
    /// A page with content and nothing else known of it (its title, metadata
    /// or main text may be set in its `record`; see [`Page::observed`]).
    pub fn new(crawl: impl Into<String>, url: impl Into<String>, fingerprint: Fingerprint) -> Page {
        Page::observed(crawl, url, fingerprint, None, None)
    }

    /// A page with content, its record made once from what the page showed
    /// (`webdup`'s `Fingerprinter::fingerprint_page` gives it) and what its
    /// exchange answered, merged by the core's one rule
    /// ([`PageRecord::observed`]).
    pub fn observed(
        crawl: impl Into<String>,
        url: impl Into<String>,
        fingerprint: Fingerprint,
        page: Option<PageView>,
        exchange: Option<&Exchange>,
    ) -> Page {
        let f = &fingerprint;
        let record = PageRecord::observed(url.into(), page, exchange).with_content(
            f.word_count,
            &f.digest,
            f.simhash,
            f.shingles.len(),
        );
        Page::of_record(crawl, record, Some(fingerprint))
    }

    /// A page whose record was made already (by a run, or by a crawler with
    /// what it saw of the exchange: see the core's [`PageRecord::observed`]
    /// and [`PageRecord::with_content`]), fetched now into `crawl`, with its
    /// content if it had any.
    pub fn of_record(crawl: impl Into<String>, record: PageRecord, fingerprint: Option<Fingerprint>) -> Page {
        Page {
            record: PageRecord { crawl: crawl.into(), fetched_at: now(), ..record },
            fingerprint,
            unsuppressed: None,
        }
    }

    /// A page that gave no content.
    pub fn failed(
        crawl: impl Into<String>,
        url: impl Into<String>,
        kind: impl Into<String>,
        error: impl Into<String>,
    ) -> Page {
        let record = PageRecord {
            crawl: crawl.into(),
            fetched_at: now(),
            error_kind: Some(kind.into()),
            error: Some(error.into()),
            ..PageRecord::observed(url.into(), None, None)
        };
        Page { record, fingerprint: None, unsuppressed: None }
    }

    /// A page fingerprinted alone, with the template its site had then:
    /// `before` is its fingerprint before that template was dropped. The
    /// index keeps it to learn the site's template from the pages crawlers
    /// give it one at a time, and fingerprints the page again whenever the
    /// site's template changes (see the `learn` module), as `index add`
    /// learns from the pages it reads together.
    pub fn with_unsuppressed(mut self, before: Unsuppressed) -> Page {
        self.unsuppressed = Some(before);
        self
    }

    /// Drops the main text: the page is stored without it (smaller; an
    /// audit of the index then cannot show this page's text).
    pub fn without_text(mut self) -> Page {
        self.record.text = None;
        self
    }

    pub(crate) fn check(&self) -> Result<()> {
        let r = &self.record;
        if r.url.is_empty() {
            return Err(Error::InvalidPage("empty URL".into()));
        }
        if r.crawl.is_empty() {
            return Err(Error::InvalidPage(format!("{}: empty crawl name", r.url)));
        }
        // SQLite keeps a NUL, but C strings and most tools end the text
        // there, and no URL or file name holds one.
        if r.url.contains('\0') {
            return Err(Error::InvalidPage(format!("\"{}\": the URL contains a NUL character", r.url.escape_debug())));
        }
        if let Some(c) = r.crawl.chars().find(|c| c.is_control()) {
            return Err(Error::InvalidPage(format!("{}: the crawl name contains the control character {c:?}", r.url)));
        }
        Ok(())
    }
}

pub(crate) const PAGE_COLUMNS: &str = "id, crawl, url, final_url, status, fetched_at, error_kind, error, title, canonical, \
                            noindex, description, h1, word_count, digest, simhash, shingle_count, \
                            canonical_source, noindex_source, redirects, page_digest";
pub(crate) const PAGE_COLUMN_COUNT: usize = 21;

/// The page digest in column 20 of [`PAGE_COLUMNS`], when the page was
/// stored with one (schema 10 and later).
pub(crate) fn stored_page_digest(r: &rusqlite::Row) -> rusqlite::Result<Option<[u8; 16]>> {
    Ok(r.get::<_, Option<Vec<u8>>>(20)?.and_then(|d| d.try_into().ok()))
}

pub(crate) fn stored_page(r: &rusqlite::Row) -> rusqlite::Result<PageRecord> {
    let digest: Option<Vec<u8>> = r.get(14)?;
    Ok(PageRecord {
        id: r.get(0)?,
        crawl: r.get(1)?,
        url: r.get(2)?,
        final_url: r.get(3)?,
        status: r.get(4)?,
        fetched_at: r.get(5)?,
        error_kind: r.get(6)?,
        error: r.get(7)?,
        meta: RecordMeta {
            title: r.get(8)?,
            canonical: r.get(9)?,
            noindex: r.get(10)?,
            description: r.get(11)?,
            h1: r.get(12)?,
            canonical_source: r.get::<_, Option<String>>(17)?.as_deref().and_then(CanonicalSource::from_name),
            noindex_source: r.get::<_, Option<String>>(18)?.as_deref().and_then(NoindexSource::from_name),
        },
        redirects: match r.get::<_, Option<String>>(19)? {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(19, rusqlite::types::Type::Text, Box::new(e)))?,
            None => Vec::new(),
        },
        word_count: r.get::<_, i64>(13)? as usize,
        digest: digest.map(|d| d.iter().map(|b| format!("{b:02x}")).collect()),
        simhash: r.get::<_, Option<i64>>(15)?.map(|s| s as u64),
        shingle_count: r.get::<_, i64>(16)? as usize,
        text: None,
    })
}

#[cfg(test)]
mod time_tests {
    use webdup_core::page::iso8601_utc;

    #[test]
    fn epoch_seconds_print_as_iso_8601_utc() {
        for (t, iso) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_560_000_000, "2019-06-08T13:20:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (4_102_444_800, "2100-01-01T00:00:00Z"),
        ] {
            assert_eq!(iso8601_utc(t), iso);
        }
    }
}
