//! The LSH band keys of the stored pages: where [`super::Index::check`]
//! finds candidates.
//!
//! Band keys are random 64-bit values, so rows of the `bands` table (a
//! B-tree ordered by `(band, key)`) inserted page by page land on a
//! different leaf each: once the table outgrows SQLite's page cache, every
//! row costs a page read, and every row dirties its own 4 KiB leaf, which
//! the commit writes to the WAL and the checkpoint writes again to the
//! database. Filling an index with a million 200-word pages (18 bands), that
//! came to 160 KB written and 270 KB read per page stored, and inserts fell
//! from 5,300 to 1,750 pages/s as the table grew. A larger page cache does
//! not help: a batch's rows still dirty a leaf each.
//!
//! So a new page's keys are not written to `bands` at once. They go, as one
//! row per page, to `bands_pending`, which only ever grows at its end; each
//! process keeps the pending keys in memory (`PendingKeys`) for its
//! lookups. When enough pages are pending ([`merge_threshold`]), the batch
//! that crosses the threshold also moves them into `bands` in one pass in
//! key order, so each leaf of the table is written once for many rows, not
//! once per row. A page's keys are always in exactly one of the two places,
//! and both change only inside the write transactions that store or delete
//! pages, so a killed process still leaves whole batches.
//!
//! Since schema 11 a row of `bands` is a bucket of keys, not one key: one
//! row per key cost about 22 bytes a key (900 bytes a page with 40 bands),
//! a bucket entry 3 to 5 (the key's low 16 bits and the page id), plus the
//! bucket's row while it holds few. A merge reads and writes each bucket it
//! touches once; a lookup reads one bucket per band.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{Error, Result};
use webdup_core::shingle::ShingleMap;

/// Fewest pending pages that trigger a merge.
pub const MERGE_MIN_PAGES: i64 = 4096;
/// Most pending pages: bounds the memory each process holds for pending
/// keys (about 30 bytes a key: 131,072 pages x 18 bands, about 70 MB).
pub const MERGE_MAX_PAGES: i64 = 131_072;
/// Pending pages trigger a merge at this share (1/N) of the stored pages.
/// A merge writes about every leaf of `bands` once, a cost that grows with
/// the index, so it is paid once for a number of pages that grows with the
/// index too: the cost per page stays flat up to `MERGE_MAX_PAGES x 8`
/// pages (a million), and grows in proportion beyond.
pub const MERGE_SHARE: i64 = 8;

/// How many pending pages trigger a merge in an index of `pages` pages.
pub fn merge_threshold(pages: i64) -> i64 {
    (pages / MERGE_SHARE).clamp(MERGE_MIN_PAGES, MERGE_MAX_PAGES)
}

/// A band key as the index keeps it: the high 32 bits of the core's 64-bit
/// key. Two pages whose keys agree there but not below only become a
/// candidate pair, which exact verification then rejects: at a million
/// pages and 40 bands, about one extra candidate per hundred checks.
pub fn narrow(key: u64) -> u32 {
    (key >> 32) as u32
}

/// Bits of a band key that choose its bucket (a row of `bands`); the other
/// 16 are kept in the row, beside each page id.
const BUCKET_BITS: u32 = 16;

/// The row of `bands` that holds `key` of `band`.
pub(crate) fn bucket(band: usize, key: u32) -> i64 {
    ((band as i64) << BUCKET_BITS) | i64::from(key >> (32 - BUCKET_BITS))
}

/// The part of `key` kept in its bucket.
fn low(key: u32) -> u16 {
    key as u16
}

/// One page's key in a bucket: the key's low bits, then the page.
type Entry = (u16, i64);

