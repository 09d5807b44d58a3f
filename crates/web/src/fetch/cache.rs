//! The on-disk page cache behind `--cache DIR`, so that re-running with
//! other thresholds or methods does not fetch the same pages again.
//!
//! One file a URL, `DIR/xx/<32 hex digits>.page`, named by the XXH3-128 hash
//! of the normalized URL (two hex digits of fan-out keep directories small
//! at 100,000 pages). A file is one line of JSON metadata, a newline, then
//! the body bytes as received after content decoding (not yet charset
//! decoded, so a better charset rule later applies to cached pages too).
//! Files are written to a temporary name and renamed, so a run that is
//! killed never leaves a half-written entry. The metadata carries
//! [`CACHE_VERSION`]; entries of another version are treated as missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::Hop;

/// Version of the entry layout; bump when [`Entry`] changes incompatibly.
pub const CACHE_VERSION: u32 = 1;

/// What is kept about one fetched URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub version: u32,
    /// The normalized URL the entry is for (checked on read against hash collisions).
    pub url: String,
    pub chain: Vec<Hop>,
    pub content_type: Option<String>,
    pub last_modified: Option<String>,
    pub etag: Option<String>,
    pub canonical: Option<String>,
    pub x_robots_tag: Option<String>,
    /// Body length, checked on read so a truncated file is not trusted.
    pub body_len: u64,
}

/// A cache directory.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    tmp_counter: AtomicU64,
}

impl Cache {
    /// Creates the directory if needed; fails if it cannot be created.
    pub fn open(dir: &Path) -> std::io::Result<Cache> {
        std::fs::create_dir_all(dir)?;
        Ok(Cache { dir: dir.to_path_buf(), tmp_counter: AtomicU64::new(0) })
    }

    fn path(&self, url: &str) -> PathBuf {
        let hex = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(url.as_bytes()));
        self.dir.join(&hex[..2]).join(format!("{hex}.page"))
    }

    /// The entry and body for `url`, or `None` when absent, of another
    /// version, or damaged (a damaged entry is simply fetched again).
    pub fn get(&self, url: &str) -> Option<(Entry, Vec<u8>)> {
        let data = std::fs::read(self.path(url)).ok()?;
        let nl = memchr::memchr(b'\n', &data)?;
        let entry: Entry = serde_json::from_slice(&data[..nl]).ok()?;
        let body = &data[nl + 1..];
        (entry.version == CACHE_VERSION && entry.url == url && entry.body_len == body.len() as u64)
            .then(|| (entry, body.to_vec()))
    }

    /// Stores an entry, replacing any previous one atomically.
    pub fn put(&self, entry: &Entry, body: &[u8]) -> std::io::Result<()> {
        let path = self.path(&entry.url);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let n = self.tmp_counter.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            serde_json::to_writer(&mut f, entry)?;
            f.write_all(b"\n")?;
            f.write_all(body)?;
            f.into_inner().map_err(|e| e.into_error())?.sync_data()?;
            std::fs::rename(&tmp, &path)
        };
        let r = write();
        if r.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str, len: u64) -> Entry {
        Entry {
            version: CACHE_VERSION,
            url: url.into(),
            chain: vec![Hop { url: url.into(), status: 200 }],
            content_type: Some("text/html".into()),
            last_modified: None,
            etag: Some("\"x\"".into()),
            canonical: None,
            x_robots_tag: None,
            body_len: len,
        }
    }

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path()).unwrap();
        assert!(cache.get("http://a/").is_none());
        cache.put(&entry("http://a/", 5), b"hello").unwrap();
        assert_eq!(cache.get("http://a/"), Some((entry("http://a/", 5), b"hello".to_vec())));
        // A truncated body is not trusted.
        let p = cache.path("http://a/");
        let data = std::fs::read(&p).unwrap();
        std::fs::write(&p, &data[..data.len() - 1]).unwrap();
        assert!(cache.get("http://a/").is_none());
        // Another version is ignored.
        let mut old = entry("http://a/", 1);
        old.version = CACHE_VERSION + 1;
        cache.put(&old, b"x").unwrap();
        assert!(cache.get("http://a/").is_none());
    }
}
