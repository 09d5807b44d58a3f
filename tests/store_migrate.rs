//! An index written by schema version 1 opens and migrates: the old layout's
//! SQL is kept here verbatim, so a later edit of the current schema cannot
//! silently change what "version 1" means.

use webdup::candidates::lsh::band_key;
use webdup::engine::{Config, Fingerprinter};
use webdup::extract::ExtractorKind;
use webdup::store::{Index, Page, schema};
use webdup_eval::synth::{SynthConfig, corpus};

/// Schema version 1, as released.
/// The settings rows every schema version keeps in `meta`.
fn write_settings(conn: &rusqlite::Connection, config: &Config) {
    let settings = webdup::store::Settings::of(config);
    for (k, v) in [
        ("shingle_size", settings.fingerprint.shingle_size.to_string()),
        ("stopwords", settings.fingerprint.stopwords.to_string()),
        ("stem", settings.fingerprint.stem.to_string()),
        ("language", settings.fingerprint.language.to_string()),
        ("extractor", settings.fingerprint.extractor.clone()),
        ("permutations", settings.fingerprint.permutations.to_string()),
        ("seed", settings.fingerprint.seed.to_string()),
        ("threshold", settings.threshold.to_string()),
        ("bands", settings.bands.to_string()),
        ("rows", settings.rows.to_string()),
    ] {
        conn.execute("INSERT INTO meta VALUES (?1, ?2)", [k, &v]).unwrap();
    }
}

/// Page 1's rows in the `bands` table, as versions 1 to 3 wrote them.
fn write_band_rows(conn: &rusqlite::Connection, minhash: &[u32], lsh: webdup::candidates::lsh::LshParams) {
    for band in 0..lsh.bands {
        conn.execute("INSERT INTO bands VALUES (?1, ?2, 1)", [band as i64, band_key(minhash, lsh, band) as i64])
            .unwrap();
    }
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], bytes: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| bytes(v)).collect()
}

const V1_SQL: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY, crawl TEXT NOT NULL, url TEXT NOT NULL, final_url TEXT, status INTEGER,
    fetched_at INTEGER NOT NULL, error_kind TEXT, error TEXT, title TEXT, canonical TEXT,
    word_count INTEGER NOT NULL DEFAULT 0, digest BLOB, simhash INTEGER, minhash BLOB,
    shingle_count INTEGER NOT NULL DEFAULT 0, shingles BLOB, UNIQUE (crawl, url)
);
CREATE INDEX pages_url ON pages (url);
CREATE INDEX pages_digest ON pages (digest) WHERE digest IS NOT NULL;
CREATE TABLE bands (band INTEGER NOT NULL, key INTEGER NOT NULL, page_id INTEGER NOT NULL,
    PRIMARY KEY (band, key, page_id)) WITHOUT ROWID;
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_index_is_migrated_and_its_pages_still_match() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    // Indexes of this version were built when trafilatura was the default
    // extractor, and held every pair to one threshold.
    let mut config = Config::default();
    config.matching.cross_site_threshold = None;
    config.fingerprint.extractor = ExtractorKind::Trafilatura.to_string();
    let config = config.validate().unwrap();
    let fp = Fingerprinter::new(&config);
    let text = "an old page about the ferry timetable at the harbour, kept since the first crawl of the site";
    let f = fp.fingerprint_text("u".into(), webdup::DocKey(0), text).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(V1_SQL).unwrap();
        let lsh = config.lsh_params();
        write_settings(&conn, &config);
        let (minhash, shingles) = (le_bytes(&f.minhash, u32::to_le_bytes), le_bytes(&f.shingles, u64::to_le_bytes));
        conn.execute(
            "INSERT INTO pages (crawl, url, fetched_at, title, word_count, digest, simhash, minhash, shingle_count, shingles)
             VALUES ('2019', 'https://old.test/ferry', 1560000000, 'Ferry', ?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                f.word_count as i64,
                f.digest.to_vec(),
                f.simhash as i64,
                minhash,
                f.shingles.len() as i64,
                shingles
            ],
        )
        .unwrap();
        write_band_rows(&conn, &f.minhash, lsh);
    }

    // Opened with today's default extractor, the index refuses and names the setting.
    let refused =
        Index::open(&path, &Config::default().validate().unwrap()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("extractor"), "{refused}");
    let index = Index::open(&path, &config).unwrap();
    let stats = index.stats().unwrap();
    assert_eq!(stats.schema_version, schema::VERSION);
    assert_eq!(stats.pages, 1);
    let old = &index.get("https://old.test/ferry").unwrap()[0];
    assert_eq!((old.meta.title.as_deref(), old.meta.h1.as_deref(), old.fetched_at), (Some("Ferry"), None, 1560000000));
    let r = index.check(&f).unwrap();
    assert_eq!(r.same_text[0].url, "https://old.test/ferry");
    // The new columns are writable after the migration.
    let mut page = Page::new("2024", "https://old.test/ferry", f);
    page.record.meta.h1 = Some("Ferry timetable".into());
    page.record.meta.noindex = Some(false);
    index.insert(&page).unwrap();
    let rows = index.get("https://old.test/ferry").unwrap();
    assert_eq!(rows[1].meta.h1.as_deref(), Some("Ferry timetable"));
    assert!(index.verify().unwrap().is_empty());
    drop(index);
    // Reopening a current file migrates nothing and keeps the data.
    assert_eq!(Index::open(&path, &config).unwrap().stats().unwrap().pages, 2);
}

