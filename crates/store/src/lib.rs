//! A persistent index of fingerprints across crawls, in one SQLite file.
//!
//! A crawler asks, page by page, "have I seen this content before, under
//! which URL?" ([`Index::check`]) and records what it fetched
//! ([`Index::insert`], [`Index::insert_batch`]). Every page row keeps what
//! exact verification needs (the full shingle set), so, as everywhere in
//! webdup, the LSH band keys only nominate candidates and every reported
//! Jaccard is exact ([`crate::verify::Overlap`]).
//!
//! The index remembers the settings its fingerprints were made with
//! (shingling, permutations, seed, thresholds and banding) and refuses to
//! open with different ones: fingerprints made otherwise are not comparable.
//! Like `webdup cluster`, it holds pages of two different sites to its
//! cross-site threshold when it has one (the same article in another site's
//! template keeps some of each template's text), and pages of one site to
//! its threshold; the band table is built for the lower of the two.
//!
//! An [`Index`] is `Send + Sync`: share it across tokio tasks or threads as
//! an `Arc<Index>`. Writes go through one connection behind a mutex; reads
//! use a small pool of connections, which WAL mode lets run beside a write.
//! Each insert (a page row, its band keys, its shingles) is one transaction,
//! or one transaction per batch: a killed process never leaves half a page.
//! Other processes may write the same file at the same time (two `webdup
//! serve`, an `index add` beside a server): every write transaction begins
//! IMMEDIATE, so a writer waits for another's commit (up to 30 s) rather than
//! failing with "database is locked".
//!
//! `webdup::store` re-exports this crate with an example that fingerprints
//! pages with `webdup`'s `Fingerprinter`.

pub mod bands;
mod codec;
mod crawl;
mod file;
mod learn;
pub mod schema;

pub(crate) use codec::{DEFLATE_FROM, decode_u32s, decode_u64s, deflate, encode_u32s, encode_u64s, inflate};
pub use crawl::CrawlRow;
pub use learn::{LEARN_UNTIL, SiteTemplate, Unsuppressed};

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

// The engine floor, under the paths the store's code names.
use crate::index::LshParams;
use crate::index::lsh::{self, band_key};
use crate::template::{TemplateConfig, Templates};
use crate::verify::Overlap;
pub(crate) use webdup_core::candidates as index;
use webdup_core::fingerprint::Fingerprint;
use webdup_core::page::Exchange;
// A page as stored is the core's page record; its metadata, the core's
// record of what the page and its headers said. Their old names stay.
pub use webdup_core::page::{Crawl, PageRecord as StoredPage, RecordMeta as PageMeta, iso8601_utc};
use webdup_core::settings::{FINGERPRINT_SETTINGS_VERSION, FingerprintSettings};
use webdup_core::sketch::{MinHasher, SimHashWeighting};
pub(crate) use webdup_core::{shingle, template, verify};

/// Why an index operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite failed (disk full, locked too long, corrupt file).
    #[error("index database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The file could not be opened as an index. (`reason`, not `source`:
    /// the message already says why, and error reporters that print the
    /// source chain would say it twice.)
    #[error("cannot open index {path}: {reason}")]
    Open { path: String, reason: Box<Error> },
    /// There is no file to open ([`Index::open_existing`]).
    #[error("no such file")]
    Missing,
    /// The file is not a webdup index.
    #[error("not a webdup index: {0}")]
    NotAnIndex(String),
    /// The settings kept in the index cannot be used.
    #[error("the index's stored settings are not usable: {0}")]
    BadSettings(String),
    /// A setting every index records since schema version 1 has no row in
    /// its `meta` table: its fingerprints were made with a value no longer
    /// known, and guessing one would compare them wrongly.
    #[error(
        "its meta table has no {0:?} row, which every webdup index records: the file was damaged or edited, \
         and the setting its fingerprints were made with is unknown"
    )]
    MissingSetting(String),
    /// No crawl of that name in the index.
    #[error("index {path} has no crawl named {crawl:?}; its crawls: {}", known.join(", "))]
    UnknownCrawl { path: String, crawl: String, known: Vec<String> },
    /// The index holds no pages, so no crawl to choose.
    #[error("index {path} is empty: it holds no crawl (add one with `webdup index add`)")]
    Empty { path: String },
    /// The file was written by a newer webdup.
    #[error("index schema version {found} is newer than this webdup supports ({supported}); upgrade webdup")]
    NewerSchema { found: i64, supported: i64 },
    /// The fingerprints in the index were made with other settings.
    #[error(
        "the index was built with {setting} = {stored}, but {requested} was asked for; \
         fingerprints made with different settings cannot be compared (pass the index's settings, \
         or use another index file)"
    )]
    SettingsMismatch { setting: &'static str, stored: String, requested: String },
    /// A fingerprint does not fit the index (wrong signature length).
    #[error("fingerprint {id} does not fit this index: {reason}")]
    Fingerprint { id: String, reason: String },
    /// A stored row cannot be decoded.
    #[error("corrupt index row {page_id}: {reason}")]
    Corrupt { page_id: i64, reason: String },
    /// A page has no URL or crawl name.
    #[error("invalid page: {0}")]
    InvalidPage(String),
    /// The index cannot be written here ([`Index::open`]); it can still be
    /// read ([`Index::open_existing`] opens it read-only).
    #[error(
        "{0}: the index can be read (index stats, index query, audit --index) but not changed; \
         copy it to a writable place to add pages"
    )]
    ReadOnly(String),
    /// A read-only index must be migrated before this webdup can read it.
    #[error(
        "the index has schema version {found} and this webdup reads {supported}; migrating it needs write access \
         (open it once where it can be written)"
    )]
    NeedsMigration { found: i64, supported: i64 },
}

/// Result alias for index operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An index's settings, kept in the `meta` table: the fingerprint settings
/// its pages were made with, and the Jaccard thresholds its band table is
/// built for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub fingerprint: FingerprintSettings,
    /// The least Jaccard of two pages of one site that are duplicates.
    pub threshold: f64,
    /// The least Jaccard of two pages of different sites (as
    /// [`template::site_of`] names them) that are duplicates; `None`: the
    /// one threshold for all pairs. An index written before this setting
    /// was recorded has none (its bands were built for `threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_site_threshold: Option<f64>,
    pub bands: usize,
    pub rows: usize,
    /// Settings the file does not record (it was written before they were
    /// recorded), read as today's defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumed: Vec<String>,
}

/// The settings rows schema version 1 wrote, and every version since.
const RECORDED_SINCE_V1: [&str; 10] = [
    "shingle_size",
    "stopwords",
    "stem",
    "language",
    "extractor",
    "permutations",
    "seed",
    "threshold",
    "bands",
    "rows",
];

/// The `meta` key of [`Settings::cross_site_threshold`], and its value for none.
const CROSS_SITE: &str = "cross_site_threshold";
const OFF: &str = "off";

/// A configuration that can take an index's settings: `webdup`'s `Config`.
/// The store itself never builds one, so it depends on no extractor.
pub trait ApplySettings: Sized {
    /// `self` with `settings` in place of its fingerprint settings, validated.
    fn apply_settings(self, settings: &Settings) -> Result<Self>;
}

