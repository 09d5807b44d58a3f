//! Shingle sets kept on disk instead of in memory, for runs too large to
//! hold them ([`Config::memory`](crate::engine::Config::memory)).
//!
//! A page's shingles (4-8 KB for an article) and the rest of its text's
//! shingles, for template learning, are most of what a run holds per page,
//! and each is needed only a few times: to learn its site's template, to
//! sketch it, and to confirm the candidate pairs it is in. A spilled run
//! writes them to one unnamed temporary file (gone when the run is) as
//! pages are fingerprinted, a megabyte at a time, keeps 12 bytes per set in
//! memory, and reads a set back with one positioned read when a stage
//! needs it. Its MinHash signature (512 bytes at 128 permutations) follows
//! once it is sketched, read back by LSH a few bands a pass. The answer is
//! the same as with the sets in memory; only where they wait differs.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;

use crate::engine::{BASE_BYTES, Config, Corpus, Fingerprint, Fingerprinter, PAGE_BYTES_HELD, PageView};
use crate::error::{DocError, DocErrorKind};
use crate::template::{self, TemplateConfig, Templates};
use crate::threads::Threads;
use webdup_core::DocKey;
use webdup_core::sets::{Sets, Sketches};
use webdup_core::units::Units;

/// A set could not be written to or read back from the spill file.
#[derive(Debug, thiserror::Error)]
#[error("the temporary file holding the shingle sets failed: {0}")]
pub struct SpillError(#[from] pub std::io::Error);

/// Decides, page by page as a run fingerprints them, which pages keep their
/// sets on disk: none without a budget; every page when the pages named
/// would not fit held; else the pages past a quarter of the budget (an
/// archive or a crawl may bring more pages than were named).
pub(crate) struct Spiller {
    /// Pages held before the rest spill (`u64::MAX`: never).
    hold: u64,
    seen: AtomicU64,
    /// Made when the first page spills; `None` inside when no temporary
    /// file can be made (the pages are then held).
    spill: OnceLock<Option<Spill>>,
}

impl Spiller {
    /// For a run under `config` that names `pages` pages.
    pub(crate) fn new(config: &Config, pages: u64) -> Spiller {
        let hold = match config.memory {
            None => u64::MAX,
            Some(_) if config.spills(pages) => 0,
            Some(budget) => pages.max((budget / 4).saturating_sub(BASE_BYTES) / PAGE_BYTES_HELD),
        };
        Spiller { hold, seen: AtomicU64::new(0), spill: OnceLock::new() }
    }

    /// Moves `f`'s sets, and the main text `page` kept, to disk if its turn
    /// is past the pages held.
    pub(crate) fn take(&self, f: &mut Fingerprint, page: &mut PageView) -> Result<(), SpillError> {
        if self.seen.fetch_add(1, Ordering::Relaxed) < self.hold {
            return Ok(());
        }
        match self.spill.get_or_init(|| Spill::new().ok()) {
            Some(spill) => spill.keep(f, page),
            None => Ok(()),
        }
    }

    /// The spill, if any page went to it.
    pub(crate) fn into_spill(self) -> Option<Spill> {
        self.spill.into_inner().flatten()
    }
}

/// Where one set (or signature, or text) is in the spill file: 12 bytes,
/// kept for every page of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    /// Offset in bytes, low and high halves (a `u64` would pad the place
    /// to 16 bytes).
    at: [u32; 2],
    /// Length in shingles (values for a signature, bytes for a text).
    len: u32,
}

impl Place {
    fn new(at: u64, len: u32) -> Place {
        Place { at: [at as u32, (at >> 32) as u32], len }
    }

    fn at(self) -> u64 {
        u64::from(self.at[0]) | (u64::from(self.at[1]) << 32)
    }

