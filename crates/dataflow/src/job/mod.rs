//! The clustering job: the corpus-wide stages on timely dataflow workers.
//!
//! Three stages, each a dataflow over the previous stage's parts, each
//! ending in one Parquet part and one marker per worker:
//!
//! 1. `sketch`: each site's template learned from its pages' sets,
//!    gathered by site (in key order, as one process does), and sent back
//!    to the workers that read its pages; each worker drops it from the
//!    pages it read, sketches them (MinHash) and writes them.
//! 2. `edges`: each page's home is the worker that read it, and every
//!    message about a page carries its home, so no shingle set moves to be
//!    held. Exact copies grouped by digest (the lowest key of a text stays
//!    in the search); MinHash band keys exchanged by band (large buckets
//!    send each pair from its first shared band only), candidate pairs sent
//!    to the home of the lower key, each shingle set sent at most once to
//!    each worker that needs it, and every candidate confirmed by exact
//!    Jaccard (and the cross-site rule).
//! 3. `clusters`: connected components of the confirmed pairs on
//!    differential dataflow, labelled by their lowest key; the
//!    representative is the member with the most confirmed links (ties to
//!    the lower key); each member scored against it.
//!
//! A stage whose parts all have markers carrying this run's settings hash
//! is not run again. Process 0 then numbers the clusters by their lowest
//! key and writes the report with `webdup cluster`'s writers, and
//! `pages.parquet`.

mod clusters;
mod edges;
mod sketch;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use webdup::engine::{Cluster, Clustering, Corpus, Fingerprint, Measure, Member, Method, Stats};
use webdup::error::{DocError, DocErrorKind};
use webdup::fetch::FetchRecord;
use webdup::report::ClusterReport;
use webdup::{Config, DocKey};
use webdup_core::site::{self, Site, SiteInput};
use webdup_core::template::TemplateScope;

use crate::Error;
use crate::files::{self, IngestRow, MemberRow, PageRow, SketchRow};
use crate::halt::{self, Halt};
use crate::ingest;
pub use crate::layout::{Layout, read_hosts};
use crate::marker::{self, Marker};
use crate::parts::{complete_parts, job_hash, part_paths, read_ingest_markers, stage_dir};
use clusters::clusters_stage;
use edges::{Held, edges_stage};
use sketch::{group_offsets, sketch_stage};

/// The stages, in order.
pub const STAGES: [&str; 3] = ["sketch", "edges", "clusters"];

/// Environment variable for fault-injection tests: `STAGE:PROCESS` makes
/// that process stop, before writing its part of that stage, and wait to be
/// killed (after creating `WORK/stalled-STAGE-PROCESS`).
pub const STALL_ENV: &str = "WEBDUP_DATAFLOW_STALL";

/// How long process 0 waits for the other processes' last parts once its
/// own workers are done.
const LAST_PARTS_WAIT: Duration = Duration::from_secs(120);

/// What a job did.
#[derive(Debug)]
pub struct Outcome {
    /// The report, on process 0 only.
    pub report: Option<ClusterReport>,
    /// Documents that could not be fingerprinted (the exit code's business).
    pub failed: usize,
    /// Each stage and, when this run computed it, how long this process's
    /// first worker took (`None`: its parts were complete from an earlier run).
    pub stages: Vec<(&'static str, Option<Duration>)>,
    /// `pages.parquet` (process 0), being written while the caller writes
    /// the report.
    pub pages: Option<PagesFile>,
    /// Parts not trusted, each naming a file that differs from its marker:
    /// their stages were run again.
    pub notes: Vec<String>,
}

/// `pages.parquet`, written on a thread of its own: [`PagesFile::finish`]
/// waits for it and says whether it was written. Dropped unfinished, it
/// still waits, so the file is whole when the job's caller returns.
#[derive(Debug)]
pub struct PagesFile {
    path: PathBuf,
    writing: Option<std::thread::JoinHandle<Result<(), Error>>>,
}

impl PagesFile {
    fn write(path: PathBuf, rows: impl FnOnce() -> Vec<PageRow> + Send + 'static) -> PagesFile {
        let to = path.clone();
        let writing = std::thread::spawn(move || files::write_pages(&to, &rows()));
        PagesFile { path, writing: Some(writing) }
    }

    /// Where the file is (or will be, once written).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the file to be written.
    pub fn finish(mut self) -> Result<PathBuf, Error> {
        self.wait()?;
        Ok(std::mem::take(&mut self.path))
    }

