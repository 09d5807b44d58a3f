//! The rows of every file the job writes, and their Parquet schemas.
//!
//! | File | One row per | Columns |
//! |---|---|---|
//! | `ingest/task-I-of-N.parquet` | input document | `key`, `id`, `words`, `digest`, `page_digest`, `shingles` and `context` (binary: 8 little-endian bytes a hash), `site_hint`, `site_template` (binary as above), `error_kind`, `error_message`, `fetch` (JSON) |
//! | `stages/sketch/part-*.parquet` | fingerprinted page | `key`, `minhash` |
//! | `stages/sketch/part-*.templates.parquet` | site of a page in the part, with a template | `site`, `template` (shingles, binary as above) |
//! | `stages/edges/part-*.parquet` | confirmed pair | `a`, `b` (keys, `a < b`), `shared`, `len_a`, `len_b` |
//! | `stages/clusters/part-*.parquet` | clustered page | `label` (lowest key of its cluster), `representative`, `key`, `jaccard`, `containment`, `identical`, `same_text` |
//! | `pages.parquet` | input document | see [`PAGES_SCHEMA`] |
//!
//! Every file names its kind and format version in its Parquet key-value
//! metadata (`webdup.kind`, `webdup.format_version`).

use std::path::Path;

use webdup_core::site::SiteSignals;

use crate::Error;
use crate::parquet_io::{self as pq, Column, Storage};

/// Format version of the ingest files (2: shingles and context as binary;
/// 3: a task takes a run of consecutive inputs, not every Nth, so tasks of
/// version 2 do not combine with tasks of 3; 4: `page_digest`, the MD5 of
/// the decoded page, and `site_hint` and `site_template`, what each local
/// page showed of its site).
pub const INGEST_FORMAT_VERSION: u32 = 4;
/// Format version of the stage files (2: a sketch part holds MinHash and
/// templates, not shingles; 3: a cluster part's `identical` and
/// `same_text` in place of `exact`, and a sketch part's `template_only`:
/// which pages are only their site's template).
pub const STAGE_FORMAT_VERSION: u32 = 3;
/// Format version of `pages.parquet` (2: `identical` and `same_text` in
/// place of `exact`).
pub const PAGES_FORMAT_VERSION: u32 = 2;

/// The columns of `pages.parquet`, for users.
pub const PAGES_SCHEMA: &str = "\
key: uint64, the document's key (input order)
url: string, the document as named (URL or path)
cluster: uint64 or null, its cluster's id in the report
representative: string or null, its cluster's representative
jaccard: float64 or null, exact Jaccard with the representative
containment: float64 or null, share of its shingles found in the representative
identical: bool or null, the same decoded page as the representative
same_text: bool or null, the representative's normalized text, another page
words: uint64 or null, words after extraction
error: string or null, why the document could not be fingerprinted";

/// A document as an ingest task leaves it: shingled, not yet sketched.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestRow {
    pub key: u64,
    pub id: String,
    pub doc: Option<IngestDoc>,
    /// Kind name and message of a document that failed.
    pub error: Option<(String, String)>,
    /// What fetching it recorded, as JSON (URLs only).
    pub fetch: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IngestDoc {
    pub words: u64,
    pub digest: [u8; 16],
    /// The XXH3-128 digest of the decoded page (`None`: unknown).
    pub page_digest: Option<[u8; 16]>,
    pub shingles: Vec<u64>,
    pub context: Vec<u64>,
    /// What the page showed of its site (local pages only; not read back
    /// with the rows: [`read_site_signals`]).
    pub site: SiteSignals,
}

fn digest_of(bytes: Option<[u8; 16]>, path: &Path) -> Result<[u8; 16], Error> {
    bytes.ok_or_else(|| Error::Format(format!("{}: a digest that is not 16 bytes", path.display())))
}