    /// How many shingles the set has (bytes the text has).
    pub fn len(self) -> usize {
        self.len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// Where a page's sets are: its shingles and, until its site's template is
/// learned, all its text shows (`context`); its MinHash signature, once it
/// is sketched; and its main text, when the run keeps texts
/// ([`Config::keep_pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Places {
    pub shingles: Place,
    pub context: Option<Place>,
    pub minhash: Option<Place>,
    pub text: Option<Place>,
}

/// The spill file: sets appended by any thread, read back by any thread.
pub struct Spill {
    file: File,
    /// What was appended after the file's `written` bytes, not yet in the
    /// file; its lock is the appenders'.
    tail: Mutex<Vec<u8>>,
    /// How many bytes are in the file: moved only under the tail's lock,
    /// read without it (a place below it is read from the file alone).
    written: AtomicU64,
    /// Each page's sets, by key.
    places: Mutex<PlaceTable>,
}

/// Appends gather here and reach the file this many bytes at a time. A
/// page's sets went to the file in three writes of a few kilobytes each:
/// at a million pages the file system's zeroing of the blocks they began
/// and the writes' lock took about 11 µs of CPU a page.
const WRITE_BUFFER: usize = 1 << 20;

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pages = self.places.lock().map(|p| p.entries.len()).ok();
        f.debug_struct("Spill").field("pages", &pages).finish()
    }
}

impl Spill {
    /// A spill over a new unnamed temporary file in the system's temporary
    /// folder (`TMPDIR`).
    pub fn new() -> Result<Spill, SpillError> {
        Ok(Spill {
            file: tempfile::tempfile()?,
            tail: Mutex::new(Vec::new()),
            written: AtomicU64::new(0),
            places: Mutex::new(PlaceTable::default()),
        })
    }

    /// Appends `set` and returns its place.
    pub fn put(&self, set: &[u64]) -> Result<Place, SpillError> {
        self.put_values(set, u64::to_le_bytes)
    }

    /// Appends a MinHash signature and returns its place.
    pub fn put_signature(&self, signature: &[u32]) -> Result<Place, SpillError> {
        self.put_values(signature, u32::to_le_bytes)
    }

    /// The signature at `place`, into `buf` (replacing what it held).
    pub fn get_signature(&self, place: Place, buf: &mut Vec<u32>) -> Result<(), SpillError> {
        self.get_values(place, buf, u32::from_le_bytes)
    }

    /// Appends `values`, each as `bytes_of` writes it; the place counts values.
    fn put_values<T: Copy, const N: usize>(
        &self,
        values: &[T],
        bytes_of: fn(T) -> [u8; N],
    ) -> Result<Place, SpillError> {
        let len = u32::try_from(values.len()).map_err(std::io::Error::other)?;
        let bytes: Vec<u8> = values.iter().flat_map(|&v| bytes_of(v)).collect();
        self.append(&bytes, len)
    }

    /// The values at `place`, each read by `of_bytes`, into `buf` (replacing
    /// what it held).
    fn get_values<T, const N: usize>(
        &self,
        place: Place,
        buf: &mut Vec<T>,
        of_bytes: fn([u8; N]) -> T,
    ) -> Result<(), SpillError> {
        let mut bytes = vec![0u8; place.len() * N];
        self.read_bytes(&mut bytes, place.at())?;
        decode(&bytes, buf, of_bytes);
        Ok(())
    }

    /// Appends a text and returns its place.
    pub fn put_text(&self, text: &str) -> Result<Place, SpillError> {
        let len = u32::try_from(text.len()).map_err(std::io::Error::other)?;
        self.append(text.as_bytes(), len)
    }

    /// The text at `place`.
    pub fn text(&self, place: Place) -> Result<String, SpillError> {
        let mut bytes = vec![0u8; place.len()];
        self.read_bytes(&mut bytes, place.at())?;
        String::from_utf8(bytes).map_err(|e| SpillError(std::io::Error::other(e)))
    }

    /// The main text kept for page `key`: `None` when it kept none here.
    pub fn text_of(&self, key: DocKey) -> Option<Result<String, SpillError>> {
        self.places(key).and_then(|p| p.text).map(|t| self.text(t))
    }