impl Settings {
    /// The settings a validated config fingerprints with (`webdup`'s
    /// `&Config` converts into them).
    pub fn of(config: impl Into<Settings>) -> Settings {
        config.into()
    }

    /// The settings kept in an index's `meta` table.
    fn read(conn: &Connection) -> Result<Settings> {
        let get = |key: &str| -> Result<String> {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::MissingSetting(key.into()))
        };
        fn parse<T: std::str::FromStr>(key: &str, value: String) -> Result<T> {
            value.parse().map_err(|_| Error::BadSettings(format!("{key} = {value:?}")))
        }
        // Recorded since schema version 6, or since the setting was added; a
        // file written before holds today's defaults, named in `assumed`.
        let recorded = |key: &str| -> Result<Option<String>> {
            Ok(conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?)
        };
        let mut assumed: Vec<String> =
            recorded("assumed")?.unwrap_or_default().split(',').filter(|k| !k.is_empty()).map(str::to_string).collect();
        let template = match get("template")?.as_str() {
            "off" => None,
            json => Some(
                serde_json::from_str::<TemplateConfig>(json)
                    .map_err(|e| Error::BadSettings(format!("template = {json:?}: {e}")))?,
            ),
        };
        let selector = |key: &str| -> Result<Option<String>> { Ok(recorded(key)?.filter(|s| !s.is_empty())) };
        let simhash_weighting = match recorded("simhash_weighting")? {
            None => {
                assumed.push("simhash_weighting".into());
                SimHashWeighting::Tf
            }
            Some(v) => serde_json::from_value(serde_json::Value::String(v.clone()))
                .map_err(|_| Error::BadSettings(format!("simhash_weighting = {v:?}")))?,
        };
        let version = match recorded("fingerprint_settings_version")? {
            None => FINGERPRINT_SETTINGS_VERSION,
            Some(v) => parse("fingerprint_settings_version", v)?,
        };
        if version != FINGERPRINT_SETTINGS_VERSION {
            return Err(Error::BadSettings(format!(
                "fingerprint settings version {version} (this webdup makes version {FINGERPRINT_SETTINGS_VERSION})"
            )));
        }
        Ok(Settings {
            fingerprint: FingerprintSettings {
                version,
                extractor: get("extractor")?,
                include_selector: selector("include_selector")?,
                exclude_selector: selector("exclude_selector")?,
                template,
                shingle_size: parse("shingle_size", get("shingle_size")?)?,
                stopwords: parse("stopwords", get("stopwords")?)?,
                stem: parse("stem", get("stem")?)?,
                language: get("language")?,
                permutations: parse("permutations", get("permutations")?)?,
                seed: parse("seed", get("seed")?)?,
                simhash_weighting,
            },
            threshold: parse("threshold", get("threshold")?)?,
            cross_site_threshold: match recorded(CROSS_SITE)?.as_deref() {
                None | Some(OFF) => None,
                Some(v) => Some(parse(CROSS_SITE, v.to_string())?),
            },
            bands: parse("bands", get("bands")?)?,
            rows: parse("rows", get("rows")?)?,
            assumed,
        })
    }

    /// `base` with these settings in place of its own fingerprint settings
    /// (shingling, extractor, selectors, template suppression, permutations,
    /// seed, threshold), validated: the config under which the index's
    /// fingerprints compare (see [`ApplySettings`]).
    pub fn apply<C: ApplySettings>(&self, base: C) -> Result<C> {
        base.apply_settings(self)
    }

    /// The settings in which `other` differs from these, as `name = ours
    /// (not theirs)`; the banding, which follows from the threshold and
    /// permutations, is left out.
    pub fn differences(&self, other: &Settings) -> Vec<String> {
        let mut out = self.fingerprint.differences(&other.fingerprint);
        if self.threshold != other.threshold {
            out.push(format!("threshold = {} (not {})", self.threshold, other.threshold));
        }
        if self.cross_site_threshold != other.cross_site_threshold {
            let show = |t: Option<f64>| t.map_or_else(|| OFF.to_string(), |t| t.to_string());
            out.push(format!(
                "{CROSS_SITE} = {} (not {})",
                show(self.cross_site_threshold),
                show(other.cross_site_threshold)
            ));
        }
        out
    }

    /// The least Jaccard that makes `a` and `b` (page ids: URLs or paths,
    /// read by the index's template scope) duplicates.
    pub fn threshold_between(&self, a: &str, b: &str) -> f64 {
        let Some(cross) = self.cross_site_threshold else { return self.threshold };
        let scope = self.fingerprint.template.as_ref().map_or_else(Default::default, |t| t.scope);
        let (a, b) = (template::site_of(a, scope), template::site_of(b, scope));
        template::pair_threshold(self.threshold, Some(cross), a.as_deref(), b.as_deref())
    }

    /// The `meta` rows: each setting's key and stored value.
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let f = &self.fingerprint;
        let template = match &f.template {
            None => "off".into(),
            Some(t) => serde_json::to_string(t).expect("plain data"),
        };
        vec![
            ("shingle_size", f.shingle_size.to_string()),
            ("stopwords", f.stopwords.to_string()),
            ("stem", f.stem.to_string()),
            ("language", f.language.clone()),
            ("extractor", f.extractor.clone()),
            ("permutations", f.permutations.to_string()),
            ("seed", f.seed.to_string()),
            ("threshold", self.threshold.to_string()),
            (CROSS_SITE, self.cross_site_threshold.map_or_else(|| OFF.to_string(), |t| t.to_string())),
            ("bands", self.bands.to_string()),
            ("rows", self.rows.to_string()),
            ("template", template),
            ("include_selector", f.include_selector.clone().unwrap_or_default()),
            ("exclude_selector", f.exclude_selector.clone().unwrap_or_default()),
            ("simhash_weighting", f.simhash_weighting.as_str().into()),
            ("fingerprint_settings_version", f.version.to_string()),
        ]
    }
}

