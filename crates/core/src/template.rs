//! Site-template suppression: Broder's "common shingles".
//!
//! Shingles that recur on many pages of one site are its template (menus,
//! footers, cookie banners that survived extraction); left in, they make
//! unrelated pages of the site look alike. Per group of pages (a URL's host,
//! or a local file's directory), a shingle is template when it is found in
//! more than [`TemplateConfig::share`] of the group's pages and in at least
//! [`TemplateConfig::min_pages`] of them; template shingles are dropped
//! before sketching.
//!
//! Near-copies share their shingles for the very reason they are copies, so
//! counting pages would erase real duplicates whenever copies are a large
//! part of a site. Pages are therefore counted once per *copy group*:
//!
//! 1. candidates: shingles on enough pages (the rule above);
//! 2. pages are copies of each other when their residuals (what is left
//!    without the candidates) are alike, when they share candidates beyond
//!    those found on nearly every page (a copied body is common only among
//!    its copies; Jaccard ≥ [`RESIDUAL_JACCARD`] for both), or when almost
//!    nothing is left of them (at most [`CORE_ONLY_SHINGLES`]);
//! 3. a candidate is template when it is found in enough copy groups, by the
//!    same rule applied to groups instead of pages.
//!
//! The body of an article copied five times on a small site is then counted
//! once and kept, while a menu found on pages with different bodies is
//! dropped.
//!
//! Copies whose edits are scattered (a few phrases rewritten on each) leave
//! residuals too unlike to be grouped, so on a site of three or four such
//! copies their whole body would pass for template. Below
//! [`WITNESS_FREE_GROUPS`] copy groups a template therefore needs a witness:
//! a page with more text of its own than template text, or copies grouped by
//! a body they share beyond it (an article among thin pages shows what the
//! site repeats, and so do an article's mirror and revision; three
//! revisions of one article, each edited here and there, show nothing).
//!
//! A page left with no shingle keeps its own set: a page that is
//! all template is a copy of the template, not an empty document.

use std::collections::{HashMap, HashSet};

use crate::shingle::{ShingleMap, ShingleSet};
use crate::units::{InTurn, Units};
use crate::verify::Overlap;

use serde::{Deserialize, Serialize};

/// Least Jaccard similarity of two residuals for their pages to count as copies.
pub const RESIDUAL_JACCARD: f64 = 0.5;
/// A page whose residual has at most this many shingles (a word or two of
/// its own) is the same text as the other such pages of its site, modulo the
/// candidates.
pub const CORE_ONLY_SHINGLES: usize = 8;
/// Candidates on at least this share of a site's pages are its universal
/// part; pages that share candidates beyond it are copies of each other.
pub const UNIVERSAL_SHARE: f64 = 0.9;

/// A site with fewer copy groups has a template only when a witness shows
/// it: a page with more text of its own than template text, or copies
/// sharing a body beyond it (see the module documentation).
pub const WITNESS_FREE_GROUPS: usize = 5;

/// How pages are grouped into sites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TemplateScope {
    /// URLs by host, local files by their directory.
    #[default]
    HostOrDirectory,
    /// URLs by host; local files are left alone.
    Host,
}

impl TemplateScope {
    /// The name in settings and reports (`host-or-directory`, `host`).
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateScope::HostOrDirectory => "host-or-directory",
            TemplateScope::Host => "host",
        }
    }
}

/// Settings of template suppression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateConfig {
    /// A shingle is template when found in more than this share of a site's
    /// copy groups (0 < share ≤ 1).
    pub share: f64,
    /// ... and in at least this many of them; sites with fewer copy groups
    /// are left alone.
    pub min_pages: usize,
    pub scope: TemplateScope,
}

impl Default for TemplateConfig {
    fn default() -> Self {
        TemplateConfig { share: 0.5, min_pages: 3, scope: TemplateScope::default() }
    }
}

impl TemplateConfig {
    /// Checks the ranges.
    pub fn validate(self) -> Result<Self, String> {
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(format!("template share must be in (0, 1], not {}", self.share));
        }
        if self.min_pages < 2 {
            return Err(format!("template minimum page count must be at least 2, not {}", self.min_pages));
        }
        Ok(self)
    }

    /// Least count (of pages or copy groups, out of `n`) that makes a shingle common.
    fn needed(&self, n: usize) -> usize {
        let by_share = (self.share * n as f64).floor() as usize + 1;
        by_share.min(n).max(self.min_pages)
    }
}

