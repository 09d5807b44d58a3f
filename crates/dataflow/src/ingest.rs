//! Ingest tasks: each reads, fetches, extracts and shingles its share of
//! the inputs and writes one Parquet file and a completion marker.
//!
//! Task `I` of `N` takes the `I`th of `N` runs of consecutive expanded
//! inputs ([`Task::share`]): every task expands the inputs the same way, so
//! the shares are disjoint and cover them, and each page keeps the key a
//! single-process run gives it. The corpus-wide stages (site templates, sketches) wait for
//! the clustering job, so a task's file does not depend on the others.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use webdup::Config;
use webdup::engine::Progress;
use webdup::run::{Run, RunConfig};
use webdup::source::{Location, Source};

use crate::Error;
use crate::files::{INGEST_FORMAT_VERSION, IngestDoc, IngestRow, IngestWriter};
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

impl Task {
    /// The inputs this task takes of `n`: a run of consecutive ones, so the
    /// pages of a site (a folder, a list of one host's URLs) stay together
    /// in one task's file, where the clustering job's workers read them
    /// together, and one task fetches a host's URLs under one politeness
    /// queue.
    pub fn share(&self, n: usize) -> std::ops::Range<usize> {
        (self.index * n / self.count)..((self.index + 1) * n / self.count)
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
    /// Why a marker that was there was not trusted (other inputs, a file
    /// that differs from it, an older format), when the task ran again.
    pub redone: Option<String>,
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
    serde_json::to_value(&config.fingerprint).unwrap_or(serde_json::Value::Null)
}

/// Runs task `task` over `inputs` into `work` (see the module), unless its
/// marker says it is done with these settings, these inputs (the task's
/// share of them as expanded now, each file's size and modification time),
/// and its file is the one the marker vouches for; when one of the last
/// two differs, or the marker is of another format, the task runs again
/// ([`Ingested::redone`] says why). A marker with other fingerprint
/// settings is an error: the work directory belongs to another
/// configuration. Deciding means expanding the inputs again: walking the
/// directories, reading the lists, fetching the sitemaps.
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
    let reading = reading_json(&run_config);
    let mut run = Run::new(run_config);
    let mut collected = run.expand(inputs, stdin)?;
    let total = collected.sources.len();
    let share = task.share(total);
    let mine: Vec<Source> = collected.sources.drain(share.clone()).collect();
    let errors = if task.index == 0 { std::mem::take(&mut collected.errors) } else { Vec::new() };
    let inputs_hash = inputs_hash(&mine, &errors, total, &reading);
    let mut redone = None;
    if let Some(m) = marker::read(&done)? {
        if m.file_version.unwrap_or(1) != INGEST_FORMAT_VERSION || m.format_version != marker::FORMAT_VERSION {
            // Its file could not be read, or cannot be checked.
            redone = Some(format!("{}: written by another webdup version", done.display()));
        } else if m.settings.as_ref() != Some(&settings) {
            return Err(Error::Config(format!(
                "{}: task {task} was ingested with other settings; use another work directory, or delete {} to ingest it again",
                done.display(),
                dir(work).display()
            )));
        } else if m.inputs_hash.as_deref() != Some(inputs_hash.as_str()) {
            redone = Some(format!(
                "{}: the inputs differ from those it was ingested from (the task's share: {} of {total} sources)",
                done.display(),
                share.len()
            ));
        } else if let Some(why) = m.mismatch(&done) {
            redone = Some(why);
        } else {
            return Ok(Ingested {
                path: data,
                ran: false,
                redone: None,
                documents: m.counts.get("documents").copied().unwrap_or(0),
                failed: m.counts.get("failed").copied().unwrap_or(0),
            });
        }
        // The marker goes first: a task stopped while ingesting again must
        // not leave the old marker beside a new, partial file.
        std::fs::remove_file(&done).map_err(|e| Error::io(&done, e))?;
    }
    std::fs::create_dir_all(dir(work)).map_err(|e| Error::io(&dir(work), e))?;
    // The ingest file keeps no SimHash: the job finds candidates by MinHash.
    let config = &Config { skip_simhash: true, ..config.clone() };
    // Local files are read a block at a time and each block written out
    // while the next is read, so a task holds a few blocks (one written,
    // one waiting, one read), not its whole share. URLs
    // are fetched in one go: a block boundary would make every host's
    // politeness queue wait for the slowest.
    let (urls, local): (Vec<Source>, Vec<Source>) =
        mine.into_iter().partition(|s| matches!(s.location, Location::Url(_)));
    let mut local = local.into_iter();
    let progress = Blocks::new(progress, (urls.len() + local.len()) as u64);
    // A block is written on a thread of its own while the next is loaded,
    // so the cores that load are not idle while Parquet is written.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<IngestRow>, webdup::warc::Summary)>(1);
    let (writer, failed, warc) = std::thread::scope(|scope| {
        let data = &data;
        let writing = scope.spawn(move || -> Result<_, Error> {
            let mut writer = IngestWriter::new(data);
            let mut failed = 0u64;
            let mut warc = webdup::warc::Summary::default();
            for (mut rows, warc_of) in rx {
                rows.sort_by_key(|r| r.key);
                failed += rows.iter().filter(|r| r.doc.is_none()).count() as u64;
                warc.merge(&warc_of);
                writer.append(&rows)?;
            }
            Ok((writer, failed, warc))
        });
        // A send fails only when the writer stopped on an error, which
        // its result then carries.
        let loading = (|| -> Result<(), Error> {
            loop {
                let block: Vec<Source> = local.by_ref().take(BLOCK).collect();
                if block.is_empty() {
                    break;
                }
                if tx.send(rows_of(run.load(block, config, &progress)?)).is_err() {
                    return Ok(());
                }
            }
            if !urls.is_empty() && tx.send(rows_of(run.load(urls, config, &progress)?)).is_err() {
                return Ok(());
            }
            // Inputs that named nothing are task 0's (keyed after every source).
            if !errors.is_empty() {
                let rows = errors.into_iter().map(|e| error_row(e, None)).collect();
                let _ = tx.send((rows, webdup::warc::Summary::default()));
            }
            Ok(())
        })();
        drop(tx);
        let written = writing.join().map_err(|_| Error::Worker("the ingest writer thread failed".into()))?;
        loading?;
        written
    })?;
    progress.done();
    let rows = writer.rows();
    writer.finish()?;
    let mut m = Marker::new("ingest", task.index, task.count, &settings_hash(&settings), rows);
    m.counts.insert("documents".into(), rows);
    m.counts.insert("failed".into(), failed);
    m.settings = Some(settings);
    m.warc = warc;
    m.file_version = Some(INGEST_FORMAT_VERSION);
    m.inputs_hash = Some(inputs_hash);
    m.seal(&[data.as_path()])?;
    marker::write(&done, &m)?;
    Ok(Ingested { path: data, ran: true, redone, documents: rows, failed })
}

