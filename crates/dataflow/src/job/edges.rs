//! The `edges` stage: exact copies grouped by digest, MinHash band keys
//! exchanged by band, and every candidate pair confirmed by exact Jaccard
//! (and the cross-site rule) at a home of its pages.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::core::Concat;
use timely::dataflow::operators::vec::{Input, Map};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use webdup::Config;
use webdup_core::candidates::lsh::{LshParams, band_key};
use webdup_core::dedup::CopyOf;
use webdup_core::settings::MatchSettings;
use webdup_core::site::Site;
use webdup_core::template::{self, TemplateScope};
use webdup_core::verify::confirm_pair;

use super::sketch::rebuild_sketch;
use super::{Carried, Shared, Worker, finish_part, inputs_of, read_all};
use crate::Error;
use crate::files::{self, EdgeRow, SketchRow};
use crate::halt::run_to_end;
use crate::ops::{gather, gather_into, owner, route_bytes};

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

/// A page's key and its home: the worker that holds its shingles in the
/// edges stage (the worker that read it in the sketch stage, or read its
/// sketch part).
type At = (u64, u64);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DigestOf {
    digest: [u8; 16],
    page_digest: Option<[u8; 16]>,
    at: At,
    len: u64,
}

impl DigestOf {
    /// What this page's copies share, as the core's clustering says.
    fn copy_of(&self) -> Option<CopyOf> {
        CopyOf::new(self.digest, self.len as usize, self.page_digest)
    }
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
pub(super) struct Held {
    id: String,
    pub(super) digest: [u8; 16],
    pub(super) page_digest: Option<[u8; 16]>,
    pub(super) shingles: Arc<Vec<u64>>,
    minhash: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SetFor {
    key: u64,
    dest: u64,
    id: String,
    shingles: Arc<Vec<u64>>,
}

/// The test a candidate pair passes to become an edge: its exact
/// similarity at least the lowest threshold, then the cross-site rule.
struct Confirm {
    matching: MatchSettings,
    lowest: f64,
    scope: TemplateScope,
    sites: Arc<HashMap<u64, Site>>,
}

impl Confirm {
    fn of(config: &Config, sites: &Arc<HashMap<u64, Site>>) -> Confirm {
        let matching = config.matching.clone();
        let lowest = matching.lowest_threshold();
        let scope = config.fingerprint.template.as_ref().map(|t| t.scope).unwrap_or_default();
        Confirm { matching, lowest, scope, sites: Arc::clone(sites) }
    }