/// A bucket as stored: its entries sorted, each the key's low 16 bits
/// (little-endian) and the page id (LEB128).
fn encode_bucket(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 5);
    for &(low, page) in entries {
        out.extend_from_slice(&low.to_le_bytes());
        let mut v = page as u64;
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

fn decode_bucket(blob: &[u8], bucket: i64) -> Result<Vec<Entry>> {
    let corrupt = || Error::Corrupt { page_id: 0, reason: format!("band bucket {bucket} cannot be decoded") };
    let mut out = Vec::with_capacity(blob.len() / 5);
    let mut i = 0;
    while i < blob.len() {
        let low = u16::from_le_bytes(blob.get(i..i + 2).ok_or_else(corrupt)?.try_into().expect("2 bytes"));
        i += 2;
        let (mut page, mut shift) = (0u64, 0);
        loop {
            let byte = *blob.get(i).ok_or_else(corrupt)?;
            i += 1;
            if shift > 56 {
                return Err(corrupt());
            }
            page |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        out.push((low, page as i64));
    }
    Ok(out)
}

/// Pages in `bands` with `key` in `band`.
pub(crate) fn stored_pages(conn: &Connection, band: usize, key: u32) -> Result<Vec<i64>> {
    let b = bucket(band, key);
    let blob: Option<Vec<u8>> =
        conn.prepare_cached("SELECT entries FROM bands WHERE bucket = ?1")?.query_row([b], |r| r.get(0)).optional()?;
    let Some(blob) = blob else { return Ok(Vec::new()) };
    Ok(decode_bucket(&blob, b)?.into_iter().filter(|&(l, _)| l == low(key)).map(|(_, page)| page).collect())
}

/// How many keys the buckets of `bands` hold: for [`super::Index::verify`].
pub(crate) fn stored_count(conn: &Connection) -> Result<u64> {
    let mut stmt = conn.prepare("SELECT bucket, entries FROM bands")?;
    let mut rows = stmt.query([])?;
    let mut n = 0;
    while let Some(row) = rows.next()? {
        let blob = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        n += decode_bucket(blob, row.get(0)?)?.len() as u64;
    }
    Ok(n)
}

/// Changes to buckets, applied bucket by bucket: `add` entries go in,
/// `remove` entries go out. Each bucket touched is read and written once.
fn update_buckets(tx: &Transaction, mut changes: Vec<(i64, Entry, bool)>) -> Result<()> {
    changes.sort_unstable();
    let mut read = tx.prepare_cached("SELECT entries FROM bands WHERE bucket = ?1")?;
    let mut write = tx.prepare_cached("INSERT OR REPLACE INTO bands (bucket, entries) VALUES (?1, ?2)")?;
    let mut delete = tx.prepare_cached("DELETE FROM bands WHERE bucket = ?1")?;
    for group in changes.chunk_by(|a, b| a.0 == b.0) {
        let b = group[0].0;
        let blob: Option<Vec<u8>> = read.query_row([b], |r| r.get(0)).optional()?;
        let mut entries = match blob {
            Some(blob) => decode_bucket(&blob, b)?,
            None => Vec::new(),
        };
        for &(_, entry, add) in group {
            if add {
                entries.push(entry);
            } else {
                entries.retain(|e| *e != entry);
            }
        }
        entries.sort_unstable();
        entries.dedup();
        if entries.is_empty() {
            delete.execute([b])?;
        } else {
            write.execute(params![b, encode_bucket(&entries)])?;
        }
    }
    Ok(())
}

/// A page's band keys as stored in `bands_pending.keys`: 32-bit
/// little-endian, band 0 first.
pub(crate) fn encode_keys(keys: impl Iterator<Item = u32>) -> Vec<u8> {
    keys.flat_map(|k| k.to_le_bytes()).collect()
}

fn decode_keys(blob: &[u8], page_id: i64, bands: usize) -> Result<impl Iterator<Item = (usize, u32)> + '_> {
    if blob.len() != bands * 4 {
        return Err(Error::Corrupt { page_id, reason: format!("pending band keys of {} bytes", blob.len()) });
    }
    Ok(blob.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).enumerate())
}

/// Band-key deletions of one transaction, run at its end bucket by
/// bucket: in page order each would read and write another bucket.
#[derive(Default)]
pub(crate) struct Deletions(Vec<(i64, Entry, bool)>);

impl Deletions {
    pub(crate) fn push(&mut self, page_id: i64, keys: impl Iterator<Item = u32>) {
        self.0.extend(keys.enumerate().map(|(band, key)| (bucket(band, key), (low(key), page_id), false)));
    }

    pub(crate) fn run(self, tx: &Transaction) -> Result<()> {
        update_buckets(tx, self.0)
    }
}

/// Records a new page's band keys as pending.
pub(crate) fn add_pending(tx: &Transaction, page_id: i64, keys: &[u8]) -> Result<()> {
    tx.prepare_cached("INSERT INTO bands_pending (page_id, keys) VALUES (?1, ?2)")?.execute(params![page_id, keys])?;
    Ok(())
}

/// Drops a page's pending keys; false when it had none (its keys are in
/// `bands`, or it has no content).
pub(crate) fn remove_pending(tx: &Transaction, page_id: i64) -> Result<bool> {
    Ok(tx.prepare_cached("DELETE FROM bands_pending WHERE page_id = ?1")?.execute([page_id])? > 0)
}

/// Merges the pending keys into `bands` when there are enough of them.
/// Returns the number of pages merged (0 when below the threshold).
pub(crate) fn merge_if_due(tx: &Transaction, bands: usize) -> Result<usize> {
    let pending: i64 = tx.query_row("SELECT count(*) FROM bands_pending", [], |r| r.get(0))?;
    let pages: i64 = tx.query_row("SELECT coalesce(max(id), 0) FROM pages", [], |r| r.get(0))?;
    if pending < merge_threshold(pages) {
        return Ok(0);
    }
    merge(tx, bands)
}