/// Encoded bytes that end a row group of an ingest file (each block of
/// rows appended makes at least one): the sketch stage's workers share
/// the files by row group, so small groups spread its work evenly.
const INGEST_ROW_GROUP: usize = 8 << 20;

/// An ingest file written a block of rows at a time, so a task holds one
/// block in memory, not its whole share.
pub struct IngestWriter<'p> {
    inner: pq::Writer<'p>,
    rows: u64,
}

impl<'p> IngestWriter<'p> {
    pub fn new(path: &'p Path) -> IngestWriter<'p> {
        let inner =
            pq::Writer::new(path, "ingest", INGEST_FORMAT_VERSION, Storage::Plain).row_group_bytes(INGEST_ROW_GROUP);
        IngestWriter { inner, rows: 0 }
    }

    /// Ends a row group once this many encoded bytes are buffered.
    pub fn row_group_bytes(self, bytes: usize) -> IngestWriter<'p> {
        IngestWriter { inner: self.inner.row_group_bytes(bytes), ..self }
    }

    pub fn append(&mut self, rows: &[IngestRow]) -> Result<(), Error> {
        self.rows += rows.len() as u64;
        self.inner.append(ingest_columns(rows))
    }

    /// Rows appended so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn finish(mut self) -> Result<(), Error> {
        if self.rows == 0 {
            self.inner.append(ingest_columns(&[]))?;
        }
        self.inner.finish()
    }
}

fn ingest_columns(rows: &[IngestRow]) -> Vec<(&'static str, Column<'_>)> {
    let doc = |f: &dyn Fn(&IngestDoc) -> Option<u64>| rows.iter().map(|r| r.doc.as_ref().and_then(f)).collect();
    vec![
        ("key", Column::U64(rows.iter().map(|r| r.key).collect())),
        ("id", Column::Str(rows.iter().map(|r| r.id.as_str()).collect())),
        ("words", Column::OptU64(doc(&|d| Some(d.words)))),
        ("digest", Column::OptBin(rows.iter().map(|r| r.doc.as_ref().map(|d| d.digest.as_slice())).collect())),
        (
            "page_digest",
            Column::OptBin(
                rows.iter().map(|r| r.doc.as_ref().and_then(|d| d.page_digest.as_ref().map(|p| &p[..]))).collect(),
            ),
        ),
        ("shingles", Column::BinU64(rows.iter().map(|r| r.doc.as_ref().map(|d| d.shingles.as_slice())).collect())),
        ("context", Column::BinU64(rows.iter().map(|r| r.doc.as_ref().map(|d| d.context.as_slice())).collect())),
        (
            "site_hint",
            Column::OptStr(rows.iter().map(|r| r.doc.as_ref().and_then(|d| d.site.hint.as_deref())).collect()),
        ),
        (
            "site_template",
            Column::BinU64(rows.iter().map(|r| r.doc.as_ref().map(|d| d.site.template.as_slice())).collect()),
        ),
        ("error_kind", Column::OptStr(rows.iter().map(|r| r.error.as_ref().map(|e| e.0.as_str())).collect())),
        ("error_message", Column::OptStr(rows.iter().map(|r| r.error.as_ref().map(|e| e.1.as_str())).collect())),
        ("fetch", Column::OptStr(rows.iter().map(|r| r.fetch.as_deref()).collect())),
    ]
}

/// The rows of an ingest file; `light` leaves the shingles out (ids,
/// words, errors and fetches only).
pub fn read_ingest(path: &Path, light: bool) -> Result<Vec<IngestRow>, Error> {
    read_ingest_groups(path, light, &|_| true)
}

