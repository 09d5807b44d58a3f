//! A work directory's finished parts: the ingest's markers, checked
//! against the settings and the files they vouch for, and the stages'
//! parts that can be kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use webdup::Config;

use crate::Error;
use crate::files;
use crate::ingest;
use crate::marker::{self, Marker};

/// The ingest's markers, all present, all made with `config`'s settings.
pub(crate) fn read_ingest_markers(work: &Path, config: &Config) -> Result<Vec<Marker>, Error> {
    let dir = ingest::dir(work);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::Config(format!(
            "{}: no ingest here ({e}); run `webdup ingest --work {}` first",
            dir.display(),
            work.display()
        ))
    })?;
    let mut counts: BTreeSet<usize> = BTreeSet::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(rest) = name.strip_prefix("task-").and_then(|r| r.strip_suffix(".done"))
            && let Some((_, n)) = rest.split_once("-of-")
            && let Ok(n) = n.parse::<usize>()
        {
            counts.insert(n);
        }
    }
    let count = match counts.len() {
        0 => return Err(Error::Config(format!("{}: no finished ingest task", dir.display()))),
        1 => *counts.iter().next().expect("one"),
        _ => {
            return Err(Error::Config(format!(
                "{}: ingest tasks of different counts ({}): one work directory holds one ingest",
                dir.display(),
                counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
            )));
        }
    };
    let want = ingest::settings_json(config);
    let mut markers = Vec::with_capacity(count);
    let mut missing = Vec::new();
    for t in 0..count {
        let (_, done) = ingest::paths(work, crate::Task { index: t, count });
        match marker::read(&done)? {
            Some(m) => {
                let version = m.file_version.unwrap_or(1);
                if version != files::INGEST_FORMAT_VERSION || m.format_version != marker::FORMAT_VERSION {
                    return Err(Error::Config(format!(
                        "{}: ingested by another webdup version (ingest format {version}, marker format {}; \
                         this one reads {} and {}); run `webdup ingest` again with the same inputs and tasks: \
                         it redoes such tasks",
                        done.display(),
                        m.format_version,
                        files::INGEST_FORMAT_VERSION,
                        marker::FORMAT_VERSION
                    )));
                }
                if m.settings.as_ref() != Some(&want) {
                    let theirs: Option<webdup::engine::FingerprintSettings> =
                        m.settings.clone().and_then(|s| serde_json::from_value(s).ok());
                    let why = theirs
                        .map(|t| webdup::engine::Difference::list(&t.differences(&config.fingerprint)))
                        .unwrap_or_else(|| "unreadable settings".into());
                    return Err(Error::Config(format!(
                        "{}: ingested with other fingerprint settings ({why}); give the flags the ingest was run with",
                        done.display()
                    )));
                }
                // A file swapped or cut since its task finished would be
                // clustered as if it were the task's.
                if let Some(why) = m.mismatch(&done) {
                    return Err(Error::Config(format!(
                        "{why}; run `webdup ingest` again with the same inputs and tasks: it redoes such tasks"
                    )));
                }
                markers.push(m);
            }
            None => missing.push(t.to_string()),
        }
    }
    if !missing.is_empty() {
        return Err(Error::Config(format!(
            "{}: ingest tasks {} of {count} are not finished; run them (`webdup ingest --task I/{count}`) first",
            dir.display(),
            missing.join(", ")
        )));
    }
    Ok(markers)
}

/// A hash of everything the stages depend on: the settings, the ingest
/// (its markers, which change when a task is run again: its inputs and its
/// file's checksum) and the formats.
pub(crate) fn job_hash(config: &Config, ingest: &[Marker]) -> String {
    let value = serde_json::json!({
        "format_version": marker::FORMAT_VERSION,
        "stage_format_version": files::STAGE_FORMAT_VERSION,
        "fingerprint": config.fingerprint,
        "match": config.matching,
        "ingest": ingest
            .iter()
            .map(|m| (&m.settings_hash, &m.inputs_hash, &m.files, m.rows, m.finished_at))
            .collect::<Vec<_>>(),
    });
    ingest::settings_hash(&value)
}

pub(crate) fn stage_dir(work: &Path, stage: &str) -> PathBuf {
    work.join("stages").join(stage)
}

/// The data file and marker of part `part` of `parts` of `stage`.
pub(crate) fn part_paths(work: &Path, stage: &str, part: usize, parts: usize) -> (PathBuf, PathBuf) {
    let name = marker::part_name("part", part, parts);
    let dir = stage_dir(work, stage);
    (dir.join(format!("{name}.parquet")), dir.join(format!("{name}.done")))
}

/// The parts of a stage found finished.
#[derive(Debug, Default)]
pub(crate) struct Complete {
    /// The number of parts when every one of them is finished with this
    /// job's settings and its files are as its marker recorded them.
    pub parts: Option<usize>,
    /// Why parts with this job's settings were not trusted: a file that
    /// differs from its marker, named.
    pub distrusted: Vec<String>,
}

/// The parts of `stage` finished with settings `hash` whose files are the
/// ones their markers vouch for (see [`Complete`]).
pub(crate) fn complete_parts(work: &Path, stage: &str, hash: &str) -> Result<Complete, Error> {
    let Ok(entries) = std::fs::read_dir(stage_dir(work, stage)) else {
        return Ok(Complete::default());
    };
    let mut by_count: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut distrusted = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "done")
            && let Some(m) = marker::read(&path)?
            && m.settings_hash == hash
            && m.stage == stage
        {
            match m.mismatch(&path) {
                None => {
                    by_count.entry(m.parts).or_default().insert(m.part);
                }
                Some(why) => distrusted.push(why),
            }
        }
    }
    distrusted.sort();
    let parts = by_count.into_iter().rev().find(|(n, parts)| parts.len() == *n).map(|(n, _)| n);
    Ok(Complete { parts, distrusted })
}
