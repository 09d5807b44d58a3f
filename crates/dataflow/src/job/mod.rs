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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use differential_dataflow::AsCollection;
use differential_dataflow::VecCollection;
use differential_dataflow::operators::Iterate;
use serde::{Deserialize, Serialize};
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::{Input, Map};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use webdup::engine::{Cluster as Group, Clustering, Corpus, Fingerprint, Measure, Member, Method, Stats};
use webdup::error::{DocError, DocErrorKind};
use webdup::fetch::FetchRecord;
use webdup::report::ClusterReport;
use webdup::{Config, DocKey};
use webdup_core::candidates::lsh::band_key;
use webdup_core::sketch::MinHasher;
use webdup_core::template;
use webdup_core::verify::{Overlap, confirm_pair};

use crate::Error;
use crate::files::{self, EdgeRow, IngestRow, MemberRow, PageRow, SketchRow};
use crate::halt::{self, Halt, run_to_end};
use crate::ingest;
pub use crate::layout::{Cluster, read_hosts};
use crate::marker::{self, Marker};
use crate::ops::{consume, gather, gather_into, owner, route_bytes};
use crate::parquet_io as pq;
use crate::parts::{complete_parts, job_hash, part_paths, read_ingest_markers, stage_dir};

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
    /// ([`reads_group`]; empty when no stage runs).
    groups: Vec<usize>,
    /// Parts of each stage already complete (`Some(parts)`), from the start.
    complete: [Option<usize>; 3],
    process: usize,
    stall: Option<String>,
    /// Stopped by the first error of any worker, here or in a peer.
    halt: Arc<Halt>,
}