/// [`read_ingest`], of the row groups `groups` takes only.
pub fn read_ingest_groups(path: &Path, light: bool, groups: &dyn Fn(usize) -> bool) -> Result<Vec<IngestRow>, Error> {
    let mut out = Vec::new();
    read_ingest_each(path, light, groups, |r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// [`read_ingest_groups`], each row handed to `each` as it is read; the
/// first error `each` returns ends the reading.
pub fn read_ingest_each(
    path: &Path,
    light: bool,
    groups: &dyn Fn(usize) -> bool,
    mut each: impl FnMut(IngestRow) -> Result<(), Error>,
) -> Result<(), Error> {
    const LIGHT: &[&str] = &["key", "id", "words", "error_kind", "error_message", "fetch"];
    const ROWS: &[&str] = &["key", "id", "words", "digest", "page_digest", "error_kind", "error_message", "fetch"];
    if light {
        for b in pq::read_groups(path, "ingest", INGEST_FORMAT_VERSION, Some(LIGHT), groups)? {
            ingest_rows(&b?, path, None, &mut each)?;
        }
        return Ok(());
    }
    // The hashes straight from their pages, the rest through Arrow, a row
    // group at a time.
    let file = pq::open_groups(path, "ingest", INGEST_FORMAT_VERSION)?;
    for g in (0..file.len()).filter(|&g| groups(g)) {
        let mut hashes = file.bin_u64s(g, "shingles")?.into_iter().zip(file.bin_u64s(g, "context")?);
        for b in file.arrow(g, ROWS)? {
            ingest_rows(&b?, path, Some(&mut hashes), &mut each)?;
        }
        if hashes.next().is_some() {
            return Err(Error::Format(format!("{}: row group {g} has more hash lists than rows", path.display())));
        }
    }
    Ok(())
}

/// A row's shingles and context, as read (`None`: null).
type HashLists = (Option<Vec<u64>>, Option<Vec<u64>>);

/// The rows of one batch of an ingest file, handed to `each`; `hashes`
/// gives each row's shingles and context in turn (`None`: a light read).
fn ingest_rows(
    b: &arrow_array::RecordBatch,
    path: &Path,
    mut hashes: Option<&mut dyn Iterator<Item = HashLists>>,
    each: &mut impl FnMut(IngestRow) -> Result<(), Error>,
) -> Result<(), Error> {
    let keys = pq::u64s(b, "key", path)?;
    let mut ids = pq::strs(b, "id", path)?;
    let words = pq::opt_u64s(b, "words", path)?;
    let mut kinds = pq::opt_strs(b, "error_kind", path)?;
    let mut messages = pq::opt_strs(b, "error_message", path)?;
    let mut fetches = pq::opt_strs(b, "fetch", path)?;
    let digests = if hashes.is_some() { pq::opt_byte_arrays::<16>(b, "digest", path)? } else { Vec::new() };
    let pages = if hashes.is_some() { pq::opt_byte_arrays::<16>(b, "page_digest", path)? } else { Vec::new() };
    for i in 0..keys.len() {
        let lists = match hashes.as_mut() {
            Some(h) => Some(h.next().ok_or_else(|| {
                Error::Format(format!("{}: row {} ({}) has no hash lists", path.display(), keys[i], ids[i]))
            })?),
            None => None,
        };
        let doc = match (words[i], lists) {
            (Some(w), None) => Some(IngestDoc {
                words: w,
                digest: [0; 16],
                page_digest: None,
                shingles: Vec::new(),
                context: Vec::new(),
                site: SiteSignals::default(),
            }),
            (Some(w), Some((shingles, context))) => Some(IngestDoc {
                words: w,
                digest: digest_of(digests[i], path)?,
                page_digest: pages[i],
                shingles: shingles.unwrap_or_default(),
                context: context.unwrap_or_default(),
                site: SiteSignals::default(),
            }),
            (None, _) => None,
        };
        let error = match (kinds[i].take(), messages[i].take()) {
            (Some(k), Some(m)) => Some((k, m)),
            _ => None,
        };
        let id = std::mem::take(&mut ids[i]);
        each(IngestRow { key: keys[i], id, doc, error, fetch: fetches[i].take() })?;
    }
    Ok(())
}

/// Each document's key, id and what its page showed of its site, in file
/// order: the input of the job's site decision (`webdup_core::site`).
pub fn read_site_signals(path: &Path) -> Result<Vec<(u64, String, SiteSignals)>, Error> {
    let file = pq::open_groups(path, "ingest", INGEST_FORMAT_VERSION)?;
    let mut out = Vec::new();
    for g in 0..file.len() {
        let mut templates = file.bin_u64s(g, "site_template")?.into_iter();
        for b in file.arrow(g, &["key", "id", "words", "site_hint"])? {
            let b = b?;
            let (keys, ids) = (pq::u64s(&b, "key", path)?, pq::strs(&b, "id", path)?);
            let (words, hints) = (pq::opt_u64s(&b, "words", path)?, pq::opt_strs(&b, "site_hint", path)?);
            for (((key, id), words), hint) in keys.into_iter().zip(ids).zip(words).zip(hints) {
                let template = templates.next().ok_or_else(|| {
                    Error::Format(format!("{}: row {key} ({id}) has no site template", path.display()))
                })?;
                if words.is_some() {
                    out.push((key, id, SiteSignals { hint, template: template.unwrap_or_default() }));
                }
            }
        }
    }
    Ok(out)
}

/// A page after its site's template is dropped, sketched: what the edges
/// stage takes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SketchRow {
    pub key: u64,
    pub id: String,
    pub digest: [u8; 16],
    pub page_digest: Option<[u8; 16]>,
    pub shingles: Vec<u64>,
    pub minhash: Vec<u32>,
    /// Nothing but its site's template (`Fingerprint::template_only`): no
    /// one's copy, and never a candidate.
    pub template_only: bool,
}

/// Rows of a sketch part converted and written at a time, so a part is
/// never held twice whole (as rows and as Arrow arrays).
const SKETCH_BLOCK: usize = 4096;

/// Writes a sketch part: each row's key and MinHash. The rest of a row is
/// its ingest row with its site's template dropped (the part's templates
/// file), rebuilt when a later stage resumes: written again here, the
/// shingles were most of what the stage wrote.
pub fn write_sketch(path: &Path, rows: &[SketchRow]) -> Result<(), Error> {
    let mut w = pq::Writer::new(path, "sketch", STAGE_FORMAT_VERSION, Storage::Plain);
    // An empty part still has one (empty) block, which sets the schema.
    let blocks: Vec<&[SketchRow]> = if rows.is_empty() { vec![rows] } else { rows.chunks(SKETCH_BLOCK).collect() };
    for block in blocks {
        w.append(vec![
            ("key", Column::U64(block.iter().map(|r| r.key).collect())),
            ("minhash", Column::ListU32(block.iter().map(|r| Some(r.minhash.as_slice())).collect())),
            ("template_only", Column::Bool(block.iter().map(|r| r.template_only).collect())),
        ])?;
    }
    w.finish()
}

/// The keys and MinHash sketches of a sketch part.
pub fn read_sketch(path: &Path) -> Result<Vec<(u64, Vec<u32>)>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "sketch", STAGE_FORMAT_VERSION, None)? {
        let b = &b?;
        let keys = pq::u64s(b, "key", path)?;
        let minhashes = pq::list_u32s(b, "minhash", path)?;
        out.extend(keys.into_iter().zip(minhashes).map(|(k, m)| (k, m.unwrap_or_default())));
    }
    Ok(out)
}