/// The site a document belongs to: its URL's host, or its directory.
pub fn site_of(id: &str, scope: TemplateScope) -> Option<String> {
    if crate::doc::is_url(id) {
        return url::Url::parse(id).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    }
    match scope {
        TemplateScope::Host => None,
        TemplateScope::HostOrDirectory => {
            let parent = std::path::Path::new(id).parent()?;
            Some(format!("dir:{}", parent.display()))
        }
    }
}

/// The least similarity a pair of documents needs: `across` when both have
/// a site ([`site_of`]) and the sites differ, `within` otherwise (one site,
/// a document with none, or no cross-site rule).
pub fn pair_threshold(within: f64, across: Option<f64>, a: Option<&str>, b: Option<&str>) -> f64 {
    match (across, a, b) {
        (Some(cross), Some(x), Some(y)) if x != y => cross,
        _ => within,
    }
}

/// Each site's template, learned from its pages: the sorted template
/// shingles of every site that had enough pages to learn from (an empty
/// list: the site was looked at and has none).
///
/// Learning is the corpus-wide half of suppression (a reduce per site);
/// [`apply`] is the per-page half. Learned once and kept (an index stores
/// what each `index add` learned), a template applies to pages that arrive
/// later, one at a time, as it did to the pages it was learned from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Templates {
    sites: std::collections::BTreeMap<String, Vec<u64>>,
}

impl Templates {
    /// Learns the template of every site with at least
    /// [`TemplateConfig::min_pages`] pages. `docs[i]` is the site of
    /// document `i` (`None`: never suppressed) and its sorted distinct shingles.
    pub fn learn(docs: &[(Option<&str>, &[u64])], config: &TemplateConfig) -> Templates {
        Templates::learn_on(&InTurn, docs, config)
    }

    /// [`Templates::learn`] with the sites run by `units`, one unit per
    /// site: sites are independent (a reduce per site).
    pub fn learn_on(units: &impl Units, docs: &[(Option<&str>, &[u64])], config: &TemplateConfig) -> Templates {
        let mut sites: HashMap<&str, Vec<&[u64]>> = HashMap::new();
        for (site, set) in docs {
            if let Some(s) = site {
                sites.entry(s).or_default().push(set);
            }
        }
        let sites: Vec<(&str, Vec<&[u64]>)> = sites
            .into_iter()
            .filter(|(_, sets)| sets.len() >= config.min_pages)
            .map(|(site, sets)| (site, learning_sample(sets.len()).map(|i| sets[i]).collect()))
            .collect();
        let templates = units.map(sites.len(), |i| learn_site(&sites[i].1, config));
        Templates { sites: sites.iter().map(|(site, _)| site.to_string()).zip(templates).collect() }
    }

    /// The template learned for `site`, if it was learned.
    pub fn get(&self, site: &str) -> Option<&[u64]> {
        self.sites.get(site).map(Vec::as_slice)
    }

    /// Records `site`'s template (sorted distinct shingles), replacing any.
    pub fn insert(&mut self, site: impl Into<String>, mut template: Vec<u64>) {
        template.sort_unstable();
        template.dedup();
        self.sites.insert(site.into(), template);
    }

    /// Sites and their templates, by site.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u64])> {
        self.sites.iter().map(|(s, t)| (s.as_str(), t.as_slice()))
    }

    /// Sites learned.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

/// The most pages of one site a template is learned from: a larger site
/// learns from [`learning_sample`]. What a template is (text on a share of
/// the pages) shows as well on 4,096 pages spread over the site as on all of
/// a million, and learning holds the sets of the pages it reads.
pub const MAX_LEARNING_PAGES: usize = 4096;

/// Which of a site's `n` pages (in key order) its template is learned from:
/// all of them up to [`MAX_LEARNING_PAGES`], else that many spread evenly.
pub fn learning_sample(n: usize) -> impl Iterator<Item = usize> {
    let take = n.min(MAX_LEARNING_PAGES);
    (0..take).map(move |i| i * n / take)
}