    fn append(&self, bytes: &[u8], len: u32) -> Result<Place, SpillError> {
        let mut tail = self.tail.lock().map_err(|_| std::io::Error::other("a worker panicked"))?;
        let written = self.written.load(Ordering::Acquire);
        let at = written + tail.len() as u64;
        if tail.len() + bytes.len() > WRITE_BUFFER && !tail.is_empty() {
            // On failure the tail stays as it was, still readable.
            write_at(&self.file, &tail, written)?;
            tail.clear();
            self.written.store(at, Ordering::Release);
        }
        if bytes.len() >= WRITE_BUFFER {
            write_at(&self.file, bytes, at)?;
            self.written.store(at + bytes.len() as u64, Ordering::Release);
        } else {
            tail.extend_from_slice(bytes);
        }
        Ok(Place::new(at, len))
    }

    /// The bytes from `at` on, into `bytes`: from the file and, for what has
    /// not reached it yet, from the tail.
    fn read_bytes(&self, bytes: &mut [u8], at: u64) -> std::io::Result<()> {
        let end = at + bytes.len() as u64;
        let mut in_file = bytes.len();
        if end > self.written.load(Ordering::Acquire) {
            let tail = self.tail.lock().map_err(|_| std::io::Error::other("a worker panicked"))?;
            // Again under the lock: a flush may have moved it.
            let written = self.written.load(Ordering::Acquire);
            if end > written {
                let from = at.max(written);
                let past = (end - written) as usize;
                if past > tail.len() {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                in_file = (from - at) as usize;
                bytes[in_file..].copy_from_slice(&tail[(from - written) as usize..past]);
            }
        }
        // Below `written` the file holds every byte: they were written
        // before it moved.
        if in_file > 0 { read_at(&self.file, &mut bytes[..in_file], at) } else { Ok(()) }
    }

    /// The set at `place`, into `buf` (replacing what it held).
    pub fn get(&self, place: Place, buf: &mut Vec<u64>) -> Result<(), SpillError> {
        self.get_values(place, buf, u64::from_le_bytes)
    }

    /// The set at `place`, as a new vector.
    pub fn read(&self, place: Place) -> Result<Vec<u64>, SpillError> {
        let mut buf = Vec::with_capacity(place.len());
        self.get(place, &mut buf)?;
        Ok(buf)
    }

    /// Moves a freshly shingled page's sets, and the main text its view
    /// kept, here, leaving it empty ones.
    pub fn keep(&self, f: &mut Fingerprint, page: &mut PageView) -> Result<(), SpillError> {
        let shingles = self.put(&f.shingles)?;
        let context = if f.context.is_empty() { None } else { Some(self.put(&f.context)?) };
        let text = page.text.as_deref().map(|t| self.put_text(t)).transpose()?;
        self.set_places(f.key, Places { shingles, context, minhash: None, text });
        f.shingles = Vec::new();
        f.context = Vec::new();
        page.text = None;
        Ok(())
    }

    /// Records where a page's sets are.
    pub fn set_places(&self, key: DocKey, places: Places) {
        self.set_all_places([(key, places)]);
    }

    /// Records where each of several pages' sets are, under one lock.
    pub fn set_all_places(&self, all: impl IntoIterator<Item = (DocKey, Places)>) {
        if let Ok(mut p) = self.places.lock() {
            for (key, places) in all {
                p.set(key, places);
            }
        }
    }

    /// Where a page's sets are, if it was spilled.
    pub fn places(&self, key: DocKey) -> Option<Places> {
        self.places.lock().ok().and_then(|mut p| p.get(key))
    }

    /// The sets of `docs`, by position: read back for the pages spilled,
    /// borrowed from the others (the pages a run held before it began to
    /// spill). What verification reads through ([`Sets`]).
    pub fn sets<'s>(&'s self, docs: &'s [Fingerprint]) -> CorpusSets<'s> {
        let places = match self.places.lock() {
            Ok(mut p) => docs.iter().map(|d| p.get(d.key).map(|p| (p.shingles, p.minhash))).collect(),
            Err(_) => vec![None; docs.len()],
        };
        CorpusSets { spill: self, docs, places }
    }
}

/// `bytes` as values, each read by `of_bytes`, into `buf` (replacing what it
/// held).
fn decode<T, const N: usize>(bytes: &[u8], buf: &mut Vec<T>, of_bytes: fn([u8; N]) -> T) {
    buf.clear();
    buf.extend(bytes.chunks_exact(N).map(|b| of_bytes(b.try_into().unwrap_or([0; N]))));
}

/// Values by key, appended as pages come (in any order) and sorted once
/// when first looked up: each spilled page's places (72 bytes a page where
/// a hash map took about twice that at a million pages), the audit's kept
/// markup. A key set twice keeps its last value.
#[derive(Debug)]
pub(crate) struct KeyedTable<V> {
    entries: Vec<(DocKey, V)>,
    sorted: bool,
}

impl<V> Default for KeyedTable<V> {
    fn default() -> Self {
        KeyedTable { entries: Vec::new(), sorted: false }
    }
}

/// Each spilled page's places, by key.
type PlaceTable = KeyedTable<Places>;

impl<V: Copy> KeyedTable<V> {
    pub(crate) fn set(&mut self, key: DocKey, value: V) {
        if !self.sorted {
            self.entries.push((key, value));
            return;
        }
        match self.entries.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (key, value)),
        }
    }

    pub(crate) fn get(&mut self, key: DocKey) -> Option<V> {
        if !self.sorted {
            // A key set twice before the sort keeps its last value.
            self.entries.reverse();
            self.entries.sort_by_key(|e| e.0);
            self.entries.dedup_by_key(|e| e.0);
            self.entries.shrink_to_fit();
            self.sorted = true;
        }
        self.entries.binary_search_by_key(&key, |e| e.0).ok().map(|i| self.entries[i].1)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

impl Corpus {
    /// [`Corpus::finish`] for a corpus whose sets are spilled: each site's
    /// template learned from its pages' sets read back (a site at a time per
    /// thread), then each page read back once more, its template dropped,
    /// sketched, and its remaining set written back. A page whose set
    /// cannot be read back becomes an error of the run.
    pub(crate) fn finish_spilled(&mut self, fp: &Fingerprinter, config: &Config, known: &Templates) -> Templates {
        let Some(spill) = self.spill.as_ref() else { return Templates::default() };
        let settings = config.fingerprint.template.as_ref();
        let learned = settings.map_or_else(Templates::default, |t| learn(spill, &self.docs, t));
        let template_of = |d: &Fingerprint| -> Option<&[u64]> {
            let site = settings.and_then(|t| d.site(t.scope))?;
            learned.get(&site.name).or_else(|| known.get(&site.name))
        };
        let failed: Vec<DocError> = self
            .docs
            .par_chunks_mut(SIGNATURES_A_BLOCK)
            .flat_map_iter(|block| finish_block(spill, fp, block, &template_of))
            .collect();
        if !failed.is_empty() {
            let gone: std::collections::HashSet<DocKey> = failed.iter().map(|e| e.key).collect();
            self.docs.retain(|d| !gone.contains(&d.key));
            self.add_errors(failed);
        }
        learned
    }
}

impl Corpus {
    /// `d` with its shingles in memory: itself when the run held them,
    /// else a copy with its set read back from the spill.
    pub fn held<'d>(&self, d: &'d Fingerprint) -> crate::Result<std::borrow::Cow<'d, Fingerprint>> {
        match self.spill.as_ref().and_then(|s| Some((s, s.places(d.key)?))) {
            None => Ok(std::borrow::Cow::Borrowed(d)),
            Some((spill, places)) => {
                let scratch = |e: SpillError| crate::Error::Scratch(e.to_string());
                let shingles = spill.read(places.shingles).map_err(scratch)?;
                let mut minhash = d.minhash.clone();
                if let Some(place) = places.minhash {
                    spill.get_signature(place, &mut minhash).map_err(scratch)?;
                }
                Ok(std::borrow::Cow::Owned(Fingerprint { shingles, minhash, ..d.clone() }))
            }
        }
    }
}

