//! Crawl over crawl: what changed in a site's duplicates since an older
//! crawl (`webdup audit --index FILE --crawl NEW --since OLD`).
//!
//! [`compare`] reads two audits of the same site and the redirect map from
//! the older crawl to the newer ([`mod@crate::lost_and_found`]), and says
//! of every cluster whether it is new, gone, fixed, regressed, grown, shrunk,
//! changed or unchanged, with the member URLs it gained and lost, and which
//! pages moved to another URL. Clusters are compared by their members' URLs,
//! an old URL read as its new address when its page moved, so a cluster
//! whose page moved is not reported as one cluster gone and another new.
//! The result rides on the audit as [`Audit::since`]: in `report.json`,
//! `changes.csv` ([`write_csv`]) and a section of `report.html`
//! ([`html_section`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Result, Write};

use serde::Serialize;

use super::Audit;
use super::html::escape;
use crate::csv_safe::SafeCsvWriter;
use crate::lost_and_found::{Confidence, RedirectMap};

/// What became of a cluster between two crawls, in the order changes are
/// listed: what needs attention first.
///
/// Old and new clusters are paired one to one by shared members (see
/// [`compare`]). A pair is `fixed` or `regressed` when its status changed,
/// else `grown`, `shrunk`, `changed` or `unchanged` by its members. A
/// cluster left unpaired is `new`, `split`, `merged`, `fixed` or `gone`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// A new cluster none of whose pages was in an old cluster.
    New,
    /// A new cluster left unpaired whose pages were in an old cluster paired
    /// with another new one: it split off (`old_cluster` names it).
    Split,
    /// Paired, and its status went from `handled` to `problem`.
    Regressed,
    /// Paired, with more members than before.
    Grown,
    /// Paired, as many members as before but not the same ones.
    Changed,
    /// Paired, with fewer members than before.
    Shrunk,
    /// An old cluster left unpaired whose pages joined a new cluster paired
    /// with another old one (`new_cluster` names it).
    Merged,
    /// Paired, and its status went from `problem` to `handled`; or an old
    /// cluster left unpaired with at least one of its pages (at its new
    /// address when it moved) still an analysed page of the new crawl, in no
    /// cluster: what remains of it is no longer duplicated.
    Fixed,
    /// An old cluster left unpaired none of whose pages is an analysed page
    /// of the new crawl (missing, failing or redirecting elsewhere).
    Gone,
    /// Paired, with the same members and the same status.
    Unchanged,
}

impl Change {
    /// The name used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Split => "split",
            Change::Regressed => "regressed",
            Change::Grown => "grown",
            Change::Changed => "changed",
            Change::Shrunk => "shrunk",
            Change::Merged => "merged",
            Change::Fixed => "fixed",
            Change::Gone => "gone",
            Change::Unchanged => "unchanged",
        }
    }
}

/// One cluster of either crawl and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterChange {
    pub change: Change,
    /// The cluster's id in the old crawl's audit; for `split`, the old
    /// cluster it split from; absent for `new`.
    pub old_cluster: Option<usize>,
    /// The cluster's id in this report (`clusters[].id`); for `merged`, the
    /// cluster it joined; absent for `gone` and an unpaired `fixed`.
    pub new_cluster: Option<usize>,
    /// Members of `old_cluster`; 0 without one.
    pub old_size: usize,
    /// Members of `new_cluster`; 0 without one.
    pub new_size: usize,
    /// `handled` or `problem`, in the old crawl.
    pub old_status: Option<&'static str>,
    /// `handled` or `problem`, in the new crawl.
    pub new_status: Option<&'static str>,
    /// The new cluster's representative URL, else the old one's.
    pub representative: String,
    /// Members of `new_cluster` that `old_cluster` did not have, sorted.
    pub added: Vec<String>,
    /// Members of `old_cluster` (by their old URLs) missing from
    /// `new_cluster`, sorted.
    pub removed: Vec<String>,
}

