//! The index's on-disk layout and its migrations.
//!
//! The version lives in `PRAGMA user_version`. Each entry of [`MIGRATIONS`]
//! takes a database from version `i` to `i + 1` and runs in its own
//! transaction together with the version bump, so a migration interrupted
//! half-way leaves the previous version intact. Old versions stay readable:
//! `tests/store_migrate.rs` builds version-1 and version-2 files from the SQL
//! of those releases, kept there verbatim, and opens them.

use rusqlite::Connection;

use super::Error;

/// The schema version this build writes.
pub const VERSION: i64 = 11;

/// Version 1: pages, LSH band keys, settings.
///
/// Shingles are a BLOB of the sorted distinct 64-bit hashes, little-endian
/// (random 64-bit values: delta or varint coding would save under 2%); the
/// MinHash signature a BLOB of 32-bit little-endian minima. Pages that could
/// not be fetched keep their status and error, with no content columns.
///
/// Band keys are the candidate table: `(band, key)` leads the primary key so
/// a lookup is an index seek. There is deliberately no index on `page_id`:
/// it would double the table, and a page's rows can be found from its stored
/// signature instead (see `Index::remove`).
pub const V1: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE pages (
    id            INTEGER PRIMARY KEY,
    crawl         TEXT NOT NULL,
    url           TEXT NOT NULL,
    final_url     TEXT,
    status        INTEGER,
    fetched_at    INTEGER NOT NULL,
    error_kind    TEXT,
    error         TEXT,
    title         TEXT,
    canonical     TEXT,
    word_count    INTEGER NOT NULL DEFAULT 0,
    digest        BLOB,
    simhash       INTEGER,
    minhash       BLOB,
    shingle_count INTEGER NOT NULL DEFAULT 0,
    shingles      BLOB,
    UNIQUE (crawl, url)
);
CREATE INDEX pages_url ON pages (url);
CREATE INDEX pages_digest ON pages (digest) WHERE digest IS NOT NULL;
CREATE TABLE bands (
    band    INTEGER NOT NULL,
    key     INTEGER NOT NULL,
    page_id INTEGER NOT NULL,
    PRIMARY KEY (band, key, page_id)
) WITHOUT ROWID;
";

/// Version 2: page metadata from the extractor (robots `noindex`, meta
/// description, first `h1`), empty until the extractor provides it.
pub const V2: &str = "
ALTER TABLE pages ADD COLUMN noindex INTEGER;
ALTER TABLE pages ADD COLUMN description TEXT;
ALTER TABLE pages ADD COLUMN h1 TEXT;
";

/// Version 3: what `webdup audit --index` needs beyond the fingerprints:
/// the extracted main text (for the side-by-side diff) and where the
/// canonical (`html` or `http`) and `noindex` (`meta` or `x-robots-tag`) came
/// from. All nullable: rows written before stay valid and read as "not
/// stored"; `ALTER TABLE ... ADD COLUMN` rewrites no rows.
pub const V3: &str = "
ALTER TABLE pages ADD COLUMN text TEXT;
ALTER TABLE pages ADD COLUMN canonical_source TEXT;
ALTER TABLE pages ADD COLUMN noindex_source TEXT;
";

/// Version 4: band keys of new pages wait in `bands_pending`, one row per
/// page (`keys`: the band keys, 64-bit little-endian, band 0 first), and are
/// merged into `bands` many pages at a time, in key order. Written one page
/// at a time, the random keys made every row dirty its own leaf of `bands`.
/// `seq` only grows (AUTOINCREMENT), so a reader can ask for the rows it has
/// not seen; `bands_generation` in `meta` counts the merges, so it knows
/// when to drop the ones it holds. Files of earlier versions start with
/// nothing pending.
pub const V4: &str = "
CREATE TABLE bands_pending (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    page_id INTEGER NOT NULL,
    keys    BLOB NOT NULL
);
CREATE INDEX bands_pending_page ON bands_pending (page_id);
INSERT INTO meta (key, value) VALUES ('bands_generation', '0');
";

/// Version 5: main texts of 2 KB or more are stored deflated in
/// `text_deflate` (raw deflate, level 2: 2.5 times smaller on real pages),
/// with `text` empty; shorter ones, and all texts stored before, are in
/// `text`. `redirects` keeps the responses before the final one, as JSON
/// (`[{"url": ..., "status": 301}]`), so an audit of the index knows that a
/// canonical names a redirecting URL; NULL without redirects, and for pages
/// stored before.
pub const V5: &str = "
ALTER TABLE pages ADD COLUMN text_deflate BLOB;
ALTER TABLE pages ADD COLUMN redirects TEXT;
";

/// Version 6: the template each `index add` learned per site (`site` as
/// [`webdup_core::template::site_of`] names it; `shingles` sorted, 64-bit
/// little-endian, possibly empty: the site was looked at and has none), so
/// that a page checked or added later, alone, is fingerprinted like the
/// pages its site's template was learned from. The newest row of a site
/// (highest `rowid`) is the one applied. The settings in `meta` gain
/// `template`, `include_selector` and `exclude_selector`. Files of earlier
/// versions did not record them: a file that has settings is given
/// today's defaults (the suppression `index add` has always applied, no
/// selectors), and `assumed` names them, so that reports can say so.
pub const V6: &str = "
CREATE TABLE templates (
    crawl      TEXT NOT NULL,
    site       TEXT NOT NULL,
    learned_at INTEGER NOT NULL,
    shingles   BLOB NOT NULL,
    UNIQUE (crawl, site)
);
CREATE INDEX templates_site ON templates (site);
INSERT INTO meta (key, value)
    SELECT 'template', '{\"share\":0.5,\"min_pages\":3,\"scope\":\"host-or-directory\"}'
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size');
INSERT INTO meta (key, value)
    SELECT k, '' FROM (SELECT 'include_selector' AS k UNION ALL SELECT 'exclude_selector')
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size');
INSERT INTO meta (key, value)
    SELECT 'assumed', 'template,include_selector,exclude_selector'
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size');
";