/// The keys of a sketch part's pages that are only their site's template.
pub fn read_template_only(path: &Path) -> Result<Vec<u64>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "sketch", STAGE_FORMAT_VERSION, Some(&["key", "template_only"]))? {
        let b = &b?;
        let keys = pq::u64s(b, "key", path)?;
        let only = pq::bools(b, "template_only", path)?;
        out.extend(keys.into_iter().zip(only).filter_map(|(k, t)| t.then_some(k)));
    }
    Ok(out)
}

/// Writes the templates of the sites of a sketch part's pages (by site).
pub fn write_templates(path: &Path, templates: &[(&str, &[u64])]) -> Result<(), Error> {
    pq::write(
        path,
        "templates",
        STAGE_FORMAT_VERSION,
        Storage::Plain,
        vec![
            ("site", Column::Str(templates.iter().map(|t| t.0).collect())),
            ("template", Column::BinU64(templates.iter().map(|t| Some(t.1)).collect())),
        ],
    )
}

pub fn read_templates(path: &Path) -> Result<Vec<(String, Vec<u64>)>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "templates", STAGE_FORMAT_VERSION, None)? {
        let b = &b?;
        let sites = pq::strs(b, "site", path)?;
        let templates = pq::bin_u64s(b, "template", path)?;
        out.extend(sites.into_iter().zip(templates).map(|(s, t)| (s, t.unwrap_or_default())));
    }
    Ok(out)
}

