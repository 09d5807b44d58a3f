//! The `clusters` stage: connected components of the confirmed pairs on
//! differential dataflow, labelled by their lowest key; the representative
//! is the member with the most confirmed links (ties to the lower key), and
//! each member is scored against it.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use differential_dataflow::AsCollection;
use differential_dataflow::VecCollection;
use differential_dataflow::operators::Iterate;
use serde::{Deserialize, Serialize};
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::{Input, Map};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use webdup_core::verify::Overlap;

use super::sketch::rebuild_sketch;
use super::{Carried, Shared, Worker, finish_part, inputs_of, read_all};
use crate::Error;
use crate::files::{self, EdgeRow, MemberRow};
use crate::halt::run_to_end;
use crate::ops::{consume, gather, owner};
use crate::parts::part_paths;

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

pub(super) fn clusters_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
    let mut failure = None;
    let edge_rows = read_all(
        inputs_of(worker, shared, 2),
        |(p, n)| files::read_edges(&part_paths(&shared.work, "edges", p, n).0),
        &mut failure,
    );
    let me = worker.index() as u64;
    let min_size = shared.config.matching.min_cluster_size.max(2);

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
            with_degrees,
        );
        let assigned = gather(linked, "components", |t: &(u64, u64, u64)| owner(t.0), move |ts| assign(ts, min_size));
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
                score(&kept.borrow(), &held.borrow(), &reps, &mut out.borrow_mut());
                Vec::<()>::new()
            },
        )
        .probe_with(&probe);
    });
    send_edges(edge_rows, edges_in, degrees_in);
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

/// The components of this worker's edges are those of a spanning forest
/// of them, and its degree counts are sums: only those go on.
fn send_edges(
    edge_rows: Vec<EdgeRow>,
    mut edges_in: InputHandleVec<u64, (u64, u64)>,
    mut degrees_in: InputHandleVec<u64, (u64, u64)>,
) {
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
}

/// Each labelled page of this worker with its degree: the links read for
/// it by every worker, summed; as (label, page, degree).
fn with_degrees(ms: Vec<Linked>) -> Vec<(u64, u64, u64)> {
    let mut degree: HashMap<u64, u64> = HashMap::new();
    let mut labels = Vec::new();
    for m in ms {
        match m {
            Linked::Links(k, n) => *degree.entry(k).or_default() += n,
            Linked::Label(k, l) => labels.push((l, k)),
        }
    }
    labels.into_iter().map(|(l, k)| (l, k, degree.get(&k).copied().unwrap_or(0))).collect()
}

/// The members of the components gathered here (as (label, page, degree))
/// with at least `min_size` pages, each with its component's
/// representative: the page with the most links; of equals, the lowest key.
fn assign(mut ts: Vec<(u64, u64, u64)>, min_size: usize) -> Vec<Assign> {
    ts.sort_unstable();
    let mut out = Vec::new();
    for run in ts.chunk_by(|x, y| x.0 == y.0) {
        if run.len() < min_size {
            continue;
        }
        let rep = run.iter().max_by(|x, y| x.2.cmp(&y.2).then(y.1.cmp(&x.1))).expect("never empty").1;
        out.extend(run.iter().map(|&(label, key, _)| (key, rep, label)));
    }
    out
}

/// Each member assigned here scored against its representative's set.
fn score(assigns: &[Assign], held: &HashMap<u64, DigestAndSet>, reps: &HashMap<u64, RepSet>, out: &mut Vec<MemberRow>) {
    for &(key, rep, label) in assigns {
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