/// Version 7: the settings in `meta` gain `simhash_weighting` and
/// `fingerprint_settings_version`, completing the typed fingerprint
/// settings (`webdup_core::settings::FingerprintSettings`) an index keeps.
/// Files of earlier versions did not record the weighting: a file that has
/// settings is given `tf` (the default) and `assumed` names it; their
/// settings were all of version 1.
pub const V7: &str = "
INSERT INTO meta (key, value)
    SELECT 'simhash_weighting', 'tf'
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size');
INSERT INTO meta (key, value)
    SELECT 'fingerprint_settings_version', '1'
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size');
UPDATE meta SET value = value || ',simhash_weighting' WHERE key = 'assumed' AND value <> '';
UPDATE meta SET value = 'simhash_weighting' WHERE key = 'assumed' AND value = '';
INSERT INTO meta (key, value)
    SELECT 'assumed', 'simhash_weighting'
    WHERE EXISTS (SELECT 1 FROM meta WHERE key = 'shingle_size')
    AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'assumed');
";

/// Version 8: templates the index learns itself from pages given one at a
/// time (crawl `''`, with the number of pages they were learned from), and
/// those pages' fingerprints before suppression while their site is still
/// being learned (see the `learn` module).
pub const V8: &str = "
ALTER TABLE templates ADD COLUMN learned_from INTEGER;
CREATE TABLE learning (
    page_id  INTEGER PRIMARY KEY,
    site     TEXT NOT NULL,
    shingles BLOB NOT NULL,
    context  BLOB NOT NULL,
    digest   BLOB NOT NULL,
    simhash  INTEGER NOT NULL
);
CREATE INDEX learning_site ON learning (site);
";

/// Version 9: what a link-following crawl (`index add --follow`) saw, so
/// that `audit --index` reports it as `audit --follow` does. `crawl_links`
/// holds its internal links, one row per distinct (linking page, linked
/// URL), URLs as text; `crawl_facts` the rest, one JSON document per crawl
/// (pages, depth, the sitemap's listed URLs, folded links, traps, links not
/// followed by reason, moved start pages). Crawls stored before, or without
/// following links, have no row.
pub const V9: &str = "
CREATE TABLE crawl_facts (
    crawl TEXT PRIMARY KEY,
    facts TEXT NOT NULL
);
CREATE TABLE crawl_links (
    crawl    TEXT NOT NULL,
    from_url TEXT NOT NULL,
    to_url   TEXT NOT NULL,
    PRIMARY KEY (crawl, from_url, to_url)
) WITHOUT ROWID;
";

/// Version 10: `page_digest`, the XXH3-128 digest of the decoded page (fingerprint
/// format 4), beside `digest`, the MD5 of its normalized text: two pages of
/// one text are identical only when these agree too. NULL for pages stored
/// before, which are then never identical to another page.
pub const V10: &str = "
ALTER TABLE pages ADD COLUMN page_digest BLOB;
";

/// Version 11: a smaller file (about 2 KB a page, from 5).
///
/// `bands` holds buckets of band keys, not one row per key: a key is the
/// high 32 bits of the core's 64-bit band key ([`crate::bands::narrow`]),
/// its band and top 16 bits name the bucket (`bucket = band << 16 | key >>
/// 16`, the rowid), and `entries` lists the bucket's keys, each as its low
/// 16 bits (little-endian) and the page id (LEB128), sorted. A row per key
/// cost about 22 bytes a key; a bucket entry costs 3 to 5. The keys in
/// `bands_pending` are 32-bit too. The rows of version 10 are moved by
/// [`crate::bands`] in the same transaction.
///
/// `shingles_check`: when set, `shingles` no longer holds the page's
/// shingle set but the shingles of its stored main text that are not in it
/// (those its site's template took away, usually none), and the set is
/// the text's shingles less those; the value is a 64-bit check of the set
/// (see the `stored` module), compared whenever it is rebuilt. NULL: the
/// set is in `shingles`, as before (pages stored without text, and every
/// row stored before).
pub const V11: &str = "
ALTER TABLE bands RENAME TO bands_v10;
CREATE TABLE bands (
    bucket  INTEGER PRIMARY KEY,
    entries BLOB NOT NULL
);
ALTER TABLE pages ADD COLUMN shingles_check INTEGER;
";

/// `MIGRATIONS[i]` upgrades version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11];

/// Brings the database to [`VERSION`], refusing files this build cannot read.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), Error> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > VERSION {
        return Err(Error::NewerSchema { found, supported: VERSION });
    }
    if found == 0 {
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        if tables > 0 {
            return Err(Error::NotAnIndex("an SQLite database with other tables and no webdup schema version".into()));
        }
    }
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        // IMMEDIATE, so that a second process opening the index at the same
        // time waits here (busy timeout) and then finds the step done.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now > from as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        if from + 1 == 11 {
            crate::bands::migrate_v11(&tx)?;
        }
        tx.pragma_update(None, "user_version", from as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
