//! Completion markers: a small JSON file written, after the data it vouches
//! for, to a temporary name and renamed. A part whose marker is there is
//! whole and was made with the settings the marker names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;

/// Version of the marker and stage-file formats.
pub const FORMAT_VERSION: u32 = 1;

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
        }
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