/// Moves every pending key into `bands`, bucket by bucket, and starts a
/// new generation so other processes drop the keys they hold in memory.
pub(crate) fn merge(tx: &Transaction, bands: usize) -> Result<usize> {
    let mut changes = Vec::new();
    let mut pages = 0;
    {
        let mut stmt = tx.prepare_cached("SELECT page_id, keys FROM bands_pending")?;
        let mut q = stmt.query([])?;
        while let Some(row) = q.next()? {
            let page_id: i64 = row.get(0)?;
            let blob = row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
            changes.extend(
                decode_keys(blob, page_id, bands)?.map(|(band, key)| (bucket(band, key), (low(key), page_id), true)),
            );
            pages += 1;
        }
    }
    if pages == 0 {
        return Ok(0);
    }
    update_buckets(tx, changes)?;
    tx.execute("DELETE FROM bands_pending", [])?;
    tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'bands_generation'", [])?;
    Ok(pages)
}

/// Schema 11: the band table of 64-bit keys, one row per key, becomes
/// buckets of 32-bit keys ([`schema::V11`](crate::schema::V11)), and the
/// pending keys are narrowed alike. The old rows are read in key order
/// (a signed key's order is the unsigned one from its middle), so each
/// bucket is written once and memory holds one bucket at a time.
pub(crate) fn migrate_v11(tx: &Transaction) -> Result<()> {
    {
        let bands: Vec<i64> = tx
            .prepare("SELECT DISTINCT band FROM bands_v10 ORDER BY band")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut read =
            tx.prepare("SELECT key, page_id FROM bands_v10 WHERE band = ?1 AND (key >= 0) = ?2 ORDER BY key, page_id")?;
        let mut write = tx.prepare("INSERT INTO bands (bucket, entries) VALUES (?1, ?2)")?;
        for band in bands {
            let (mut current, mut entries): (Option<i64>, Vec<Entry>) = (None, Vec::new());
            for non_negative in [true, false] {
                let mut rows = read.query(params![band, non_negative])?;
                while let Some(row) = rows.next()? {
                    let key = narrow(row.get::<_, i64>(0)? as u64);
                    let b = bucket(band as usize, key);
                    if current.is_some_and(|c| c != b) {
                        entries.sort_unstable();
                        entries.dedup();
                        write.execute(params![current, encode_bucket(&entries)])?;
                        entries.clear();
                    }
                    current = Some(b);
                    entries.push((low(key), row.get(1)?));
                }
            }
            if let Some(b) = current {
                entries.sort_unstable();
                entries.dedup();
                write.execute(params![b, encode_bucket(&entries)])?;
            }
        }
    }
    tx.execute_batch("DROP TABLE bands_v10")?;
    let pending: Vec<(i64, Vec<u8>)> = tx
        .prepare("SELECT seq, keys FROM bands_pending")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare("UPDATE bands_pending SET keys = ?2 WHERE seq = ?1")?;
    for (seq, wide) in pending {
        if !wide.len().is_multiple_of(8) {
            return Err(Error::Corrupt { page_id: 0, reason: format!("pending band keys of {} bytes", wide.len()) });
        }
        let keys = wide.chunks_exact(8).map(|c| narrow(u64::from_le_bytes(c.try_into().expect("8 bytes"))));
        update.execute(params![seq, encode_keys(keys)])?;
    }
    Ok(())
}

/// The generation of `bands_pending`: it changes with every merge.
fn generation(conn: &Connection) -> Result<i64> {
    let value: String =
        conn.prepare_cached("SELECT value FROM meta WHERE key = 'bands_generation'")?.query_row([], |r| r.get(0))?;
    value.parse().map_err(|_| Error::BadSettings(format!("bands_generation = {value:?}")))
}

/// One process's copy of the pending band keys, brought up to date from
/// `bands_pending` before each lookup.
#[derive(Debug, Default)]
pub(crate) struct PendingKeys {
    generation: i64,
    /// The last `bands_pending.seq` read (sequence numbers only grow).
    loaded: i64,
    /// `(band, key)`, folded into one word, to the first page with it.
    /// (Band keys are uniform hashes: no SipHash needed.)
    first: ShingleMap<i64>,
    /// Further pages with the same folded key (near duplicates).
    more: ShingleMap<Vec<i64>>,
}