/// Runs the clustering job over the ingest in `work` (see the module).
pub fn cluster(work: &Path, config: &Config, exec: &Cluster) -> Result<Outcome, Error> {
    exec.validate()?;
    if config.method != Method::MinHash || config.measure != Measure::Jaccard {
        return Err(Error::Config(
            "the distributed job supports --method minhash with --measure jaccard (the defaults); \
             use `webdup cluster` for SimHash candidates or containment"
                .into(),
        ));
    }
    let ingest = read_ingest_markers(work, config)?;
    let hash = job_hash(config, &ingest);
    let tasks = ingest.len();
    let mut complete = [None; 3];
    let mut notes = Vec::new();
    for (s, stage) in STAGES.iter().enumerate() {
        let found = complete_parts(work, stage, &hash)?;
        complete[s] = found.parts;
        notes.extend(found.distrusted.into_iter().map(|why| format!("stage {stage} runs again: {why}")));
    }
    // A stage after one that must run again runs again too.
    if let Some(first) = complete.iter().position(Option::is_none) {
        for c in &mut complete[first..] {
            *c = None;
        }
    }
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
        let (mut corpus, fetches) = light_corpus(&light)?;
        let before: BTreeSet<u64> = corpus.docs.iter().map(|d| d.key.0).collect();
        let redirected = webdup::run::fold_redirects(&mut corpus, &fetches);
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
    let (light, corpus, fetches, redirected) = light?;
    if exec.process != 0 {
        return Ok(Outcome { report: None, failed: corpus.errors.len(), stages, pages: None, notes });
    }
    // The other processes write their last parts just after their workers
    // finish, which may be after ours.
    let deadline = Instant::now() + LAST_PARTS_WAIT;
    let parts = loop {
        let found = complete_parts(work, "clusters", &hash)?;
        if let Some(p) = found.parts {
            break p;
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
    };
    let mut stats = Stats { documents: corpus.len(), ..Stats::default() };
    let edge_parts = complete_parts(work, "edges", &hash)?
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
            Group {
                id: n + 1,
                representative: DocKey(rows[0].representative),
                members: rows
                    .iter()
                    .map(|r| Member {
                        key: DocKey(r.key),
                        jaccard: r.jaccard,
                        containment: r.containment,
                        exact: r.exact,
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
                exact: m.map(|m| m.2.exact),
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

/// A page's shingles (its context's, when it has one) sent to the worker
/// that learns its site's template, from the worker that read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LearnFrom {
    site: String,
    key: u64,
    reader: u64,
    learner: u64,
    set: Arc<Vec<u64>>,
}

/// A page read by this worker, until its site's template is known.
struct Read {
    site: Option<String>,
    key: u64,
    id: String,
    digest: [u8; 16],
    shingles: Arc<Vec<u64>>,
    context: Arc<Vec<u64>>,
}

/// The worker that learns each site's template, for the sites this worker
/// read pages of that have at least `min_pages` pages in all: the worker
/// that read the most of them (the lowest of those that tie), so that most
/// of a site's sets, consecutive in the ingest files, are not sent to
/// another process. A site with fewer pages is learned nowhere.
fn site_learners(
    worker: &mut Worker,
    halt: &Halt,
    read: &[Read],
    min_pages: usize,
) -> Result<HashMap<String, u64>, Error> {
    let me = worker.index() as u64;
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for site in read.iter().filter_map(|r| r.site.as_deref()) {
        *counts.entry(site).or_default() += 1;
    }
    let learners: Rc<RefCell<HashMap<String, u64>>> = Rc::default();
    let mut input: InputHandleVec<u64, (String, u64, u64)> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let counted = gather(
            scope.input_from(&mut input),
            "site sizes",
            |c: &(String, u64, u64)| route_bytes(c.0.as_bytes()),
            move |mut counts: Vec<(String, u64, u64)>| {
                counts.sort_unstable();
                let mut out = Vec::new();
                for site in counts.chunk_by(|x, y| x.0 == y.0) {
                    let pages: u64 = site.iter().map(|c| c.2).sum();
                    if pages < min_pages as u64 {
                        continue;
                    }
                    let most = site.iter().map(|c| c.2).max().unwrap_or(0);
                    let learner = site.iter().find(|c| c.2 == most).map_or(0, |c| c.1);
                    out.extend(site.iter().map(|c| (c.1, c.0.clone(), learner)));
                }
                out
            },
        );
        let sink = learners.clone();
        gather(
            counted,
            "learners",
            |l: &(u64, String, u64)| l.0,
            move |ls: Vec<(u64, String, u64)>| {
                sink.borrow_mut().extend(ls.into_iter().map(|(_, site, learner)| (site, learner)));
                Vec::<()>::new()
            },
        )
        .probe_with(&probe);
    });
    for (site, n) in counts {
        input.send((site.to_string(), me, n));
    }
    drop(input);
    run_to_end(worker, halt, &probe)?;
    Ok(learners.take())
}

fn sketch_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
    let mut failure = None;
    let (index, peers) = (worker.index(), worker.peers());
    let rows = read_all(
        0..shared.tasks,
        |t| {
            let (path, _) = ingest::paths(&shared.work, crate::Task { index: t, count: shared.tasks });
            files::read_ingest_groups(&path, false, &|g| reads_group(&shared.groups, t, g, index, peers))
        },
        &mut failure,
    );
    let me = index as u64;
    let template = shared.config.template.clone();
    let read: Vec<Read> = rows
        .into_iter()
        .filter_map(|r| {
            let d = r.doc?;
            Some(Read {
                site: template.as_ref().and_then(|t| template::site_of(&r.id, t.scope)),
                key: r.key,
                id: r.id,
                digest: d.digest,
                shingles: Arc::new(d.shingles),
                context: Arc::new(d.context),
            })
        })
        .collect();
    let min_pages = shared.config.template.as_ref().map_or(usize::MAX, |t| t.min_pages);
    let learners = site_learners(worker, &shared.halt, &read, min_pages)?;
    // Each site's template is learned where its pages' sets are gathered
    // (from every worker, in key order, as one process does: at its
    // learner) and sent back to the workers that read its pages; a page
    // stays where it was read, its home in the edges stage, so the MinHash
    // work is spread as the reading is, even over the pages of one site.
    let learned: Rc<RefCell<HashMap<String, Arc<Vec<u64>>>>> = Rc::default();
    let mut input: InputHandleVec<u64, LearnFrom> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let sets = scope.input_from(&mut input);
        let template = shared.config.template.clone();
        let templates = gather(
            sets,
            "sites",
            |l: &LearnFrom| l.learner,
            move |mut sets: Vec<LearnFrom>| {
                let Some(t) = &template else { return Vec::new() };
                sets.sort_unstable_by(|x, y| x.site.cmp(&y.site).then(x.key.cmp(&y.key)));
                let mut out = Vec::new();
                // Every set of a site comes here, and only sites of
                // `min_pages` or more are sent (`site_learners`).
                for site in sets.chunk_by(|x, y| x.site == y.site) {
                    let pages: Vec<&[u64]> = site.iter().map(|l| l.set.as_slice()).collect();
                    let found = Arc::new(template::learn_site(&pages, t));
                    let mut readers: Vec<u64> = site.iter().map(|l| l.reader).collect();
                    readers.sort_unstable();
                    readers.dedup();
                    out.extend(readers.into_iter().map(|r| (r, site[0].site.clone(), Arc::clone(&found))));
                }
                out
            },
        );
        let sink = learned.clone();
        gather(
            templates,
            "templates",
            |t: &(u64, String, Arc<Vec<u64>>)| t.0,
            move |ts: Vec<(u64, String, Arc<Vec<u64>>)>| {
                sink.borrow_mut().extend(ts.into_iter().map(|(_, site, t)| (site, t)));
                Vec::<()>::new()
            },
        )
        .probe_with(&probe);
    });
    for r in &read {
        if let Some((site, &learner)) = r.site.as_ref().and_then(|s| Some(s).zip(learners.get(s))) {
            let set = if r.context.is_empty() { &r.shingles } else { &r.context };
            input.send(LearnFrom { site: site.clone(), key: r.key, reader: me, learner, set: Arc::clone(set) });
        }
    }
    drop(input);
    run_to_end(worker, &shared.halt, &probe)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let learned = learned.take();
    let hasher = MinHasher::new(shared.config.permutations, shared.config.seed);
    let mut rows: Vec<SketchRow> = read
        .into_iter()
        .map(|r| {
            let template = r.site.as_ref().and_then(|s| learned.get(s)).map(|t| t.as_slice());
            let shingles = Arc::unwrap_or_clone(r.shingles);
            let context = Arc::unwrap_or_clone(r.context);
            let mut row = page_row(r.key, r.id, r.digest, shingles, context, template);
            row.minhash = hasher.sketch(&row.shingles);
            row
        })
        .collect();
    rows.sort_by_key(|r| r.key);
    let mut templates: Vec<(&str, &[u64])> = learned.iter().map(|(s, t)| (s.as_str(), t.as_slice())).collect();
    templates.sort_unstable();
    let templates_file = templates_path(&shared.work, index, peers);
    finish_part(worker, shared, "sketch", rows.len() as u64, &[], Some(&templates_file), |p| {
        files::write_templates(&templates_file, &templates)?;
        files::write_sketch(p, &rows)
    })?;
    carried.sketch = Some(rows);
    Ok(())
}