/// Each site's template, learned as [`Templates::learn_on`] learns it, from
/// sets read back a site at a time. A site whose sets cannot be read back
/// learns none (its pages then fail in [`finish_page`], for the same reason).
fn learn(spill: &Spill, docs: &[Fingerprint], config: &TemplateConfig) -> Templates {
    // Sites in the order their first page comes, each with its pages in
    // key order, as `Templates::learn_on` groups them.
    let mut by_site: HashMap<String, usize> = HashMap::new();
    let mut sites: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        if let Some(site) = d.site(config.scope) {
            let n = *by_site.entry(site.name.clone()).or_insert_with(|| {
                sites.push((site.name, Vec::new()));
                sites.len() - 1
            });
            sites[n].1.push(i);
        }
    }
    drop(by_site);
    sites.retain(|(_, pages)| pages.len() >= config.min_pages);
    let templates = Threads.map(sites.len(), |n| {
        let pages = &sites[n].1;
        let sets = template::learning_sample(pages.len())
            .map(|k| {
                let d = &docs[pages[k]];
                match spill.places(d.key) {
                    Some(places) => spill.read(places.context.unwrap_or(places.shingles)),
                    None => Ok(if d.context.is_empty() { &d.shingles } else { &d.context }.clone()),
                }
            })
            .collect::<Result<Vec<Vec<u64>>, SpillError>>()
            .ok()?;
        let sets: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        Some(template::learn_site(&sets, config))
    });
    let mut learned = Templates::default();
    for ((site, _), t) in sites.into_iter().zip(templates) {
        if let Some(t) = t {
            learned.insert(site, t);
        }
    }
    learned
}