/// One word for a band and its key, spread over all 64 bits for the hash
/// map (multiplying by an odd number is a bijection: no two pairs share
/// a word).
fn fold(band: usize, key: u32) -> u64 {
    (u64::from(key) | (band as u64) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl PendingKeys {
    /// Reads what was added since the last call. `conn` must be inside the
    /// read transaction the lookups in `bands` then use, so that every
    /// page's keys are seen in one of the two places. Returns a copy made for
    /// this snapshot alone when another thread already moved the shared
    /// copy past it (a merge committed in between).
    pub(crate) fn refresh(&mut self, conn: &Connection, bands: usize) -> Result<Option<PendingKeys>> {
        let generation = generation(conn)?;
        if generation < self.generation {
            let mut own = PendingKeys { generation, ..PendingKeys::default() };
            own.load(conn, bands)?;
            return Ok(Some(own));
        }
        if generation > self.generation {
            *self = PendingKeys { generation, ..PendingKeys::default() };
        }
        self.load(conn, bands)?;
        Ok(None)
    }

    fn load(&mut self, conn: &Connection, bands: usize) -> Result<()> {
        if self.loaded == 0 {
            // Reading all of them (the first check of a process, or after a
            // merge): size the map once rather than growing it step by step.
            let rows: i64 = conn.prepare_cached("SELECT count(*) FROM bands_pending")?.query_row([], |r| r.get(0))?;
            self.first.reserve(rows as usize * bands);
        }
        let mut stmt =
            conn.prepare_cached("SELECT seq, page_id, keys FROM bands_pending WHERE seq > ?1 ORDER BY seq")?;
        let mut rows = stmt.query([self.loaded])?;
        while let Some(row) = rows.next()? {
            let (seq, page_id): (i64, i64) = (row.get(0)?, row.get(1)?);
            let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
            for (band, key) in decode_keys(blob, page_id, bands)? {
                let k = fold(band, key);
                match self.first.entry(k) {
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(page_id);
                    }
                    std::collections::hash_map::Entry::Occupied(_) => self.more.entry(k).or_default().push(page_id),
                }
            }
            self.loaded = seq;
        }
        Ok(())
    }

    /// Pages with `key` in `band` among the pending ones (possibly pages
    /// deleted since: the caller skips ids without a row).
    pub(crate) fn pages(&self, band: usize, key: u32) -> impl Iterator<Item = i64> + '_ {
        let k = fold(band, key);
        self.first.get(&k).into_iter().chain(self.more.get(&k).into_iter().flatten()).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &std::path::Path) -> Connection {
        let mut conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        crate::schema::migrate(&mut conn).unwrap();
        conn
    }

    fn add(conn: &mut Connection, page_id: i64, key: u32) {
        let tx = conn.transaction().unwrap();
        add_pending(&tx, page_id, &encode_keys([key, key + 1].into_iter())).unwrap();
        tx.commit().unwrap();
    }

    fn pages(keys: &PendingKeys, band: usize, key: u32) -> Vec<i64> {
        keys.pages(band, key).collect()
    }

    #[test]
    fn a_reader_behind_a_merge_gets_its_own_copy_of_the_pending_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.db");
        let mut writer = open(&path);
        let (old, new) = (open(&path), open(&path));
        add(&mut writer, 1, 100);
        let old_snapshot = old.unchecked_transaction().unwrap();
        let mut shared = PendingKeys::default();
        assert!(shared.refresh(&old_snapshot, 2).unwrap().is_none());
        assert_eq!((pages(&shared, 0, 100), pages(&shared, 1, 101)), (vec![1], vec![1]));

        let tx = writer.transaction().unwrap();
        assert_eq!(merge(&tx, 2).unwrap(), 1);
        tx.commit().unwrap();
        add(&mut writer, 2, 200);
        add(&mut writer, 3, 200);
        // A newer snapshot drops the merged keys and reads the new ones;
        // two pages with one key are both found.
        assert!(shared.refresh(&new, 2).unwrap().is_none());
        assert_eq!((pages(&shared, 0, 100), pages(&shared, 0, 200)), (vec![], vec![2, 3]));
        let in_bands = [stored_pages(&new, 0, 100).unwrap(), stored_pages(&new, 1, 101).unwrap()];
        assert_eq!(in_bands, [vec![1], vec![1]]);

        // The older snapshot still has page 1 pending and not in `bands`: it
        // gets a copy of its own, and the shared one stays as it was.
        let own = shared.refresh(&old_snapshot, 2).unwrap().expect("a copy for the older snapshot");
        assert_eq!((pages(&own, 0, 100), pages(&own, 0, 200)), (vec![1], vec![]));
        assert_eq!(pages(&shared, 0, 200), vec![2, 3]);
    }

    #[test]
    fn the_merge_threshold_grows_with_the_index_within_bounds() {
        assert_eq!(merge_threshold(0), MERGE_MIN_PAGES);
        assert_eq!(merge_threshold(MERGE_MIN_PAGES * MERGE_SHARE * 2), MERGE_MIN_PAGES * 2);
        assert_eq!(merge_threshold(i64::MAX), MERGE_MAX_PAGES);
    }
}