/// A confirmed pair, by key (`a < b`), with its overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EdgeRow {
    pub a: u64,
    pub b: u64,
    pub shared: u64,
    pub len_a: u64,
    pub len_b: u64,
}

pub fn write_edges(path: &Path, rows: &[EdgeRow]) -> Result<(), Error> {
    pq::write(
        path,
        "edges",
        STAGE_FORMAT_VERSION,
        Storage::Plain,
        vec![
            ("a", Column::U64(rows.iter().map(|r| r.a).collect())),
            ("b", Column::U64(rows.iter().map(|r| r.b).collect())),
            ("shared", Column::U64(rows.iter().map(|r| r.shared).collect())),
            ("len_a", Column::U64(rows.iter().map(|r| r.len_a).collect())),
            ("len_b", Column::U64(rows.iter().map(|r| r.len_b).collect())),
        ],
    )
}

pub fn read_edges(path: &Path) -> Result<Vec<EdgeRow>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "edges", STAGE_FORMAT_VERSION, None)? {
        let b = &b?;
        let (a, bs) = (pq::u64s(b, "a", path)?, pq::u64s(b, "b", path)?);
        let (shared, len_a, len_b) =
            (pq::u64s(b, "shared", path)?, pq::u64s(b, "len_a", path)?, pq::u64s(b, "len_b", path)?);
        for i in 0..a.len() {
            out.push(EdgeRow { a: a[i], b: bs[i], shared: shared[i], len_a: len_a[i], len_b: len_b[i] });
        }
    }
    Ok(out)
}

/// A clustered page and how it relates to its cluster's representative.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemberRow {
    /// The lowest key of the cluster.
    pub label: u64,
    pub representative: u64,
    pub key: u64,
    pub jaccard: f64,
    pub containment: f64,
    pub identical: bool,
    pub same_text: bool,
}

pub fn write_members(path: &Path, rows: &[MemberRow]) -> Result<(), Error> {
    pq::write(
        path,
        "clusters",
        STAGE_FORMAT_VERSION,
        Storage::Plain,
        vec![
            ("label", Column::U64(rows.iter().map(|r| r.label).collect())),
            ("representative", Column::U64(rows.iter().map(|r| r.representative).collect())),
            ("key", Column::U64(rows.iter().map(|r| r.key).collect())),
            ("jaccard", Column::OptF64(rows.iter().map(|r| Some(r.jaccard)).collect())),
            ("containment", Column::OptF64(rows.iter().map(|r| Some(r.containment)).collect())),
            ("identical", Column::Bool(rows.iter().map(|r| r.identical).collect())),
            ("same_text", Column::Bool(rows.iter().map(|r| r.same_text).collect())),
        ],
    )
}