/// Local sources read and written per block (see [`ingest`]).
const BLOCK: usize = 4096;

/// The rows of a block (its documents, then its failures) and what its
/// web archives gave.
fn rows_of(loaded: webdup::run::Loaded) -> (Vec<IngestRow>, webdup::warc::Summary) {
    let fetches: std::collections::HashMap<u64, String> =
        loaded.fetches.iter().filter_map(|r| serde_json::to_string(r).ok().map(|json| (r.key.0, json))).collect();
    let mut rows: Vec<IngestRow> = Vec::with_capacity(loaded.corpus.len());
    for d in loaded.corpus.docs {
        rows.push(IngestRow {
            key: d.key.0,
            id: d.id,
            doc: Some(IngestDoc {
                words: d.word_count as u64,
                digest: d.digest,
                page_digest: d.page_digest,
                shingles: d.shingles,
                context: d.context,
                site: d.signals,
            }),
            error: None,
            fetch: fetches.get(&d.key.0).cloned(),
        });
    }
    rows.extend(loaded.corpus.errors.into_iter().map(|e| {
        let fetch = fetches.get(&e.key.0).cloned();
        error_row(e, fetch)
    }));
    (rows, loaded.warc)
}

fn error_row(e: webdup::error::DocError, fetch: Option<String>) -> IngestRow {
    IngestRow { key: e.key.0, id: e.id, doc: None, error: Some((e.kind.as_str().to_string(), e.message)), fetch }
}

