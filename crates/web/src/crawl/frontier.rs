//! The crawl's frontier: breadth-first by depth, level by level, so what is
//! fetched, in which order and under which key never depends on when
//! responses arrive.
//!
//! A level's pages may be observed in any order; their links are gathered
//! as a set, and only when the level is done does [`Frontier::next_level`]
//! sort them (by URL), judge traps (pages in key order), and cut at the
//! limits. Every URL discovered is kept once, as its text in one hash map
//! (about 100-150 bytes a URL with the map's overhead: a million queued
//! URLs stay under 200 MB).

use std::collections::{BTreeMap, HashMap, HashSet};

use regex::Regex;
use url::Url;
use webdup_core::DocKey;

use super::links::{LinkKind, PageLinks, forbids_following};
use super::scope::Scope;
use super::trap::{self, Pattern, TRAP_PAGES, Verdict};

/// Limits of a crawl besides its scope.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Pages fetched at most (start pages included); `None`: no limit.
    pub max_pages: Option<u64>,
    /// Links followed from a start page at most (`0`: the start pages only).
    pub max_depth: Option<u32>,
    /// Only URLs matching one of these are followed (all when empty).
    pub include: Vec<Regex>,
    /// URLs matching any of these are not followed.
    pub exclude: Vec<Regex>,
    /// Follow `rel=nofollow` links and links of `nofollow` pages too.
    pub follow_nofollow: bool,
    /// Query strings kept as they are (no tracking parameter dropped).
    pub keep_query: bool,
}

/// Why links were not followed, counted over the crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotFollowed {
    pub out_of_scope: u64,
    pub excluded: u64,
    pub nofollow: u64,
    pub beyond_depth: u64,
    pub beyond_max_pages: u64,
    /// Links that were no http(s) URL, too long, or past a page's limit.
    pub unusable: u64,
    /// Pages robots.txt disallows (never requested).
    pub robots: u64,
}

/// A URL pattern judged a crawl trap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    /// Host, path with digit-bearing segments as `*`, parameter names.
    pub pattern: String,
    /// Its pages fetched before it was judged.
    pub fetched: usize,
    /// Its URLs found and not fetched.
    pub skipped: u64,
}

/// The frontier of a running crawl.
#[derive(Debug)]
pub struct Frontier {
    scope: Scope,
    limits: Limits,
    /// Every URL discovered (normalized), and the depth it was found at.
    known: HashMap<Box<str>, u32>,
    /// URLs found by the level being fetched, for the next one.
    found: Vec<Box<str>>,
    /// Where each page fetched so far ended (its final URL): a link to it
    /// is not fetched again.
    finals: HashSet<Box<str>>,
    /// The pages of the level being fetched: key, pattern, sketch.
    level: Vec<(DocKey, String, Option<u64>)>,
    patterns: HashMap<String, Pattern>,
    depth: u32,
    fetched: u64,
    not_followed: NotFollowed,
    /// Internal links: (from page, to URL), in-scope targets only.
    edges: Vec<(DocKey, Box<str>)>,
}

impl Frontier {
    pub fn new(scope: Scope, limits: Limits) -> Frontier {
        Frontier {
            scope,
            limits,
            known: HashMap::new(),
            found: Vec::new(),
            finals: HashSet::new(),
            level: Vec::new(),
            patterns: HashMap::new(),
            depth: 0,
            fetched: 0,
            not_followed: NotFollowed::default(),
            edges: Vec::new(),
        }
    }

    /// The scope, to widen it (a start page that redirected to another host).
    pub fn scope_mut(&mut self) -> &mut Scope {
        &mut self.scope
    }

    /// A start page: in scope, depth 0, never fetched twice.
    pub fn add_start(&mut self, url: &Url) {
        self.scope.add(url);
        self.known.insert(url.as_str().into(), 0);
    }

    /// The depth of the level being fetched.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Pages handed out so far (start pages included).
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    /// URLs discovered and not fetched yet.
    pub fn queued(&self) -> usize {
        self.found.len() + self.patterns.values().map(|p| p.waiting.len()).sum::<usize>()
    }

    fn normalized(&self, url: &Url) -> Option<Url> {
        crate::fetch::url::normalize_url(url.clone(), self.limits.keep_query).ok()
    }

    /// One page of the current level was fetched: `requested` is its URL,
    /// `final_url` where it was served from, `links` what it links to (none
    /// for a failure or a page that is not HTML) and `x_robots_tag` its
    /// header. Pages may come in any order.
    pub fn observe(
        &mut self,
        key: DocKey,
        requested: &Url,
        final_url: Option<&Url>,
        links: Option<&PageLinks>,
        x_robots_tag: Option<&str>,
        sketch: Option<u64>,
    ) {
        let landed = final_url.and_then(|u| self.normalized(u));
        if let Some(f) = &landed {
            self.finals.insert(f.as_str().into());
        }
        let own = landed.as_ref().unwrap_or(requested).as_str().to_string();
        self.level.push((key, trap::pattern(requested), sketch));
        let Some(links) = links else {
            return;
        };
        self.not_followed.unusable += links.dropped as u64;
        let page_nofollow = links.nofollow || x_robots_tag.is_some_and(forbids_following);
        let mut targets: Vec<Box<str>> = Vec::new();
        for link in &links.links {
            let Some(url) = self.normalized(&link.url) else {
                self.not_followed.unusable += 1;
                continue;
            };
            if !self.scope.contains(&url) {
                self.not_followed.out_of_scope += 1;
                continue;
            }
            let text: Box<str> = url.as_str().into();
            if link.kind != LinkKind::Canonical && *text != *own {
                targets.push(text.clone());
            }
            if (page_nofollow || link.nofollow) && !self.limits.follow_nofollow {
                self.not_followed.nofollow += 1;
                continue;
            }
            if !self.limits.include.is_empty() && !self.limits.include.iter().any(|r| r.is_match(&text)) {
                self.not_followed.excluded += 1;
                continue;
            }
            if self.limits.exclude.iter().any(|r| r.is_match(&text)) {
                self.not_followed.excluded += 1;
                continue;
            }
            if !self.known.contains_key(&text) {
                self.known.insert(text.clone(), self.depth + 1);
                self.found.push(text);
            }
        }
        targets.sort_unstable();
        targets.dedup();
        self.edges.extend(targets.into_iter().map(|t| (key, t)));
    }

