//! A crawl read back row by row, each row on its own: one row that cannot
//! be decoded (a damaged blob, a torn text) is that page's failure, never
//! the crawl's.

use webdup_core::DocKey;
use webdup_core::fingerprint::Fingerprint;

use crate::codec::decode_u32s;
use crate::page::{PAGE_COLUMN_COUNT, PAGE_COLUMNS, stored_page, stored_page_digest};
use crate::stored::{ShingleStore, StoredText};
use crate::{Error, Index, PageRecord, Result};

/// One stored page of a crawl, read back: its record (with its main text
/// when it was stored), and its fingerprint or why the row cannot be
/// decoded.
#[derive(Debug)]
pub struct CrawlRow {
    /// The page's record; for a row whose record itself cannot be decoded,
    /// its id and URL (or `row N` when even the URL cannot be read) and
    /// nothing else.
    pub page: PageRecord,
    /// The page's fingerprint, rebuilt from the stored parts; `Ok(None)`
    /// for a page stored without content, [`Error::Corrupt`] naming the row
    /// for one whose parts cannot be decoded.
    pub fingerprint: Result<Option<Fingerprint>>,
}

impl Index {
    /// Every page of `crawl` in insertion order, as [`Index::crawl_fingerprints`]
    /// reads them, but each row on its own: a row that cannot be decoded
    /// comes back with its error, and the rest of the crawl with it. Fails
    /// whole only when SQLite cannot read the table.
    pub fn crawl_rows(&self, crawl: &str) -> Result<Vec<CrawlRow>> {
        let permutations = self.settings.fingerprint.permutations;
        let (mut out, rebuilds) = self.with_reader(|conn| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {PAGE_COLUMNS}, shingles, minhash, text, text_deflate, shingles_check FROM pages
                 WHERE crawl = ?1 ORDER BY id"
            ))?;
            let mut rows = stmt.query([crawl])?;
            let (mut out, mut rebuilds) = (Vec::new(), Vec::new());
            while let Some(row) = rows.next()? {
                let key = DocKey::at(out.len());
                out.push(match stored_page(row) {
                    Ok(mut page) => {
                        let fingerprint = fingerprint_of(&self.shingles, row, &mut page, key, permutations).map(|f| {
                            f.map(|(f, rebuild)| {
                                rebuilds.extend(rebuild.map(|r| (out.len(), r)));
                                f
                            })
                        });
                        CrawlRow { page, fingerprint }
                    }
                    Err(e) => {
                        let id: i64 = row.get(0)?;
                        let url = row.get::<_, String>(2).unwrap_or_else(|_| format!("row {id}"));
                        let record = PageRecord::observed(url, None, None);
                        CrawlRow {
                            page: PageRecord { id, crawl: crawl.into(), ..record },
                            fingerprint: Err(Error::Corrupt { page_id: id, reason: e.to_string() }),
                        }
                    }
                });
            }
            Ok((out, rebuilds))
        })?;
        // Shingling the texts again is most of the read: on every core.
        let sets = self.rebuild_sets(&out, &rebuilds);
        for ((at, _), set) in rebuilds.iter().zip(sets) {
            let row = &mut out[*at];
            match set {
                Ok(set) => {
                    if let Ok(Some(f)) = &mut row.fingerprint {
                        f.shingles = set;
                    }
                }
                Err(e) => row.fingerprint = Err(e),
            }
        }
        Ok(out)
    }

    /// The shingle sets of `rebuilds` (rows of `rows` and what they keep),
    /// shingled again from the rows' texts on as many threads as there are
    /// cores, in order.
    fn rebuild_sets(&self, rows: &[CrawlRow], rebuilds: &[(usize, Rebuild)]) -> Vec<Result<Vec<u64>>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let part = rebuilds.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = rebuilds
                .chunks(part)
                .map(|chunk| {
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|(at, r)| {
                                let page = &rows[*at].page;
                                self.shingles.decode(page.id, &r.blob, Some(r.check), || Ok(page.text.clone()))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("shingling does not panic")).collect()
        })
    }
}

/// A row's shingle set to be rebuilt from its text: what the row keeps of it.
struct Rebuild {
    blob: Vec<u8>,
    check: i64,
}

/// The fingerprint of a stored row whose record reads as `page`; the row's
/// main text, when it has content and a text, goes to `page`. A shingle set
/// kept as its text's is left empty, with what [`Index::crawl_rows`] needs
/// to rebuild it.
fn fingerprint_of(
    store: &ShingleStore,
    row: &rusqlite::Row,
    page: &mut PageRecord,
    key: DocKey,
    permutations: usize,
) -> Result<Option<(Fingerprint, Option<Rebuild>)>> {
    let corrupt = |reason: String| Error::Corrupt { page_id: page.id, reason };
    let digest: Option<Vec<u8>> = row.get(14).map_err(|e| corrupt(e.to_string()))?;
    let shingles: Option<Vec<u8>> = row.get(PAGE_COLUMN_COUNT).map_err(|e| corrupt(e.to_string()))?;
    let minhash: Option<Vec<u8>> = row.get(PAGE_COLUMN_COUNT + 1).map_err(|e| corrupt(e.to_string()))?;
    let (Some(digest), Some(shingles), Some(minhash), Some(simhash)) = (digest, shingles, minhash, page.simhash) else {
        return Ok(None);
    };
    let digest: [u8; 16] = digest.try_into().map_err(|d: Vec<u8>| corrupt(format!("MD5 of {} bytes", d.len())))?;
    let text = StoredText::of(row, PAGE_COLUMN_COUNT + 2).map_err(|e| corrupt(e.to_string()))?.text(page.id)?;
    let check: Option<i64> = row.get(PAGE_COLUMN_COUNT + 4).map_err(|e| corrupt(e.to_string()))?;
    let (shingles, rebuild) = match check {
        Some(check) => (Vec::new(), Some(Rebuild { blob: shingles, check })),
        None => (store.decode(page.id, &shingles, None, || Ok(None))?, None),
    };
    // Verification merges sorted sets: unsorted ones would be compared wrongly, not refused.
    if !shingles.is_sorted_by(|a, b| a < b) {
        return Err(corrupt("shingles not sorted".into()));
    }
    let minhash = decode_u32s(&minhash, page.id)?;
    // The band keys read a whole signature: a short one would panic there.
    if minhash.len() != permutations {
        return Err(corrupt(format!("MinHash signature of {} values, not {permutations}", minhash.len())));
    }
    let mut f = Fingerprint::from_parts(page.url.clone(), key, page.word_count, shingles, digest, minhash, simhash);
    f.page_digest = stored_page_digest(row).map_err(|e| corrupt(e.to_string()))?;
    page.text = text;
    Ok(Some((f, rebuild)))
}