/// Schema version 2, as released: version 1 plus the extractor's metadata.
const V2_SQL: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY, crawl TEXT NOT NULL, url TEXT NOT NULL, final_url TEXT, status INTEGER,
    fetched_at INTEGER NOT NULL, error_kind TEXT, error TEXT, title TEXT, canonical TEXT,
    word_count INTEGER NOT NULL DEFAULT 0, digest BLOB, simhash INTEGER, minhash BLOB,
    shingle_count INTEGER NOT NULL DEFAULT 0, shingles BLOB, UNIQUE (crawl, url)
);
CREATE INDEX pages_url ON pages (url);
CREATE INDEX pages_digest ON pages (digest) WHERE digest IS NOT NULL;
CREATE TABLE bands (band INTEGER NOT NULL, key INTEGER NOT NULL, page_id INTEGER NOT NULL,
    PRIMARY KEY (band, key, page_id)) WITHOUT ROWID;
ALTER TABLE pages ADD COLUMN noindex INTEGER;
ALTER TABLE pages ADD COLUMN description TEXT;
ALTER TABLE pages ADD COLUMN h1 TEXT;
PRAGMA user_version = 2;
";

#[test]
fn a_version_2_index_is_migrated_and_its_pages_read_back_without_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    // Indexes of this version were built when trafilatura was the default
    // extractor, and held every pair to one threshold.
    let mut config = Config::default();
    config.matching.cross_site_threshold = None;
    config.fingerprint.extractor = ExtractorKind::Trafilatura.to_string();
    let config = config.validate().unwrap();
    let fp = Fingerprinter::new(&config);
    let text = "the harbour ferry leaves every hour from the north pier and returns from the island at ten past";
    let f = fp.fingerprint_text("u".into(), webdup::DocKey(0), text).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(V2_SQL).unwrap();
        let lsh = config.lsh_params();
        write_settings(&conn, &config);
        let (minhash, shingles) = (le_bytes(&f.minhash, u32::to_le_bytes), le_bytes(&f.shingles, u64::to_le_bytes));
        conn.execute(
            "INSERT INTO pages (crawl, url, status, fetched_at, title, canonical, noindex, description, h1,
                 word_count, digest, simhash, minhash, shingle_count, shingles)
             VALUES ('2023', 'https://old.test/ferry', 200, 1690000000, 'Ferry', 'https://old.test/ferry', 1,
                 'Timetable', 'Ferry', ?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![
                f.word_count as i64,
                f.digest.to_vec(),
                f.simhash as i64,
                minhash,
                f.shingles.len() as i64,
                shingles
            ],
        )
        .unwrap();
        write_band_rows(&conn, &f.minhash, lsh);
        conn.execute(
            "INSERT INTO pages (crawl, url, status, fetched_at, error_kind, error)
             VALUES ('2023', 'https://old.test/gone', 404, 1690000000, 'http_status', 'HTTP 404 Not Found')",
            [],
        )
        .unwrap();
    }

    // The audit's way in: an existing file, opened with its own settings.
    let index = Index::open_existing(&path).unwrap();
    assert_eq!(index.stats().unwrap().schema_version, schema::VERSION);
    assert_eq!(index.settings().threshold, 0.8);
    assert_eq!(index.choose_crawl(None).unwrap(), "2023");
    let pages = index.crawl_fingerprints("2023").unwrap();
    assert_eq!(pages.len(), 2);
    let (old, old_fp) = &pages[0];
    assert_eq!(old.meta.noindex, Some(true));
    assert_eq!((old.meta.description.as_deref(), old.meta.h1.as_deref()), (Some("Timetable"), Some("Ferry")));
    // Sources and text were not recorded before version 3.
    assert_eq!((old.meta.canonical_source, old.meta.noindex_source), (None, None));
    let old_fp = old_fp.as_ref().expect("the page had content");
    assert_eq!(old.text, None);
    assert_eq!((&old_fp.shingles, old_fp.digest, &old_fp.minhash), (&f.shingles, f.digest, &f.minhash));
    assert!(pages[1].1.is_none(), "the 404 has no content");

    // The new columns are written after the migration.
    let mut page = Page::new("2024", "https://old.test/ferry", f);
    page.record.text = Some(text.into());
    page.record.meta.canonical = Some("https://old.test/ferry".into());
    page.record.meta.canonical_source = Some(webdup::store::CanonicalSource::Html);
    index.insert(&page).unwrap();
    assert_eq!(index.choose_crawl(None).unwrap(), "2024");
    let (new, _) = &index.crawl_fingerprints("2024").unwrap()[0];
    assert_eq!(new.meta.canonical_source.map(|s| s.as_str()), Some("html"));
    assert_eq!(new.text.as_deref(), Some(text));
    assert!(index.verify().unwrap().is_empty());
}

