//! Completion markers: a small JSON file written, after the data it vouches
//! for, to a temporary name and renamed. A part whose marker is there, and
//! whose files have the size and checksum the marker records, is whole and
//! was made with the settings (and, for the ingest, the inputs) the marker
//! names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;

/// Version of the marker and stage-file formats. 2: markers record their
/// files' sizes and checksums, and the ingest's inputs; a marker of version
/// 1 vouches for nothing that can be checked, so its part is made again.
pub const FORMAT_VERSION: u32 = 2;

/// What a finished task or stage part says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub format_version: u32,
    /// `ingest`, `sketch`, `edges` or `clusters`.
    pub stage: String,
    pub part: usize,
    pub parts: usize,
    /// Hash of everything the part depends on (settings, the ingest).
    pub settings_hash: String,
    pub rows: u64,
    /// Stage-specific counts (documents, candidate pairs...).
    #[serde(default)]
    pub counts: BTreeMap<String, u64>,
    /// Seconds since the Unix epoch when the part was finished.
    pub finished_at: u64,
    /// The settings themselves, for the ingest (compared, not just hashed,
    /// so a mismatch can be named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<serde_json::Value>,
    /// What the task's web archives gave (the ingest), summed into the report.
    #[serde(default, skip_serializing_if = "webdup::warc::Summary::is_empty")]
    pub warc: webdup::warc::Summary,
    /// Format version of the ingest file the marker vouches for; markers
    /// written before it was recorded hold version 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_version: Option<u32>,
    /// Hash of what an ingest task read (its share of the expanded inputs,
    /// each file's size and modification time, the settings of reading and
    /// fetching): other inputs make the task run again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_hash: Option<String>,
    /// The files the marker vouches for, beside it, as they were written.
    #[serde(default)]
    pub files: Vec<FileSum>,
}

/// A file as its marker recorded it: its name (in the marker's folder),
/// size and xxh3 checksum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSum {
    pub name: String,
    pub bytes: u64,
    /// xxh3-64 of the whole file, 16 hex digits.
    pub xxh3: String,
}

impl FileSum {
    /// The file at `path` as it is now.
    pub fn of(path: &Path) -> Result<FileSum, Error> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = match file.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(path, e)),
            };
            hasher.update(&buffer[..n]);
            bytes += n as u64;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(FileSum { name, bytes, xxh3: format!("{:016x}", hasher.digest()) })
    }
}

impl Marker {
    pub fn new(stage: &str, part: usize, parts: usize, settings_hash: &str, rows: u64) -> Marker {
        Marker {
            format_version: FORMAT_VERSION,
            stage: stage.to_string(),
            part,
            parts,
            settings_hash: settings_hash.to_string(),
            rows,
            counts: BTreeMap::new(),
            finished_at: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            settings: None,
            warc: Default::default(),
            file_version: None,
            inputs_hash: None,
            files: Vec::new(),
        }
    }

    /// Records `paths` (written, beside the marker) as the files it vouches for.
    pub fn seal(&mut self, paths: &[&Path]) -> Result<(), Error> {
        self.files = paths.iter().map(|p| FileSum::of(p)).collect::<Result<_, _>>()?;
        Ok(())
    }

    /// Why the files beside the marker at `path` are not the ones it
    /// vouches for, naming the first that differs; `None` when they all
    /// are. A marker that vouches for no file is not trusted either.
    pub fn mismatch(&self, path: &Path) -> Option<String> {
        if self.files.is_empty() {
            return Some(format!("{}: the marker records no file size or checksum", path.display()));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        for want in &self.files {
            let file = dir.join(&want.name);
            match FileSum::of(&file) {
                Ok(found) if found == *want => {}
                Ok(found) if found.bytes != want.bytes => {
                    return Some(format!(
                        "{}: {} bytes, and its marker {} says {}",
                        file.display(),
                        found.bytes,
                        path.display(),
                        want.bytes
                    ));
                }
                Ok(_) => {
                    return Some(format!(
                        "{}: its contents differ from what its marker {} recorded (checksum)",
                        file.display(),
                        path.display()
                    ));
                }
                Err(e) => return Some(format!("{e} (named by the marker {})", path.display())),
            }
        }
        None
    }
}

/// `part-00003-of-00008` (or `task-...` for the ingest).
pub fn part_name(prefix: &str, part: usize, parts: usize) -> String {
    format!("{prefix}-{part:05}-of-{parts:05}")
}

/// Where a file is written before it is renamed into place.
pub fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes `marker` to `path` (through a temporary file).
pub fn write(path: &Path, marker: &Marker) -> Result<(), Error> {
    let tmp = temporary(path);
    let json = serde_json::to_vec_pretty(marker).map_err(|e| Error::Format(e.to_string()))?;
    std::fs::write(&tmp, json).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// The marker at `path`; `None` when there is none. A marker that does not
/// parse is an error naming the file.
pub fn read(path: &Path) -> Result<Option<Marker>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::Format(format!("{}: not a webdup marker: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_swapped_or_cut_after_its_marker_was_sealed_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("part-a.parquet"), dir.path().join("part-b.parquet"));
        std::fs::write(&a, b"the part as written").unwrap();
        std::fs::write(&b, b"another part, as valid").unwrap();
        let done = dir.path().join("part-a.done");
        let mut m = Marker::new("sketch", 0, 2, "h", 1);
        assert!(m.mismatch(&done).is_some_and(|why| why.contains("no file size")));
        m.seal(&[&a]).unwrap();
        assert_eq!(m.mismatch(&done), None);
        std::fs::copy(&b, &a).unwrap();
        let why = m.mismatch(&done).unwrap();
        assert!(why.contains("part-a.parquet") && why.contains("bytes"), "{why}");
        std::fs::write(&a, b"the part as writtem").unwrap();
        let why = m.mismatch(&done).unwrap();
        assert!(why.contains("part-a.parquet") && why.contains("checksum"), "{why}");
        std::fs::remove_file(&a).unwrap();
        assert!(m.mismatch(&done).unwrap().contains("part-a.parquet"));
    }
}
