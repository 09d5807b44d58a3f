//! Canonical awareness: does a cluster of duplicates already tell search
//! engines which one URL to index?
//!
//! Each member that is not `noindex` names a URL to index: its canonical,
//! or itself when it has none. A cluster is *handled* when those names agree
//! on one URL that is a member of the cluster, answers 200 and is indexable
//! (the extras point to it or are `noindex`). Everything else is a problem,
//! described by [`Issue`]s with stable codes:
//!
//! | code | meaning |
//! |---|---|
//! | `self_canonical` | two or more members each name themselves canonical |
//! | `missing_canonical` | two or more indexable members, some without any canonical |
//! | `conflicting_canonicals` | members name different canonical URLs |
//! | `canonical_outside_cluster` | a canonical names a URL that is not in the cluster |
//! | `canonical_non_200` | a canonical names a URL that answered other than 200 |
//! | `canonical_to_noindex` | a canonical names a member that is `noindex` |
//! | `all_noindex` | every member is `noindex`: none of them can rank |

use std::collections::HashMap;

use super::{AuditMember, Issue, PageRow};
#[cfg(test)]
use webdup_core::page::Hop;

/// The comparable form of a URL: parsed (scheme and host lowercased, default
/// port and dot segments gone) without its fragment; unparseable strings
/// (local paths) are compared as written.
pub fn url_key(s: &str) -> String {
    match url::Url::parse(s.trim()) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => s.trim().to_string(),
    }
}

pub use webdup_core::page::usable_canonical;

/// True when two URLs name the same page.
pub fn same_url(a: &str, b: &str) -> bool {
    url_key(a) == url_key(b)
}

/// The last status each URL answered with in the run: every hop of every
/// redirect chain (so a canonical naming a redirecting URL is seen as 301),
/// and each page's final URL. URLs are held as the 128-bit hash of their
/// [`url_key`] (XXH3, as pages' digests are), in a sorted table: 20 bytes a
/// URL, and a collision as unlikely as two pages' digests'. Made of the
/// [`Answers`] learned.
#[derive(Debug, Default)]
pub struct StatusIndex {
    status: Vec<([u8; 16], Option<u16>)>,
}

/// The answers a [`StatusIndex`] is made of, as they are learned: the
/// redirects' hops first, then the pages' final answers.
#[derive(Debug, Default)]
pub struct Answers {
    hops: Vec<([u8; 16], Option<u16>)>,
    finals: Vec<([u8; 16], Option<u16>)>,
}

impl Answers {
    /// `url` answered with `status` (a redirect's hop: the later of two
    /// answers is kept).
    pub fn answered(&mut self, url: &str, status: Option<u16>) {
        self.hops.push((key_of(url), status));
    }

    /// `url` answered with `status` (a page's final answer), unless a hop
    /// or an earlier final answer of it is known.
    pub fn first_answer(&mut self, url: &str, status: Option<u16>) {
        self.finals.push((key_of(url), status));
    }

    /// The index: each URL's answer that wins by the rules above.
    pub fn index(self) -> StatusIndex {
        let Answers { mut hops, finals } = self;
        // In order of precedence (the last hop first, then the finals in
        // the order given); the stable sort keeps that order within a URL.
        hops.reverse();
        hops.extend(finals);
        hops.sort_by_key(|a| a.0);
        hops.dedup_by_key(|a| a.0);
        hops.shrink_to_fit();
        StatusIndex { status: hops }
    }
}

impl StatusIndex {
    /// From the pages' rows (each page's final answer) and the responses
    /// before them (every hop of every redirect chain), as the audit's
    /// build fills it (the hops while it takes the records, then the rows).
    #[cfg(test)]
    pub(crate) fn from_hops<'a>(pages: &[PageRow], hops: impl IntoIterator<Item = &'a Hop>) -> Self {
        let mut answers = Answers::default();
        for hop in hops {
            answers.answered(&hop.url, Some(hop.status));
        }
        for p in pages {
            answers.first_answer(&p.url, p.status);
        }
        answers.index()
    }

    /// `Some(status)` when the run fetched `url` and got an answer.
    pub fn get(&self, url: &str) -> Option<u16> {
        let key = key_of(url);
        self.status.binary_search_by_key(&key, |a| a.0).ok().and_then(|n| self.status[n].1)
    }
}

/// The hash a [`StatusIndex`] holds a URL by.
fn key_of(url: &str) -> [u8; 16] {
    webdup_core::fingerprint::page_digest(&url_key(url))
}