/// Pages finished together ([`finish_block`]): their signatures are
/// written side by side, so LSH reads a run of them at once (a
/// million pages' signatures read one by one took a positioned read a
/// page on every pass of both searches). Blocks of 1,024 pages, read in
/// runs of 1 MB, held 24 MB more at 200,000 pages than these.
const SIGNATURES_A_BLOCK: usize = 128;

/// [`finish_page`] for a block of pages in key order, their signatures
/// written in one piece; the failures, each its page's error.
fn finish_block<'t>(
    spill: &Spill,
    fp: &Fingerprinter,
    block: &mut [Fingerprint],
    template_of: &(dyn Fn(&Fingerprint) -> Option<&'t [u64]> + Sync),
) -> Vec<DocError> {
    let failure = |d: &Fingerprint, e: String| DocError::new(&d.id, d.key, DocErrorKind::Io, e);
    let mut failed = Vec::new();
    // The spilled pages finished, with their places but their signature's.
    let mut finished: Vec<(usize, Places)> = Vec::new();
    let mut signatures: Vec<u32> = Vec::new();
    for (n, d) in block.iter_mut().enumerate() {
        let template = template_of(d);
        match finish_page(spill, fp, d, template) {
            Ok(Some(places)) => {
                signatures.extend_from_slice(&d.minhash);
                finished.push((n, places));
            }
            Ok(None) => {}
            Err(e) => failed.push(failure(d, e.to_string())),
        }
    }
    if finished.is_empty() {
        return failed;
    }
    match spill.put_signature(&signatures) {
        Ok(written) => {
            let mut at = written.at();
            let places = finished.into_iter().map(|(n, places)| {
                let d = &mut block[n];
                let len = d.minhash.len();
                let minhash = Some(Place::new(at, len as u32));
                at += len as u64 * 4;
                d.minhash = Vec::new();
                (d.key, Places { minhash, ..places })
            });
            spill.set_all_places(places);
        }
        Err(e) => failed.extend(finished.iter().map(|&(n, _)| failure(&block[n], e.to_string()))),
    }
    failed
}