    /// Ends the current level and gives the URLs of the next one, sorted;
    /// empty when the crawl is done.
    pub fn next_level(&mut self) -> Vec<Url> {
        self.judge_level();
        let mut candidates = std::mem::take(&mut self.found);
        // Patterns cleared by this level release the URLs they held back.
        for p in self.patterns.values_mut() {
            if p.verdict == Verdict::Cleared && !p.waiting.is_empty() {
                candidates.append(&mut p.waiting);
            }
        }
        candidates.sort_unstable();
        candidates.retain(|u| !self.finals.contains(u));
        let next_depth = self.depth + 1;
        if self.limits.max_depth.is_some_and(|d| next_depth > d) {
            self.not_followed.beyond_depth += candidates.len() as u64;
            return Vec::new();
        }
        let mut next = Vec::new();
        for text in candidates {
            let Ok(url) = Url::parse(&text) else {
                continue;
            };
            let p = self.patterns.entry(trap::pattern(&url)).or_default();
            match p.verdict {
                Verdict::Trap => p.skipped += 1,
                Verdict::Open if p.admitted >= TRAP_PAGES => p.waiting.push(text),
                Verdict::Open | Verdict::Cleared => {
                    if p.verdict == Verdict::Open {
                        p.admitted += 1;
                    }
                    next.push(url);
                }
            }
        }
        if let Some(max) = self.limits.max_pages {
            let room = max.saturating_sub(self.fetched) as usize;
            if next.len() > room {
                self.not_followed.beyond_max_pages += (next.len() - room) as u64;
                next.truncate(room);
            }
        }
        if !next.is_empty() {
            self.depth = next_depth;
        }
        self.fetched += next.len() as u64;
        next
    }

    /// A page of the current level turned out to be disallowed by
    /// robots.txt: not fetched, counted.
    pub fn disallowed(&mut self) {
        self.not_followed.robots += 1;
    }

    /// Counts the start pages as fetched (they are handed out by the caller).
    pub fn started(&mut self, n: u64) {
        self.fetched += n;
    }

    fn judge_level(&mut self) {
        let mut level = std::mem::take(&mut self.level);
        level.sort_by_key(|(k, _, _)| *k);
        for (_, pattern, sketch) in level {
            self.patterns.entry(pattern).or_default().judge(sketch);
        }
        // A pattern judged a trap skips what it held back.
        for p in self.patterns.values_mut() {
            if p.verdict == Verdict::Trap && !p.waiting.is_empty() {
                p.skipped += p.waiting.len() as u64;
                p.waiting = Vec::new();
            }
        }
    }

    /// What the crawl found, once [`Frontier::next_level`] came back empty.
    pub fn finish(mut self) -> CrawlSummary {
        // URLs still held back by an open pattern were never fetched.
        let mut traps: Vec<Trap> = Vec::new();
        for (pattern, p) in self.patterns.drain() {
            if p.verdict == Verdict::Trap {
                traps.push(Trap { pattern, fetched: p.admitted, skipped: p.skipped });
            } else {
                self.not_followed.beyond_max_pages += p.waiting.len() as u64;
            }
        }
        traps.sort_by(|a, b| a.pattern.cmp(&b.pattern));
        let mut inlinks: BTreeMap<Box<str>, u32> = BTreeMap::new();
        for (_, to) in &self.edges {
            *inlinks.entry(to.clone()).or_default() += 1;
        }
        self.edges.sort_unstable();
        CrawlSummary {
            pages: self.fetched - self.not_followed.robots,
            depth: self.depth,
            not_followed: self.not_followed,
            traps,
            edges: self.edges,
            inlinks,
            moved_starts: Vec::new(),
        }
    }
}

/// What a crawl did, besides the pages it fetched.
#[derive(Debug, Clone, Default)]
pub struct CrawlSummary {
    /// Pages fetched (start pages included; none robots.txt disallows).
    pub pages: u64,
    /// The deepest level fetched.
    pub depth: u32,
    pub not_followed: NotFollowed,
    /// URL patterns judged traps, by pattern.
    pub traps: Vec<Trap>,
    /// Internal links (to in-scope URLs), sorted: from page, to URL.
    pub edges: Vec<(DocKey, Box<str>)>,
    /// In-scope URLs by the number of pages linking to them.
    pub inlinks: BTreeMap<Box<str>, u32>,
    /// Start pages that redirected out of scope, and where to: their
    /// final host joined the scope.
    pub moved_starts: Vec<(String, String)>,
}