/// The canonical verdict on one cluster.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// The URL every indexable member names, when they agree.
    pub target: Option<String>,
    /// `canonical`, `noindex` or `canonical+noindex` when handled.
    pub handled_by: Option<&'static str>,
    /// Empty exactly when the cluster is handled.
    pub issues: Vec<Issue>,
}

/// Judges a cluster's canonical setup (see the module docs).
pub fn analyse(members: &[AuditMember], pages: &[PageRow], statuses: &StatusIndex) -> Verdict {
    let member_at: HashMap<String, usize> = members.iter().map(|m| (url_key(&m.url), m.page)).collect();
    let noindexed: Vec<usize> = members.iter().filter(|m| pages[m.page].noindex).map(|m| m.page).collect();
    // (page, the URL it names for indexing, whether it names itself)
    let named: Vec<(usize, String, bool)> = members
        .iter()
        .filter(|m| !pages[m.page].noindex)
        .map(|m| {
            let own = url_key(&m.url);
            let target = pages[m.page].canonical.as_deref().map(url_key).unwrap_or_else(|| own.clone());
            let is_self = target == own;
            (m.page, target, is_self)
        })
        .collect();
    let mut issues = Vec::new();
    if named.is_empty() {
        issues.push(Issue {
            code: "all_noindex",
            message: "every page of the cluster is noindex, so none of them can rank".into(),
            pages: noindexed,
        });
        return Verdict { issues, ..Verdict::default() };
    }
    // Distinct targets in the order members name them.
    let mut targets: Vec<&str> = Vec::new();
    for (_, t, _) in &named {
        if !targets.contains(&t.as_str()) {
            targets.push(t);
        }
    }
    for &t in &targets {
        let pointing: Vec<usize> = named.iter().filter(|(_, x, s)| x == t && !s).map(|(p, _, _)| *p).collect();
        if pointing.is_empty() {
            continue;
        }
        let list = urls(&pointing, pages);
        let names = if pointing.len() == 1 { "names" } else { "name" };
        if let Some(s) = statuses.get(t).filter(|&s| s != 200) {
            issues.push(Issue {
                code: "canonical_non_200",
                message: format!("{list} {names} {t} as canonical, which answered HTTP {s}"),
                pages: pointing,
            });
        } else if let Some(&target_page) = member_at.get(t) {
            if pages[target_page].noindex {
                issues.push(Issue {
                    code: "canonical_to_noindex",
                    message: format!("{list} {names} {t} as canonical, which is noindex"),
                    pages: pointing,
                });
            }
        } else {
            issues.push(Issue {
                code: "canonical_outside_cluster",
                message: format!("{list} {names} {t} as canonical, which is not one of the duplicates"),
                pages: pointing,
            });
        }
    }
    if targets.len() > 1 {
        let claims: Vec<usize> = named.iter().filter(|(_, _, s)| *s).map(|(p, _, _)| *p).collect();
        if claims.len() > 1 {
            let explicit: Vec<usize> = claims.iter().copied().filter(|&p| pages[p].canonical.is_some()).collect();
            let missing: Vec<usize> = claims.iter().copied().filter(|&p| pages[p].canonical.is_none()).collect();
            if !explicit.is_empty() {
                issues.push(Issue {
                    code: "self_canonical",
                    message: format!(
                        "{} duplicate{} declare{} {} canonical: {}",
                        explicit.len(),
                        if explicit.len() == 1 { "" } else { "s" },
                        if explicit.len() == 1 { "s" } else { "" },
                        if explicit.len() == 1 { "itself" } else { "themselves" },
                        urls(&explicit, pages)
                    ),
                    pages: explicit,
                });
            }
            if !missing.is_empty() {
                issues.push(Issue {
                    code: "missing_canonical",
                    message: format!("indexable duplicates without a canonical: {}", urls(&missing, pages)),
                    pages: missing,
                });
            }
        }
        if named.iter().any(|(_, _, s)| !s) {
            issues.push(Issue {
                code: "conflicting_canonicals",
                message: format!(
                    "the duplicates name {} different URLs to index: {}",
                    targets.len(),
                    targets.join(", ")
                ),
                pages: named.iter().map(|(p, _, _)| *p).collect(),
            });
        }
    }
    if !issues.is_empty() {
        return Verdict { target: (targets.len() == 1).then(|| targets[0].to_string()), handled_by: None, issues };
    }
    let canonicalised = named.iter().any(|(_, _, s)| !s);
    let handled_by = match (canonicalised, noindexed.is_empty()) {
        (true, true) => "canonical",
        (false, false) => "noindex",
        (true, false) => "canonical+noindex",
        // One indexable member naming itself and nothing else: a cluster of
        // one indexable page (the rest noindex) is caught above; this is
        // only reached by single-member clusters (`--min-cluster-size 1`).
        (false, true) => "canonical",
    };
    Verdict { target: Some(targets[0].to_string()), handled_by: Some(handled_by), issues }
}