/// One spilled page's template dropped and sketch made, its set left on
/// disk: its places, but for its signature, which it keeps for
/// [`finish_block`] to write. `None` for a page not spilled, finished in
/// memory.
fn finish_page(
    spill: &Spill,
    fp: &Fingerprinter,
    d: &mut Fingerprint,
    template: Option<&[u64]>,
) -> Result<Option<Places>, SpillError> {
    let Some(places) = spill.places(d.key) else {
        // Not spilled: finished in memory, as an unspilled corpus is.
        if let Some(t) = template {
            d.drop_template(t);
        }
        d.context = Vec::new();
        fp.sketch(d);
        return Ok(None);
    };
    d.shingles = spill.read(places.shingles)?;
    let mut changed = false;
    if let Some(t) = template {
        if let Some(c) = places.context {
            d.context = spill.read(c)?;
        }
        changed = d.drop_template(t);
    }
    d.context = Vec::new();
    fp.sketch(d);
    let shingles = if changed { spill.put(&d.shingles)? } else { places.shingles };
    d.shingles = Vec::new();
    Ok(Some(Places { shingles, context: None, ..places }))
}

/// A corpus's shingle sets and signatures, by position: on disk or in its
/// fingerprints.
pub struct CorpusSets<'s> {
    spill: &'s Spill,
    docs: &'s [Fingerprint],
    /// Each page's set and signature, when spilled.
    places: Vec<Option<(Place, Option<Place>)>>,
}

impl Sets for CorpusSets<'_> {
    type Error = SpillError;

    fn len(&self, i: u32) -> usize {
        self.places[i as usize].map_or_else(|| self.docs[i as usize].shingles.len(), |(set, _)| set.len())
    }

    fn get<'a>(&'a self, i: u32, buf: &'a mut Vec<u64>) -> Result<&'a [u64], SpillError> {
        match self.places[i as usize] {
            Some((place, _)) => {
                self.spill.get(place, buf)?;
                Ok(buf)
            }
            None => Ok(&self.docs[i as usize].shingles),
        }
    }
}

impl CorpusSets<'_> {
    /// Where document `i`'s signature is, when spilled.
    fn signature_place(&self, i: u32) -> Option<Place> {
        self.places[i as usize].and_then(|(_, signature)| signature)
    }
}

/// The most bytes of signatures [`CorpusSets::signatures`] reads at once.
const SIGNATURE_RUN_BYTES: u64 = 64 << 10;

impl Sketches for CorpusSets<'_> {
    fn signature(&self, i: u32, buf: &mut Vec<u32>) -> Result<(), SpillError> {
        match self.signature_place(i) {
            Some(place) => self.spill.get_signature(place, buf),
            None => {
                buf.clear();
                buf.extend_from_slice(&self.docs[i as usize].minhash);
                Ok(())
            }
        }
    }

    /// Signatures that lie one after another in the file (a block finished
    /// together) are read in one piece.
    fn signatures(&self, range: std::ops::Range<u32>, each: &mut dyn FnMut(u32, &[u32])) -> Result<(), SpillError> {
        let (mut bytes, mut values, mut lens) = (Vec::new(), Vec::new(), Vec::new());
        let mut i = range.start;
        while i < range.end {
            let Some(first) = self.signature_place(i) else {
                each(i, &self.docs[i as usize].minhash);
                i += 1;
                continue;
            };
            // The run: each next signature starting where the last ended.
            lens.clear();
            lens.push(first.len());
            let mut end = first.at() + first.len() as u64 * 4;
            while i + (lens.len() as u32) < range.end && end - first.at() < SIGNATURE_RUN_BYTES {
                match self.signature_place(i + lens.len() as u32) {
                    Some(p) if p.at() == end => {
                        lens.push(p.len());
                        end += p.len() as u64 * 4;
                    }
                    _ => break,
                }
            }
            bytes.resize((end - first.at()) as usize, 0);
            self.spill.read_bytes(&mut bytes, first.at())?;
            let mut from = 0;
            for &len in &lens {
                decode(&bytes[from..from + len * 4], &mut values, u32::from_le_bytes);
                from += len * 4;
                each(i, &values);
                i += 1;
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, at)
}

#[cfg(unix)]
fn read_at(file: &File, bytes: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, at)
}