/// A candidate pair kept where it is verified: its keys (lower first), the
/// home of the page not held there, and whether the held page is the
/// lower-keyed one.
type Kept = (u64, u64, u64, bool);

/// Where a candidate pair (lower key first) is verified: at its pages'
/// home when they share one, else at the home of either, as a hash of the
/// keys picks, so that the verifying is spread over the workers even when
/// the lower keys of most pairs were read by one (pages read in runs, with
/// copies of early pages planted late).
fn verifier(a: At, b: At) -> At {
    if a.1 == b.1 || owner(a.0 ^ b.0).is_multiple_of(2) { a } else { b }
}

/// Whether part `part` of `parts` of the sketch stage reads row group `g`
/// of ingest task `t`. The ingest files' row groups, in task order, are cut
/// in `parts` runs of consecutive groups, as even as whole groups allow:
/// the reading is spread even when there are fewer files than workers, and
/// the pages of a site (consecutive in the ingest files) are mostly read by
/// one worker, which learns its template and verifies its pairs without
/// sending their shingles to another process. `offsets[t]` is the number
/// of row groups before task `t`'s file, `offsets[tasks]` their total.
fn reads_group(offsets: &[usize], t: usize, g: usize, part: usize, parts: usize) -> bool {
    let total = offsets[offsets.len() - 1];
    (part * total / parts..(part + 1) * total / parts).contains(&(offsets[t] + g))
}

/// [`reads_group`]'s offsets: the row groups before each ingest file, and
/// their total.
fn group_offsets(work: &Path, tasks: usize) -> Result<Vec<usize>, Error> {
    let mut offsets = vec![0];
    for t in 0..tasks {
        let (path, _) = ingest::paths(work, crate::Task { index: t, count: tasks });
        offsets.push(offsets[t] + pq::row_groups(&path)?);
    }
    Ok(offsets)
}

/// A page as the edges stage takes it: its site's template, when it has
/// one, dropped (`minhash` left empty).
fn page_row(
    key: u64,
    id: String,
    digest: [u8; 16],
    shingles: Vec<u64>,
    context: Vec<u64>,
    template: Option<&[u64]>,
) -> SketchRow {
    let mut f = Fingerprint::from_parts(id, DocKey(key), 0, shingles, digest, Vec::new(), 0);
    f.context = context;
    // The distributed job finds candidates by MinHash only.
    if let Some(t) = template {
        f.drop_template_shingles(t);
    }
    SketchRow { key, id: f.id, digest: f.digest, shingles: f.shingles, minhash: Vec::new() }
}

/// The templates file of part `part` of `parts` of the sketch stage.
fn templates_path(work: &Path, part: usize, parts: usize) -> PathBuf {
    stage_dir(work, "sketch").join(format!("{}.templates.parquet", marker::part_name("part", part, parts)))
}