/// One page of one crawl, to be inserted: its record (the core's
/// [`StoredPage`], `PageRecord`: address, exchange, redirects, metadata)
/// and its content. What is read back is that record, with the row's id.
#[derive(Debug, Clone)]
pub struct Page {
    pub record: StoredPage,
    /// The content; `None` for pages that could not be fetched or read.
    /// Its `text`, when set, is stored too (for the audit's diff view).
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
    /// A page with content; its title, metadata and main text (when the
    /// fingerprint kept them, see `webdup::Config::keep_pages`) come from the
    /// fingerprint.
    pub fn new(crawl: impl Into<String>, url: impl Into<String>, fingerprint: Fingerprint) -> Page {
        let record = StoredPage::observed(url.into(), Some(&fingerprint), None);
        Page {
            record: StoredPage { crawl: crawl.into(), fetched_at: now(), ..record },
            fingerprint: Some(fingerprint),
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
        let record = StoredPage {
            crawl: crawl.into(),
            fetched_at: now(),
            error_kind: Some(kind.into()),
            error: Some(error.into()),
            ..StoredPage::observed(url.into(), None, None)
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
        if let Some(f) = &mut self.fingerprint {
            f.text = None;
        }
        self
    }

    /// Takes the final URL, status, redirects, canonical link and error
    /// from a fetch (`webdup-web`'s `&FetchRecord` converts into an
    /// [`Exchange`]).
    pub fn with_fetch(mut self, exchange: impl Into<Exchange>) -> Page {
        let exchange: Exchange = exchange.into();
        // The one merge rule of markup and headers, as in the audit.
        let seen = StoredPage::observed(self.record.url.clone(), self.fingerprint.as_ref(), Some(&exchange));
        let r = &mut self.record;
        (r.final_url, r.status, r.redirects, r.meta) = (seen.final_url, seen.status, seen.redirects, seen.meta);
        if seen.error_kind.is_some() {
            (r.error_kind, r.error) = (seen.error_kind, seen.error);
        }
        self
    }

    fn check(&self) -> Result<()> {
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

/// An indexed page similar to the one checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// The page's row id. Ids grow as pages are stored, so of two matches
    /// the one with the smaller id was stored first.
    pub id: i64,
    pub url: String,
    pub crawl: String,
    pub final_url: Option<String>,
    pub title: Option<String>,
    /// Exact Jaccard of the shingle sets.
    #[serde(serialize_with = "crate::verify::serialize_round6")]
    pub jaccard: f64,
    /// Share of the checked page's shingles found in this page.
    #[serde(serialize_with = "crate::verify::serialize_round6")]
    pub containment: f64,
    /// Share of this page's shingles found in the checked page.
    #[serde(serialize_with = "crate::verify::serialize_round6")]
    pub contained: f64,
}

impl Match {
    fn new(
        id: i64,
        url: String,
        crawl: String,
        final_url: Option<String>,
        title: Option<String>,
        o: &Overlap,
    ) -> Match {
        Match {
            id,
            url,
            crawl,
            final_url,
            title,
            jaccard: o.jaccard(),
            containment: o.containment_a_in_b(),
            contained: o.containment_b_in_a(),
        }
    }
}

/// The answer of [`Index::check`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckResult {
    /// Pages with the same normalized text (same MD5), in insertion order.
    pub exact: Vec<Match>,
    /// Other pages with Jaccard at least the index threshold (its cross-site
    /// threshold for a page of another site), most similar first (ties: the
    /// page stored first).
    pub near: Vec<Match>,
    /// LSH candidates looked at (before exact verification).
    pub candidates: usize,
}

impl CheckResult {
    /// True when the content has been seen before, exactly or nearly.
    pub fn seen(&self) -> bool {
        !self.exact.is_empty() || !self.near.is_empty()
    }
}

/// Pages of one crawl.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrawlStats {
    pub crawl: String,
    pub pages: u64,
    pub with_content: u64,
    /// Seconds since the Unix epoch; ISO 8601 (UTC) in JSON.
    #[serde(serialize_with = "webdup_core::page::serialize_iso8601")]
    pub first_fetched_at: i64,
    #[serde(serialize_with = "webdup_core::page::serialize_iso8601")]
    pub last_fetched_at: i64,
}

/// The answer of [`Index::stats`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub path: String,
    pub schema_version: i64,
    pub settings: Settings,
    pub pages: u64,
    pub with_content: u64,
    pub distinct_urls: u64,
    /// LSH band keys stored (bands per page with content): rows of the
    /// band table plus the keys of pages pending a merge into it.
    pub band_rows: u64,
    /// Pages whose band keys wait to be merged into the band table (see
    /// [`Index::insert_batch`]).
    pub pending_pages: u64,
    pub file_bytes: u64,
    pub crawls: Vec<CrawlStats>,
}

/// Pages sharing one of `keys` (a page's band keys, by band) among the
/// pending keys and `batch`.
fn pending_candidates(keys: &[u64], pending: &bands::PendingKeys, batch: &BatchKeys) -> BTreeSet<i64> {
    let mut candidates = BTreeSet::new();
    for (band, &key) in keys.iter().enumerate() {
        candidates.extend(pending.pages(band, key));
        candidates.extend(batch.0.get(&(band, key)).into_iter().flatten().copied());
    }
    candidates
}

/// Band keys of the pages a [`Index::check_and_insert_batch`] inserted so
/// far, which are in no committed row yet: (band, key) to page ids.
#[derive(Default)]
struct BatchKeys(std::collections::HashMap<(usize, u64), Vec<i64>>);

impl BatchKeys {
    fn add(&mut self, id: i64, keys: &[u64]) {
        for (band, &key) in keys.iter().enumerate() {
            self.0.entry((band, key)).or_default().push(id);
        }
    }
}

/// A persistent fingerprint index in one SQLite file.
pub struct Index {
    path: PathBuf,
    settings: Settings,
    params: LshParams,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// Opened read-only: every connection is read-only (see [`Index::open_existing`]).
    read_only: Option<ReadOnly>,
    /// This process's copy of the band keys not yet merged into `bands`.
    pending: Mutex<bands::PendingKeys>,
    /// Sketches pages fingerprinted again with a newly learned template.
    minhasher: MinHasher,
}

/// Read connections kept for reuse.
const POOLED_READERS: usize = 8;

fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(30))?;
    // WAL: readers run beside the writer; a commit survives a killed process.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // In WAL mode NORMAL syncs at checkpoints, not at every commit: a killed
    // process loses nothing committed, a power cut at most the commits since
    // the last checkpoint, and neither leaves part of a transaction.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// Why an index file cannot be written, and so how it must be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadOnly {
    /// On a read-only file system nothing can change the file: SQLite may
    /// read it as immutable, without the `-shm` file it could not create.
    FileSystem,
    /// The file is not writable by this user; others may still write it.
    Permission,
}

impl ReadOnly {
    /// How `path` (an existing file) can be opened, or `None` when it can
    /// be written. Opening for append changes nothing in the file.
    fn of(path: &Path) -> Option<ReadOnly> {
        if on_read_only_file_system(path) {
            return Some(ReadOnly::FileSystem);
        }
        match std::fs::OpenOptions::new().append(true).open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(ReadOnly::Permission),
            Err(e) if e.raw_os_error() == Some(libc::EROFS) => Some(ReadOnly::FileSystem),
            _ => None,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            ReadOnly::FileSystem => "it is on a read-only file system",
            ReadOnly::Permission => "this user may not write it",
        }
    }

    fn connect(self, path: &Path) -> rusqlite::Result<Connection> {
        let Some(name) = path.to_str() else {
            return Err(rusqlite::Error::InvalidPath(path.to_path_buf()));
        };
        // An SQLite URI: `%`, `?` and `#` in the path are escaped.
        let mut uri = String::from("file:");
        for c in name.chars() {
            match c {
                '%' => uri.push_str("%25"),
                '?' => uri.push_str("%3f"),
                '#' => uri.push_str("%23"),
                c => uri.push(c),
            }
        }
        uri.push_str(match self {
            ReadOnly::FileSystem => "?mode=ro&immutable=1",
            ReadOnly::Permission => "?mode=ro",
        });
        let conn = Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(30))?;
        Ok(conn)
    }
}