/// Schema version 3, as released: version 2 plus main texts and where the
/// canonical and noindex came from.
const V3_SQL: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY, crawl TEXT NOT NULL, url TEXT NOT NULL, final_url TEXT, status INTEGER,
    fetched_at INTEGER NOT NULL, error_kind TEXT, error TEXT, title TEXT, canonical TEXT,
    word_count INTEGER NOT NULL DEFAULT 0, digest BLOB, simhash INTEGER, minhash BLOB,
    shingle_count INTEGER NOT NULL DEFAULT 0, shingles BLOB, UNIQUE (crawl, url)
);
CREATE INDEX pages_url ON pages (url);
CREATE INDEX pages_digest ON pages (digest) WHERE digest IS NOT NULL;
CREATE TABLE bands (band INTEGER NOT NULL, key INTEGER NOT NULL, page_id INTEGER NOT NULL,
    PRIMARY KEY (band, key, page_id)) WITHOUT ROWID;
ALTER TABLE pages ADD COLUMN noindex INTEGER;
ALTER TABLE pages ADD COLUMN description TEXT;
ALTER TABLE pages ADD COLUMN h1 TEXT;
ALTER TABLE pages ADD COLUMN text TEXT;
ALTER TABLE pages ADD COLUMN canonical_source TEXT;
ALTER TABLE pages ADD COLUMN noindex_source TEXT;
PRAGMA user_version = 3;
";