/// Part `part` of `parts` of the sketch stage as that stage had it, each
/// row handed to `each` as it is rebuilt (in ingest order): keys and
/// MinHash from the part, each page from the ingest row groups the part
/// read, with its site's template (from the part's templates file) dropped
/// again.
fn rebuild_sketch(shared: &Shared, part: usize, parts: usize, mut each: impl FnMut(SketchRow)) -> Result<(), Error> {
    let (path, _) = part_paths(&shared.work, "sketch", part, parts);
    let mut minhashes: HashMap<u64, Vec<u32>> = files::read_sketch(&path)?.into_iter().collect();
    let templates: HashMap<String, Vec<u64>> =
        files::read_templates(&templates_path(&shared.work, part, parts))?.into_iter().collect();
    let scope = shared.config.template.as_ref().map(|t| t.scope);
    for t in 0..shared.tasks {
        let (ingest, _) = ingest::paths(&shared.work, crate::Task { index: t, count: shared.tasks });
        files::read_ingest_each(&ingest, false, &|g| reads_group(&shared.groups, t, g, part, parts), |r| {
            let Some(d) = r.doc else { return Ok(()) };
            let Some(minhash) = minhashes.remove(&r.key) else {
                return Err(Error::Format(format!(
                    "{}: no sketch of page {} ({}), which this part read from {}",
                    path.display(),
                    r.key,
                    r.id,
                    ingest.display()
                )));
            };
            let template = scope.and_then(|s| template::site_of(&r.id, s)).and_then(|s| templates.get(&s));
            let mut row = page_row(r.key, r.id, d.digest, d.shingles, d.context, template.map(Vec::as_slice));
            row.minhash = minhash;
            each(row);
            Ok(())
        })?;
    }
    match minhashes.keys().min() {
        Some(key) => Err(Error::Format(format!(
            "{}: page {key} is in none of the ingest row groups this part read",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// A page's key and its home: the worker that holds its shingles in the
/// edges stage (the worker that read it in the sketch stage, or read its
/// sketch part).
type At = (u64, u64);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DigestOf {
    digest: [u8; 16],
    at: At,
    len: u64,
}

/// What the digest groups send on to pages' homes: the first page of a
/// text (it goes on to the bands), or a page with an exact copy.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum FromDigests {
    First(At),
    Linked(u64),
}

/// A page's key in one band, as its bucket (the pages with that key in
/// that band) is first sent it: the page is `key`, at worker `home`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Slot {
    bkey: u64,
    key: u64,
    home: u32,
    band: u32,
}

/// Buckets of at most this many pages send every pair of their pages: a
/// pair that shares several bands is sent from each, and its
/// [`verifier`] drops the repeats. A larger bucket asks its pages' homes for
/// their keys in the earlier bands (a [`BandEntry`] each) and sends each
/// pair from the first band its pages share only: a bucket of 5,000
/// near-identical pages sends 12.5 million pairs instead of 40 times as
/// many. The pairs are the same either way; sending the earlier bands' keys
/// with every page's every band instead cost 20 keys an entry on average,
/// most of the edges stage's traffic between processes.
const SMALL_BUCKET: usize = 32;

/// What a bucket sends on: a pair of its pages (lower key first), or a
/// page it wants the earlier bands' keys of, with the band.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum FromBucket {
    Pair(At, At),
    Want(At, u32),
}

/// Where the bucket of key `bkey` in `band` is gathered.
fn bucket_route(band: u32, bkey: u64) -> u64 {
    route_bytes(&[u64::from(band).to_le_bytes(), bkey.to_le_bytes()].concat())
}

/// A page's key in one band of a large bucket, with its keys in the bands
/// before it: a pair is sent from the first band its two pages share.
/// `all` is one list of the page's keys in every band, shared by its
/// entries (workers of one process pass it by reference); another process
/// is sent the bands before this one only, and reads them as the list.
#[derive(Debug, Clone)]
struct BandEntry {
    band: u32,
    bkey: u64,
    at: At,
    all: Arc<Vec<u64>>,
}

impl Serialize for BandEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (self.band, self.bkey, self.at, &self.all[..self.band as usize]).serialize(s)
    }
}

impl<'de> Deserialize<'de> for BandEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (band, bkey, at, before) = <(u32, u64, At, Vec<u64>)>::deserialize(d)?;
        Ok(BandEntry { band, bkey, at, all: Arc::new(before) })
    }
}

/// A page this worker holds in the edges stage (it is the page's home):
/// its shingles are shared with the copies sent to the workers that verify
/// its pairs.
struct Held {
    id: String,
    digest: [u8; 16],
    shingles: Arc<Vec<u64>>,
    minhash: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SetFor {
    key: u64,
    dest: u64,
    id: String,
    shingles: Arc<Vec<u64>>,
}

fn edges_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
    let mut failure = None;
    // The sketch stage's part when it ran in this job (what `inputs_of`
    // would name), else the parts it names. Either way this worker is the
    // home of the pages it reads.
    let rows = match carried.sketch.take() {
        Some(rows) => rows,
        None => {
            let mut rows = read_all(
                inputs_of(worker, shared, 1),
                |(p, n)| {
                    let mut rows = Vec::new();
                    rebuild_sketch(shared, p, n, |r| rows.push(r))?;
                    Ok(rows)
                },
                &mut failure,
            );
            rows.sort_by_key(|r| r.key);
            rows
        }
    };
    let me = worker.index() as u64;
    let matching = shared.config.match_settings();
    let lowest = matching.lowest_threshold();
    let params = shared.config.lsh_params();
    let scope_of = shared.config.template.as_ref().map(|t| t.scope).unwrap_or_default();