/// True when `path`, or the folder it would be created in, is on a file
/// system mounted read-only.
fn on_read_only_file_system(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let probe = if path.exists() {
            path
        } else {
            match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            }
        };
        let Ok(c) = std::ffi::CString::new(probe.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a NUL-terminated path and `stat` a zeroed struct
        // that statvfs fills in; neither outlives the call.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::statvfs(c.as_ptr(), &mut stat) } == 0;
        ok && stat.f_flag & libc::ST_RDONLY != 0
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The connection that writes: [`connect`], with a WAL checkpoint every
/// [`CHECKPOINT_PAGES`] rather than SQLite's 1,000.
fn connect_writer(path: &Path) -> rusqlite::Result<Connection> {
    let conn = connect(path)?;
    conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)?;
    // A merge writes a WAL larger than that: after the checkpoint, the file
    // is cut back to this size.
    conn.pragma_update(None, "journal_size_limit", CHECKPOINT_PAGES * 4096)?;
    Ok(conn)
}

/// WAL pages between checkpoints (64 MiB of 4 KiB pages). With SQLite's
/// default, 1,000, every batch of a few hundred pages was followed by a
/// checkpoint: its pages copied into the database file and synced.
const CHECKPOINT_PAGES: i64 = 16_384;

/// Begins a transaction that writes. IMMEDIATE: it takes the write lock at
/// its start, waiting for it up to the busy timeout when another process
/// writes. A deferred one would read first and upgrade to a write later,
/// and SQLite fails that upgrade at once ("database is locked", without
/// waiting) when another connection wrote in between.
fn write_transaction(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding a connection leaves no transaction open (it is
    // rolled back on drop), so the connection is still good.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Index {
    /// Opens (or creates) the index at `path` for fingerprints made with
    /// `config`, migrating an older schema. Fails with
    /// [`Error::SettingsMismatch`] if the index was built with other settings.
    pub fn open(path: impl AsRef<Path>, settings: impl Into<Settings>) -> Result<Index> {
        let path = path.as_ref().to_path_buf();
        let wrap = |e: Error| Error::Open { path: path.display().to_string(), reason: Box::new(e) };
        file::refuse_special(&path).map_err(wrap)?;
        let read_only = if path.exists() {
            ReadOnly::of(&path)
        } else {
            on_read_only_file_system(&path).then_some(ReadOnly::FileSystem)
        };
        if let Some(r) = read_only {
            return Err(wrap(Error::ReadOnly(r.reason().into())));
        }
        let mut conn = connect_writer(&path).map_err(|e| wrap(e.into()))?;
        schema::migrate(&mut conn).map_err(wrap)?;
        let settings: Settings = settings.into();
        Self::adopt_settings(&mut conn, &settings).map_err(|e| match e {
            e @ Error::SettingsMismatch { .. } => e,
            e => wrap(e),
        })?;
        Ok(Index::over(path, conn, settings))
    }

    /// Opens an index that must already exist, with the settings it was
    /// built with (see [`Index::settings`] and [`Settings::apply`]), migrating
    /// an older schema. Unlike [`Index::open`] it never creates a file or
    /// adopts a foreign database: a missing file is [`Error::Missing`], any
    /// file that is not a webdup index [`Error::NotAnIndex`], both wrapped in
    /// [`Error::Open`] naming the path.
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Index> {
        let path = path.as_ref().to_path_buf();
        let wrap = |e: Error| Error::Open { path: path.display().to_string(), reason: Box::new(e) };
        let not_index = |why: &str| wrap(Error::NotAnIndex(why.into()));
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(wrap(Error::Missing)),
            Err(e) => return Err(wrap(Error::NotAnIndex(e.to_string()))),
            Ok(m) if m.is_dir() => return Err(not_index("a directory")),
            Ok(_) => file::refuse_special(&path).map_err(wrap)?,
        }
        // Look before connecting: `connect` switches the file to WAL mode,
        // which must not happen to a database that is not ours.
        let mut header = [0u8; 16];
        let read = std::fs::File::open(&path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header));
        if read.is_err() || &header != b"SQLite format 3\0" {
            return Err(not_index("not an SQLite database"));
        }
        let read_only = ReadOnly::of(&path);
        {
            let probe = match read_only {
                Some(r) => r.connect(&path),
                None => Connection::open_with_flags(
                    &path,
                    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                ),
            }
            .map_err(|e| wrap(e.into()))?;
            let version: i64 =
                probe.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| wrap(e.into()))?;
            let tables: i64 = probe
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'pages', 'bands')",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| wrap(e.into()))?;
            if version == 0 || tables != 3 {
                return Err(not_index("an SQLite database without webdup's tables and schema version"));
            }
        }
        if let Some(r) = read_only {
            let conn = r.connect(&path).map_err(|e| wrap(e.into()))?;
            let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| wrap(e.into()))?;
            if found != schema::VERSION {
                return Err(wrap(if found > schema::VERSION {
                    Error::NewerSchema { found, supported: schema::VERSION }
                } else {
                    Error::NeedsMigration { found, supported: schema::VERSION }
                }));
            }
            let settings = Settings::read(&conn).map_err(wrap)?;
            let mut index = Index::over(path, conn, settings);
            index.read_only = Some(r);
            return Ok(index);
        }
        let mut conn = connect_writer(&path).map_err(|e| wrap(e.into()))?;
        schema::migrate(&mut conn).map_err(wrap)?;
        let settings = Settings::read(&conn).map_err(wrap)?;
        Ok(Index::over(path, conn, settings))
    }

    /// [`Error::ReadOnly`] for an index opened read-only, before a write
    /// would fail with SQLite's terser "attempt to write a readonly database".
    fn check_writable(&self) -> Result<()> {
        match self.read_only {
            Some(r) => Err(Error::Open {
                path: self.path.display().to_string(),
                reason: Box::new(Error::ReadOnly(r.reason().into())),
            }),
            None => Ok(()),
        }
    }

    /// True when the index was opened read-only ([`Index::open_existing`]
    /// on a read-only file system or a file this user may not write).
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// The LSH band keys of a MinHash signature, band 0 first.
    fn band_keys<'a>(&self, signature: &'a [u32]) -> impl Iterator<Item = u64> + 'a {
        let params = self.params;
        (0..params.bands).map(move |band| band_key(signature, params, band))
    }

    /// The index over an open, migrated writer connection.
    fn over(path: PathBuf, conn: Connection, settings: Settings) -> Index {
        Index {
            path,
            params: LshParams { bands: settings.bands, rows: settings.rows },
            minhasher: MinHasher::new(settings.fingerprint.permutations, settings.fingerprint.seed),
            settings,
            writer: Mutex::new(conn),
            readers: Mutex::new(Vec::new()),
            read_only: None,
            pending: Mutex::new(bands::PendingKeys::default()),
        }
    }

    /// Records `settings` in a new file, or checks them against an existing
    /// one's. A setting the file only assumed (it was written before the
    /// setting was recorded, see [`schema::V6`]) takes the value asked for:
    /// an assumption is no reason to refuse.
    fn adopt_settings(conn: &mut Connection, settings: &Settings) -> Result<()> {
        let tx = write_transaction(conn)?;
        let assumed: String = tx
            .query_row("SELECT value FROM meta WHERE key = 'assumed'", [], |r| r.get(0))
            .optional()?
            .unwrap_or_default();
        let assumed: Vec<&str> = assumed.split(',').filter(|k| !k.is_empty()).collect();
        // A file with any setting recorded has them all but the cross-site
        // threshold (the migrations fill in those added since version 1).
        let existing: bool = tx.query_row(
            &format!(
                "SELECT count(*) > 0 FROM meta WHERE key IN ({})",
                RECORDED_SINCE_V1.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
            ),
            [],
            |r| r.get(0),
        )?;
        for (key, value) in settings.pairs() {
            let mut stored: Option<String> =
                tx.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()?;
            if stored.is_none() && existing && key == CROSS_SITE {
                // Written before the setting was recorded: its bands were
                // built for its one threshold.
                stored = Some(OFF.into());
            }
            match stored {
                // Filled in with the value asked for, a missing seed made
                // every stored signature compare as another seed's.
                None if existing => return Err(Error::MissingSetting(key.into())),
                None => {
                    tx.execute("INSERT INTO meta (key, value) VALUES (?1, ?2)", params![key, value])?;
                }
                Some(s) if s == value => {}
                Some(_) if assumed.contains(&key) => {
                    tx.execute("UPDATE meta SET value = ?2 WHERE key = ?1", params![key, value])?;
                }
                Some(s) => return Err(Error::SettingsMismatch { setting: key, stored: s, requested: value }),
            }
        }
        tx.execute("DELETE FROM meta WHERE key = 'assumed'", [])?;
        tx.commit()?;
        Ok(())
    }

    /// The file this index lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The settings its fingerprints are made with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn with_reader<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let pooled = lock(&self.readers).pop();
        let conn = match pooled {
            Some(c) => c,
            None => match self.read_only {
                Some(r) => r.connect(&self.path)?,
                None => connect(&self.path)?,
            },
        };
        let out = f(&conn);
        let mut pool = lock(&self.readers);
        if pool.len() < POOLED_READERS {
            pool.push(conn);
        }
        out
    }

    /// Inserts one page, replacing the page with the same crawl and URL.
    /// Returns its row id.
    pub fn insert(&self, page: &Page) -> Result<i64> {
        Ok(self.insert_batch(std::slice::from_ref(page))?[0])
    }

    /// Inserts pages in one transaction: all or none are stored.
    ///
    /// The pages' band keys are kept as pending; the batch that brings
    /// enough of them together also merges them into the band table (see
    /// the [`bands`] module), which makes that one call slower.
    pub fn insert_batch(&self, pages: &[Page]) -> Result<Vec<i64>> {
        self.check_writable()?;
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        let mut deletions = bands::Deletions::default();
        let mut ids = Vec::with_capacity(pages.len());
        for page in pages {
            let page = self.current(&tx, page)?;
            let id = self.insert_in(&tx, &page, &mut deletions)?;
            self.learn_in(&tx, &page, id, &mut deletions)?;
            ids.push(id);
        }
        deletions.run(&tx)?;
        bands::merge_if_due(&tx, self.params.bands)?;
        tx.commit()?;
        Ok(ids)
    }

    /// Merges the pending band keys into the band table now, rather than
    /// when the next batch brings enough of them together (see the
    /// [`bands`] module); returns how many pages' keys moved. Lookups find a
    /// page either way; after a merge, processes using the index hold less
    /// memory for pending keys.
    pub fn merge_pending(&self) -> Result<usize> {
        self.check_writable()?;
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        let merged = bands::merge(&tx, self.params.bands)?;
        tx.commit()?;
        Ok(merged)
    }

    fn insert_in(&self, tx: &Transaction, page: &Page, deletions: &mut bands::Deletions) -> Result<i64> {
        page.check()?;
        if let Some(fp) = &page.fingerprint
            && fp.minhash.len() != self.settings.fingerprint.permutations
        {
            return Err(Error::Fingerprint {
                id: fp.id.clone(),
                reason: format!(
                    "MinHash signature has {} rows, the index uses {}",
                    fp.minhash.len(),
                    self.settings.fingerprint.permutations
                ),
            });
        }
        let old: Option<(i64, Option<Vec<u8>>)> = tx
            .prepare_cached("SELECT id, minhash FROM pages WHERE crawl = ?1 AND url = ?2")?
            .query_row(params![page.record.crawl, page.record.url], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((id, minhash)) = old {
            self.delete_in(tx, id, minhash, deletions)?;
        }
        let fp = page.fingerprint.as_ref();
        let text = fp.and_then(|f| f.text.as_deref());
        let redirects = (!page.record.redirects.is_empty())
            .then(|| serde_json::to_string(&page.record.redirects))
            .transpose()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        tx.prepare_cached(
            "INSERT INTO pages (crawl, url, final_url, status, fetched_at, error_kind, error, title, canonical,
                 noindex, description, h1, word_count, digest, simhash, minhash, shingle_count, shingles,
                 canonical_source, noindex_source, text, text_deflate, redirects)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                     ?22, ?23)",
        )?
        .execute(params![
            page.record.crawl,
            page.record.url,
            page.record.final_url,
            page.record.status,
            page.record.fetched_at,
            page.record.error_kind,
            page.record.error,
            page.record.meta.title,
            page.record.meta.canonical,
            page.record.meta.noindex,
            page.record.meta.description,
            page.record.meta.h1,
            fp.map_or(0, |f| f.word_count as i64),
            fp.map(|f| f.digest.to_vec()),
            fp.map(|f| f.simhash as i64),
            fp.map(|f| encode_u32s(&f.minhash)),
            fp.map_or(0, |f| f.shingles.len() as i64),
            fp.map(|f| encode_u64s(&f.shingles)),
            page.record.meta.canonical_source,
            page.record.meta.noindex_source,
            text.filter(|t| t.len() < DEFLATE_FROM),
            text.filter(|t| t.len() >= DEFLATE_FROM).map(deflate),
            redirects,
        ])?;
        let id = tx.last_insert_rowid();
        if let Some(fp) = fp {
            let keys = bands::encode_keys(self.band_keys(&fp.minhash));
            bands::add_pending(tx, id, &keys)?;
        }
        Ok(id)
    }

    /// Deletes a page row and its band keys: pending ones at once, rows of
    /// the band table (found from its stored signature) with `deletions`.
    fn delete_in(
        &self,
        tx: &Transaction,
        id: i64,
        minhash: Option<Vec<u8>>,
        deletions: &mut bands::Deletions,
    ) -> Result<()> {
        if let Some(blob) = minhash
            && !bands::remove_pending(tx, id)?
        {
            let sig = decode_u32s(&blob, id)?;
            if sig.len() < self.params.used_rows() {
                return Err(Error::Corrupt { page_id: id, reason: "MinHash signature too short".into() });
            }
            deletions.push(id, self.band_keys(&sig));
        }
        tx.prepare_cached("DELETE FROM pages WHERE id = ?1")?.execute([id])?;
        tx.prepare_cached("DELETE FROM learning WHERE page_id = ?1")?.execute([id])?;
        Ok(())
    }

    /// Keeps the site templates an add of `crawl` learned (see
    /// [`Templates`]), replacing what that crawl learned for those sites
    /// before. They become the newest of their sites: [`Index::template_for`]
    /// applies them to pages checked or added later.
    pub fn store_templates(&self, crawl: &str, templates: &Templates) -> Result<()> {
        self.check_writable()?;
        if templates.is_empty() {
            return Ok(());
        }
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        {
            let mut delete = tx.prepare_cached("DELETE FROM templates WHERE crawl = ?1 AND site = ?2")?;
            let mut insert =
                tx.prepare_cached("INSERT INTO templates (crawl, site, learned_at, shingles) VALUES (?1, ?2, ?3, ?4)")?;
            let at = now();
            // What the index learned of those sites from pages given one at
            // a time stops there: the add read more of them at once.
            let mut unlearn = tx.prepare_cached("DELETE FROM learning WHERE site = ?1")?;
            for (site, template) in templates.iter() {
                delete.execute(params![crawl, site])?;
                insert.execute(params![crawl, site, at, encode_u64s(template)])?;
                unlearn.execute([site])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The newest template of every site (see [`Index::store_templates`]).
    pub fn templates(&self) -> Result<Templates> {
        self.with_reader(|conn| {
            let mut out = Templates::default();
            let mut stmt = conn.prepare("SELECT rowid, site, shingles FROM templates ORDER BY rowid")?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let blob: Vec<u8> = row.get(2)?;
                out.insert(row.get::<_, String>(1)?, decode_u64s(&blob, row.get(0)?)?);
            }
            Ok(out)
        })
    }

    /// The template a page at `id` (a URL or a path) is fingerprinted with
    /// when it comes alone: the newest one learned for its site, if any, and
    /// none when the index was built without template suppression. Apply it
    /// with `webdup::engine::Fingerprinter::finish_alone`.
    pub fn template_for(&self, id: &str) -> Result<Option<Vec<u64>>> {
        Ok(self.site_template(id)?.map(|t| t.shingles))
    }

    /// Removes every crawl's page for `url`; returns how many were removed.
    pub fn remove(&self, url: &str) -> Result<usize> {
        self.check_writable()?;
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        let rows: Vec<(i64, Option<Vec<u8>>)> = tx
            .prepare_cached("SELECT id, minhash FROM pages WHERE url = ?1")?
            .query_map([url], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let n = rows.len();
        let mut deletions = bands::Deletions::default();
        for (id, minhash) in rows {
            self.delete_in(&tx, id, minhash, &mut deletions)?;
        }
        deletions.run(&tx)?;
        tx.commit()?;
        Ok(n)
    }

    /// Every crawl's page for `url`, oldest row first.
    pub fn get(&self, url: &str) -> Result<Vec<StoredPage>> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {PAGE_COLUMNS} FROM pages WHERE url = ?1 ORDER BY id"))?;
            let rows = stmt.query_map([url], stored_page)?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Pages with content similar to `fp`: the same text (MD5), or Jaccard
    /// at least the index threshold ([`Settings::threshold_between`]: its
    /// cross-site threshold when `fp.id` and the page are of different
    /// sites). Candidates come from the LSH band table; each is verified on
    /// the stored shingles.
    pub fn check(&self, fp: &Fingerprint) -> Result<CheckResult> {
        self.fits(fp)?;
        self.with_reader(|conn| {
            // One snapshot for the pending keys and the band table: a merge
            // committed between the two reads would hide its pages from both.
            let conn = &*conn.unchecked_transaction()?;
            let keys: Vec<u64> = self.band_keys(&fp.minhash).collect();
            let pending = {
                let mut shared = lock(&self.pending);
                let own = shared.refresh(conn, self.params.bands)?;
                pending_candidates(&keys, own.as_ref().unwrap_or(&shared), &BatchKeys::default())
            };
            self.lookup(conn, fp, &keys, pending)
        })
    }

    /// Checks `page` and inserts it, atomically: no other insert, from this
    /// process or another, comes between the check and the insert. Of two
    /// near copies given to `check_and_insert` at the same time, exactly one
    /// hears that it is new; the other is told about the first. The page is
    /// inserted either way (the index records what the crawler saw); the
    /// result is what the index held before it. A page without content
    /// (see [`Page::failed`]) is inserted and checks as new.
    pub fn check_and_insert(&self, page: &Page) -> Result<(CheckResult, i64)> {
        Ok(self.check_and_insert_batch(std::slice::from_ref(page))?.remove(0))
    }

    /// [`Index::check_and_insert`] for several pages in one transaction:
    /// each page is checked against the index and against the pages before
    /// it in `pages`, then inserted. All or none are stored.
    pub fn check_and_insert_batch(&self, pages: &[Page]) -> Result<Vec<(CheckResult, i64)>> {
        self.check_writable()?;
        for page in pages {
            page.check()?;
            if let Some(fp) = &page.fingerprint {
                self.fits(fp)?;
            }
        }
        let mut conn = lock(&self.writer);
        let tx = write_transaction(&mut conn)?;
        // The shared pending keys are brought up to date before this
        // transaction writes anything, so they never hold uncommitted rows;
        // the batch's own pages are looked up in `batch`.
        let own = lock(&self.pending).refresh(&tx, self.params.bands)?;
        let mut batch = BatchKeys::default();
        let mut deletions = bands::Deletions::default();
        let mut out = Vec::with_capacity(pages.len());
        for page in pages {
            let page = self.current(&tx, page)?;
            let keys: Vec<u64> = page.fingerprint.iter().flat_map(|fp| self.band_keys(&fp.minhash)).collect();
            let result = match &page.fingerprint {
                Some(fp) => {
                    // No merge can run while this transaction holds the write
                    // lock, so the shared keys stay those of its start.
                    let pending = {
                        let shared = lock(&self.pending);
                        pending_candidates(&keys, own.as_ref().unwrap_or(&shared), &batch)
                    };
                    self.lookup(&tx, fp, &keys, pending)?
                }
                None => CheckResult::default(),
            };
            let id = self.insert_in(&tx, &page, &mut deletions)?;
            batch.add(id, &keys);
            // Pages fingerprinted again with a newly learned template are
            // found under their new keys by the rest of the batch.
            for (redone, keys) in self.learn_in(&tx, &page, id, &mut deletions)? {
                batch.add(redone, &keys);
            }
            out.push((result, id));
        }
        deletions.run(&tx)?;
        bands::merge_if_due(&tx, self.params.bands)?;
        tx.commit()?;
        Ok(out)
    }

    /// Refuses a fingerprint whose signature is shorter than the bands use.
    fn fits(&self, fp: &Fingerprint) -> Result<()> {
        if fp.minhash.len() < self.params.used_rows() {
            return Err(Error::Fingerprint {
                id: fp.id.clone(),
                reason: format!(
                    "MinHash signature has {} rows, the index uses {}",
                    fp.minhash.len(),
                    self.params.used_rows()
                ),
            });
        }
        Ok(())
    }

    /// The check itself, on `conn`'s view: exact copies by digest, then the
    /// LSH candidates (`candidates`, from the pending keys, and the band
    /// table's for `keys`, `fp`'s band keys), each verified on its stored
    /// shingles.
    fn lookup(
        &self,
        conn: &Connection,
        fp: &Fingerprint,
        keys: &[u64],
        mut candidates: BTreeSet<i64>,
    ) -> Result<CheckResult> {
        let mut result = CheckResult::default();
        let exact_ids = exact_matches(conn, fp, &mut result)?;
        {
            let mut stmt = conn.prepare_cached("SELECT page_id FROM bands WHERE band = ?1 AND key = ?2")?;
            for (band, &key) in keys.iter().enumerate() {
                for id in stmt.query_map(params![band as i64, key as i64], |r| r.get::<_, i64>(0))? {
                    candidates.insert(id?);
                }
            }
        }
        result.candidates = candidates.len();
        let candidates = candidates.into_iter().filter(|id| !exact_ids.contains(id));
        let settings = &self.settings;
        let keep = |url: &str, o: &Overlap| o.jaccard() >= settings.threshold_between(&fp.id, url) - 1e-12;
        result.near = verify_candidates(conn, fp, candidates, keep, |m| m.jaccard)?;
        Ok(result)
    }

    /// Pages that mostly contain `fp`'s text or are mostly contained in it:
    /// the same text (MD5), or at least `threshold` of the smaller page's
    /// shingles found in the larger (an excerpt, a trimmed copy, the page
    /// with comments added), most contained first.
    ///
    /// The band table is made for the index's Jaccard threshold, which a
    /// 150-word excerpt of a 1,000-word article (Jaccard 0.15) never
    /// reaches; so this reads every stored signature and bands each pair
    /// for its sizes, as LSH Ensemble does ([`lsh::containment_banding`]),
    /// then verifies candidates on the stored shingles. It costs a scan of
    /// the signatures (about 0.5 KB a page), not an index lookup.
    pub fn check_containment(&self, fp: &Fingerprint, threshold: f64) -> Result<CheckResult> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::Fingerprint {
                id: fp.id.clone(),
                reason: format!("containment threshold must be in (0, 1], not {threshold}"),
            });
        }
        self.with_reader(|conn| {
            let conn = &*conn.unchecked_transaction()?;
            let mut result = CheckResult::default();
            let exact_ids = exact_matches(conn, fp, &mut result)?;
            let permutations = fp.minhash.len();
            let mut bandings: std::collections::HashMap<usize, Option<LshParams>> = Default::default();
            let mut candidates = Vec::new();
            {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, shingle_count, minhash FROM pages WHERE minhash IS NOT NULL ORDER BY id",
                )?;
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    let (id, count, blob): (i64, i64, Vec<u8>) = (r.get(0)?, r.get(1)?, r.get(2)?);
                    if exact_ids.contains(&id) {
                        continue;
                    }
                    let class = lsh::size_class(usize::try_from(count).unwrap_or(0));
                    let banding = *bandings
                        .entry(class)
                        .or_insert_with(|| lsh::containment_banding(fp.shingles.len(), class, threshold, permutations));
                    let Some(banding) = banding else { continue };
                    if lsh::share_a_band(&fp.minhash, &decode_u32s(&blob, id)?, banding) {
                        candidates.push(id);
                    }
                }
            }
            result.candidates = candidates.len();
            result.near = verify_candidates(
                conn,
                fp,
                candidates,
                |_, o| o.containment_of_smaller() >= threshold,
                |m| m.containment.max(m.contained),
            )?;
            Ok(result)
        })
    }

    /// Counts, per crawl and in total.
    pub fn stats(&self) -> Result<Stats> {
        self.with_reader(|conn| {
            let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64);
            let pages = count("SELECT count(*) FROM pages")?;
            let with_content = count("SELECT count(*) FROM pages WHERE digest IS NOT NULL")?;
            let distinct_urls = count("SELECT count(DISTINCT url) FROM pages")?;
            let pending_pages = count("SELECT count(*) FROM bands_pending")?;
            let band_rows = count("SELECT count(*) FROM bands")? + pending_pages * self.params.bands as u64;
            let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
            let page_count: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
            let schema_version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            let mut stmt = conn.prepare(
                "SELECT crawl, count(*), count(digest), min(fetched_at), max(fetched_at)
                 FROM pages GROUP BY crawl ORDER BY min(id)",
            )?;
            let crawls = stmt
                .query_map([], |r| {
                    Ok(CrawlStats {
                        crawl: r.get(0)?,
                        pages: r.get::<_, i64>(1)? as u64,
                        with_content: r.get::<_, i64>(2)? as u64,
                        first_fetched_at: r.get(3)?,
                        last_fetched_at: r.get(4)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Stats {
                path: self.path.display().to_string(),
                schema_version,
                settings: self.settings.clone(),
                pages,
                with_content,
                distinct_urls,
                band_rows,
                pending_pages,
                file_bytes: (page_size * page_count) as u64,
                crawls,
            })
        })
    }

    /// The crawl `name` read back whole, for whole-crawl analyses such as
    /// lost-and-found (webdup-seo): [`Index::crawl_pages`] under its name.
    pub fn crawl(&self, name: &str) -> Result<Crawl> {
        Ok(Crawl { name: name.into(), pages: self.crawl_pages(name)? })
    }

    /// Every page of `crawl` with its shingles (empty without content), in
    /// insertion order.
    pub fn crawl_pages(&self, crawl: &str) -> Result<Vec<(StoredPage, Vec<u64>)>> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare(&format!("SELECT {PAGE_COLUMNS}, shingles FROM pages WHERE crawl = ?1 ORDER BY id"))?;
            let mut rows = stmt.query([crawl])?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let page = stored_page(row)?;
                let blob: Option<Vec<u8>> = row.get(PAGE_COLUMN_COUNT)?;
                let shingles = match blob {
                    Some(b) => decode_u64s(&b, page.id)?,
                    None => Vec::new(),
                };
                out.push((page, shingles));
            }
            Ok(out)
        })
    }

    /// `name` when the index has a crawl of that name; without a name, the
    /// newest crawl: the one whose pages were fetched last (of crawls fetched
    /// in the same second, the one written last).
    pub fn choose_crawl(&self, name: Option<&str>) -> Result<String> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare("SELECT crawl FROM pages GROUP BY crawl ORDER BY max(fetched_at) DESC, max(id) DESC")?;
            let crawls = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
            let path = self.path.display().to_string();
            match (name, crawls.first()) {
                (_, None) => Err(Error::Empty { path }),
                (None, Some(newest)) => Ok(newest.clone()),
                (Some(n), Some(_)) if crawls.iter().any(|c| c == n) => Ok(n.to_string()),
                (Some(n), Some(_)) => Err(Error::UnknownCrawl { path, crawl: n.to_string(), known: crawls }),
            }
        })
    }

    /// Every page of `crawl` in insertion order, each with its fingerprint
    /// rebuilt from the stored parts (`None` for pages without content): the
    /// shingles, MD5, MinHash, SimHash and word count as stored, its title,
    /// and its main text when it was stored (schema version 3 on). Nothing
    /// is fetched or extracted again. Fingerprint ids are the pages' URLs
    /// and keys their positions in the crawl. The first row that cannot be
    /// decoded fails the whole; [`Index::crawl_rows`] reads past it.
    pub fn crawl_fingerprints(&self, crawl: &str) -> Result<Vec<(StoredPage, Option<Fingerprint>)>> {
        self.crawl_rows(crawl)?.into_iter().map(|r| Ok((r.page, r.fingerprint?))).collect()
    }

    /// Runs SQLite's integrity check and webdup's own: every page with
    /// content has a shingle blob of the recorded length and its band keys
    /// in exactly one place, all its rows in the band table or one pending
    /// row with the keys of its signature; no band row or pending row points
    /// at a missing page. Returns the problems found (empty when consistent).
    pub fn verify(&self) -> Result<Vec<String>> {
        self.with_reader(|conn| {
            let conn = &*conn.unchecked_transaction()?;
            let mut problems = Vec::new();
            let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
            if ok != "ok" {
                problems.push(format!("integrity_check: {ok}"));
            }
            let mut pending = std::collections::HashMap::new();
            {
                let mut stmt = conn.prepare("SELECT page_id, keys FROM bands_pending")?;
                let mut rows = stmt.query([])?;
                while let Some(row) = rows.next()? {
                    let (id, keys): (i64, Vec<u8>) = (row.get(0)?, row.get(1)?);
                    if pending.insert(id, keys).is_some() {
                        problems.push(format!("page {id}: pending band keys twice"));
                    }
                }
            }
            let mut stmt = conn.prepare("SELECT id, minhash, shingle_count, length(shingles) FROM pages")?;
            let mut rows = stmt.query([])?;
            let mut band_stmt =
                conn.prepare_cached("SELECT count(*) FROM bands WHERE band = ?1 AND key = ?2 AND page_id = ?3")?;
            let mut expected_rows = 0u64;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let minhash: Option<Vec<u8>> = row.get(1)?;
                let count: i64 = row.get(2)?;
                let len: Option<i64> = row.get(3)?;
                let Some(blob) = minhash else { continue };
                if len != Some(count * 8) {
                    problems.push(format!("page {id}: shingle blob of {len:?} bytes for {count} shingles"));
                }
                let sig = decode_u32s(&blob, id)?;
                let keys: Vec<u64> = self.band_keys(&sig).collect();
                if let Some(stored) = pending.remove(&id) {
                    if stored != bands::encode_keys(keys.iter().copied()) {
                        problems.push(format!("page {id}: pending band keys are not its signature's"));
                    }
                    continue;
                }
                for (band, &key) in keys.iter().enumerate() {
                    let n: i64 = band_stmt.query_row(params![band as i64, key as i64, id], |r| r.get(0))?;
                    if n != 1 {
                        problems.push(format!("page {id}: band {band} row missing"));
                    }
                    expected_rows += 1;
                }
            }
            let mut orphans: Vec<i64> = pending.into_keys().collect();
            orphans.sort_unstable();
            problems
                .extend(orphans.into_iter().map(|id| format!("pending band keys for page {id}, which has no content")));
            let band_rows: i64 = conn.query_row("SELECT count(*) FROM bands", [], |r| r.get(0))?;
            if band_rows as u64 != expected_rows {
                problems.push(format!("{band_rows} band rows, {expected_rows} expected (orphans)"));
            }
            Ok(problems)
        })
    }
}

