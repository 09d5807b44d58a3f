//! Where the audit finds a page's markup again, for the diff of two pages
//! of one text ([`webdup_seo::audit::markup`]), without holding every
//! page's markup in memory for the whole run.
//!
//! - A local file is read again when the report is made.
//! - A fetched page or a web archive's record cannot be: with
//!   [`Config::keep_markup`](crate::engine::Config::keep_markup) the run
//!   deflates each one's markup into an unnamed temporary file as it
//!   arrives ([`Spill`]), and keeps only its place there (16 bytes a page).
//!   Refetching was the other way; it costs requests to the site, and the
//!   page may have changed since.
//!
//! Either way the markup found must be the page that was fingerprinted (its
//! digest, [`Fingerprint::page_digest`]), or the diff would show changes
//! made since; when it is not, or cannot be read, the member gets a note.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

use super::PageSource;
use crate::engine::Fingerprint;
use crate::source::{self, DocKey, Location, RawDocument, ReadLimits, Source};
use crate::spill::KeyedTable;
use webdup_core::fingerprint::position_of;

/// The markup of a run's fetched pages and web-archive records, deflated
/// into an unnamed temporary file (gone when the run is), by key.
#[derive(Default)]
pub struct Spill {
    /// `None` when no temporary file could be made: then nothing is kept,
    /// and [`Spill::markup`] says why.
    file: Option<Mutex<SpillFile>>,
    /// Why the spill holds nothing, or stopped keeping pages.
    broken: Mutex<Option<String>>,
    /// What a local file may be when it is read again: the run's limits.
    limits: ReadLimits,
}

struct SpillFile {
    file: File,
    end: u64,
    /// Where each page's deflated markup starts, and its length.
    at: KeyedTable<(u64, u32)>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages = self.file.as_ref().and_then(|m| m.lock().ok().map(|s| s.at.len()));
        f.debug_struct("Spill").field("pages", &pages).finish()
    }
}

impl Spill {
    /// A spill over a new temporary file when `keep` is set (else one that
    /// keeps nothing), for a run that reads local files under `limits`.
    pub fn new(keep: bool, limits: ReadLimits) -> Spill {
        if !keep {
            return Spill { limits, ..Spill::default() };
        }
        match tempfile::tempfile() {
            Ok(file) => Spill {
                file: Some(Mutex::new(SpillFile { file, end: 0, at: KeyedTable::default() })),
                broken: Mutex::new(None),
                limits,
            },
            Err(e) => Spill { file: None, broken: Mutex::new(Some(format!("no temporary file for it: {e}"))), limits },
        }
    }

    /// Keeps a document's markup. A spill that cannot write stops keeping
    /// pages and says why when asked; the run goes on.
    pub fn keep(&self, doc: &RawDocument) {
        let Some(file) = &self.file else { return };
        // Deflated outside the lock: the workers write one at a time, not
        // compress one at a time.
        let mut deflate = DeflateEncoder::new(Vec::new(), Compression::fast());
        let packed = deflate.write_all(doc.body.as_bytes()).and_then(|()| deflate.finish());
        let written = packed.and_then(|bytes| {
            let len = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
            let mut s = file.lock().map_err(|_| std::io::Error::other("a worker panicked"))?;
            let start = s.end;
            s.file.seek(SeekFrom::Start(start))?;
            s.file.write_all(&bytes)?;
            s.end += u64::from(len);
            s.at.set(doc.key, (start, len));
            Ok(())
        });
        if let Err(e) = written
            && let Ok(mut broken) = self.broken.lock()
        {
            broken.get_or_insert_with(|| format!("the temporary file could not be written: {e}"));
        }
    }

    /// The markup kept for `key`: `None` when none was kept, an error
    /// sentence when it cannot be read back.
    fn markup(&self, key: DocKey) -> Option<Result<String, String>> {
        let broken = || self.broken.lock().ok().and_then(|b| b.clone());
        let Some(file) = &self.file else { return broken().map(Err) };
        let read = || -> std::io::Result<Option<String>> {
            let mut s = file.lock().map_err(|_| std::io::Error::other("a worker panicked"))?;
            let Some((start, len)) = s.at.get(key) else { return Ok(None) };
            s.file.seek(SeekFrom::Start(start))?;
            let mut packed = vec![0; len as usize];
            s.file.read_exact(&mut packed)?;
            drop(s);
            let mut html = String::new();
            DeflateDecoder::new(&packed[..]).read_to_string(&mut html)?;
            Ok(Some(html))
        };
        match read() {
            Ok(Some(html)) => Some(Ok(html)),
            Ok(None) => broken().map(Err),
            Err(e) => Some(Err(format!("the temporary file could not be read: {e}"))),
        }
    }
}

/// A run's pages' markup, found again: kept in `spill`, else the local file
/// named by the page's input, read again under the run's limits.
pub struct Markup<'a> {
    pub spill: &'a Spill,
    /// What the audit's build left of the pages, in its rows' order.
    pub pages: &'a [PageSource],
    pub docs: &'a [Fingerprint],
}

impl Markup<'_> {
    /// The markup of page `page` (of `pages`), or why it is not available.
    pub fn of(&self, page: usize) -> Result<String, String> {
        let Some(PageSource { doc: Some(key), file, .. }) = self.pages.get(page) else {
            return Err("the page was not analysed".into());
        };
        let digest = position_of(self.docs, *key).and_then(|i| self.docs[i].page_digest);
        let html = match self.spill.markup(*key) {
            Some(kept) => kept?,
            None => {
                let Some(input) = file else {
                    return Err("the run did not keep the markup of fetched pages".into());
                };
                let s = Source { id: input.clone(), key: *key, location: Location::File(input.into()) };
                source::read_file(&s, input.as_ref(), self.spill.limits)
                    .map_err(|e| format!("the file could not be read again: {}", e.message))?
                    .body
            }
        };
        if digest.is_some_and(|d| d != webdup_core::fingerprint::page_digest(&html)) {
            return Err("the page changed since it was read".into());
        }
        Ok(html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Format;

    fn doc(key: usize, body: &str) -> RawDocument {
        RawDocument { id: format!("p{key}"), key: DocKey::at(key), format: Format::Html, body: body.into(), url: None }
    }

    #[test]
    fn the_spill_gives_back_what_it_kept() {
        let spill = Spill::new(true, ReadLimits::default());
        let pages = ["<p>first</p>".repeat(100), "<p>second ünïcode</p>".into(), String::new()];
        for (n, p) in pages.iter().enumerate() {
            spill.keep(&doc(n, p));
        }
        for (n, p) in pages.iter().enumerate() {
            assert_eq!(spill.markup(DocKey::at(n)), Some(Ok(p.clone())));
        }
        assert_eq!(spill.markup(DocKey::at(9)), None);
        assert!(Spill::default().markup(DocKey::at(0)).is_none(), "a spill never made keeps nothing");
    }
}