    let local: Rc<RefCell<HashMap<u64, Held>>> = Rc::default();
    // The held pages with a confirmed pair or an exact copy: the clusters
    // stage's pages.
    let linked: Rc<RefCell<HashSet<u64>>> = Rc::default();
    let exact: Rc<RefCell<Vec<EdgeRow>>> = Rc::default();
    let pairs: Rc<RefCell<Vec<Kept>>> = Rc::default();
    let near: Rc<RefCell<Vec<EdgeRow>>> = Rc::default();
    let mut input: InputHandleVec<u64, SketchRow> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let pages = scope.input_from(&mut input);
        let held = local.clone();
        let digests = gather(
            pages,
            "own",
            move |_: &SketchRow| me,
            move |rows: Vec<SketchRow>| {
                let mut held = held.borrow_mut();
                let out: Vec<DigestOf> = rows
                    .iter()
                    .map(|r| DigestOf { digest: r.digest, at: (r.key, me), len: r.shingles.len() as u64 })
                    .collect();
                held.extend(rows.into_iter().map(|r| {
                    let page = Held { id: r.id, digest: r.digest, shingles: Arc::new(r.shingles), minhash: r.minhash };
                    (r.key, page)
                }));
                out
            },
        );
        let copies = exact.clone();
        let uniques = gather(
            digests,
            "digests",
            |d: &DigestOf| route_bytes(&d.digest),
            move |mut ds: Vec<DigestOf>| {
                ds.sort_by(|x, y| x.digest.cmp(&y.digest).then(x.at.0.cmp(&y.at.0)));
                // Each message goes to its page's home.
                let mut out = Vec::new();
                let mut copies = copies.borrow_mut();
                for run in ds.chunk_by(|x, y| x.digest == y.digest) {
                    let first = run[0].at;
                    out.push((first.1, FromDigests::First(first)));
                    if run.len() > 1 {
                        out.push((first.1, FromDigests::Linked(first.0)));
                    }
                    for c in &run[1..] {
                        copies.push(EdgeRow { a: first.0, b: c.at.0, shared: c.len, len_a: c.len, len_b: c.len });
                        out.push((c.at.1, FromDigests::Linked(c.at.0)));
                    }
                }
                out
            },
        );
        let (held, marked) = (local.clone(), linked.clone());
        // A page's slots are made as they are sent, not all first.
        let slots = gather(
            uniques,
            "uniques",
            |m: &(u64, FromDigests)| m.0,
            move |ms: Vec<(u64, FromDigests)>| {
                let mut marked = marked.borrow_mut();
                let mut firsts = Vec::with_capacity(ms.len());
                for (_, m) in ms {
                    match m {
                        FromDigests::First(at) => firsts.push(at),
                        FromDigests::Linked(k) => {
                            marked.insert(k);
                        }
                    }
                }
                firsts.into_iter().flat_map(move |(key, home)| {
                    let keys: Vec<u64> = held.borrow().get(&key).map_or_else(Vec::new, |r| {
                        (0..params.bands).map(|band| band_key(&r.minhash, params, band)).collect()
                    });
                    keys.into_iter().enumerate().map(move |(band, bkey)| Slot {
                        bkey,
                        key,
                        home: home as u32,
                        band: band as u32,
                    })
                })
            },
        );
        // Each band's slots kept apart and sorted apart: many small sorts
        // of (key in the band, page) instead of one of every slot.
        let from_buckets = gather_into(
            slots,
            "bands",
            |s: &Slot| bucket_route(s.band, s.bkey),
            vec![Vec::new(); params.bands],
            |bands: &mut Vec<Vec<(u64, u64, u32)>>, slots: &mut Vec<Slot>| {
                for s in slots.drain(..) {
                    bands[s.band as usize].push((s.bkey, s.key, s.home));
                }
            },
            |bands: Vec<Vec<(u64, u64, u32)>>| {
                let mut out = Vec::new();
                for (band, mut slots) in bands.into_iter().enumerate() {
                    slots.sort_unstable_by_key(|&(bkey, key, _)| (bkey, key));
                    for run in slots.chunk_by(|x, y| x.0 == y.0) {
                        let at = |s: &(u64, u64, u32)| (s.1, u64::from(s.2));
                        if run.len() <= SMALL_BUCKET || band == 0 {
                            for (i, a) in run.iter().enumerate() {
                                out.extend(run[i + 1..].iter().map(|b| FromBucket::Pair(at(a), at(b))));
                            }
                        } else {
                            out.extend(run.iter().map(|s| FromBucket::Want(at(s), band as u32)));
                        }
                    }
                }
                out
            },
        );
        let held = local.clone();
        let wanted = gather(
            from_buckets.clone().flat_map(|f| match f {
                FromBucket::Want(at, band) => Some((at, band)),
                FromBucket::Pair(..) => None,
            }),
            "wanted",
            |w: &(At, u32)| w.0.1,
            move |mut wants: Vec<(At, u32)>| {
                wants.sort_unstable();
                let held = held.borrow();
                let mut out = Vec::with_capacity(wants.len());
                for run in wants.chunk_by(|x, y| x.0 == y.0) {
                    let Some(r) = held.get(&run[0].0.0) else { continue };
                    let all: Arc<Vec<u64>> =
                        Arc::new((0..params.bands).map(|b| band_key(&r.minhash, params, b)).collect());
                    out.extend(run.iter().map(|&(at, band)| BandEntry {
                        band,
                        bkey: all[band as usize],
                        at,
                        all: Arc::clone(&all),
                    }));
                }
                out
            },
        );
        // In a large bucket, each pair once: from the first band its two
        // pages share, so no pair is sent again for the other bands it
        // agrees on.
        let first_band_pairs = gather(
            wanted,
            "large buckets",
            |e: &BandEntry| bucket_route(e.band, e.bkey),
            move |mut entries: Vec<BandEntry>| {
                entries.sort_unstable_by_key(|e| (e.band, e.bkey, e.at.0));
                let mut out = Vec::new();
                for run in entries.chunk_by(|x, y| (x.band, x.bkey) == (y.band, y.bkey)) {
                    let band = run[0].band as usize;
                    for (i, a) in run.iter().enumerate() {
                        for b in &run[i + 1..] {
                            if !(0..band).any(|j| a.all[j] == b.all[j]) {
                                out.push((a.at, b.at));
                            }
                        }
                    }
                }
                out
            },
        );
        let candidates = from_buckets
            .flat_map(|f| match f {
                FromBucket::Pair(a, b) => Some((a, b)),
                FromBucket::Want(..) => None,
            })
            .concat(first_band_pairs);
        let kept = pairs.clone();
        let requests = gather(
            candidates,
            "pairs",
            |&(a, b): &(At, At)| verifier(a, b).1,
            move |mut ps: Vec<(At, At)>| {
                ps.sort_unstable();
                ps.dedup();
                let here: Vec<Kept> = ps
                    .into_iter()
                    .map(|(a, b)| {
                        let a_here = verifier(a, b) == a;
                        (a.0, b.0, if a_here { b.1 } else { a.1 }, a_here)
                    })
                    .collect();
                // The page of each pair not held here.
                let mut wanted: Vec<At> =
                    here.iter().map(|&(a, b, home, a_here)| (if a_here { b } else { a }, home)).collect();
                wanted.sort_unstable();
                wanted.dedup();
                *kept.borrow_mut() = here;
                wanted.into_iter().map(move |b| (b.0, b.1, me))
            },
        );
        let held = local.clone();
        let sets = gather(
            requests,
            "requests",
            |r: &(u64, u64, u64)| r.1,
            move |mut rs: Vec<(u64, u64, u64)>| {
                rs.sort_unstable();
                rs.dedup();
                let held = held.borrow();
                rs.into_iter()
                    .filter_map(|(b, _, dest)| {
                        held.get(&b).map(|r| SetFor {
                            key: b,
                            dest,
                            id: r.id.clone(),
                            shingles: Arc::clone(&r.shingles),
                        })
                    })
                    .collect::<Vec<_>>()
            },
        );
        let (held, kept, confirmed, marked) = (local.clone(), pairs.clone(), near.clone(), linked.clone());
        let others_linked = gather(
            sets,
            "verify",
            |s: &SetFor| s.dest,
            move |sets: Vec<SetFor>| {
                let others: HashMap<u64, SetFor> = sets.into_iter().map(|s| (s.key, s)).collect();
                let held = held.borrow();
                let mut confirmed = confirmed.borrow_mut();
                let mut marked = marked.borrow_mut();
                let mut linked_elsewhere = Vec::new();
                for &(a, b, home_other, a_here) in kept.borrow().iter() {
                    let (here, other) = if a_here { (a, b) } else { (b, a) };
                    let (Some(h), Some(o)) = (held.get(&here), others.get(&other)) else { continue };
                    let ((id_a, set_a), (id_b, set_b)) = if a_here {
                        ((&h.id, &h.shingles), (&o.id, &o.shingles))
                    } else {
                        ((&o.id, &o.shingles), (&h.id, &h.shingles))
                    };
                    let sets: [&[u64]; 2] = [set_a, set_b];
                    let Some(e) = confirm_pair(matching.measure, 0, 1, &sets, lowest) else { continue };
                    if let Some(cross) = matching.cross_site_threshold {
                        let (sa, sb) = (template::site_of(id_a, scope_of), template::site_of(id_b, scope_of));
                        let needed =
                            template::pair_threshold(matching.threshold, Some(cross), sa.as_deref(), sb.as_deref());
                        if matching.measure.of(&e.overlap) < needed - 1e-12 {
                            continue;
                        }
                    }
                    let o = e.overlap;
                    confirmed.push(EdgeRow {
                        a,
                        b,
                        shared: o.shared as u64,
                        len_a: o.len_a as u64,
                        len_b: o.len_b as u64,
                    });
                    marked.insert(here);
                    linked_elsewhere.push((other, home_other));
                }
                linked_elsewhere
            },
        );
        let marked = linked.clone();
        gather(
            others_linked,
            "linked",
            |l: &(u64, u64)| l.1,
            move |ls: Vec<(u64, u64)>| {
                marked.borrow_mut().extend(ls.into_iter().map(|l| l.0));
                Vec::<()>::new()
            },
        )
        .probe_with(&probe);
    });
    let folded = shared.folded.wait();
    match folded.as_ref() {
        Some(folded) => rows.into_iter().filter(|r| !folded.contains(&r.key)).for_each(|r| input.send(r)),
        // The main thread has the error; nothing is sent, and nothing written.
        None => {
            failure.get_or_insert(Error::Worker("the light corpus could not be read".into()));
        }
    }
    drop(input);
    run_to_end(worker, &shared.halt, &probe)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let candidates = pairs.borrow().len() as u64;
    let (exact, near) = (exact.take(), near.take());
    let counts = [("candidates", candidates), ("confirmed", near.len() as u64), ("exact", exact.len() as u64)];
    let mut edges: Vec<EdgeRow> = exact.into_iter().chain(near).collect();
    edges.sort_by_key(|e| (e.a, e.b));
    finish_part(worker, shared, "edges", edges.len() as u64, &counts, None, |p| files::write_edges(p, &edges))?;
    let linked = linked.take();
    let mut held = local.take();
    held.retain(|k, _| linked.contains(k));
    carried.held = Some(held);
    Ok(())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Linked {
    /// A page and how many confirmed links this worker read for it.
    Links(u64, u64),
    /// A page and its component's label.
    Label(u64, u64),
}