const PAGE_COLUMNS: &str = "id, crawl, url, final_url, status, fetched_at, error_kind, error, title, canonical, \
                            noindex, description, h1, word_count, digest, simhash, shingle_count, \
                            canonical_source, noindex_source, redirects";
const PAGE_COLUMN_COUNT: usize = 20;

fn stored_page(r: &rusqlite::Row) -> rusqlite::Result<StoredPage> {
    let digest: Option<Vec<u8>> = r.get(14)?;
    Ok(StoredPage {
        id: r.get(0)?,
        crawl: r.get(1)?,
        url: r.get(2)?,
        final_url: r.get(3)?,
        status: r.get(4)?,
        fetched_at: r.get(5)?,
        error_kind: r.get(6)?,
        error: r.get(7)?,
        meta: PageMeta {
            title: r.get(8)?,
            canonical: r.get(9)?,
            noindex: r.get(10)?,
            description: r.get(11)?,
            h1: r.get(12)?,
            canonical_source: r.get(17)?,
            noindex_source: r.get(18)?,
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
    })
}

/// The candidate pages whose overlap with `fp`, on their stored shingles,
/// passes `keep`; highest `score` first, then the page stored first. A candidate without
/// its page row (a band row cannot outlive its page, but a check must not
/// fail on one) or without shingles is skipped.
fn verify_candidates(
    conn: &Connection,
    fp: &Fingerprint,
    candidates: impl IntoIterator<Item = i64>,
    keep: impl Fn(&str, &Overlap) -> bool,
    score: impl Fn(&Match) -> f64,
) -> Result<Vec<Match>> {
    let mut stmt = conn.prepare_cached("SELECT url, crawl, final_url, title, shingles FROM pages WHERE id = ?1")?;
    let mut near = Vec::new();
    for id in candidates {
        let row = stmt
            .query_row([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<Vec<u8>>>(4)?,
                ))
            })
            .optional()?;
        let Some((url, crawl, final_url, title, Some(blob))) = row else { continue };
        let o = Overlap::of(&fp.shingles, &decode_u64s(&blob, id)?);
        if keep(&url, &o) {
            near.push(Match::new(id, url, crawl, final_url, title, &o));
        }
    }
    near.sort_by(|a, b| score(b).total_cmp(&score(a)).then_with(|| a.id.cmp(&b.id)));
    Ok(near)
}

/// Pages stored with `fp`'s exact text, into `result.exact`; returns their ids.
fn exact_matches(conn: &Connection, fp: &Fingerprint, result: &mut CheckResult) -> Result<HashSet<i64>> {
    let mut exact_ids = HashSet::new();
    let mut stmt =
        conn.prepare_cached("SELECT id, url, crawl, final_url, title FROM pages WHERE digest = ?1 ORDER BY id")?;
    let rows = stmt.query_map([fp.digest.to_vec()], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            Match {
                id: r.get(0)?,
                url: r.get(1)?,
                crawl: r.get(2)?,
                final_url: r.get(3)?,
                title: r.get(4)?,
                jaccard: 1.0,
                containment: 1.0,
                contained: 1.0,
            },
        ))
    })?;
    for row in rows {
        let (id, m) = row?;
        exact_ids.insert(id);
        result.exact.push(m);
    }
    Ok(exact_ids)
}

#[cfg(test)]
mod time_tests {
    use super::iso8601_utc;

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