#[cfg(windows)]
fn write_at(file: &File, mut bytes: &[u8], mut at: u64) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, bytes, at)?;
        bytes = &bytes[n..];
        at += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_at(file: &File, mut bytes: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, bytes, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                bytes = &mut bytes[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_found_by_key_before_and_after_the_table_is_sorted() {
        let place = |at: u64, len| Places { shingles: Place::new(at, len), ..Places::default() };
        let mut table = PlaceTable::default();
        for k in [5u64, 1, 9, 3] {
            table.set(DocKey(k), place(k << 33, k as u32));
        }
        // Set again before the sort: the last places win.
        table.set(DocKey(9), place(7, 7));
        assert_eq!(table.get(DocKey(1)), Some(place(1 << 33, 1)));
        assert_eq!(table.get(DocKey(9)), Some(place(7, 7)));
        assert_eq!(table.get(DocKey(5)).map(|p| p.shingles.at()), Some(5 << 33), "offsets past 4 GB");
        assert_eq!(table.get(DocKey(4)), None);
        assert_eq!(table.entries.len(), 4);
        // After: updated in place, or inserted where it sorts.
        table.set(DocKey(3), place(30, 3));
        table.set(DocKey(4), place(40, 4));
        assert_eq!(table.get(DocKey(3)), Some(place(30, 3)));
        assert_eq!(table.get(DocKey(4)), Some(place(40, 4)));
        assert!(table.entries.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(std::mem::size_of::<(DocKey, Places)>(), 72, "the table's cost a page");
    }

    #[test]
    fn sets_come_back_as_they_were_put_from_many_threads() {
        let spill = Spill::new().unwrap();
        let sets: Vec<Vec<u64>> =
            (0..64u64).map(|i| (0..i * 7).map(|j| j.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i).collect()).collect();
        let places: Vec<Place> = std::thread::scope(|s| {
            let handles: Vec<_> = sets.iter().map(|set| s.spawn(|| spill.put(set).unwrap())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (set, place) in sets.iter().zip(&places) {
            assert_eq!(&spill.read(*place).unwrap(), set);
            assert_eq!(place.len(), set.len());
        }
        let keys: Vec<DocKey> = (0..64).map(DocKey).collect();
        for (k, p) in keys.iter().zip(&places) {
            spill.set_places(*k, Places { shingles: *p, ..Places::default() });
        }
        // Two pages held in memory beside the spilled ones.
        let mut docs: Vec<Fingerprint> = keys
            .iter()
            .rev()
            .map(|&k| Fingerprint::from_parts(format!("d{}", k.0), k, 1, Vec::new(), [0; 16], Vec::new(), 0))
            .collect();
        docs.push(Fingerprint::from_parts("held".into(), DocKey(99), 1, vec![1, 2, 3], [0; 16], Vec::new(), 0));
        let view = spill.sets(&docs);
        let mut buf = Vec::new();
        assert_eq!(view.get(0, &mut buf).unwrap(), sets[63].as_slice());
        assert_eq!(view.len(1), sets[62].len());
        assert_eq!(view.get(64, &mut buf).unwrap(), &[1, 2, 3]);
        assert_eq!(view.len(64), 3);
    }

    #[test]
    fn sets_read_back_while_others_are_appended_from_the_file_or_the_tail() {
        let spill = Spill::new().unwrap();
        // Sets of 1 to 3 KB, and one past the write buffer, from two
        // threads that each read back everything they put as they go.
        let set = |t: u64, i: u64| -> Vec<u64> {
            let len = if t == 0 && i == 300 { WRITE_BUFFER / 8 + 5 } else { 128 + (i as usize * 37) % 256 };
            (0..len as u64).map(|j| (t << 56) ^ (i << 20) ^ j).collect()
        };
        let all: Vec<Vec<(u64, Place)>> = std::thread::scope(|s| {
            let spill = &spill;
            let handles: Vec<_> = (0..2u64)
                .map(|t| {
                    s.spawn(move || {
                        let mut mine = Vec::new();
                        for i in 0..1000u64 {
                            mine.push((i, spill.put(&set(t, i)).unwrap()));
                            let (j, place) = mine[(i as usize * 7919) % mine.len()];
                            assert_eq!(spill.read(place).unwrap(), set(t, j), "thread {t} set {j} after {i}");
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let written = spill.written.load(Ordering::Acquire);
        let tail = spill.tail.lock().unwrap().len() as u64;
        assert!(written > 3 * WRITE_BUFFER as u64 && tail > 0 && tail <= WRITE_BUFFER as u64, "{written} {tail}");
        assert_eq!(spill.file.metadata().unwrap().len(), written, "the file holds what was written, no more");
        for (t, mine) in all.iter().enumerate() {
            for &(i, place) in mine {
                assert_eq!(spill.read(place).unwrap(), set(t as u64, i));
            }
        }
        // A place past what was appended is an error, not a panic.
        let end = written + tail;
        assert!(spill.read(Place::new(end - 8, 2)).is_err());
        assert!(spill.text(Place::new(end + 10, 3)).is_err());
    }

    #[test]
    fn signatures_read_in_runs_are_those_read_one_by_one() {
        let spill = Spill::new().unwrap();
        let signature = |k: u64| -> Vec<u32> { (0..128).map(|j| (k * 1000 + j) as u32).collect() };
        let n = 2600u64;
        // Pages 0..2500 finished in blocks (a run crosses
        // SIGNATURE_RUN_BYTES), 2500 held in memory, the rest written one by
        // one with a set between each.
        let mut places: Vec<(DocKey, Places)> = Vec::new();
        for block in (0..2500u64).collect::<Vec<_>>().chunks(1000) {
            let all: Vec<u32> = block.iter().flat_map(|&k| signature(k)).collect();
            let at = spill.put_signature(&all).unwrap().at();
            for (x, &k) in block.iter().enumerate() {
                let minhash = Some(Place::new(at + x as u64 * 512, 128));
                places.push((DocKey(k), Places { minhash, ..Places::default() }));
            }
        }
        for k in 2501..n {
            spill.put(&[k]).unwrap();
            places.push((
                DocKey(k),
                Places { minhash: Some(spill.put_signature(&signature(k)).unwrap()), ..Places::default() },
            ));
        }
        spill.set_all_places(places);
        let docs: Vec<Fingerprint> = (0..n)
            .map(|k| {
                let minhash = if k == 2500 { signature(k) } else { Vec::new() };
                Fingerprint::from_parts(format!("d{k}"), DocKey(k), 1, Vec::new(), [0; 16], minhash, 0)
            })
            .collect();
        let view = spill.sets(&docs);
        for range in [0..n as u32, 3..2510, 2499..2501, 2590..2600, 7..7] {
            let mut got = Vec::new();
            view.signatures(range.clone(), &mut |i, s| got.push((i, s.to_vec()))).unwrap();
            let want: Vec<(u32, Vec<u32>)> = range.map(|i| (i, signature(u64::from(i)))).collect();
            assert_eq!(got, want);
        }
        let mut buf = Vec::new();
        view.signature(1234, &mut buf).unwrap();
        assert_eq!(buf, signature(1234));
    }
}