/// Member, representative, label.
type Assign = (u64, u64, u64);

/// A page's digest and shingles.
type DigestAndSet = ([u8; 16], Vec<u64>);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RepSet {
    key: u64,
    dest: u64,
    digest: [u8; 16],
    shingles: Vec<u64>,
}

fn clusters_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
    let mut failure = None;
    let edge_rows = read_all(
        inputs_of(worker, shared, 2),
        |(p, n)| files::read_edges(&part_paths(&shared.work, "edges", p, n).0),
        &mut failure,
    );
    let me = worker.index() as u64;
    let min_size = shared.config.min_cluster_size.max(2);

    let assigns: Rc<RefCell<Vec<Assign>>> = Rc::default();
    let linked_keys: Rc<RefCell<HashSet<u64>>> = Rc::default();
    let linked_pages: Rc<RefCell<HashMap<u64, DigestAndSet>>> = Rc::default();
    let linked_probe = ProbeHandle::new();
    let scored: Rc<RefCell<Vec<MemberRow>>> = Rc::default();
    let mut edges_in: InputHandleVec<u64, (u64, u64)> = InputHandleVec::new();
    let mut degrees_in: InputHandleVec<u64, (u64, u64)> = InputHandleVec::new();
    let mut pages_in: InputHandleVec<u64, (u64, [u8; 16], Vec<u64>)> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let links = scope.input_from(&mut edges_in);
        let counts = scope.input_from(&mut degrees_in);
        let pages = scope.input_from(&mut pages_in);
        // Connected components: every node takes the lowest label among its
        // neighbours' until nothing changes.
        let both: VecCollection<'_, u64, (u64, u64)> =
            links.clone().flat_map(|(a, b)| [((a, b), 0u64, 1isize), ((b, a), 0u64, 1isize)]).as_collection();
        let nodes = both.clone().map(|(a, _)| (a, a));
        let labels = nodes.clone().iterate(|inner, labels| {
            let both = both.enter(inner);
            let nodes = nodes.enter(inner);
            labels.join_map(both, |_node, label, next| (*next, *label)).concat(nodes).reduce(|_node, labels, out| {
                out.push((*labels[0].0, 1isize));
            })
        });
        let labelled = labels
            .consolidate()
            .inner
            .flat_map(|((node, label), _time, diff)| (diff > 0).then_some(Linked::Label(node, label)));
        let degrees = counts.clone().map(|(k, n)| Linked::Links(k, n));
        let linked = gather(
            degrees.concat(labelled),
            "degrees",
            |m: &Linked| match m {
                Linked::Links(k, _) | Linked::Label(k, _) => owner(*k),
            },
            move |ms: Vec<Linked>| {
                let mut degree: HashMap<u64, u64> = HashMap::new();
                let mut labels = Vec::new();
                for m in ms {
                    match m {
                        Linked::Links(k, n) => *degree.entry(k).or_default() += n,
                        Linked::Label(k, l) => labels.push((l, k)),
                    }
                }
                labels.into_iter().map(|(l, k)| (l, k, degree.get(&k).copied().unwrap_or(0))).collect::<Vec<_>>()
            },
        );
        let assigned = gather(
            linked,
            "components",
            |t: &(u64, u64, u64)| owner(t.0),
            move |mut ts: Vec<(u64, u64, u64)>| {
                ts.sort_unstable();
                let mut out = Vec::new();
                for run in ts.chunk_by(|x, y| x.0 == y.0) {
                    if run.len() < min_size {
                        continue;
                    }
                    // Most links first; of equals, the lowest key.
                    let rep = run.iter().max_by(|x, y| x.2.cmp(&y.2).then(y.1.cmp(&x.1))).expect("never empty").1;
                    out.extend(run.iter().map(|&(label, key, _)| (key, rep, label)));
                }
                out
            },
        );
        // Only pages with a confirmed pair can be in a cluster: their owners
        // learn which they are (`linked`), then keep those pages as the
        // pages arrive. The members' gather waits for the pages.
        let keys = linked_keys.clone();
        gather(
            counts.clone(),
            "linked",
            |c: &(u64, u64)| owner(c.0),
            move |cs: Vec<(u64, u64)>| {
                keys.borrow_mut().extend(cs.into_iter().map(|c| c.0));
                Vec::<()>::new()
            },
        )
        .probe_with(&linked_probe);
        let (keys, held) = (linked_keys.clone(), linked_pages.clone());
        let stored = consume(
            pages,
            "pages",
            |p: &(u64, [u8; 16], Vec<u64>)| owner(p.0),
            move |(k, d, s): (u64, [u8; 16], Vec<u64>)| {
                if keys.borrow().contains(&k) {
                    held.borrow_mut().insert(k, (d, s));
                }
            },
        );
        let kept = assigns.clone();
        let requests = gather(
            assigned.concat(stored),
            "members",
            |a: &Assign| owner(a.0),
            move |assigns: Vec<Assign>| {
                let reps: BTreeSet<u64> = assigns.iter().map(|a| a.1).collect();
                *kept.borrow_mut() = assigns;
                reps.into_iter().map(move |r| (r, me))
            },
        );
        let held = linked_pages.clone();
        let sets = gather(
            requests,
            "representatives",
            |r: &(u64, u64)| owner(r.0),
            move |mut asks: Vec<(u64, u64)>| {
                asks.sort_unstable();
                asks.dedup();
                let held = held.borrow();
                asks.into_iter()
                    .filter_map(|(r, dest)| {
                        held.get(&r).map(|(d, s)| RepSet { key: r, dest, digest: *d, shingles: s.clone() })
                    })
                    .collect::<Vec<_>>()
            },
        );
        let (kept, held, out) = (assigns.clone(), linked_pages.clone(), scored.clone());
        gather(
            sets,
            "score",
            |s: &RepSet| s.dest,
            move |sets: Vec<RepSet>| {
                let reps: HashMap<u64, RepSet> = sets.into_iter().map(|s| (s.key, s)).collect();
                let held = held.borrow();
                let mut out = out.borrow_mut();
                for &(key, rep, label) in kept.borrow().iter() {
                    let (Some((digest, shingles)), Some(r)) = (held.get(&key), reps.get(&rep)) else { continue };
                    let o = Overlap::of(shingles, &r.shingles);
                    out.push(MemberRow {
                        label,
                        representative: rep,
                        key,
                        jaccard: o.jaccard(),
                        containment: o.containment_a_in_b(),
                        exact: *digest == r.digest,
                    });
                }
                Vec::<()>::new()
            },
        )
        .probe_with(&probe);
    });
    // The components of this worker's edges are those of a spanning forest
    // of them, and its degree counts are sums: only those go on.
    let mut degree: HashMap<u64, u64> = HashMap::new();
    let mut forest = Forest::default();
    for e in &edge_rows {
        *degree.entry(e.a).or_default() += 1;
        *degree.entry(e.b).or_default() += 1;
        if forest.union(e.a, e.b) {
            edges_in.send((e.a, e.b));
        }
    }
    drop(edge_rows);
    for (k, n) in degree {
        degrees_in.send((k, n));
    }
    drop(edges_in);
    drop(degrees_in);
    // Sent as they are read, once every owner knows which pages to keep.
    run_to_end(worker, &shared.halt, &linked_probe)?;
    match carried.held.take() {
        // The edges stage kept the linked pages it held: each goes to its
        // owner.
        Some(held) => {
            for (k, h) in held {
                pages_in.send((k, h.digest, Arc::unwrap_or_clone(h.shingles)));
            }
        }
        None => {
            // The sketch parts the edges stage would read.
            for (p, n) in inputs_of(worker, shared, 1) {
                if let Err(e) = rebuild_sketch(shared, p, n, |r| pages_in.send((r.key, r.digest, r.shingles))) {
                    failure.get_or_insert(e);
                    break;
                }
            }
        }
    }
    drop(pages_in);
    run_to_end(worker, &shared.halt, &probe)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let mut rows = scored.take();
    if rows.len() != assigns.borrow().len() {
        return Err(Error::Worker(format!(
            "worker {}: {} cluster members scored of {}",
            worker.index(),
            rows.len(),
            assigns.borrow().len()
        )));
    }
    rows.sort_by_key(|r| r.key);
    finish_part(worker, shared, "clusters", rows.len() as u64, &[], None, |p| files::write_members(p, &rows))
}

