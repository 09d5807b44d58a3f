//! Ingest tasks: each reads, fetches, extracts and shingles its share of
//! the inputs and writes one Parquet file and a completion marker.
//!
//! Task `I` of `N` takes every expanded input whose position is `I` modulo
//! `N`: every task expands the inputs the same way, so the shares are
//! disjoint and cover them, and each page keeps the key a single-process
//! run gives it. The corpus-wide stages (site templates, sketches) wait for
//! the clustering job, so a task's file does not depend on the others.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use webdup::Config;
use webdup::engine::Progress;
use webdup::run::{Run, RunConfig};

use crate::Error;
use crate::files::{IngestDoc, IngestRow, write_ingest};
use crate::marker::{self, Marker};

/// Which share of the inputs a task takes: `index` of `count`, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Task {
    type Err = String;

    /// `I/N`, with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Task, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("a task is I/N (such as 0/8), not {s:?}"))?;
        let index: usize = i.trim().parse().map_err(|_| format!("task index {i:?} is not a number"))?;
        let count: usize = n.trim().parse().map_err(|_| format!("task count {n:?} is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "task {index}/{count}: the index must be below the count (0/{count} to {}/{count})",
                count.max(1) - 1
            ));
        }
        Ok(Task { index, count })
    }
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What an ingest task did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingested {
    /// The task's file.
    pub path: PathBuf,
    /// False when its marker was there: nothing was read again.
    pub ran: bool,
    pub documents: u64,
    pub failed: u64,
}

/// The folder of the ingest files in a work directory.
pub fn dir(work: &Path) -> PathBuf {
    work.join("ingest")
}

/// The data file and the marker of task `task`.
pub fn paths(work: &Path, task: Task) -> (PathBuf, PathBuf) {
    let name = marker::part_name("task", task.index, task.count);
    let dir = dir(work);
    (dir.join(format!("{name}.parquet")), dir.join(format!("{name}.done")))
}

/// The settings an ingest file depends on, as its marker records them.
pub fn settings_json(config: &Config) -> serde_json::Value {
    serde_json::to_value(config.fingerprint_settings()).unwrap_or(serde_json::Value::Null)
}

/// Runs task `task` over `inputs` into `work` (see the module), unless its
/// marker says it is done with these settings. A marker with other settings
/// is an error: the work directory belongs to another configuration.
pub fn ingest(
    inputs: &[String],
    stdin: &mut dyn BufRead,
    config: &Config,
    run_config: RunConfig,
    task: Task,
    work: &Path,
    progress: &dyn Progress,
) -> Result<Ingested, Error> {
    let (data, done) = paths(work, task);
    let settings = settings_json(config);
    if let Some(m) = marker::read(&done)? {
        if m.settings.as_ref() != Some(&settings) {
            return Err(Error::Config(format!(
                "{}: task {task} was ingested with other settings; use another work directory, or delete {} to ingest it again",
                done.display(),
                dir(work).display()
            )));
        }
        return Ok(Ingested {
            path: data,
            ran: false,
            documents: m.counts.get("documents").copied().unwrap_or(0),
            failed: m.counts.get("failed").copied().unwrap_or(0),
        });
    }
    std::fs::create_dir_all(dir(work)).map_err(|e| Error::io(&dir(work), e))?;
    let mut run = Run::new(run_config);
    let mut collected = run.expand(inputs, stdin)?;
    let mine: Vec<_> = std::mem::take(&mut collected.sources)
        .into_iter()
        .enumerate()
        .filter(|(n, _)| n % task.count == task.index)
        .map(|(_, s)| s)
        .collect();
    let loaded = run.load(mine, config, progress)?;
    let fetches: std::collections::HashMap<u64, String> =
        loaded.fetches.iter().filter_map(|r| serde_json::to_string(r).ok().map(|json| (r.key.0, json))).collect();
    let mut rows: Vec<IngestRow> = Vec::with_capacity(loaded.corpus.len());
    let warc = loaded.warc;
    for d in loaded.corpus.docs {
        rows.push(IngestRow {
            key: d.key.0,
            id: d.id,
            doc: Some(IngestDoc {
                words: d.word_count as u64,
                digest: d.digest,
                shingles: d.shingles,
                context: d.context,
            }),
            error: None,
            fetch: fetches.get(&d.key.0).cloned(),
        });
    }
    // Inputs that named nothing are task 0's (keyed after every source).
    let expansion_errors = if task.index == 0 { collected.errors } else { Vec::new() };
    let errors = loaded.corpus.errors.into_iter().chain(expansion_errors);
    for e in errors {
        rows.push(IngestRow {
            key: e.key.0,
            id: e.id,
            doc: None,
            error: Some((e.kind.as_str().to_string(), e.message)),
            fetch: fetches.get(&e.key.0).cloned(),
        });
    }
    rows.sort_by_key(|r| r.key);
    write_ingest(&data, &rows)?;
    let failed = rows.iter().filter(|r| r.doc.is_none()).count() as u64;
    let mut m = Marker::new("ingest", task.index, task.count, &settings_hash(&settings), rows.len() as u64);
    m.counts.insert("documents".into(), rows.len() as u64);
    m.counts.insert("failed".into(), failed);
    m.settings = Some(settings);
    m.warc = warc;
    marker::write(&done, &m)?;
    Ok(Ingested { path: data, ran: true, documents: rows.len() as u64, failed })
}

/// A short hash of a JSON value.
pub fn settings_hash(value: &serde_json::Value) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(value.to_string().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_parse_and_bad_ones_are_named() {
        assert_eq!("3/8".parse::<Task>(), Ok(Task { index: 3, count: 8 }));
        assert!("8/8".parse::<Task>().unwrap_err().contains("below the count"));
        assert!("0/0".parse::<Task>().is_err());
        assert!("x".parse::<Task>().unwrap_err().contains("I/N"));
    }
}