/// One progress bar over a task's blocks: each block's `load` starts and
/// finishes its own stage, which would restart the bar.
struct Blocks<'a> {
    inner: &'a dyn Progress,
    total: u64,
    started: std::sync::atomic::AtomicBool,
}

impl<'a> Blocks<'a> {
    fn new(inner: &'a dyn Progress, total: u64) -> Blocks<'a> {
        Blocks { inner, total, started: Default::default() }
    }

    fn done(&self) {
        if self.started.load(std::sync::atomic::Ordering::Relaxed) {
            self.inner.finish();
        }
    }
}

impl Progress for Blocks<'_> {
    fn start(&self, stage: &'static str, _total: u64) {
        if !self.started.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.inner.start(stage, self.total);
        }
    }

    fn advance(&self, n: u64) {
        self.inner.advance(n);
    }

    fn fail(&self, n: u64) {
        self.inner.fail(n);
    }
}

/// The settings of reading and fetching that change what a task's file
/// holds (not those that change only how fast it is made).
fn reading_json(run: &RunConfig) -> serde_json::Value {
    let f = &run.fetch;
    serde_json::json!({
        "max_bytes": run.limits.max_bytes,
        "fetch_max_bytes": f.max_bytes,
        "content_types": f.content_types,
        "max_redirects": f.max_redirects,
        "ignore_robots": f.ignore_robots,
        "keep_query": f.keep_query,
        "user_agent": f.user_agent,
        // Which URLs may be fetched, and which links a walk follows.
        "allow_internal": f.allow_internal,
        "follow_symlinks": run.inputs.follow_symlinks,
    })
}

/// A hash of what a task reads: its sources as expanded (key, id, where;
/// a file's size and modification time, so a file changed in place counts
/// as another input), the inputs that named nothing (task 0's), the number
/// of sources (which cuts the shares) and `reading`.
fn inputs_hash(
    mine: &[Source],
    errors: &[webdup::error::DocError],
    total: usize,
    reading: &serde_json::Value,
) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut add = |text: &str| {
        h.update(&(text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    };
    add(&reading.to_string());
    add(&total.to_string());
    for s in mine {
        add(&s.key.0.to_string());
        add(&s.id);
        match &s.location {
            Location::Url(url) => add(&format!("url {url}")),
            Location::File(path) => {
                let stamp = std::fs::metadata(path)
                    .map(|m| {
                        let modified = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                        format!("{} {:?}", m.len(), modified)
                    })
                    .unwrap_or_else(|e| format!("unreadable {:?}", e.kind()));
                add(&format!("file {} {stamp}", path.display()));
            }
        }
    }
    for e in errors {
        add(&format!("error {} {} {}", e.key.0, e.id, e.message));
    }
    format!("{:016x}", h.digest())
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

    #[test]
    fn tasks_share_the_inputs_in_runs_that_cover_each_once() {
        for n in [0, 1, 2, 7, 100, 101] {
            for count in [1, 2, 3, 8, 150] {
                let shares: Vec<_> = (0..count).map(|index| Task { index, count }.share(n)).collect();
                assert_eq!(shares[0].start, 0);
                assert_eq!(shares[count - 1].end, n);
                for w in shares.windows(2) {
                    assert_eq!(w[0].end, w[1].start, "{n} inputs, {count} tasks: {shares:?}");
                }
                let sizes: Vec<usize> = shares.iter().map(|s| s.len()).collect();
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{n}/{count}: {sizes:?}");
            }
        }
    }
}