/// A page's shingles without its site's template (both sorted), or `None`
/// when that removes nothing, or everything: a page that is all template is
/// a copy of the template, not an empty document.
pub fn apply(set: &[u64], template: &[u64]) -> Option<Vec<u64>> {
    if template.is_empty() {
        return None;
    }
    let kept: Vec<u64> = set.iter().copied().filter(|s| template.binary_search(s).is_err()).collect();
    (kept.len() < set.len() && !kept.is_empty()).then_some(kept)
}

/// Drops each site's template shingles: [`Templates::learn`] over `docs`,
/// then [`apply`] to each. Returns, per document, its filtered set, or
/// `None` when nothing was removed.
pub fn suppress(docs: &[(Option<&str>, &[u64])], config: &TemplateConfig) -> Vec<Option<Vec<u64>>> {
    let templates = Templates::learn(docs, config);
    docs.iter().map(|(site, set)| site.and_then(|s| templates.get(s)).and_then(|t| apply(set, t))).collect()
}

/// The template of one site from its pages' sorted distinct shingles
/// (sorted; empty when the site shows none).
pub fn learn_site(sets: &[&[u64]], config: &TemplateConfig) -> Vec<u64> {
    let mut template: Vec<u64> = site_template(sets, config).into_iter().collect();
    template.sort_unstable();
    template
}

/// The template shingles of one site's pages.
fn site_template(sets: &[&[u64]], config: &TemplateConfig) -> ShingleSet {
    site_template_counting(sets, config, true)
}

/// [`site_template`], counting pages per shingle from the shingles of a
/// first share of the pages (`prefix`) or of every page: the same answer.
fn site_template_counting(sets: &[&[u64]], config: &TemplateConfig, prefix: bool) -> ShingleSet {
    let n = sets.len();
    let needed = config.needed(n) as u32;
    let universal = (UNIVERSAL_SHARE * n as f64).ceil() as u32;
    // Page counts of the shingles of the first `counted` pages, over all
    // pages. A shingle on `needed` pages is on one of any n - needed + 1 of
    // them, so one missing from the first that many is on fewer than
    // `needed` pages, and (when needed ≤ universal) fewer than `universal`:
    // neither set taken from the counts below misses a shingle, while the
    // map holds about half the shingles and the other pages only look
    // theirs up.
    let counted = if prefix && needed <= universal { n + 1 - (needed as usize).min(n) } else { n };
    let mut df: ShingleMap<u32> =
        ShingleMap::with_capacity_and_hasher(sets[..counted].iter().map(|s| s.len()).sum(), Default::default());
    for set in &sets[..counted] {
        for &s in *set {
            *df.entry(s).or_insert(0) += 1;
        }
    }
    for set in &sets[counted..] {
        for s in *set {
            if let Some(c) = df.get_mut(s) {
                *c += 1;
            }
        }
    }
    let candidates: ShingleSet = df.iter().filter(|&(_, &c)| c >= needed).map(|(&s, _)| s).collect();
    // The shingles on at least `universal` pages (all of them are in `df`:
    // see above): few, as the candidates are.
    let universal_ones: ShingleSet = df.iter().filter(|&(_, &c)| c >= universal).map(|(&s, _)| s).collect();
    drop(df);
    if candidates.is_empty() {
        return candidates;
    }

    // Copy groups from the residuals.
    let residuals: Vec<Vec<u64>> =
        sets.iter().map(|set| set.iter().copied().filter(|s| !candidates.contains(s)).collect()).collect();
    let mut groups = UnionFind::new(n);
    let mut core_only = None;
    for (i, r) in residuals.iter().enumerate() {
        if r.len() <= CORE_ONLY_SHINGLES {
            match core_only {
                None => core_only = Some(i),
                Some(first) => groups.union(first, i),
            }
        }
    }
    let copies_with_a_body = link_similar(&mut groups, &residuals);

    // Candidates beyond the universal part, shared by copies: a copied body
    // is most of what a copy has beyond that part, while a few shingles that
    // an extractor kept on most pages but not all (a line of the menu) must
    // not make every page a copy of every other.
    let shared: Vec<Vec<u64>> = sets
        .iter()
        .map(|set| {
            let beyond = set.iter().filter(|s| !universal_ones.contains(s)).count();
            let shared: Vec<u64> =
                set.iter().copied().filter(|s| candidates.contains(s) && !universal_ones.contains(s)).collect();
            if 2 * shared.len() >= beyond { shared } else { Vec::new() }
        })
        .collect();
    let copies_with_a_body = link_similar(&mut groups, &shared) | copies_with_a_body;

    let roots: Vec<usize> = (0..n).map(|i| groups.find(i)).collect();
    let group_count = roots.iter().collect::<HashSet<_>>().len();
    if group_count < config.min_pages {
        return ShingleSet::default();
    }
    let needed = config.needed(group_count);
    let mut in_groups: ShingleMap<HashSet<usize>> = ShingleMap::default();
    for (set, &root) in sets.iter().zip(&roots) {
        for s in set.iter().filter(|s| candidates.contains(s)) {
            in_groups.entry(*s).or_default().insert(root);
        }
    }
    let template: ShingleSet = in_groups.into_iter().filter(|(_, g)| g.len() >= needed).map(|(s, _)| s).collect();
    // A few pages that are all common text may be copies whose edits kept
    // them apart. The common text is the site's when a page has more text
    // of its own than common text, or when copies share a body beyond it.
    if group_count < WITNESS_FREE_GROUPS
        && !copies_with_a_body
        && !sets.iter().any(|set| {
            let common = set.iter().filter(|s| template.contains(s)).count();
            set.len() - common >= common
        })
    {
        return ShingleSet::default();
    }
    template
}