    fn wait(&mut self) -> Result<(), Error> {
        match self.writing.take().map(std::thread::JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(Error::Worker(format!("writing {} failed", self.path.display()))),
        }
    }
}

impl Drop for PagesFile {
    fn drop(&mut self) {
        let _ = self.wait();
    }
}

/// Everything a worker needs, shared by the workers of a process.
struct Shared {
    work: PathBuf,
    config: Config,
    hash: String,
    /// Documents folded into another by a redirect: not clustered. Set by
    /// the main thread while the workers run; `None`: the light corpus
    /// could not be read (the job fails with its error).
    folded: Later<Option<BTreeSet<u64>>>,
    /// Ingest tasks.
    tasks: usize,
    /// The row groups before each ingest file, and their total
    /// ([`sketch::reads_group`]; empty when no stage runs).
    groups: Vec<usize>,
    /// Parts of each stage already complete (`Some(parts)`), from the start.
    complete: [Option<usize>; 3],
    process: usize,
    stall: Option<String>,
    /// Stopped by the first error of any worker, here or in a peer.
    halt: Arc<Halt>,
    /// Sites decided by something other than the page's id ([`job_sites`]).
    sites: Arc<HashMap<u64, Site>>,
}

impl Shared {
    /// Page `key`'s site, as `webdup cluster` names it.
    fn site_of(&self, key: u64, id: &str, scope: TemplateScope) -> Option<String> {
        self.sites.get(&key).map(|s| s.name.clone()).or_else(|| webdup_core::template::site_of(id, scope))
    }
}

/// Each local page's site where something other than its id decided it
/// (the address it names, its template group: `webdup_core::site`), by
/// key: the decision `webdup cluster` makes, over the job's every page.
fn job_sites(work: &Path, tasks: usize, config: &Config) -> Result<HashMap<u64, Site>, Error> {
    if !config.sites_from_pages() {
        return Ok(HashMap::new());
    }
    let mut all = Vec::new();
    for t in 0..tasks {
        let (path, _) = ingest::paths(work, crate::Task { index: t, count: tasks });
        all.extend(files::read_site_signals(&path)?);
    }
    let scope = config.scope();
    let inputs: Vec<SiteInput> = all.iter().map(|(_, id, signals)| SiteInput { id, signals }).collect();
    let sites = site::assign(&inputs, scope);
    Ok(sites
        .into_iter()
        .zip(&all)
        .filter_map(|(site, (key, id, _))| Some((*key, site.filter(|s| Some(s) != Site::of_id(id, scope).as_ref())?)))
        .collect())
}

/// Runs the clustering job over the ingest in `work` (see the module).
pub fn cluster(work: &Path, config: &Config, exec: &Layout) -> Result<Outcome, Error> {
    exec.validate()?;
    if config.matching.method != Method::MinHash || config.matching.measure != Measure::Jaccard {
        return Err(Error::Config(
            "the distributed job supports --method minhash with --measure jaccard (the defaults); \
             use `webdup cluster` for SimHash candidates or containment"
                .into(),
        ));
    }
    let ingest = read_ingest_markers(work, config)?;
    let hash = job_hash(config, &ingest);
    let tasks = ingest.len();
    let sites = Arc::new(job_sites(work, tasks, config)?);
    let (complete, notes) = complete_stages(work, &hash)?;
    let mut stages: Vec<(&'static str, Option<Duration>)> = STAGES.iter().map(|s| (*s, None)).collect();
    let runs = complete.iter().any(Option::is_none);
    let shared = Arc::new(Shared {
        work: work.to_path_buf(),
        config: config.clone(),
        hash: hash.clone(),
        folded: Later::default(),
        tasks,
        groups: if runs { group_offsets(work, tasks)? } else { Vec::new() },
        complete,
        process: exec.process,
        stall: std::env::var(STALL_ENV).ok(),
        halt: Halt::new(),
        sites,
    });
    let running = if runs {
        for stage in STAGES {
            let dir = stage_dir(work, stage);
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        halt::forget_stopped(work, exec.process);
        let worker_shared = Arc::clone(&shared);
        let started = halt::start(&exec.addresses(), exec.process, exec.threads, work, &shared.halt, move |worker| {
            run_worker(worker, &worker_shared)
        });
        Some(started.inspect_err(|e| halt::record_stopped(work, exec.process, exec.processes, e))?)
    } else {
        None
    };
    // The light corpus (ids, word counts, errors, fetches) is read while
    // the workers run: they need only the pages folded into a redirect, at
    // the start of the edges stage.
    let light = read_light(work, tasks).and_then(|light| {
        let (corpus, fetches) = light_corpus(&light)?;
        let before: BTreeSet<u64> = corpus.docs.iter().map(|d| d.key.0).collect();
        let mut run = webdup::run::Loaded { corpus, fetches, ..Default::default() };
        run.fold_redirects();
        let webdup::run::Loaded { corpus, fetches, redirected, .. } = run;
        let kept: BTreeSet<u64> = corpus.docs.iter().map(|d| d.key.0).collect();
        let folded: BTreeSet<u64> = before.difference(&kept).copied().collect();
        Ok(((light, corpus, fetches, redirected), folded))
    });
    let (light, folded) = match light {
        Ok((light, folded)) => (Ok(light), Some(folded)),
        Err(e) => (Err(e), None),
    };
    shared.folded.set(folded);
    if let Some(running) = running {
        match running.wait() {
            Ok(times) => {
                for (s, t) in times.into_iter().next().unwrap_or_default() {
                    stages[s].1 = Some(t);
                }
            }
            Err(e) => {
                // The light corpus's error, when the workers stopped for it.
                let e = light.err().unwrap_or(e);
                halt::record_stopped(work, exec.process, exec.processes, &e);
                return Err(e);
            }
        }
    }
    let (light, mut corpus, fetches, redirected) = light?;
    for d in &mut corpus.docs {
        d.site = shared.sites.get(&d.key.0).cloned();
    }
    if exec.process != 0 {
        return Ok(Outcome { report: None, failed: corpus.errors.len(), stages, pages: None, notes });
    }
    let parts = last_parts(work, &hash)?;
    let stats = edge_stats(work, &hash, corpus.len())?;
    mark_template_only(work, &hash, &mut corpus)?;
    let mut members: Vec<MemberRow> = Vec::new();
    for p in 0..parts {
        members.extend(files::read_members(&part_paths(work, "clusters", p, parts).0)?);
    }
    let (clustering, corpus) = (Arc::new(assemble(members, stats)), Arc::new(corpus));
    // Written while the report is made and written.
    let pages = {
        let (clustering, corpus) = (Arc::clone(&clustering), Arc::clone(&corpus));
        PagesFile::write(work.join("pages.parquet"), move || page_rows(&light, &clustering, &corpus))
    };
    let mut report = ClusterReport::new(&corpus, &clustering, config);
    report.fetches = fetches;
    report.redirected = redirected;
    for m in &ingest {
        report.warc.merge(&m.warc);
    }
    let failed = corpus.errors.len();
    Ok(Outcome { report: Some(report), failed, stages, pages: Some(pages), notes })
}

/// The parts of each stage complete from an earlier run (`Some(parts)`),
/// and why any were not trusted. A stage after one that must run again
/// runs again too.
fn complete_stages(work: &Path, hash: &str) -> Result<([Option<usize>; 3], Vec<String>), Error> {
    let mut complete = [None; 3];
    let mut notes = Vec::new();
    for (s, stage) in STAGES.iter().enumerate() {
        let found = complete_parts(work, stage, hash)?;
        complete[s] = found.parts;
        notes.extend(found.distrusted.into_iter().map(|why| format!("stage {stage} runs again: {why}")));
    }
    if let Some(first) = complete.iter().position(Option::is_none) {
        for c in &mut complete[first..] {
            *c = None;
        }
    }
    Ok((complete, notes))
}

/// How many parts the clusters stage has, once every process has written
/// its part: the other processes write their last parts just after their
/// workers finish, which may be after ours.
fn last_parts(work: &Path, hash: &str) -> Result<usize, Error> {
    let deadline = Instant::now() + LAST_PARTS_WAIT;
    loop {
        let found = complete_parts(work, "clusters", hash)?;
        if let Some(p) = found.parts {
            return Ok(p);
        }
        if Instant::now() > deadline {
            return Err(Error::Worker(format!(
                "the other processes' cluster parts did not appear in {} within {} s{}",
                stage_dir(work, "clusters").display(),
                LAST_PARTS_WAIT.as_secs(),
                found.distrusted.iter().map(|why| format!("; {why}")).collect::<String>()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run's counts of `documents` pages, and of candidate, confirmed and
/// exact pairs summed from the edge parts' markers.
fn edge_stats(work: &Path, hash: &str, documents: usize) -> Result<Stats, Error> {
    let mut stats = Stats { documents, ..Stats::default() };
    let edge_parts = complete_parts(work, "edges", hash)?
        .parts
        .ok_or_else(|| Error::Worker("the edges stage is incomplete after the job".into()))?;
    for p in 0..edge_parts {
        let m =
            marker::read(&part_paths(work, "edges", p, edge_parts).1)?.unwrap_or_else(|| Marker::new("", 0, 0, "", 0));
        let count = |k: &str| m.counts.get(k).copied().unwrap_or(0) as usize;
        stats.candidate_pairs += count("candidates");
        stats.confirmed_pairs += count("confirmed");
        stats.exact_duplicates += count("exact");
    }
    Ok(stats)
}

/// Marks the pages the sketch stage found to be only their site's template,
/// as `cluster` reports them.
fn mark_template_only(work: &Path, hash: &str, corpus: &mut Corpus) -> Result<(), Error> {
    let parts = complete_parts(work, "sketch", hash)?
        .parts
        .ok_or_else(|| Error::Worker("the sketch stage is incomplete after the job".into()))?;
    let mut keys = HashSet::new();
    for p in 0..parts {
        keys.extend(files::read_template_only(&part_paths(work, "sketch", p, parts).0)?);
    }
    for d in &mut corpus.docs {
        d.template_only = keys.contains(&d.key.0);
    }
    Ok(())
}

/// Every ingest task's rows without their shingles, in key order.
fn read_light(work: &Path, tasks: usize) -> Result<Vec<IngestRow>, Error> {
    let mut rows = Vec::new();
    for t in 0..tasks {
        let (data, _) = ingest::paths(work, crate::Task { index: t, count: tasks });
        rows.extend(files::read_ingest(&data, true)?);
    }
    rows.sort_by_key(|r| r.key);
    Ok(rows)
}

/// A value one thread sets once while others wait for it.
#[derive(Default)]
struct Later<T> {
    value: Mutex<Option<Arc<T>>>,
    ready: Condvar,
}

impl<T> Later<T> {
    fn set(&self, value: T) {
        *self.value.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(value));
        self.ready.notify_all();
    }

    /// The value, once it is set.
    fn wait(&self) -> Arc<T> {
        let mut value = self.value.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(v) = value.as_ref() {
                return Arc::clone(v);
            }
            value = self.ready.wait(value).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Ids, words and errors of every document, and the fetch records: what
/// the report needs besides the clusters.
fn light_corpus(rows: &[IngestRow]) -> Result<(Corpus, Vec<FetchRecord>), Error> {
    let mut corpus = Corpus::default();
    let mut fetches = Vec::new();
    for r in rows {
        let key = DocKey(r.key);
        match (&r.doc, &r.error) {
            (Some(d), _) => corpus.docs.push(Fingerprint::from_parts(
                r.id.clone(),
                key,
                d.words as usize,
                Vec::new(),
                [0; 16],
                Vec::new(),
                0,
            )),
            (None, Some((kind, message))) => {
                let kind = DocErrorKind::from_name(kind).unwrap_or(DocErrorKind::Io);
                corpus.errors.push(DocError::new(r.id.clone(), key, kind, message.clone()));
            }
            (None, None) => {
                return Err(Error::Format(format!("ingest row {} ({}) is neither a page nor an error", r.key, r.id)));
            }
        }
        if let Some(json) = &r.fetch {
            let record: FetchRecord = serde_json::from_str(json)
                .map_err(|e| Error::Format(format!("ingest row {} ({}): unreadable fetch record: {e}", r.key, r.id)))?;
            fetches.push(record);
        }
    }
    Ok((corpus, fetches))
}

/// The clustering from every cluster part: clusters numbered by their
/// lowest key, members by key.
fn assemble(members: Vec<MemberRow>, stats: Stats) -> Clustering {
    let mut by_label: BTreeMap<u64, Vec<MemberRow>> = BTreeMap::new();
    for m in members {
        by_label.entry(m.label).or_default().push(m);
    }
    let clusters = by_label
        .into_values()
        .enumerate()
        .map(|(n, mut rows)| {
            rows.sort_by_key(|r| r.key);
            Cluster {
                id: n + 1,
                representative: DocKey(rows[0].representative),
                members: rows
                    .iter()
                    .map(|r| Member {
                        key: DocKey(r.key),
                        jaccard: r.jaccard,
                        containment: r.containment,
                        identical: r.identical,
                        same_text: r.same_text,
                    })
                    .collect(),
            }
        })
        .collect();
    Clustering { clusters, edges: Vec::new(), stats }
}

/// One row per document for `pages.parquet`.
fn page_rows(light: &[IngestRow], clustering: &Clustering, corpus: &Corpus) -> Vec<PageRow> {
    let ids: HashMap<u64, &str> = light.iter().map(|r| (r.key, r.id.as_str())).collect();
    let mut of: HashMap<u64, (u64, u64, &Member)> = HashMap::new();
    for c in &clustering.clusters {
        for m in &c.members {
            of.insert(m.key.0, (c.id as u64, c.representative.0, m));
        }
    }
    let kept: BTreeSet<u64> =
        corpus.docs.iter().map(|d| d.key.0).chain(corpus.errors.iter().map(|e| e.key.0)).collect();
    light
        .iter()
        .filter(|r| kept.contains(&r.key))
        .map(|r| {
            let m = of.get(&r.key);
            PageRow {
                key: r.key,
                url: r.id.clone(),
                cluster: m.map(|m| m.0),
                representative: m.and_then(|m| ids.get(&m.1).map(|s| s.to_string())),
                jaccard: m.map(|m| m.2.jaccard),
                containment: m.map(|m| m.2.containment),
                identical: m.map(|m| m.2.identical),
                same_text: m.map(|m| m.2.same_text),
                words: r.doc.as_ref().map(|d| d.words),
                error: r.error.as_ref().map(|(k, msg)| format!("{k}: {msg}")),
            }
        })
        .collect()
}

type Worker = timely::worker::Worker;

/// Runs the stages that are not complete; returns how long each took.
fn run_worker(worker: &mut Worker, shared: &Shared) -> Result<Vec<(usize, Duration)>, Error> {
    let mut times = Vec::new();
    let mut carried = Carried::default();
    for s in 0..STAGES.len() {
        if shared.complete[s].is_some() {
            continue;
        }
        let start = Instant::now();
        match s {
            0 => sketch_stage(worker, shared, &mut carried)?,
            1 => edges_stage(worker, shared, &mut carried)?,
            _ => clusters_stage(worker, shared, &mut carried)?,
        }
        times.push((s, start.elapsed()));
    }
    Ok(times)
}

/// What a stage that ran in this job hands the next, instead of the next
/// reading it back from the part just written: the same rows.
#[derive(Default)]
struct Carried {
    /// The `sketch` stage's part: the edges stage's input.
    sketch: Option<Vec<SketchRow>>,
    /// The pages the `edges` stage held here that have a confirmed pair or
    /// an exact copy: the pages the clusters stage scores.
    held: Option<HashMap<u64, Held>>,
}

/// The parts of the previous stage this worker reads, as (part, parts):
/// its own part when that stage ran in this job, else every part `p` with
/// `p % peers == index` of the complete set.
fn inputs_of(worker: &Worker, shared: &Shared, stage: usize) -> Vec<(usize, usize)> {
    let (index, peers) = (worker.index(), worker.peers());
    match shared.complete[stage - 1] {
        Some(parts) => (0..parts).filter(|p| p % peers == index).map(|p| (p, parts)).collect(),
        None => vec![(index, peers)],
    }
}

/// Reads every file (or share of one) with `read`; the first failure is
/// kept and the worker goes on with nothing, so the other workers are not
/// left waiting.
fn read_all<I, T>(
    inputs: impl IntoIterator<Item = I>,
    read: impl Fn(I) -> Result<Vec<T>, Error>,
    failure: &mut Option<Error>,
) -> Vec<T> {
    let mut out = Vec::new();
    for p in inputs {
        match read(p) {
            Ok(rows) => out.extend(rows),
            Err(e) => {
                failure.get_or_insert(e);
                return Vec::new();
            }
        }
    }
    out
}

/// Writes this worker's part of `stage` (and `also`, a file beside it) and
/// its marker, sealed with their sizes and checksums, after the stall hook
/// of the fault-injection tests.
fn finish_part(
    worker: &Worker,
    shared: &Shared,
    stage: &str,
    rows: u64,
    counts: &[(&str, u64)],
    also: Option<&Path>,
    write: impl FnOnce(&Path) -> Result<(), Error>,
) -> Result<(), Error> {
    if shared.stall.as_deref() == Some(&format!("{stage}:{}", shared.process)) {
        let flag = shared.work.join(format!("stalled-{stage}-{}", shared.process));
        let _ = std::fs::write(&flag, b"");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let (data, done) = part_paths(&shared.work, stage, worker.index(), worker.peers());
    write(&data)?;
    let mut m = Marker::new(stage, worker.index(), worker.peers(), &shared.hash, rows);
    for (k, v) in counts {
        m.counts.insert((*k).to_string(), *v);
    }
    m.seal(&[data.as_path()].into_iter().chain(also).collect::<Vec<_>>())?;
    marker::write(&done, &m)
}
