//! What a link-following crawl adds to the audit: the internal links (so
//! each page's inlinks, the links that point to a duplicate instead of the
//! URL to keep), the URLs normalization folded, the sitemap's orphan and
//! unlisted pages, and what the crawl left out (traps, links not followed).
//!
//! [`CrawlFacts`] is the crawl as the audit reads it: plain URLs, no
//! document keys, so an audit stays a function of pages and facts (the
//! `webdup` facade converts the crawler's summary into it).

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::canonical::url_key;
use super::{AuditCluster, PageRow};
use crate::causes;
use webdup_core::crawl::{CrawlFacts, MovedStart, NotFollowed, Trap};

/// What the crawl did, in `report.json` (present with `--follow`).
#[derive(Debug, Clone, Serialize)]
pub struct CrawlSection {
    pub pages: u64,
    pub depth: u32,
    /// Canonical targets beyond the depth or page limit fetched anyway (in
    /// `pages`), so their verdict is known.
    pub canonicals_beyond: u64,
    /// Folded links past those listed in `folded`.
    pub folded_beyond: u64,
    pub not_followed: NotFollowed,
    pub traps: Vec<Trap>,
    pub moved_starts: Vec<MovedStart>,
}

impl CrawlSection {
    pub fn of(facts: &CrawlFacts) -> CrawlSection {
        CrawlSection {
            pages: facts.pages,
            depth: facts.depth,
            canonicals_beyond: facts.canonicals_beyond,
            folded_beyond: facts.folded_beyond,
            not_followed: facts.not_followed.clone(),
            traps: facts.traps.clone(),
            moved_starts: facts.moved_starts.clone(),
        }
    }
}

/// An internal link to a duplicate that is not the URL to keep.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LinkToFix {
    /// The page that links.
    pub from: String,
    /// The duplicate it links to.
    pub link: String,
    /// The URL it should link to: its cluster's URL to keep.
    pub to: String,
}

/// A linked URL the crawl's normalization folded into another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoldedLink {
    /// The URL as linked.
    pub link: String,
    pub folded_into: String,
    /// What differs: `parameter `utm_source` (tracking)`.
    pub cause: String,
}

/// The crawl's link graph by comparable URL ([`url_key`]).
pub(super) struct LinkGraph {
    /// Distinct linking pages per linked URL.
    inlinks: HashMap<String, u32>,
    /// Each distinct link as written, sorted: (from, to, to's comparable
    /// form).
    links: Vec<(String, String, String)>,
    /// The sitemaps' URLs, when a sitemap was given.
    listed: Option<HashSet<String>>,
}

impl LinkGraph {
    pub(super) fn of(facts: &CrawlFacts) -> LinkGraph {
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut links: Vec<(String, String, String)> = Vec::new();
        let mut inlinks: HashMap<String, u32> = HashMap::new();
        for (from, to) in &facts.links {
            let key = (url_key(from), url_key(to));
            if key.0 == key.1 || !seen.insert(key.clone()) {
                continue;
            }
            *inlinks.entry(key.1.clone()).or_default() += 1;
            links.push((from.clone(), to.clone(), key.1));
        }
        links.sort();
        let listed = facts.listed.as_ref().map(|l| l.iter().map(|u| url_key(u)).collect());
        LinkGraph { inlinks, links, listed }
    }

    /// Pages of the crawl that link to `url`.
    pub(super) fn inlinks(&self, url: &str) -> u32 {
        self.inlinks.get(&url_key(url)).copied().unwrap_or(0)
    }

    /// Whether a sitemap lists the page (under its URL or its input);
    /// `None` without a sitemap.
    pub(super) fn in_sitemap(&self, row: &PageRow) -> Option<bool> {
        let listed = self.listed.as_ref()?;
        Some(std::iter::once(&row.url).chain(&row.input).any(|u| listed.contains(&url_key(u))))
    }