/// Union-find over keys: which edges join two trees.
#[derive(Default)]
struct Forest {
    parent: HashMap<u64, u64>,
}

impl Forest {
    fn find(&mut self, k: u64) -> u64 {
        let mut root = k;
        while let Some(&p) = self.parent.get(&root)
            && p != root
        {
            root = p;
        }
        // Path compression.
        let mut at = k;
        while at != root {
            let next = self.parent.insert(at, root).unwrap_or(root);
            at = next;
        }
        root
    }

    /// Joins the trees of `a` and `b`; false when they were one already.
    fn union(&mut self, a: u64, b: u64) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        self.parent.insert(ra.max(rb), ra.min(rb));
        self.parent.entry(ra.min(rb)).or_insert(ra.min(rb));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_group_is_read_by_one_part_in_runs_as_even_as_whole_groups_allow() {
        for groups in [vec![0], vec![1], vec![7], vec![3, 0, 5], vec![1, 1, 1, 1], vec![50, 49]] {
            let mut offsets = vec![0];
            for g in &groups {
                offsets.push(offsets[offsets.len() - 1] + g);
            }
            for parts in 1..=6 {
                let mut read_by = Vec::new();
                for (t, &n) in groups.iter().enumerate() {
                    for g in 0..n {
                        let readers: Vec<usize> =
                            (0..parts).filter(|&p| reads_group(&offsets, t, g, p, parts)).collect();
                        assert_eq!(readers.len(), 1, "{groups:?}, {parts} parts: group {g} of file {t}");
                        read_by.push(readers[0]);
                    }
                }
                assert!(read_by.windows(2).all(|w| w[0] <= w[1]), "{groups:?}, {parts} parts: {read_by:?}");
                let counts: Vec<usize> = (0..parts).map(|p| read_by.iter().filter(|&&r| r == p).count()).collect();
                assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1, "{counts:?}");
            }
        }
    }

    #[test]
    fn a_pair_is_verified_at_a_home_of_its_pages_and_split_ones_are_spread() {
        let mut at_lower = 0;
        for a in 0..1000u64 {
            let b = a + 1 + a % 7;
            assert_eq!(verifier((a, 3), (b, 3)), (a, 3));
            let v = verifier((a, 0), (b, 1));
            assert!(v == (a, 0) || v == (b, 1));
            at_lower += usize::from(v == (a, 0));
        }
        assert!((400..600).contains(&at_lower), "{at_lower} of 1000 split pairs at the lower key's home");
    }
}
