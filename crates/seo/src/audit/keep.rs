//! Which URL of each cluster to keep, why the cluster exists, and the
//! site-level views of both: clusters that differ the same way on one line,
//! and the parameters that make duplicates (see [`crate::causes`]).
//!
//! The URL to keep is the cluster's representative: every member's
//! similarity is measured against it.

use serde::Serialize;

use super::canonical::{StatusIndex, url_key};
use super::{AuditCluster, AuditMember, PageRow, round};
use crate::causes::{self, Cause, Member, ParameterRow};
use webdup_core::fingerprint::Fingerprint;
use webdup_core::sets::Sets;
use webdup_core::verify::Overlap;

/// The URL a cluster's other members should point to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptUrl {
    pub url: String,
    /// "declared canonical of 3 members; 14 internal links".
    pub reason: String,
}

/// Clusters whose URLs differ the same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RollupRow {
    pub clusters: usize,
    /// Pages in those clusters.
    pub pages: usize,
    /// The causes, in one line.
    pub cause: String,
    pub causes: Vec<Cause>,
    /// The URL kept in the first of those clusters.
    pub example_keep: String,
}

/// What [`choose`] decided for one cluster.
pub(super) struct Choice {
    pub keep: KeptUrl,
    /// The kept member's position, when the URL kept is a member.
    pub member: Option<usize>,
    pub causes: Vec<Cause>,
}

/// Picks the URL to keep among `members` ([`causes::url_to_keep`]: a
/// declared canonical the members agree on, else links, parameters,
/// length) and names what differs between it and the others. A canonical
/// naming a URL that answered other than 200 or is noindex is no
/// declaration to follow.
pub(super) fn choose(
    members: &[AuditMember],
    pages: &[PageRow],
    statuses: &StatusIndex,
    inlinks: impl Fn(&str) -> Option<u32>,
) -> Choice {
    let noindex_at: std::collections::HashMap<String, bool> =
        members.iter().map(|m| (url_key(&m.url), pages[m.page].noindex)).collect();
    let keys: Vec<String> = members.iter().map(|m| url_key(&m.url)).collect();
    let canonicals: Vec<Option<String>> = members
        .iter()
        .map(|m| {
            let c = url_key(pages[m.page].canonical.as_deref()?);
            let live = statuses.get(&c).is_none_or(|s| s == 200) && noindex_at.get(&c) != Some(&true);
            live.then_some(c)
        })
        .collect();
    let weighed: Vec<Member> = members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let p = &pages[m.page];
            Member {
                url: &keys[i],
                canonical: canonicals[i].as_deref(),
                inlinks: inlinks(&m.url),
                indexable: !p.noindex && p.error.is_none() && p.status.is_none_or(|s| s == 200),
            }
        })
        .collect();
    let k = causes::url_to_keep(&weighed);
    let url = match k.member {
        Some(i) => members[i].url.clone(),
        None => k.url,
    };
    let others: Vec<&str> =
        members.iter().enumerate().filter(|&(i, _)| Some(i) != k.member).map(|(_, m)| m.url.as_str()).collect();
    let causes = causes::causes(&url, &others);
    Choice { keep: KeptUrl { url, reason: k.reason }, member: k.member, causes }
}

/// Makes member `kept` the representative: its flag, and every member's
/// similarity, containment and kind of copy measured against it from the
/// shingle sets (`docs[doc_of[i]]` is member `i`'s fingerprint).
pub(super) fn represent<S: Sets + ?Sized>(
    members: &mut [AuditMember],
    doc_of: &[usize],
    docs: &[Fingerprint],
    sets: &S,
    kept: usize,
) -> Result<(), S::Error> {
    if members[kept].representative {
        return Ok(());
    }
    let rep = &docs[doc_of[kept]];
    let (mut rep_buf, mut buf) = (Vec::new(), Vec::new());
    let rep_set = sets.get(doc_of[kept] as u32, &mut rep_buf)?;
    for (i, (m, &d)) in members.iter_mut().zip(doc_of).enumerate() {
        let o = Overlap::of(sets.get(d as u32, &mut buf)?, rep_set);
        let d = &docs[d];
        m.representative = i == kept;
        m.similarity = round(o.jaccard());
        m.containment = round(o.containment_a_in_b());
        m.identical = d.identical_to(rep);
        m.same_text = d.same_text_as(rep);
    }
    Ok(())
}