/// Puts pages whose sets are alike (Jaccard ≥ [`RESIDUAL_JACCARD`]) in one
/// group. Pages sharing an element are compared; chaining along each posting
/// list keeps this linear in the postings, and a pair already in one group is
/// not compared again. True when it joined any two groups.
fn link_similar(groups: &mut UnionFind, sets: &[Vec<u64>]) -> bool {
    let mut joined = false;
    let mut last_with: ShingleMap<usize> = ShingleMap::default();
    for (i, set) in sets.iter().enumerate() {
        for &s in set {
            if let Some(prev) = last_with.insert(s, i)
                && groups.find(prev) != groups.find(i)
                && Overlap::of(&sets[prev], set).jaccard() >= RESIDUAL_JACCARD
            {
                groups.union(prev, i);
                joined = true;
            }
        }
    }
    joined
}

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n).collect())
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.0[ra.max(rb)] = ra.min(rb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_site_learns_from_pages_spread_over_it() {
        assert_eq!(learning_sample(5).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        let n = 3 * MAX_LEARNING_PAGES + 7;
        let sample: Vec<usize> = learning_sample(n).collect();
        assert_eq!(sample.len(), MAX_LEARNING_PAGES);
        assert!(sample.windows(2).all(|w| w[1] - w[0] >= 3), "distinct, in order, spread");
        assert!(sample[0] == 0 && *sample.last().unwrap() >= n - 4, "from the first page to the last");
        // The template of a large site is what a sample of it shows: a
        // line on every page is found, a line on one page in ten is not.
        let sets: Vec<Vec<u64>> = (0..n as u64)
            .map(|i| {
                let line = if i % 10 == 0 { 3 } else { 4 + i % 9 };
                [1, 2, line].into_iter().chain((0..20).map(|k| 1_000 + 20 * i + k)).collect()
            })
            .collect();
        let refs: Vec<(Option<&str>, &[u64])> = sets.iter().map(|s| (Some("big.test"), s.as_slice())).collect();
        let learned = Templates::learn(&refs, &TemplateConfig::default());
        assert_eq!(learned.get("big.test"), Some(&[1, 2][..]));
    }

    #[test]
    fn a_pair_of_two_known_sites_takes_the_cross_site_threshold() {
        assert_eq!(pair_threshold(0.8, Some(0.5), Some("a.test"), Some("b.test")), 0.5);
        assert_eq!(pair_threshold(0.8, Some(0.5), Some("a.test"), Some("a.test")), 0.8);
        assert_eq!(pair_threshold(0.8, Some(0.5), None, Some("b.test")), 0.8);
        assert_eq!(pair_threshold(0.8, None, Some("a.test"), Some("b.test")), 0.8);
    }

    /// Distinct shingle ids `from..from + n`.
    fn run(from: u64, n: u64) -> Vec<u64> {
        (from..from + n).collect()
    }

    fn page(parts: &[Vec<u64>]) -> Vec<u64> {
        let mut v: Vec<u64> = parts.concat();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn suppressed(pages: &[Vec<u64>], config: &TemplateConfig) -> Vec<Vec<u64>> {
        let docs: Vec<(Option<&str>, &[u64])> = pages.iter().map(|p| (Some("site"), p.as_slice())).collect();
        suppress(&docs, config).into_iter().zip(pages).map(|(f, p)| f.unwrap_or_else(|| p.clone())).collect()
    }

    /// Counting pages per shingle from a first share of the pages gives the
    /// template counting from every page gives: sites of 1 to 64 pages
    /// whose shingles are on every share of the pages (just below, at and
    /// above the counts the template needs), with copies among them, under
    /// several shares and minimums.
    #[test]
    fn counting_from_the_first_pages_finds_the_same_template() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut learned = 0;
        for n in [1usize, 2, 3, 4, 5, 7, 10, 31, 64] {
            for round in 0..4u64 {
                let mut pages: Vec<Vec<u64>> = vec![Vec::new(); n];
                // 60 runs of 5 shingles, run r on about r/60 of the pages.
                for r in 0..60u64 {
                    for p in pages.iter_mut() {
                        if next() % 60 < r {
                            p.extend(run(1_000_000 + r * 10, 5));
                        }
                    }
                }
                for (i, p) in pages.iter_mut().enumerate() {
                    // A body of its own, or (one page in three) a shared one.
                    let body = if i % 3 == 0 { 500_000 + round } else { (i as u64 + 1) * 1000 };
                    p.extend(run(body, 40));
                    p.sort_unstable();
                    p.dedup();
                }
                let sets: Vec<&[u64]> = pages.iter().map(Vec::as_slice).collect();
                for share in [0.3, 0.5, 0.8, 0.95, 1.0] {
                    for min_pages in [2, 3] {
                        let config = TemplateConfig { share, min_pages, ..TemplateConfig::default() };
                        let whole = site_template_counting(&sets, &config, false);
                        assert_eq!(
                            site_template_counting(&sets, &config, true),
                            whole,
                            "{n} pages, round {round}, share {share}, min {min_pages}"
                        );
                        learned += usize::from(!whole.is_empty());
                    }
                }
            }
        }
        assert!(learned > 100, "only {learned} of the cases had a template");
    }

    #[test]
    fn menus_on_different_pages_are_dropped() {
        let template = run(1_000_000, 40);
        let pages: Vec<Vec<u64>> = (0..8).map(|i| page(&[template.clone(), run(i * 1000, 100)])).collect();
        let out = suppressed(&pages, &TemplateConfig::default());
        for (i, p) in out.iter().enumerate() {
            assert_eq!(p, &run(i as u64 * 1000, 100));
        }
    }

    #[test]
    fn copies_making_up_most_of_a_site_keep_their_body() {
        let template = run(1_000_000, 40);
        let body = run(500_000, 200);
        let mut pages = Vec::new();
        // Six near-copies of one article (each with a small edit of its own) ...
        for i in 0..6 {
            pages.push(page(&[template.clone(), body.clone(), run(700_000 + i * 10, 3)]));
        }
        // ... and five other pages.
        for i in 0..5 {
            pages.push(page(&[template.clone(), run(i * 1000, 100)]));
        }
        let out = suppressed(&pages, &TemplateConfig::default());
        for p in &out[..6] {
            assert!(body.iter().all(|s| p.contains(s)), "the copied body was erased");
            assert!(!p.contains(&template[0]), "the template stayed");
        }
        for p in &out[6..] {
            assert!(!p.contains(&template[0]));
        }
    }

    #[test]
    fn a_few_shingles_on_most_pages_do_not_make_them_copies() {
        // The template, and a line the extractor kept on 7 pages of 10.
        let template = run(1_000_000, 300);
        let line = run(2_000_000, 6);
        let pages: Vec<Vec<u64>> = (0..10)
            .map(|i| {
                if i < 7 {
                    page(&[template.clone(), line.clone(), run(i * 1000, 60)])
                } else {
                    page(&[template.clone(), run(i * 1000, 60)])
                }
            })
            .collect();
        let out = suppressed(&pages, &TemplateConfig::default());
        for (i, p) in out.iter().enumerate() {
            assert_eq!(p, &run(i as u64 * 1000, 60), "page {i}");
        }
    }

    #[test]
    fn a_site_of_copies_only_is_left_alone() {
        let body = run(500_000, 200);
        let pages: Vec<Vec<u64>> = (0..7).map(|i| page(&[body.clone(), run(700_000 + i * 10, 2)])).collect();
        assert_eq!(suppressed(&pages, &TemplateConfig::default()), pages);
    }

    #[test]
    fn small_sites_and_rare_shingles_are_left_alone() {
        let template = run(1_000_000, 40);
        let pages: Vec<Vec<u64>> = (0..2).map(|i| page(&[template.clone(), run(i * 1000, 100)])).collect();
        assert_eq!(suppressed(&pages, &TemplateConfig::default()), pages);
        // A shingle on exactly half of ten pages is not "more than half".
        let mut pages: Vec<Vec<u64>> = (0..10).map(|i| run(i * 1000, 50)).collect();
        for p in pages.iter_mut().take(5) {
            p.push(9_999_999);
        }
        assert_eq!(suppressed(&pages, &TemplateConfig::default()), pages);
    }

    #[test]
    fn a_few_pages_need_a_witness_with_more_text_of_its_own() {
        let template = run(1_000_000, 150);
        // Two thin pages and an article: the article shows the template.
        let mut pages: Vec<Vec<u64>> = (0..2).map(|i| page(&[template.clone(), run(i * 1000, 10)])).collect();
        pages.push(page(&[template.clone(), run(500_000, 400)]));
        let out = suppressed(&pages, &TemplateConfig::default());
        assert_eq!(out[0], run(0, 10));
        assert_eq!(out[1], run(1000, 10));
        assert_eq!(out[2], run(500_000, 400));
        // Three revisions of one article, a few phrases rewritten on each:
        // their residuals are unlike, but nothing shows the body is template.
        let body = run(500_000, 400);
        let revisions: Vec<Vec<u64>> = (0..3)
            .map(|i| {
                let mut p: Vec<u64> = body.iter().copied().filter(|s| (s + i) % 13 != 0).collect();
                p.extend(run(800_000 + i * 100, 30));
                page(&[p])
            })
            .collect();
        assert_eq!(suppressed(&revisions, &TemplateConfig::default()), revisions);
        // Copies of a short article, whose template is longer than it, and
        // two thin pages: the copies' shared body shows the template.
        let article = run(500_000, 60);
        let mut pages: Vec<Vec<u64>> = (0..2).map(|i| page(&[template.clone(), run(i * 1000, 10)])).collect();
        pages.push(page(&[template.clone(), article.clone()]));
        pages.push(page(&[template.clone(), article.clone(), run(900_000, 5)]));
        let out = suppressed(&pages, &TemplateConfig::default());
        assert_eq!(out[0], run(0, 10));
        assert_eq!(out[2], article);
        // From five groups on, no witness is needed.
        let thin: Vec<Vec<u64>> = (0..5).map(|i| page(&[template.clone(), run(i * 1000, 10)])).collect();
        let out = suppressed(&thin, &TemplateConfig::default());
        assert!((0..5).all(|i| out[i] == run(i as u64 * 1000, 10)));
    }

    #[test]
    fn sites_are_hosts_or_directories() {
        assert_eq!(site_of("https://Example.com/a", TemplateScope::Host).as_deref(), Some("example.com"));
        assert_eq!(site_of("pages/a.html", TemplateScope::Host), None);
        assert_eq!(site_of("pages/a.html", TemplateScope::HostOrDirectory).as_deref(), Some("dir:pages"));
        assert!(TemplateConfig { share: 0.0, ..TemplateConfig::default() }.validate().is_err());
        assert!(TemplateConfig { min_pages: 1, ..TemplateConfig::default() }.validate().is_err());
    }
}
