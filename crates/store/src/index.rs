//! The index file: opening (creating, migrating, read-only), its
//! connections, and every write (inserts, checks that insert, removals,
//! learned templates).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params};
use webdup_core::candidates::LshParams;
use webdup_core::candidates::lsh::band_key;
use webdup_core::fingerprint::Fingerprint;
use webdup_core::page::{CanonicalSource, NoindexSource};
use webdup_core::sketch::MinHasher;
use webdup_core::template::Templates;

use crate::codec::{DEFLATE_FROM, decode_u32s, deflate, encode_u32s, encode_u64s};
use crate::page::now;
use crate::read::CheckResult;
use crate::settings::{CROSS_SITE, OFF, RECORDED_SINCE_V1};
use crate::stored::ShingleStore;
use crate::{Page, Settings, bands, file, schema};

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
    /// What a crawl saw, kept with it, cannot be decoded.
    #[error("the crawl facts kept for crawl {crawl:?} cannot be read: {reason}")]
    CrawlFacts { crawl: String, reason: String },
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

/// Pages sharing one of `keys` (a page's band keys, by band) among the
/// pending keys and `batch`.
pub(crate) fn pending_candidates(keys: &[u32], pending: &bands::PendingKeys, batch: &BatchKeys) -> BTreeSet<i64> {
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
pub(crate) struct BatchKeys(std::collections::HashMap<(usize, u32), Vec<i64>>);

impl BatchKeys {
    pub(crate) fn add(&mut self, id: i64, keys: &[u32]) {
        for (band, &key) in keys.iter().enumerate() {
            self.0.entry((band, key)).or_default().push(id);
        }
    }
}

/// A persistent fingerprint index in one SQLite file.
pub struct Index {
    pub(crate) path: PathBuf,
    pub(crate) settings: Settings,
    pub(crate) params: LshParams,
    pub(crate) writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// Opened read-only: every connection is read-only (see [`Index::open_existing`]).
    read_only: Option<ReadOnly>,
    /// This process's copy of the band keys not yet merged into `bands`.
    pub(crate) pending: Mutex<bands::PendingKeys>,
    /// Sketches pages fingerprinted again with a newly learned template.
    pub(crate) minhasher: MinHasher,
    /// Writes and reads the pages' shingle sets.
    pub(crate) shingles: ShingleStore,
}

/// Read connections kept for reuse.
const POOLED_READERS: usize = 8;

fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(30))?;
    // Only a new file takes it. A page row (its deflated text, signature and
    // metadata) is 1 to 2 KB: 4 KiB pages hold two of them and leave a
    // quarter unused, 16 KiB pages a twentieth (2,360 against 1,990 bytes
    // a page for generated 300-word pages).
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
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
/// [`CHECKPOINT_BYTES`] rather than SQLite's 1,000 pages.
fn connect_writer(path: &Path) -> rusqlite::Result<Connection> {
    let conn = connect(path)?;
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_BYTES / page_size.max(512))?;
    // A merge writes a WAL larger than that: after the checkpoint, the file
    // is cut back to this size.
    conn.pragma_update(None, "journal_size_limit", CHECKPOINT_BYTES)?;
    Ok(conn)
}

/// WAL bytes between checkpoints (64 MiB). With SQLite's default, 1,000
/// pages, every batch of a few hundred pages was followed by a checkpoint:
/// its pages copied into the database file and synced.
const CHECKPOINT_BYTES: i64 = 64 << 20;

/// The SQLite page size of a new index file (files made before schema 11
/// keep 4 KiB).
const PAGE_SIZE: i64 = 16_384;

/// Begins a transaction that writes. IMMEDIATE: it takes the write lock at
/// its start, waiting for it up to the busy timeout when another process
/// writes. A deferred one would read first and upgrade to a write later,
/// and SQLite fails that upgrade at once ("database is locked", without
/// waiting) when another connection wrote in between.
pub(crate) fn write_transaction(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
    pub(crate) fn check_writable(&self) -> Result<()> {
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

    /// The LSH band keys of a MinHash signature as the index keeps them
    /// ([`bands::narrow`]), band 0 first.
    pub(crate) fn band_keys<'a>(&self, signature: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
        let params = self.params;
        (0..params.bands).map(move |band| bands::narrow(band_key(signature, params, band)))
    }

    /// The index over an open, migrated writer connection.
    fn over(path: PathBuf, conn: Connection, settings: Settings) -> Index {
        Index {
            path,
            params: LshParams { bands: settings.bands, rows: settings.rows },
            minhasher: MinHasher::new(settings.fingerprint.permutations, settings.fingerprint.seed),
            shingles: ShingleStore::new(&settings.fingerprint),
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

    pub(crate) fn with_reader<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
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
        let text = fp.and(page.record.text.as_deref());
        let shingles = fp.map(|f| self.shingles.encode(&f.shingles, text));
        let redirects = (!page.record.redirects.is_empty())
            .then(|| serde_json::to_string(&page.record.redirects))
            .transpose()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        tx.prepare_cached(
            "INSERT INTO pages (crawl, url, final_url, status, fetched_at, error_kind, error, title, canonical,
                 noindex, description, h1, word_count, digest, simhash, minhash, shingle_count, shingles,
                 canonical_source, noindex_source, text, text_deflate, redirects, page_digest, shingles_check)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                     ?22, ?23, ?24, ?25)",
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
            shingles.as_ref().map(|s| s.blob.as_slice()),
            page.record.meta.canonical_source.map(CanonicalSource::as_str),
            page.record.meta.noindex_source.map(NoindexSource::as_str),
            text.filter(|t| t.len() < DEFLATE_FROM),
            text.filter(|t| t.len() >= DEFLATE_FROM).map(deflate),
            redirects,
            fp.and_then(|f| f.page_digest).map(|d| d.to_vec()),
            shingles.as_ref().and_then(|s| s.check),
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
            let keys: Vec<u32> = page.fingerprint.iter().flat_map(|fp| self.band_keys(&fp.minhash)).collect();
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
    pub(crate) fn fits(&self, fp: &Fingerprint) -> Result<()> {
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
}