/// Ranks clusters by severity (1 the worst): clusters with indexable
/// duplicates that declare no canonical first, then other problems, then
/// handled ones; more pages first within each, then by id.
pub(super) fn rank_severity(clusters: &mut [AuditCluster], pages: &[PageRow]) {
    let bare = |c: &AuditCluster| {
        c.members
            .iter()
            .filter(|m| !m.representative && pages[m.page].indexability == "indexable")
            .filter(|m| pages[m.page].canonical.is_none())
            .count()
    };
    let mut order: Vec<(bool, bool, std::cmp::Reverse<usize>, usize, usize)> = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| (bare(c) == 0, c.status != "problem", std::cmp::Reverse(c.size), c.id, i))
        .collect();
    order.sort();
    for (rank, &(.., i)) in order.iter().enumerate() {
        clusters[i].severity = rank + 1;
    }
}

/// Clusters that differ the same way, most frequent first.
pub(super) fn rollup(clusters: &[AuditCluster]) -> Vec<RollupRow> {
    causes::rollup(clusters.iter().map(|c| c.causes.as_slice()))
        .into_iter()
        .map(|(causes, of)| RollupRow {
            clusters: of.len(),
            pages: of.iter().map(|&c| clusters[c].size).sum(),
            cause: causes::summary(causes),
            example_keep: clusters[of[0]].keep.url.clone(),
            causes: causes.to_vec(),
        })
        .collect()
}

/// The parameters that make duplicates, from each cluster's URL to keep
/// and its other members.
pub(super) fn parameters(clusters: &[AuditCluster]) -> Vec<ParameterRow> {
    causes::parameters(clusters.iter().map(|c| {
        let kept = url_key(&c.keep.url);
        let others: Vec<&str> = c.members.iter().filter(|m| url_key(&m.url) != kept).map(|m| m.url.as_str()).collect();
        (c.keep.url.as_str(), others)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::blank_row;

    fn member(page: usize, url: &str) -> AuditMember {
        AuditMember {
            page,
            url: url.into(),
            representative: page == 0,
            similarity: 1.0,
            containment: 1.0,
            identical: true,
            same_text: false,
            markup: None,
        }
    }

    fn rows(urls: &[&str]) -> Vec<PageRow> {
        urls.iter().enumerate().map(|(i, u)| blank_row(i, u.to_string(), None, Some(200))).collect()
    }

    #[test]
    fn the_declared_canonical_is_kept_unless_it_is_broken() {
        let urls = ["https://x.test/a?sort=1", "https://x.test/a", "https://x.test/A"];
        let mut pages = rows(&urls);
        let members: Vec<AuditMember> = urls.iter().enumerate().map(|(i, u)| member(i, u)).collect();
        pages[0].canonical = Some("https://X.test/a#top".into());
        let statuses = StatusIndex::from_hops(&pages, []);
        let c = choose(&members, &pages, &statuses, |_| None);
        assert_eq!((c.keep.url.as_str(), c.member), ("https://x.test/a", Some(1)));
        assert_eq!(c.keep.reason, "declared canonical of 1 member");
        assert_eq!(causes::summary(&c.causes), "parameter `sort` (sort/filter); letter case");
        // A canonical that answered 404 is no declaration: links decide.
        pages[0].canonical = Some("https://x.test/gone".into());
        let hops = [webdup_core::page::Hop { url: "https://x.test/gone".into(), status: 404 }];
        let statuses = StatusIndex::from_hops(&pages, &hops);
        let c = choose(&members, &pages, &statuses, |u| Some(if u.ends_with('A') { 5 } else { 1 }));
        assert_eq!((c.keep.url.as_str(), c.keep.reason.as_str()), ("https://x.test/A", "most internal links (5)"));
    }

    #[test]
    fn the_kept_member_becomes_the_representative() {
        use webdup_core::DocKey;
        let doc = |key: u64, shingles: Vec<u64>| {
            Fingerprint::from_parts(format!("d{key}"), DocKey(key), 10, shingles, [key as u8; 16], Vec::new(), 0)
        };
        let docs = [doc(0, vec![1, 2, 3, 4]), doc(1, vec![1, 2, 3, 4, 5, 6, 7, 8])];
        let mut members = vec![member(0, "https://x.test/a?p=1"), member(1, "https://x.test/a")];
        represent(&mut members, &[0, 1], &docs, &webdup_core::fingerprint::InFingerprints(&docs), 1).unwrap();
        assert_eq!(members.iter().map(|m| m.representative).collect::<Vec<_>>(), [false, true]);
        assert_eq!((members[0].similarity, members[0].containment, members[0].same_text), (0.5, 1.0, false));
        assert_eq!((members[1].similarity, members[1].containment, members[1].same_text), (1.0, 1.0, true));
    }
}