/// A page of the old crawl whose content the new crawl serves at another
/// URL: lost-and-found's proposed and existing redirects.
#[derive(Debug, Clone, Serialize)]
pub struct MovedPage {
    pub old_url: String,
    pub new_url: String,
    /// The old URL already redirects to the new one.
    pub redirected: bool,
    /// Why the old URL counts as gone (lost-and-found's reasons: `absent`,
    /// `http_404`, `soft_404`, ...); absent when `redirected`.
    pub reason: Option<String>,
    /// How sure the match is; absent when `redirected`.
    pub confidence: Option<Confidence>,
    /// Exact Jaccard of the two pages' shingle sets.
    pub jaccard: f64,
    /// Share of the old page's shingles found in the new page.
    pub containment: f64,
    /// The old page's cluster in the old crawl's audit.
    pub old_cluster: Option<usize>,
    /// The new page's cluster in this report.
    pub new_cluster: Option<usize>,
}

/// Counts of `clusters[].change`, and of moved pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangeSummary {
    pub new: usize,
    pub split: usize,
    pub regressed: usize,
    pub grown: usize,
    pub changed: usize,
    pub shrunk: usize,
    pub merged: usize,
    pub fixed: usize,
    pub gone: usize,
    pub unchanged: usize,
    pub moved: usize,
}

/// What changed in the duplicates since an older crawl: `report.json`'s
/// `since`.
#[derive(Debug, Clone, Serialize)]
pub struct Changes {
    pub old_crawl: String,
    pub new_crawl: String,
    pub summary: ChangeSummary,
    /// Every cluster of both crawls at least once, in [`Change`] order, then
    /// by new cluster id, then by old cluster id.
    pub clusters: Vec<ClusterChange>,
    /// Sorted by old URL.
    pub moved: Vec<MovedPage>,
}

/// Rounds to 4 decimals, as the audit does.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Compares `new`, the audit of crawl `moves.new_crawl`, with `old`, the
/// audit of crawl `moves.old_crawl` made with the same settings; `moves` is
/// lost-and-found's map from the old crawl to the new.
///
/// Old URLs are read at their new address when `moves` says their page
/// moved. Each old cluster is then paired with at most one new cluster and
/// the other way round: pairs sharing the most members first, ties to the
/// lowest positions (the lowest ids). See [`Change`] for what each pair and
/// each unpaired cluster is called.
pub fn compare(old: &Audit, new: &Audit, moves: &RedirectMap) -> Changes {
    let moved = moved_pages(old, new, moves);
    let address: HashMap<&str, &str> = moved.iter().map(|m| (m.old_url.as_str(), m.new_url.as_str())).collect();
    let clusters = cluster_changes(old, new, &address);
    let mut summary = ChangeSummary { moved: moved.len(), ..ChangeSummary::default() };
    for c in &clusters {
        *match c.change {
            Change::New => &mut summary.new,
            Change::Split => &mut summary.split,
            Change::Regressed => &mut summary.regressed,
            Change::Grown => &mut summary.grown,
            Change::Changed => &mut summary.changed,
            Change::Shrunk => &mut summary.shrunk,
            Change::Merged => &mut summary.merged,
            Change::Fixed => &mut summary.fixed,
            Change::Gone => &mut summary.gone,
            Change::Unchanged => &mut summary.unchanged,
        } += 1;
    }
    Changes { old_crawl: moves.old_crawl.clone(), new_crawl: moves.new_crawl.clone(), summary, clusters, moved }
}

