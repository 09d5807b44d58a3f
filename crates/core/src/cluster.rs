//! Clusters: connected components of confirmed pairs (union-find), split
//! under containment so that every member is contained in its
//! representative.
//!
//! Everything here is ordered by input position, so cluster ids, member
//! order and representatives are the same on every run and thread count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::unionfind::UnionFind;

use crate::verify::Overlap;

/// One cluster of documents, by index into the fingerprinted documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Members in input order.
    pub members: Vec<u32>,
    /// The member with the most confirmed links inside the cluster (ties go
    /// to the earliest in input order): the page most like all the others;
    /// under containment, the page that contains every other member.
    pub representative: u32,
}

/// Groups `n` documents linked by `edges` into clusters of at least
/// `min_size` members, ordered by their first member.
///
/// `order[i]` is document `i`'s place in the input (its `DocKey`, or its
/// position): ties go to the lower.
pub fn components<K: Ord + Copy>(n: usize, edges: &[(u32, u32)], order: &[K], min_size: usize) -> Vec<Group> {
    let mut uf = UnionFind::<u32>::new(n);
    let mut degree = vec![0u32; n];
    for &(a, b) in edges {
        uf.union(a, b);
        degree[a as usize] += 1;
        degree[b as usize] += 1;
    }
    let mut by_root: std::collections::HashMap<u32, Vec<u32>> = std::collections::HashMap::new();
    for i in 0..n as u32 {
        by_root.entry(uf.find(i)).or_default().push(i);
    }
    let mut groups: Vec<Group> = by_root
        .into_values()
        .filter(|m| m.len() >= min_size.max(2))
        .map(|mut members| {
            members.sort_unstable_by_key(|&i| order[i as usize]);
            let representative = *members
                .iter()
                .max_by(|&&x, &&y| {
                    degree[x as usize].cmp(&degree[y as usize]).then(order[y as usize].cmp(&order[x as usize]))
                })
                .expect("clusters are never empty");
            Group { members, representative }
        })
        .collect();
    groups.sort_unstable_by_key(|g| order[g.members[0] as usize]);
    groups
}

/// Groups `n` documents linked by `edges` confirmed by containment into
/// clusters of at least `min_size` members in which every member is
/// contained in the representative, ordered by their first member.
///
/// Containment is neither symmetric nor transitive, so a connected component
/// can chain pages that share nothing (two functions' pages that each hold
/// a doc site's common intro). An edge says the smaller page of its pair is
/// contained in the larger (that is what the measure tests; pages of one
/// size, each in the other). Within each component the page that contains
/// the most pages not yet placed (ties to the lower `order`) becomes a
/// representative, with the pages it contains; the rest go on the same way.
/// Pages with the very same shingles (exact copies) go together: a page
/// contained in one is contained in the other, whichever of them an edge
/// names. The answer depends on the edges as a set, not on their order.
pub fn contained<K: Ord + Copy>(n: usize, edges: &[(u32, u32, Overlap)], order: &[K], min_size: usize) -> Vec<Group> {
    let mut twins = UnionFind::<u32>::new(n);
    for &(a, b, o) in edges {
        if o.shared == o.len_a && o.shared == o.len_b {
            twins.union(a, b);
        }
    }
    let class: Vec<u32> = (0..n as u32).map(|i| twins.find(i)).collect();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); n];
    for i in 0..n as u32 {
        members[class[i as usize] as usize].push(i);
    }
    for m in &mut members {
        m.sort_unstable_by_key(|&i| order[i as usize]);
    }
    // By class: the classes it contains, and those it is contained in.
    let mut holds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut held_by: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b, o) in edges {
        let (ca, cb) = (class[a as usize], class[b as usize]);
        if ca == cb {
            continue;
        }
        if o.len_a <= o.len_b {
            holds[cb as usize].push(ca);
            held_by[ca as usize].push(cb);
        }
        if o.len_b <= o.len_a {
            holds[ca as usize].push(cb);
            held_by[cb as usize].push(ca);
        }
    }
    for list in holds.iter_mut().chain(held_by.iter_mut()) {
        list.sort_unstable();
        list.dedup();
    }
    let weight = |c: u32| members[c as usize].len();
    let first = |c: u32| order[members[c as usize][0] as usize];
    let mut score: Vec<usize> = (0..n as u32).map(|c| holds[c as usize].iter().map(|&d| weight(d)).sum()).collect();
    let mut placed = vec![false; n];
    let mut heap: BinaryHeap<(usize, Reverse<K>, u32)> =
        (0..n as u32).filter(|&c| class[c as usize] == c).map(|c| (score[c as usize], Reverse(first(c)), c)).collect();
    let mut groups = Vec::new();
    while let Some((s, _, c)) = heap.pop() {
        if placed[c as usize] || s != score[c as usize] {
            continue;
        }
        let taken: Vec<u32> =
            std::iter::once(c).chain(holds[c as usize].iter().copied().filter(|&d| !placed[d as usize])).collect();
        for &p in &taken {
            placed[p as usize] = true;
        }
        for &p in &taken {
            for &q in &held_by[p as usize] {
                if !placed[q as usize] {
                    score[q as usize] -= weight(p);
                    heap.push((score[q as usize], Reverse(first(q)), q));
                }
            }
        }
        let mut group: Vec<u32> = taken.iter().flat_map(|&p| members[p as usize].iter().copied()).collect();
        if group.len() >= min_size.max(2) {
            group.sort_unstable_by_key(|&i| order[i as usize]);
            groups.push(Group { members: group, representative: members[c as usize][0] });
        }
    }
    groups.sort_unstable_by_key(|g| order[g.members[0] as usize]);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_ordered_and_representatives_are_central() {
        // 0-1, 1-2, 1-3 (1 is the hub), 4-5, 6 alone.
        let order: Vec<usize> = (0..7).collect();
        let g = components(7, &[(4, 5), (1, 3), (0, 1), (1, 2)], &order, 2);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].members, [0, 1, 2, 3]);
        assert_eq!(g[0].representative, 1);
        assert_eq!(g[1].members, [4, 5]);
        assert_eq!(g[1].representative, 4, "ties go to the earliest");
        assert!(components(7, &[(4, 5), (0, 1), (1, 2)], &order, 3).iter().all(|g| g.members.len() >= 3));
    }
}