fn urls(pages_: &[usize], pages: &[PageRow]) -> String {
    const SHOWN: usize = 3;
    let mut s = pages_.iter().take(SHOWN).map(|&p| pages[p].url.as_str()).collect::<Vec<_>>().join(", ");
    if pages_.len() > SHOWN {
        s.push_str(&format!(" and {} more", pages_.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(page: usize, url: &str, canonical: Option<&str>, noindex: bool, status: Option<u16>) -> PageRow {
        PageRow {
            canonical: canonical.map(str::to_string),
            canonical_source: canonical.map(|_| webdup_core::page::CanonicalSource::Html),
            noindex,
            words: Some(300),
            ..crate::audit::blank_row(page, url.into(), None, status)
        }
    }

    fn verdict(pages: &[PageRow], members: &[usize]) -> Verdict {
        let members: Vec<AuditMember> = members
            .iter()
            .map(|&p| AuditMember {
                page: p,
                url: pages[p].url.clone(),
                representative: p == members[0],
                similarity: 1.0,
                containment: 1.0,
                identical: true,
                same_text: false,
                markup: None,
            })
            .collect();
        analyse(&members, pages, &StatusIndex::from_hops(pages, []))
    }

    fn codes(v: &Verdict) -> Vec<&'static str> {
        v.issues.iter().map(|i| i.code).collect()
    }

    const A: &str = "https://x.test/a";
    const B: &str = "https://x.test/b";
    const C: &str = "https://x.test/c";

    #[test]
    fn agreeing_canonicals_and_noindex_handle_a_cluster() {
        let pages = [row(0, A, Some(A), false, Some(200)), row(1, B, Some("/a#top"), false, Some(200))];
        // A relative canonical is resolved at extraction; here it is not, so B names "/a#top".
        assert_eq!(codes(&verdict(&pages, &[0, 1])), ["canonical_outside_cluster", "conflicting_canonicals"]);
        let pages = [row(0, A, Some(A), false, Some(200)), row(1, B, Some("https://X.test/a#top"), false, Some(200))];
        let v = verdict(&pages, &[0, 1]);
        assert_eq!((v.handled_by, v.target.as_deref(), v.issues.len()), (Some("canonical"), Some(A), 0));
        let pages =
            [row(0, A, None, false, Some(200)), row(1, B, None, true, Some(200)), row(2, C, Some(A), true, None)];
        assert_eq!(verdict(&pages, &[0, 1, 2]).handled_by, Some("noindex"));
        let pages =
            [row(0, A, None, false, Some(200)), row(1, B, Some(A), false, Some(200)), row(2, C, None, true, None)];
        assert_eq!(verdict(&pages, &[0, 1, 2]).handled_by, Some("canonical+noindex"));
    }

    #[test]
    fn problems_are_named() {
        let pages =
            [row(0, A, Some(A), false, Some(200)), row(1, B, Some(B), false, Some(200)), row(2, C, None, false, None)];
        assert_eq!(codes(&verdict(&pages, &[0, 1, 2])), ["self_canonical", "missing_canonical"]);
        let pages = [
            row(0, A, Some(C), false, Some(200)),
            row(1, B, Some(C), false, Some(200)),
            row(2, C, None, false, Some(404)),
        ];
        assert_eq!(codes(&verdict(&pages, &[0, 1])), ["canonical_non_200"]);
        let pages = [row(0, A, None, true, Some(200)), row(1, B, Some(A), false, Some(200))];
        assert_eq!(codes(&verdict(&pages, &[0, 1])), ["canonical_to_noindex"]);
        let pages = [row(0, A, None, true, Some(200)), row(1, B, None, true, Some(200))];
        assert_eq!(codes(&verdict(&pages, &[0, 1])), ["all_noindex"]);
    }
}