/// Version 3 kept every band key in `bands`; version 4 adds pending keys.
/// The old rows still answer checks, are deleted when their page is
/// replaced, and new pages' keys are pending until merged.
#[test]
fn a_version_3_index_keeps_its_band_rows_and_adds_pending_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    // Indexes of this version held every pair to one threshold.
    let mut config = Config::default();
    config.matching.cross_site_threshold = None;
    let config = config.validate().unwrap();
    let fp = Fingerprinter::new(&config);
    let t = corpus(&SynthConfig { documents: 2, words_per_document: 200, copy_share: 0.0, ..Default::default() });
    let text = t[0].as_str();
    let f = fp.fingerprint_text("u".into(), webdup::DocKey(0), text).unwrap();
    let lsh = config.lsh_params();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(V3_SQL).unwrap();
        write_settings(&conn, &config);
        let (minhash, shingles) = (le_bytes(&f.minhash, u32::to_le_bytes), le_bytes(&f.shingles, u64::to_le_bytes));
        conn.execute(
            "INSERT INTO pages (crawl, url, status, fetched_at, title, word_count, digest, simhash, minhash,
                 shingle_count, shingles, text)
             VALUES ('2024', 'https://old.test/hours', 200, 1720000000, 'Hours', ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![
                f.word_count as i64,
                f.digest.to_vec(),
                f.simhash as i64,
                minhash,
                f.shingles.len() as i64,
                shingles,
                text
            ],
        )
        .unwrap();
        write_band_rows(&conn, &f.minhash, lsh);
    }

    // Today's default holds pages of two sites to 0.5, with a band table
    // built for it: the file's is built for 0.8, so it refuses and names
    // the setting; its own settings read back as having no cross-site rule.
    let refused =
        Index::open(&path, &Config::default().validate().unwrap()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("cross_site_threshold"), "{refused}");
    let stored = Index::open_existing(&path).unwrap().settings().clone();
    assert_eq!(stored.cross_site_threshold, None);
    assert_eq!(stored.apply(Config::default()).unwrap().matching.cross_site_threshold, None);

    let index = Index::open(&path, &config).unwrap();
    let stats = index.stats().unwrap();
    assert_eq!(stats.schema_version, schema::VERSION);
    assert_eq!((stats.pages, stats.pending_pages, stats.band_rows), (1, 0, lsh.bands as u64));
    assert!(index.verify().unwrap().is_empty());
    // The text stored uncompressed before version 5 reads back as it was.
    let (old, _) = &index.crawl_fingerprints("2024").unwrap()[0];
    assert_eq!(old.text.as_deref(), Some(text));
    // A near copy under a new URL: found through the old band rows, then
    // itself pending.
    let near_text: Vec<&str> =
        text.split(' ').enumerate().map(|(i, w)| if i % 60 == 0 { "zzzedit" } else { w }).collect();
    let near_text = near_text.join(" ");
    let near = fp.fingerprint_text("n".into(), webdup::DocKey(0), &near_text).unwrap();
    assert_eq!(index.check(&near).unwrap().near[0].url, "https://old.test/hours");
    index.insert(&Page::new("2025", "https://old.test/opening-hours", near.clone())).unwrap();
    let r = index.check(&f).unwrap();
    assert_eq!(
        (r.same_text[0].url.as_str(), r.near[0].url.as_str()),
        ("https://old.test/hours", "https://old.test/opening-hours")
    );
    assert_eq!(index.stats().unwrap().pending_pages, 1);
    // Replacing the old page deletes its rows from `bands`.
    let other = fp.fingerprint_text("o".into(), webdup::DocKey(0), &t[1]).unwrap();
    index.insert(&Page::new("2024", "https://old.test/hours", other)).unwrap();
    let r = index.check(&f).unwrap();
    assert!(r.identical.is_empty() && r.same_text.is_empty());
    assert_eq!(r.near.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(), ["https://old.test/opening-hours"]);
    let stats = index.stats().unwrap();
    assert_eq!((stats.pages, stats.pending_pages, stats.band_rows), (2, 2, 2 * lsh.bands as u64));
    assert!(index.verify().unwrap().is_empty());
    assert_eq!(index.merge_pending().unwrap(), 2);
    assert!(index.verify().unwrap().is_empty());
}
