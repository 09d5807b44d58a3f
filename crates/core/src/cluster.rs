//! Clusters: connected components of confirmed pairs (union-find).
//!
//! Everything here is ordered by input position, so cluster ids, member
//! order and representatives are the same on every run and thread count.

use petgraph::unionfind::UnionFind;

/// One cluster of documents, by index into the fingerprinted documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Members in input order.
    pub members: Vec<u32>,
    /// The member with the most confirmed links inside the cluster (ties go
    /// to the earliest in input order): the page most like all the others.
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