/// The moved pages of `moves`, with the clusters of their two addresses.
fn moved_pages(old: &Audit, new: &Audit, moves: &RedirectMap) -> Vec<MovedPage> {
    // lost-and-found names an old page by the URL it was asked for, which
    // the audit lists as `input` when the page redirected.
    let mut old_cluster: HashMap<&str, usize> = HashMap::new();
    for p in &old.pages {
        if let Some(c) = p.cluster {
            old_cluster.insert(&p.url, c);
            if let Some(input) = &p.input {
                old_cluster.insert(input, c);
            }
        }
    }
    let new_cluster: HashMap<&str, usize> =
        new.pages.iter().filter_map(|p| Some((p.url.as_str(), p.cluster?))).collect();
    let page = |old_url: &str, new_url: &str| MovedPage {
        old_url: old_url.into(),
        new_url: new_url.into(),
        redirected: false,
        reason: None,
        confidence: None,
        jaccard: 0.0,
        containment: 0.0,
        old_cluster: old_cluster.get(old_url).copied(),
        new_cluster: new_cluster.get(new_url).copied(),
    };
    let mut out: Vec<MovedPage> = moves
        .redirects
        .iter()
        .map(|r| MovedPage {
            reason: Some(r.reason.clone()),
            confidence: Some(r.confidence),
            jaccard: round(r.jaccard),
            containment: round(r.containment),
            ..page(&r.old_url, &r.new_url)
        })
        .chain(moves.already_redirected.iter().map(|r| MovedPage {
            redirected: true,
            jaccard: round(r.jaccard),
            containment: round(r.containment),
            ..page(&r.old_url, &r.final_url)
        }))
        .collect();
    out.sort_by(|a, b| a.old_url.cmp(&b.old_url).then_with(|| a.new_url.cmp(&b.new_url)));
    out
}

