//! The `sketch` stage: each site's template learned where most of its
//! pages were read, sent back to the workers that read them, dropped from
//! the pages, and the pages sketched (MinHash) where they were read.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::vec::Input;
use timely::dataflow::{InputHandleVec, ProbeHandle};

use webdup::DocKey;
use webdup::engine::Fingerprint;
use webdup_core::sketch::MinHasher;
use webdup_core::template;

use super::{Carried, Shared, Worker, finish_part, read_all};
use crate::Error;
use crate::files::{self, SketchRow};
use crate::halt::{Halt, run_to_end};
use crate::ingest;
use crate::marker;
use crate::ops::{gather, route_bytes};
use crate::parquet_io as pq;
use crate::parts::{part_paths, stage_dir};

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
    page_digest: Option<[u8; 16]>,
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

pub(super) fn sketch_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
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
    let template = shared.config.fingerprint.template.clone();
    let read: Vec<Read> = rows
        .into_iter()
        .filter_map(|r| {
            let d = r.doc?;
            Some(Read {
                site: template.as_ref().and_then(|t| shared.site_of(r.key, &r.id, t.scope)),
                key: r.key,
                id: r.id,
                digest: d.digest,
                page_digest: d.page_digest,
                shingles: Arc::new(d.shingles),
                context: Arc::new(d.context),
            })
        })
        .collect();
    let min_pages = shared.config.fingerprint.template.as_ref().map_or(usize::MAX, |t| t.min_pages);
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
        let template = shared.config.fingerprint.template.clone();
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
    let hasher = MinHasher::new(shared.config.fingerprint.permutations, shared.config.fingerprint.seed);
    let mut rows: Vec<SketchRow> = read
        .into_iter()
        .map(|r| {
            let template = r.site.as_ref().and_then(|s| learned.get(s)).map(|t| t.as_slice());
            let shingles = Arc::unwrap_or_clone(r.shingles);
            let context = Arc::unwrap_or_clone(r.context);
            let mut row = page_row(r.key, r.id, (r.digest, r.page_digest), shingles, context, template);
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

/// Whether part `part` of `parts` of the sketch stage reads row group `g`
/// of ingest task `t`. The ingest files' row groups, in task order, are cut
/// in `parts` runs of consecutive groups, as even as whole groups allow:
/// the reading is spread even when there are fewer files than workers, and
/// the pages of a site (consecutive in the ingest files) are mostly read by
/// one worker, which learns its template and verifies its pairs without
/// sending their shingles to another process. `offsets[t]` is the number
/// of row groups before task `t`'s file, `offsets[tasks]` their total.
pub(super) fn reads_group(offsets: &[usize], t: usize, g: usize, part: usize, parts: usize) -> bool {
    let total = offsets[offsets.len() - 1];
    (part * total / parts..(part + 1) * total / parts).contains(&(offsets[t] + g))
}

/// [`reads_group`]'s offsets: the row groups before each ingest file, and
/// their total.
pub(super) fn group_offsets(work: &Path, tasks: usize) -> Result<Vec<usize>, Error> {
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
    (digest, page_digest): ([u8; 16], Option<[u8; 16]>),
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
    SketchRow {
        key,
        id: f.id,
        digest: f.digest,
        page_digest,
        shingles: f.shingles,
        minhash: Vec::new(),
        template_only: f.template_only,
    }
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
pub(super) fn rebuild_sketch(
    shared: &Shared,
    part: usize,
    parts: usize,
    mut each: impl FnMut(SketchRow),
) -> Result<(), Error> {
    let (path, _) = part_paths(&shared.work, "sketch", part, parts);
    let mut minhashes: HashMap<u64, Vec<u32>> = files::read_sketch(&path)?.into_iter().collect();
    let templates: HashMap<String, Vec<u64>> =
        files::read_templates(&templates_path(&shared.work, part, parts))?.into_iter().collect();
    let scope = shared.config.fingerprint.template.as_ref().map(|t| t.scope);
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
            let template = scope.and_then(|s| shared.site_of(r.key, &r.id, s)).and_then(|s| templates.get(&s));
            let digests = (d.digest, d.page_digest);
            let mut row = page_row(r.key, r.id, digests, d.shingles, d.context, template.map(Vec::as_slice));
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
}