pub fn read_members(path: &Path) -> Result<Vec<MemberRow>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "clusters", STAGE_FORMAT_VERSION, None)? {
        let b = &b?;
        let labels = pq::u64s(b, "label", path)?;
        let reps = pq::u64s(b, "representative", path)?;
        let keys = pq::u64s(b, "key", path)?;
        let jaccard = pq::opt_f64s(b, "jaccard", path)?;
        let containment = pq::opt_f64s(b, "containment", path)?;
        let identical = pq::bools(b, "identical", path)?;
        let same_text = pq::bools(b, "same_text", path)?;
        for i in 0..keys.len() {
            out.push(MemberRow {
                label: labels[i],
                representative: reps[i],
                key: keys[i],
                jaccard: jaccard[i].unwrap_or(0.0),
                containment: containment[i].unwrap_or(0.0),
                identical: identical[i],
                same_text: same_text[i],
            });
        }
    }
    Ok(out)
}

/// One row of `pages.parquet` (see [`PAGES_SCHEMA`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PageRow {
    pub key: u64,
    pub url: String,
    pub cluster: Option<u64>,
    pub representative: Option<String>,
    pub jaccard: Option<f64>,
    pub containment: Option<f64>,
    pub identical: Option<bool>,
    pub same_text: Option<bool>,
    pub words: Option<u64>,
    pub error: Option<String>,
}

pub fn write_pages(path: &Path, rows: &[PageRow]) -> Result<(), Error> {
    pq::write(
        path,
        "pages",
        PAGES_FORMAT_VERSION,
        Storage::Compressed,
        vec![
            ("key", Column::U64(rows.iter().map(|r| r.key).collect())),
            ("url", Column::Str(rows.iter().map(|r| r.url.as_str()).collect())),
            ("cluster", Column::OptU64(rows.iter().map(|r| r.cluster).collect())),
            ("representative", Column::OptStr(rows.iter().map(|r| r.representative.as_deref()).collect())),
            ("jaccard", Column::OptF64(rows.iter().map(|r| r.jaccard).collect())),
            ("containment", Column::OptF64(rows.iter().map(|r| r.containment).collect())),
            ("identical", Column::OptBool(rows.iter().map(|r| r.identical).collect())),
            ("same_text", Column::OptBool(rows.iter().map(|r| r.same_text).collect())),
            ("words", Column::OptU64(rows.iter().map(|r| r.words).collect())),
            ("error", Column::OptStr(rows.iter().map(|r| r.error.as_deref()).collect())),
        ],
    )
}