/// Every cluster of both audits with what became of it, sorted.
fn cluster_changes(old: &Audit, new: &Audit, address: &HashMap<&str, &str>) -> Vec<ClusterChange> {
    let at = |url: &'_ str| -> String { address.get(url).copied().unwrap_or(url).to_string() };
    // Old clusters' members at their new addresses; new clusters' members.
    let old_sets: Vec<BTreeSet<String>> =
        old.clusters.iter().map(|c| c.members.iter().map(|m| at(&m.url)).collect()).collect();
    let new_sets: Vec<BTreeSet<&str>> =
        new.clusters.iter().map(|c| c.members.iter().map(|m| m.url.as_str()).collect()).collect();
    let new_of: HashMap<&str, usize> =
        new_sets.iter().enumerate().flat_map(|(n, s)| s.iter().map(move |&u| (u, n))).collect();
    let old_of: HashMap<&str, usize> =
        old_sets.iter().enumerate().flat_map(|(o, s)| s.iter().map(move |u| (u.as_str(), o))).collect();

    // (shared members, old position, new position), best pairs first.
    let mut candidates: Vec<(usize, usize, usize)> = Vec::new();
    for (o, set) in old_sets.iter().enumerate() {
        let mut shared: BTreeMap<usize, usize> = BTreeMap::new();
        for u in set {
            if let Some(&n) = new_of.get(u.as_str()) {
                *shared.entry(n).or_default() += 1;
            }
        }
        candidates.extend(shared.into_iter().map(|(n, k)| (k, o, n)));
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut old_pair: Vec<Option<usize>> = vec![None; old_sets.len()];
    let mut new_pair: Vec<Option<usize>> = vec![None; new_sets.len()];
    for &(_, o, n) in &candidates {
        if old_pair[o].is_none() && new_pair[n].is_none() {
            old_pair[o] = Some(n);
            new_pair[n] = Some(o);
        }
    }
    // The cluster of the other crawl holding most of `urls`, ties to the lowest.
    let most = |urls: &mut dyn Iterator<Item = Option<usize>>| -> Option<usize> {
        let mut count: BTreeMap<usize, usize> = BTreeMap::new();
        for c in urls.flatten() {
            *count.entry(c).or_default() += 1;
        }
        count.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(c, _)| c)
    };
    let analysed: BTreeSet<&str> = new
        .pages
        .iter()
        .filter(|p| p.error.is_none() && p.indexability != "redirect")
        .map(|p| p.url.as_str())
        .collect();

    let mut rows: Vec<(Change, Option<usize>, Option<usize>)> = Vec::new();
    for (o, pair) in old_pair.iter().enumerate() {
        let (before, after) = (&old.clusters[o], *pair);
        let row = match after {
            Some(n) => {
                let now = &new.clusters[n];
                let same = old_sets[o].len() == new_sets[n].len()
                    && old_sets[o].iter().all(|u| new_sets[n].contains(u.as_str()));
                let change = match (before.status, now.status) {
                    ("problem", "handled") => Change::Fixed,
                    ("handled", "problem") => Change::Regressed,
                    _ if now.size > before.size => Change::Grown,
                    _ if now.size < before.size => Change::Shrunk,
                    _ if same => Change::Unchanged,
                    _ => Change::Changed,
                };
                (change, Some(o), Some(n))
            }
            None => match most(&mut old_sets[o].iter().map(|u| new_of.get(u.as_str()).copied())) {
                Some(n) => (Change::Merged, Some(o), Some(n)),
                None if old_sets[o].iter().any(|u| analysed.contains(u.as_str())) => (Change::Fixed, Some(o), None),
                None => (Change::Gone, Some(o), None),
            },
        };
        rows.push(row);
    }
    for (n, pair) in new_pair.iter().enumerate() {
        if pair.is_none() {
            rows.push(match most(&mut new_sets[n].iter().map(|u| old_of.get(u).copied())) {
                Some(o) => (Change::Split, Some(o), Some(n)),
                None => (Change::New, None, Some(n)),
            });
        }
    }
    let mut out: Vec<ClusterChange> = rows
        .into_iter()
        .map(|(change, o, n)| {
            let before = o.map(|o| &old.clusters[o]);
            let now = n.map(|n| &new.clusters[n]);
            let added: Vec<String> = match n {
                Some(n) => new_sets[n]
                    .iter()
                    .filter(|&&u| o.is_none_or(|o| !old_sets[o].contains(u)))
                    .map(|&u| u.to_string())
                    .collect(),
                None => Vec::new(),
            };
            let removed: BTreeSet<&str> = before
                .iter()
                .flat_map(|c| &c.members)
                .filter(|m| n.is_none_or(|n| !new_sets[n].contains(at(&m.url).as_str())))
                .map(|m| m.url.as_str())
                .collect();
            let representative = |a: &Audit, c: &super::AuditCluster| a.pages[c.representative].url.clone();
            ClusterChange {
                change,
                old_cluster: before.map(|c| c.id),
                new_cluster: now.map(|c| c.id),
                old_size: before.map_or(0, |c| c.size),
                new_size: now.map_or(0, |c| c.size),
                old_status: before.map(|c| c.status),
                new_status: now.map(|c| c.status),
                representative: match (now, before) {
                    (Some(c), _) => representative(new, c),
                    (None, Some(c)) => representative(old, c),
                    (None, None) => String::new(),
                },
                added,
                removed: removed.into_iter().map(String::from).collect(),
            }
        })
        .collect();
    out.sort_by_key(|c| (c.change, c.new_cluster, c.old_cluster));
    out
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// Writes `changes.csv`: a row per cluster change (`url` its
/// representative; `added` and `removed` URLs separated by spaces), then a
/// row per moved page (`change` `moved`, `url` the old URL, `new_url` the
/// new one, the clusters of each).
pub fn write_csv(changes: &Changes, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record([
        "change",
        "old_cluster",
        "new_cluster",
        "old_size",
        "new_size",
        "old_status",
        "new_status",
        "url",
        "new_url",
        "redirected",
        "jaccard",
        "confidence",
        "added",
        "removed",
    ])?;
    for c in &changes.clusters {
        w.write_record([
            c.change.as_str().to_string(),
            opt(&c.old_cluster),
            opt(&c.new_cluster),
            c.old_size.to_string(),
            c.new_size.to_string(),
            opt(&c.old_status),
            opt(&c.new_status),
            c.representative.clone(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            c.added.join(" "),
            c.removed.join(" "),
        ])?;
    }
    for m in &changes.moved {
        w.write_record([
            "moved".to_string(),
            opt(&m.old_cluster),
            opt(&m.new_cluster),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            m.old_url.clone(),
            m.new_url.clone(),
            m.redirected.to_string(),
            format!("{:.4}", m.jaccard),
            opt(&m.confidence.map(Confidence::as_str)),
            String::new(),
            String::new(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// A cluster id linking to the cluster in this report, or in words.
fn cluster_cell(id: Option<usize>, here: bool) -> String {
    match id {
        Some(id) if here => format!(r##"<a href="#cluster={id}">#{id}</a>"##),
        Some(id) => format!("#{id}"),
        None => "–".into(),
    }
}

fn urls_cell(urls: &[String]) -> String {
    urls.iter().map(|u| escape(u)).collect::<Vec<_>>().join("<br>")
}

/// The report's "Changes since" section, empty without [`Audit::since`].
/// Unchanged clusters are counted, not listed.
pub fn html_section(audit: &Audit) -> String {
    let Some(ch) = &audit.since else { return String::new() };
    let s = &ch.summary;
    let counts = [
        (s.new, "new"),
        (s.split, "split"),
        (s.regressed, "regressed"),
        (s.grown, "grown"),
        (s.changed, "changed"),
        (s.shrunk, "shrunk"),
        (s.merged, "merged"),
        (s.fixed, "fixed"),
        (s.gone, "gone"),
        (s.unchanged, "unchanged"),
        (s.moved, "pages moved"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect::<Vec<_>>()
    .join(" · ");
    let counts = if counts.is_empty() { "no cluster of either crawl".to_string() } else { counts };
    let mut h = format!(
        r#"<section id="since"><h2>Changes since crawl {} <span class="count">{}</span></h2>
<p class="intro">Crawl {} against crawl {}: {counts}. Clusters are compared by their members' URLs (a moved page at its new URL). Old cluster numbers are those of the older crawl's report.</p>
<table id="since-table"><thead><tr><th>Change</th><th>Old cluster</th><th>Cluster</th><th>Pages</th><th>Canonical status</th><th>Representative</th><th>Pages added</th><th>Pages removed</th></tr></thead><tbody>
"#,
        escape(&ch.old_crawl),
        ch.clusters.len() - s.unchanged,
        escape(&ch.new_crawl),
        escape(&ch.old_crawl),
    );
    for c in ch.clusters.iter().filter(|c| c.change != Change::Unchanged) {
        let size = |n: usize| if n == 0 { "–".to_string() } else { n.to_string() };
        h.push_str(&format!(
            r#"<tr class="change-{0}"><td>{0}</td><td>{1}</td><td>{2}</td><td>{3} → {4}</td><td>{5} → {6}</td><td>{7}</td><td>{8}</td><td>{9}</td></tr>
"#,
            c.change.as_str(),
            cluster_cell(c.old_cluster, false),
            cluster_cell(c.new_cluster, true),
            size(c.old_size),
            size(c.new_size),
            c.old_status.unwrap_or("–"),
            c.new_status.unwrap_or("–"),
            escape(&c.representative),
            urls_cell(&c.added),
            urls_cell(&c.removed),
        ));
    }
    h.push_str(&format!(
        r#"</tbody></table>
<h3>Pages moved ({})</h3><p class="intro">Pages of crawl {} whose content crawl {} serves at another URL (lost and found). Add a redirect where none is in place.</p>
<table id="moved-table"><thead><tr><th>Old URL</th><th>New URL</th><th>Redirect in place</th><th>Similarity</th><th>Confidence</th><th>Cluster now</th></tr></thead><tbody>
"#,
        ch.moved.len(),
        escape(&ch.old_crawl),
        escape(&ch.new_crawl),
    ));
    for m in &ch.moved {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td></tr>\n",
            escape(&m.old_url),
            escape(&m.new_url),
            if m.redirected {
                "yes".to_string()
            } else {
                format!("no ({})", escape(m.reason.as_deref().unwrap_or("")))
            },
            m.jaccard * 100.0,
            m.confidence.map_or("–", Confidence::as_str),
            cluster_cell(m.new_cluster, true),
        ));
    }
    h.push_str("</tbody></table></section>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::super::keep::KeptUrl;
    use super::super::{AuditConfig, AuditMember, AuditSettings, AuditSummary, blank_row};
    use super::*;
    use crate::lost_and_found::{AlreadyRedirected, Redirect};
    use webdup_core::settings::{FingerprintSettings, MatchSettings};

    const A: &str = "https://a.test/";

    fn url(path: &str) -> String {
        format!("{A}{path}")
    }

    /// An audit of analysed pages `pages` (paths), failed pages `failed`,
    /// and `clusters`: member paths (the first the representative) and a
    /// status.
    fn audit(pages: &[&str], failed: &[&str], clusters: &[(&[&str], &'static str)]) -> Audit {
        let mut rows: Vec<_> =
            pages.iter().chain(failed).enumerate().map(|(n, p)| blank_row(n, url(p), None, None)).collect();
        for r in &mut rows[pages.len()..] {
            r.error = Some("fetch: http_status: HTTP 404".into());
            r.indexability = "non_200";
        }
        let page_of = |p: &str| pages.iter().position(|&x| x == p).unwrap();
        let clusters: Vec<super::super::AuditCluster> = clusters
            .iter()
            .enumerate()
            .map(|(i, (members, status))| super::super::AuditCluster {
                id: i + 1,
                kind: "identical",
                size: members.len(),
                representative: page_of(members[0]),
                status,
                handled_by: None,
                canonical_target: None,
                severity: i + 1,
                min_similarity: 1.0,
                keep: KeptUrl { url: url(members[0]), reason: String::new() },
                cause: String::new(),
                causes: Vec::new(),
                issues: Vec::new(),
                members: members
                    .iter()
                    .enumerate()
                    .map(|(k, &m)| AuditMember {
                        page: page_of(m),
                        url: url(m),
                        representative: k == 0,
                        similarity: 1.0,
                        containment: 1.0,
                        identical: true,
                        same_text: false,
                        markup: None,
                    })
                    .collect(),
            })
            .collect();
        for c in &clusters {
            for m in &c.members {
                rows[m.page].cluster = Some(c.id);
            }
        }
        Audit {
            schema_version: 1,
            generator: "test".into(),
            source: None,
            settings: AuditSettings::new(
                &FingerprintSettings::default(),
                &MatchSettings::default(),
                &AuditConfig::default(),
            ),
            summary: AuditSummary::default(),
            pages: rows,
            clusters,
            cause_rollup: Vec::new(),
            parameters: Vec::new(),
            links_to_fix: Vec::new(),
            folded: Vec::new(),
            orphan_pages: None,
            unlisted_pages: None,
            crawl: None,
            duplicate_titles: Vec::new(),
            duplicate_descriptions: Vec::new(),
            duplicate_h1s: Vec::new(),
            thin_pages: Vec::new(),
            errors: Vec::new(),
            since: None,
        }
    }

    fn moves(redirects: &[(&str, &str)], already: &[(&str, &str)]) -> RedirectMap {
        RedirectMap {
            old_crawl: "v1".into(),
            new_crawl: "v2".into(),
            old_pages: 0,
            unchanged: 0,
            redirects: redirects
                .iter()
                .map(|(o, n)| Redirect {
                    old_url: url(o),
                    new_url: url(n),
                    reason: "absent".into(),
                    jaccard: 0.987_65,
                    containment: 1.0,
                    title_match: true,
                    confidence: Confidence::High,
                    evidence: String::new(),
                })
                .collect(),
            unmatched: Vec::new(),
            already_redirected: already
                .iter()
                .map(|(o, n)| AlreadyRedirected { old_url: url(o), final_url: url(n), jaccard: 1.0, containment: 1.0 })
                .collect(),
        }
    }

    /// (change, old id, new id, added paths, removed paths)
    type Row = (&'static str, Option<usize>, Option<usize>, String, String);

    fn rows(ch: &Changes) -> Vec<Row> {
        let paths = |v: &[String]| v.iter().map(|u| u.trim_start_matches(A)).collect::<Vec<_>>().join(" ");
        ch.clusters
            .iter()
            .map(|c| (c.change.as_str(), c.old_cluster, c.new_cluster, paths(&c.added), paths(&c.removed)))
            .collect()
    }

    fn row(change: &'static str, old: Option<usize>, new: Option<usize>, added: &str, removed: &str) -> Row {
        (change, old, new, added.into(), removed.into())
    }

    #[test]
    fn paired_clusters_are_named_by_members_and_status() {
        let old = audit(
            &["a1", "a2", "b1", "b2", "b3", "c1", "c2", "c3", "d1", "d2", "e1", "e2", "f1", "f2"],
            &[],
            &[
                (&["a1", "a2"], "problem"),
                (&["b1", "b2", "b3"], "problem"),
                (&["c1", "c2"], "problem"),
                (&["d1", "d2"], "problem"),
                (&["e1", "e2"], "handled"),
                (&["f1", "f2"], "problem"),
            ],
        );
        let new = audit(
            &["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c3", "d1", "d2", "e1", "e2", "f1", "f2"],
            &[],
            &[
                (&["a1", "a2", "a3"], "problem"),
                (&["b1", "b2"], "problem"),
                (&["c1", "c3"], "problem"),
                (&["d1", "d2"], "handled"),
                (&["e1", "e2"], "problem"),
                (&["f1", "f2"], "problem"),
            ],
        );
        let ch = compare(&old, &new, &moves(&[], &[]));
        assert_eq!(
            rows(&ch),
            [
                row("regressed", Some(5), Some(5), "", ""),
                row("grown", Some(1), Some(1), "a3", ""),
                row("changed", Some(3), Some(3), "c3", "c2"),
                row("shrunk", Some(2), Some(2), "", "b3"),
                row("fixed", Some(4), Some(4), "", ""),
                row("unchanged", Some(6), Some(6), "", ""),
            ]
        );
        let c = &ch.clusters[3];
        assert_eq!((c.old_size, c.new_size, c.old_status, c.new_status), (3, 2, Some("problem"), Some("problem")));
        assert_eq!(c.representative, url("b1"));
        assert_eq!(
            ch.summary,
            ChangeSummary {
                regressed: 1,
                grown: 1,
                changed: 1,
                shrunk: 1,
                fixed: 1,
                unchanged: 1,
                ..Default::default()
            }
        );
    }

    #[test]
    fn unpaired_clusters_are_new_split_merged_fixed_or_gone() {
        let old = audit(
            &["g1", "g2", "h1", "h2", "m1", "m2", "n1", "n2", "s1", "s2", "s3", "s4"],
            &[],
            &[
                (&["g1", "g2"], "problem"),
                (&["h1", "h2"], "problem"),
                (&["m1", "m2"], "problem"),
                (&["n1", "n2"], "problem"),
                (&["s1", "s2", "s3", "s4"], "problem"),
            ],
        );
        // g: both pages 404 now; h: one page 404, the other alone; m joins n;
        // s splits in two; x is new.
        let new = audit(
            &["h1", "m1", "m2", "n1", "n2", "s1", "s2", "s3", "s4", "x1", "x2"],
            &["g1", "g2", "h2"],
            &[
                (&["m1", "m2", "n1", "n2"], "problem"),
                (&["s1", "s2"], "problem"),
                (&["s3", "s4"], "problem"),
                (&["x1", "x2"], "problem"),
            ],
        );
        let ch = compare(&old, &new, &moves(&[], &[]));
        assert_eq!(
            rows(&ch),
            [
                row("new", None, Some(4), "x1 x2", ""),
                row("split", Some(5), Some(3), "", "s1 s2"),
                row("grown", Some(3), Some(1), "n1 n2", ""),
                row("shrunk", Some(5), Some(2), "", "s3 s4"),
                row("merged", Some(4), Some(1), "m1 m2", ""),
                row("fixed", Some(2), None, "", "h1 h2"),
                row("gone", Some(1), None, "", "g1 g2"),
            ]
        );
    }

    #[test]
    fn a_moved_member_keeps_its_cluster_unchanged_and_is_listed() {
        let old = audit(&["p1", "p2", "q"], &[], &[(&["p1", "p2"], "problem")]);
        let new = audit(&["p1", "p2-new", "q-new"], &[], &[(&["p1", "p2-new"], "problem")]);
        let ch = compare(&old, &new, &moves(&[("p2", "p2-new")], &[("q", "q-new")]));
        assert_eq!(rows(&ch), [row("unchanged", Some(1), Some(1), "", "")]);
        let moved: Vec<_> = ch
            .moved
            .iter()
            .map(|m| (m.old_url.as_str(), m.new_url.as_str(), m.redirected, m.old_cluster, m.new_cluster, m.jaccard))
            .collect();
        let (p2, p2_new, q, q_new) = (url("p2"), url("p2-new"), url("q"), url("q-new"));
        assert_eq!(
            moved,
            [(p2.as_str(), p2_new.as_str(), false, Some(1), Some(1), 0.9877), (&q, &q_new, true, None, None, 1.0)]
        );
        assert_eq!((ch.moved[0].reason.as_deref(), ch.moved[1].reason.as_deref()), (Some("absent"), None));
        assert_eq!(ch.summary.moved, 2);
        // Without the move the same crawls read as one member swapped.
        let ch = compare(&old, &new, &moves(&[], &[]));
        assert_eq!(rows(&ch), [row("changed", Some(1), Some(1), "p2-new", "p2")]);
    }

    #[test]
    fn a_duplicate_redirected_to_its_original_fixes_the_cluster() {
        let old = audit(&["r1", "r2"], &[], &[(&["r1", "r2"], "problem")]);
        let new = audit(&["r1"], &[], &[]);
        let ch = compare(&old, &new, &moves(&[], &[("r2", "r1")]));
        assert_eq!(rows(&ch), [row("fixed", Some(1), None, "", "r1 r2")]);
    }

    #[test]
    fn changes_csv_has_a_row_per_cluster_change_and_moved_page() {
        let old = audit(&["p1", "p2", "q"], &[], &[(&["p1", "p2"], "problem")]);
        let new = audit(&["p1", "p2", "p3", "q-new"], &[], &[(&["p1", "p2", "p3"], "handled")]);
        let mut new = new;
        new.since = Some(compare(&old, &new, &moves(&[("q", "q-new")], &[])));
        let mut out = Vec::new();
        write_csv(new.since.as_ref().unwrap(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap().replace(A, "/");
        assert_eq!(
            text,
            "change,old_cluster,new_cluster,old_size,new_size,old_status,new_status,url,new_url,redirected,jaccard,confidence,added,removed\n\
             fixed,1,1,2,3,problem,handled,/p1,,,,,/p3,\n\
             moved,,,,,,,/q,/q-new,false,0.9877,high,,\n"
        );
        let html = html_section(&new);
        assert!(html.starts_with(r#"<section id="since"><h2>Changes since crawl v1 <span class="count">1</span>"#));
        assert!(html.contains(r##"<tr class="change-fixed"><td>fixed</td><td>#1</td><td><a href="#cluster=1">#1</a></td><td>2 → 3</td><td>problem → handled</td>"##));
        assert!(html.contains("<td>no (absent)</td><td>98.8%</td><td>high</td><td>–</td>"));
        assert_eq!(html_section(&old), "");
    }

    #[test]
    fn page_text_reaches_the_html_escaped() {
        let old = audit(&["<b>1", "<b>2"], &[], &[(&["<b>1", "<b>2"], "problem")]);
        let mut new = audit(&["<b>1"], &[], &[]);
        new.since = Some(compare(&old, &new, &moves(&[], &[])));
        let html = html_section(&new);
        assert!(html.contains("&lt;b&gt;1") && !html.contains("<b>1"));
    }
}