    /// The edge between `a` and `b` (lower key first), each with its id and
    /// shingles, when the pair is confirmed.
    fn edge(&self, (a, id_a, set_a): (u64, &str, &[u64]), (b, id_b, set_b): (u64, &str, &[u64])) -> Option<EdgeRow> {
        let matching = &self.matching;
        let e = confirm_pair(matching.measure, 0, 1, &[set_a, set_b], self.lowest)?;
        if let Some(cross) = matching.cross_site_threshold {
            let site = |key: u64, id: &str| {
                self.sites.get(&key).map(|s| s.name.clone()).or_else(|| template::site_of(id, self.scope))
            };
            let (sa, sb) = (site(a, id_a), site(b, id_b));
            let needed = template::pair_threshold(matching.threshold, Some(cross), sa.as_deref(), sb.as_deref());
            if matching.measure.of(&e.overlap) < needed - 1e-12 {
                return None;
            }
        }
        let o = e.overlap;
        Some(EdgeRow { a, b, shared: o.shared as u64, len_a: o.len_a as u64, len_b: o.len_b as u64 })
    }
}

pub(super) fn edges_stage(worker: &mut Worker, shared: &Shared, carried: &mut Carried) -> Result<(), Error> {
    let mut failure = None;
    let rows = sketch_rows(worker, shared, carried, &mut failure);
    let me = worker.index() as u64;
    let params = shared.config.lsh_params();
    let confirm = Confirm::of(&shared.config, &shared.sites);

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
        let digests = gather(pages, "own", move |_: &SketchRow| me, move |rows| hold(rows, me, &mut held.borrow_mut()));
        let copies = exact.clone();
        let uniques = gather(
            digests,
            "digests",
            |d: &DigestOf| route_bytes(&d.digest),
            move |ds| first_of_each_text(ds, &mut copies.borrow_mut()),
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
                    let keys = held.borrow().get(&key).map_or_else(Vec::new, |r| band_keys(&r.minhash, params));
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
            from_bands,
        );
        let held = local.clone();
        let wanted = gather(
            from_buckets.clone().flat_map(|f| match f {
                FromBucket::Want(at, band) => Some((at, band)),
                FromBucket::Pair(..) => None,
            }),
            "wanted",
            |w: &(At, u32)| w.0.1,
            move |wants| band_entries(wants, &held.borrow(), params),
        );
        let first_band_pairs =
            gather(wanted, "large buckets", |e: &BandEntry| bucket_route(e.band, e.bkey), first_band_pairs);
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
            move |ps| {
                let (here, wanted) = keep_here(ps);
                *kept.borrow_mut() = here;
                wanted.into_iter().map(move |b| (b.0, b.1, me))
            },
        );
        let held = local.clone();
        let sets = gather(requests, "requests", |r: &(u64, u64, u64)| r.1, move |rs| sets_for(rs, &held.borrow()));
        let (held, kept, confirmed, marked) = (local.clone(), pairs.clone(), near.clone(), linked.clone());
        let others_linked = gather(
            sets,
            "verify",
            |s: &SetFor| s.dest,
            move |sets: Vec<SetFor>| {
                let others: HashMap<u64, SetFor> = sets.into_iter().map(|s| (s.key, s)).collect();
                let found = verify(&kept.borrow(), &held.borrow(), &others, &confirm);
                marked.borrow_mut().extend(found.iter().map(|f| f.here));
                confirmed.borrow_mut().extend(found.iter().map(|f| f.edge));
                found.into_iter().map(|f| f.other).collect::<Vec<_>>()
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

/// The pages this worker is the home of in the edges stage: the sketch
/// stage's part when it ran in this job (what `inputs_of` would name),
/// else the parts `inputs_of` names, rebuilt; in key order.
fn sketch_rows(worker: &Worker, shared: &Shared, carried: &mut Carried, failure: &mut Option<Error>) -> Vec<SketchRow> {
    if let Some(rows) = carried.sketch.take() {
        return rows;
    }
    let mut rows = read_all(
        inputs_of(worker, shared, 1),
        |(p, n)| {
            let mut rows = Vec::new();
            rebuild_sketch(shared, p, n, |r| rows.push(r))?;
            Ok(rows)
        },
        failure,
    );
    rows.sort_by_key(|r| r.key);
    rows
}

/// Keeps the pages read here in `held` (this worker is their home) and
/// sends each page's digest on.
fn hold(mut rows: Vec<SketchRow>, me: u64, held: &mut HashMap<u64, Held>) -> Vec<DigestOf> {
    // A page with nothing but its site's template takes part in nothing.
    rows.retain(|r| !r.template_only);
    let out: Vec<DigestOf> = rows
        .iter()
        .map(|r| DigestOf {
            digest: r.digest,
            page_digest: r.page_digest,
            at: (r.key, me),
            len: r.shingles.len() as u64,
        })
        .collect();
    held.extend(rows.into_iter().map(|r| {
        let page = Held {
            id: r.id,
            digest: r.digest,
            page_digest: r.page_digest,
            shingles: Arc::new(r.shingles),
            minhash: r.minhash,
        };
        (r.key, page)
    }));
    out
}

/// The copies of one text (one [`CopyOf`]), lowest key first: an
/// exact-copy edge from the first to each other one (into `copies`), and a
/// message to each page's home: the first goes on to the bands, and every
/// page with a copy is linked. A page too thin to have copies but
/// identical ones, and of unknown bytes, is a text of its own.
fn first_of_each_text(ds: Vec<DigestOf>, copies: &mut Vec<EdgeRow>) -> Vec<(u64, FromDigests)> {
    let mut ds: Vec<(Option<CopyOf>, DigestOf)> = ds.into_iter().map(|d| (d.copy_of(), d)).collect();
    ds.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.at.0.cmp(&y.1.at.0)));
    let mut out = Vec::new();
    for run in ds.chunk_by(|x, y| x.0.is_some() && x.0 == y.0) {
        let run: Vec<&DigestOf> = run.iter().map(|(_, d)| d).collect();
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
}

/// A page's key in every band.
fn band_keys(minhash: &[u32], params: LshParams) -> Vec<u64> {
    (0..params.bands).map(|band| band_key(minhash, params, band)).collect()
}

/// What each band's buckets (slots as (key in the band, page, home)) send
/// on: every pair of a small bucket (and of every bucket of the first
/// band, where no earlier band can have sent a pair), and the pages of a
/// large one asked for their earlier bands' keys.
fn from_bands(bands: Vec<Vec<(u64, u64, u32)>>) -> Vec<FromBucket> {
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
}

/// The entries of the held pages large buckets asked for, each with the
/// page's keys in every band.
fn band_entries(mut wants: Vec<(At, u32)>, held: &HashMap<u64, Held>, params: LshParams) -> Vec<BandEntry> {
    wants.sort_unstable();
    let mut out = Vec::with_capacity(wants.len());
    for run in wants.chunk_by(|x, y| x.0 == y.0) {
        let Some(r) = held.get(&run[0].0.0) else { continue };
        let all = Arc::new(band_keys(&r.minhash, params));
        out.extend(run.iter().map(|&(at, band)| BandEntry {
            band,
            bkey: all[band as usize],
            at,
            all: Arc::clone(&all),
        }));
    }
    out
}

/// In a large bucket, each pair once: from the first band its two pages
/// share, so no pair is sent again for the other bands it agrees on.
fn first_band_pairs(mut entries: Vec<BandEntry>) -> Vec<(At, At)> {
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
}

/// The candidate pairs verified here, each once, and the pages of theirs
/// not held here (with their homes), each once.
fn keep_here(mut ps: Vec<(At, At)>) -> (Vec<Kept>, Vec<At>) {
    ps.sort_unstable();
    ps.dedup();
    let here: Vec<Kept> = ps
        .into_iter()
        .map(|(a, b)| {
            let a_here = verifier(a, b) == a;
            (a.0, b.0, if a_here { b.1 } else { a.1 }, a_here)
        })
        .collect();
    let mut wanted: Vec<At> = here.iter().map(|&(a, b, home, a_here)| (if a_here { b } else { a }, home)).collect();
    wanted.sort_unstable();
    wanted.dedup();
    (here, wanted)
}

/// A pair confirmed here: its edge, its held page, and its other page with
/// that page's home.
struct Confirmed {
    edge: EdgeRow,
    here: u64,
    other: (u64, u64),
}

/// The pairs kept here that are confirmed, in the order they were kept:
/// each with its held page from `held` and its other page from `others`.
fn verify(
    kept: &[Kept],
    held: &HashMap<u64, Held>,
    others: &HashMap<u64, SetFor>,
    confirm: &Confirm,
) -> Vec<Confirmed> {
    let mut found = Vec::new();
    for &(a, b, home_other, a_here) in kept {
        let (here, other) = if a_here { (a, b) } else { (b, a) };
        let (Some(h), Some(o)) = (held.get(&here), others.get(&other)) else { continue };
        let h = (here, h.id.as_str(), h.shingles.as_slice());
        let o = (other, o.id.as_str(), o.shingles.as_slice());
        let Some(edge) = (if a_here { confirm.edge(h, o) } else { confirm.edge(o, h) }) else { continue };
        found.push(Confirmed { edge, here, other: (other, home_other) });
    }
    found
}

/// The shingles of held pages asked for as (page, home, asking worker),
/// each sent once to each worker that asked.
fn sets_for(mut rs: Vec<(u64, u64, u64)>, held: &HashMap<u64, Held>) -> Vec<SetFor> {
    rs.sort_unstable();
    rs.dedup();
    rs.into_iter()
        .filter_map(|(b, _, dest)| {
            held.get(&b).map(|r| SetFor { key: b, dest, id: r.id.clone(), shingles: Arc::clone(&r.shingles) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