    /// Every internal link to a member of a cluster other than its URL to
    /// keep, sorted.
    pub(super) fn links_to_fix(&self, clusters: &[AuditCluster]) -> Vec<LinkToFix> {
        let mut fix: HashMap<String, &str> = HashMap::new();
        for c in clusters {
            let kept = url_key(&c.keep.url);
            for m in &c.members {
                let key = url_key(&m.url);
                if key != kept {
                    fix.insert(key, &c.keep.url);
                }
            }
        }
        let mut out: Vec<LinkToFix> = self
            .links
            .iter()
            .filter_map(|(from, link, key)| {
                let to = fix.get(key)?;
                Some(LinkToFix { from: from.clone(), link: link.clone(), to: to.to_string() })
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Sitemap URLs no crawled page links to, sorted; `None` without a
    /// sitemap.
    pub(super) fn orphans(&self, facts: &CrawlFacts) -> Option<Vec<String>> {
        let listed = facts.listed.as_ref()?;
        let linked: BTreeSet<String> = self.inlinks.keys().cloned().collect();
        let mut out: Vec<String> = listed.iter().filter(|u| !linked.contains(&url_key(u))).cloned().collect();
        out.sort();
        out.dedup();
        Some(out)
    }

    /// Pages linked from the crawl, indexable and answering 200, that no
    /// sitemap lists, sorted; `None` without a sitemap. Duplicates other
    /// than their cluster's URL to keep belong in no sitemap: they are
    /// reported as duplicates, not here.
    pub(super) fn unlisted(&self, pages: &[PageRow], clusters: &[AuditCluster]) -> Option<Vec<String>> {
        self.listed.as_ref()?;
        let duplicates: HashSet<usize> = clusters
            .iter()
            .flat_map(|c| {
                let kept = url_key(&c.keep.url);
                c.members.iter().filter(move |m| url_key(&m.url) != kept).map(|m| m.page)
            })
            .collect();
        let mut out: Vec<String> = pages
            .iter()
            .filter(|p| p.indexability == "indexable" && p.status == Some(200) && !duplicates.contains(&p.page))
            .filter(|p| p.inlinks.is_some_and(|n| n > 0) && self.in_sitemap(p) == Some(false))
            .map(|p| p.url.clone())
            .collect();
        out.sort();
        out.dedup();
        Some(out)
    }
}

/// The folded links with what differs between each and its target.
pub(super) fn folded(facts: &CrawlFacts) -> Vec<FoldedLink> {
    let mut out: Vec<FoldedLink> = facts
        .folded
        .iter()
        .map(|(link, into)| FoldedLink {
            link: link.clone(),
            folded_into: into.clone(),
            cause: causes::summary(&causes::causes(into, &[link.as_str()])),
        })
        .collect();
    out.sort_by(|a, b| (&a.link, &a.folded_into).cmp(&(&b.link, &b.folded_into)));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{AuditMember, KeptUrl, blank_row};

    const A: &str = "https://x.test/a";
    const A2: &str = "https://x.test/a?sort=1";
    const B: &str = "https://x.test/b";
    const HOME: &str = "https://x.test/";

    fn cluster(kept: &str, pages: &[(usize, &str)]) -> AuditCluster {
        let members = pages
            .iter()
            .map(|&(page, url)| AuditMember {
                page,
                url: url.into(),
                representative: url == kept,
                similarity: 1.0,
                containment: 1.0,
                identical: true,
                same_text: false,
                markup: None,
            })
            .collect();
        AuditCluster {
            id: 1,
            kind: "identical",
            size: pages.len(),
            severity: 1,
            representative: 0,
            status: "problem",
            handled_by: None,
            canonical_target: None,
            min_similarity: 1.0,
            keep: KeptUrl { url: kept.into(), reason: String::new() },
            cause: String::new(),
            causes: Vec::new(),
            issues: Vec::new(),
            members,
        }
    }

    fn facts(links: &[(&str, &str)], listed: Option<&[&str]>) -> CrawlFacts {
        CrawlFacts {
            links: links.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            listed: listed.map(|l| l.iter().map(|u| u.to_string()).collect()),
            ..CrawlFacts::default()
        }
    }

    #[test]
    fn links_count_once_per_page_and_those_to_duplicates_are_to_fix() {
        let f = facts(&[(HOME, A), (HOME, A2), (HOME, "https://X.test/a#top"), (B, A2), (A, A), (B, HOME)], None);
        let g = LinkGraph::of(&f);
        assert_eq!((g.inlinks(A), g.inlinks(A2), g.inlinks(B)), (1, 2, 0), "repeats and self-links do not count");
        let fixes = g.links_to_fix(&[cluster(A, &[(0, A), (1, A2)])]);
        let rows: Vec<(&str, &str, &str)> =
            fixes.iter().map(|l| (l.from.as_str(), l.link.as_str(), l.to.as_str())).collect();
        assert_eq!(rows, [(HOME, A2, A), (B, A2, A)]);
        assert_eq!((g.orphans(&f), g.in_sitemap(&blank_row(0, A.into(), None, Some(200)))), (None, None));
    }

    #[test]
    fn orphans_are_listed_and_unlinked_and_unlisted_pages_linked_and_left_out() {
        let orphan = "https://x.test/orphan";
        let f = facts(&[(HOME, A), (HOME, A2), (HOME, B), (A, HOME)], Some(&[HOME, A, orphan]));
        let g = LinkGraph::of(&f);
        assert_eq!(g.orphans(&f), Some(vec![orphan.to_string()]));
        let mut pages: Vec<PageRow> = [HOME, A, A2, B, orphan]
            .iter()
            .enumerate()
            .map(|(i, u)| blank_row(i, u.to_string(), None, Some(200)))
            .collect();
        for p in &mut pages {
            p.inlinks = Some(g.inlinks(&p.url));
        }
        pages[3].noindex = true;
        pages[3].indexability = "noindex";
        // A2 is a duplicate of A: reported as such, not as unlisted.
        let clusters = [cluster(A, &[(1, A), (2, A2)])];
        assert_eq!(g.unlisted(&pages, &clusters), Some(vec![]));
        pages[3].indexability = "indexable";
        assert_eq!(g.unlisted(&pages, &clusters), Some(vec![B.to_string()]));
        assert_eq!(g.in_sitemap(&pages[1]), Some(true));
        assert_eq!(g.in_sitemap(&pages[3]), Some(false));
    }

    #[test]
    fn folded_links_say_what_was_dropped() {
        let f = CrawlFacts {
            folded: vec![("https://x.test/a?utm_source=mail".into(), A.into()); 2],
            ..CrawlFacts::default()
        };
        let rows = folded(&f);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].cause, "parameter `utm_source` (tracking)");
    }
}