pub fn read_pages(path: &Path) -> Result<Vec<PageRow>, Error> {
    let mut out = Vec::new();
    for b in pq::read(path, "pages", PAGES_FORMAT_VERSION, None)? {
        let b = &b?;
        let keys = pq::u64s(b, "key", path)?;
        let urls = pq::strs(b, "url", path)?;
        let clusters = pq::opt_u64s(b, "cluster", path)?;
        let reps = pq::opt_strs(b, "representative", path)?;
        let jaccard = pq::opt_f64s(b, "jaccard", path)?;
        let containment = pq::opt_f64s(b, "containment", path)?;
        let identical = pq::opt_bools(b, "identical", path)?;
        let same_text = pq::opt_bools(b, "same_text", path)?;
        let words = pq::opt_u64s(b, "words", path)?;
        let errors = pq::opt_strs(b, "error", path)?;
        for i in 0..keys.len() {
            out.push(PageRow {
                key: keys[i],
                url: urls[i].clone(),
                cluster: clusters[i],
                representative: reps[i].clone(),
                jaccard: jaccard[i],
                containment: containment[i],
                identical: identical[i],
                same_text: same_text[i],
                words: words[i],
                error: errors[i].clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: u64) -> IngestRow {
        let doc = (!key.is_multiple_of(5)).then(|| IngestDoc {
            words: key * 3,
            digest: [key as u8; 16],
            // Known and unknown pages both come back as written.
            page_digest: key.is_multiple_of(4).then_some([key as u8 ^ 0xff; 16]),
            shingles: (0..key * 7 % 300).map(|i| i * 1_000_003 + key).collect(),
            context: if key.is_multiple_of(2) { vec![key, key + 1] } else { Vec::new() },
            site: SiteSignals {
                hint: key.is_multiple_of(4).then(|| format!("h{key}.example")),
                template: vec![key, key * 2 + 1],
            },
        });
        let error = doc.is_none().then(|| ("decode".to_string(), format!("page {key} is not text")));
        IngestRow { key, id: format!("site/{key}"), doc, error, fetch: key.is_multiple_of(3).then(|| "{}".to_string()) }
    }

    #[test]
    fn blocks_written_apart_read_back_whole_and_row_groups_split_between_readers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.parquet");
        let rows: Vec<IngestRow> = (0..3000).map(row).collect();
        // Small row groups, so the file has many and the readers split them.
        let mut w = IngestWriter::new(&path).row_group_bytes(64 << 10);
        for block in rows.chunks(700) {
            w.append(block).unwrap();
        }
        assert_eq!(w.rows(), 3000);
        w.finish().unwrap();
        // Site signals are read on their own.
        let signals: Vec<(u64, String, SiteSignals)> =
            rows.iter().filter_map(|r| Some((r.key, r.id.clone(), r.doc.as_ref()?.site.clone()))).collect();
        assert_eq!(read_site_signals(&path).unwrap(), signals);
        let mut rows = rows;
        for d in rows.iter_mut().filter_map(|r| r.doc.as_mut()) {
            d.site = SiteSignals::default();
        }
        assert_eq!(read_ingest(&path, false).unwrap(), rows);

        let shares: Vec<Vec<IngestRow>> =
            (0..3).map(|i| read_ingest_groups(&path, false, &|g| g % 3 == i).unwrap()).collect();
        assert!(shares.iter().all(|s| !s.is_empty()), "every reader gets some row groups");
        let mut together: Vec<IngestRow> = shares.into_iter().flatten().collect();
        together.sort_by_key(|r| r.key);
        assert_eq!(together, rows, "the shares are disjoint and cover the file");
    }

    #[test]
    fn sketch_parts_written_block_by_block_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        // No rows, fewer than a block, an exact number of blocks, and more.
        for n in [0, 5, 2 * SKETCH_BLOCK, 2 * SKETCH_BLOCK + 1] {
            let path = dir.path().join(format!("sketch-{n}.parquet"));
            let rows: Vec<SketchRow> = (0..n as u64)
                .map(|k| SketchRow {
                    key: k,
                    id: format!("site/{k}"),
                    digest: [k as u8; 16],
                    page_digest: None,
                    shingles: (0..k % 30).map(|i| i * 7 + k).collect(),
                    minhash: vec![k as u32; 4],
                    template_only: false,
                })
                .collect();
            write_sketch(&path, &rows).unwrap();
            let back: Vec<(u64, Vec<u32>)> = rows.iter().map(|r| (r.key, r.minhash.clone())).collect();
            assert_eq!(read_sketch(&path).unwrap(), back, "{n} rows");
        }
    }

    #[test]
    fn templates_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0u64, 1, 3] {
            let path = dir.path().join(format!("templates-{n}.parquet"));
            let templates: Vec<(String, Vec<u64>)> =
                (0..n).map(|i| (format!("site-{i}.example"), (0..i * 5).map(|s| s * 11 + i).collect())).collect();
            let borrowed: Vec<(&str, &[u64])> = templates.iter().map(|(s, t)| (s.as_str(), t.as_slice())).collect();
            write_templates(&path, &borrowed).unwrap();
            assert_eq!(read_templates(&path).unwrap(), templates, "{n} templates");
        }
    }

    #[test]
    fn a_task_with_nothing_writes_a_readable_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.parquet");
        IngestWriter::new(&path).finish().unwrap();
        assert!(read_ingest(&path, false).unwrap().is_empty());
    }
}
