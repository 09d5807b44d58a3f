//! The crawl's frontier: breadth-first by depth, level by level, so what is
//! fetched, in which order and under which key never depends on when
//! responses arrive.
//!
//! A level's pages may be observed in any order; their links are gathered
//! as a set, and only when the level is done does [`Frontier::next_level`]
//! sort them (by URL), judge traps (pages in key order), and cut at the
//! limits. Every URL discovered is kept once, in [`Urls`] (its text in
//! blocks, a table of ids hashed by that text); queues, final URLs and links
//! hold 4-byte ids. That is about 80 bytes a URL of 70 characters
//! (`scripts/bench-crawl.sh` measures a million).

use std::collections::{BTreeMap, HashMap, HashSet};

use regex::Regex;
use url::Url;
use webdup_core::DocKey;
pub use webdup_core::crawl::{NotFollowed, Trap};

use super::links::{LinkKind, PageLinks, forbids_following};
use super::repeat::{Expand, Repeats};
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

/// Folded links a [`CrawlSummary`] lists at most (the first by URL); the
/// rest are counted in [`CrawlSummary::folded_beyond`].
pub const MAX_FOLDED: usize = 10_000;

/// Bytes of one block of [`Urls`]' text: a URL never spans two, so the
/// text never moves or doubles as it grows.
const BLOCK: usize = 1 << 20;

/// Every URL a crawl discovered, once: ids in discovery order.
///
/// The text sits in blocks of [`BLOCK`] bytes, a URL's place in one `u64`
/// (block, offset, length), and a hash table of ids whose hashes are
/// computed from the text: about 80 bytes a URL of 70 characters.
#[derive(Default)]
pub struct Urls {
    blocks: Vec<String>,
    /// Block (28 bits), offset (20 bits) and length (16 bits) of each URL.
    spans: Vec<u64>,
    ids: hashbrown::HashTable<u32>,
}

impl std::fmt::Debug for Urls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Urls").field("len", &self.spans.len()).finish()
    }
}

fn url_hash(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

impl Urls {
    /// The id of `url`, and whether it is new. URLs longer than 65,535
    /// bytes are not kept (`None`): no crawl follows them.
    pub fn intern(&mut self, url: &str) -> Option<(u32, bool)> {
        if url.len() > u16::MAX as usize {
            return None;
        }
        let hash = url_hash(url);
        if let Some(&id) = self.ids.find(hash, |&id| Self::text(&self.blocks, &self.spans, id) == url) {
            return Some((id, false));
        }
        let id = u32::try_from(self.spans.len()).ok()?;
        if self.blocks.last().is_none_or(|b| b.len() + url.len() > BLOCK.max(b.capacity())) {
            self.blocks.push(String::with_capacity(BLOCK.max(url.len())));
        }
        let block = self.blocks.len() - 1;
        let text = &mut self.blocks[block];
        let span = (block as u64) << 36 | (text.len() as u64) << 16 | url.len() as u64;
        text.push_str(url);
        self.spans.push(span);
        let (blocks, spans) = (&self.blocks, &self.spans);
        self.ids.insert_unique(hash, id, |&i| url_hash(Self::text(blocks, spans, i)));
        Some((id, true))
    }

    fn text<'a>(blocks: &'a [String], spans: &[u64], id: u32) -> &'a str {
        let span = spans[id as usize];
        let (block, offset, len) = ((span >> 36) as usize, (span >> 16 & 0xF_FFFF) as usize, (span & 0xFFFF) as usize);
        &blocks[block][offset..offset + len]
    }

    /// The id of `url`, if it was discovered.
    pub fn id(&self, url: &str) -> Option<u32> {
        self.ids.find(url_hash(url), |&id| self.get(id) == url).copied()
    }

    /// The URL of `id`.
    pub fn get(&self, id: u32) -> &str {
        Self::text(&self.blocks, &self.spans, id)
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The frontier of a running crawl.
#[derive(Debug)]
pub struct Frontier {
    scope: Scope,
    limits: Limits,
    /// Every URL discovered (normalized): start pages, links followed, final
    /// URLs; and the linked URLs normalization changed, as linked.
    urls: Urls,
    /// URLs found by the level being fetched, for the next one.
    found: Vec<u32>,
    /// Where each page fetched so far ended (its final URL): a link to it
    /// is not fetched again.
    finals: HashSet<u32>,
    /// The pages of the level being fetched: key, pattern, sketch.
    level: Vec<(DocKey, Option<u64>, Option<u64>)>,
    /// URL patterns that could be traps, by a hash of the pattern.
    patterns: HashMap<u64, (String, Pattern)>,
    depth: u32,
    fetched: u64,
    not_followed: NotFollowed,
    /// Internal links: (from page, to URL), in-scope targets only.
    edges: Vec<(DocKey, u32)>,
    /// Pages that repeat earlier pages, and which URLs were linked from a
    /// page that does not.
    repeats: Repeats,
    /// In-scope linked URLs the normalization changed, once each.
    folded: Vec<u32>,
    /// URLs handed out to be fetched (start pages included).
    handed: Bits,
    /// URLs left out by `--max-depth` or `--max-pages`.
    cut: Bits,
    /// The canonical target of each page of the level being fetched that
    /// names one the crawl may follow (the first it names).
    canonicals: Vec<u32>,
    /// Canonical targets fetched beyond the limits: their links are not read.
    beyond: HashSet<u32>,
    /// The deepest level of pages the limits let in.
    reached: u32,
}

/// One bit per id of [`Urls`].
#[derive(Debug, Default)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub(crate) fn set(&mut self, id: u32) {
        let (word, bit) = (id as usize / 64, id % 64);
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << bit;
    }

    pub(crate) fn has(&self, id: u32) -> bool {
        self.0.get(id as usize / 64).is_some_and(|w| w & (1 << (id % 64)) != 0)
    }
}

impl Frontier {
    pub fn new(scope: Scope, limits: Limits) -> Frontier {
        Frontier {
            scope,
            limits,
            urls: Urls::default(),
            found: Vec::new(),
            finals: HashSet::new(),
            level: Vec::new(),
            patterns: HashMap::new(),
            depth: 0,
            fetched: 0,
            not_followed: NotFollowed::default(),
            edges: Vec::new(),
            repeats: Repeats::default(),
            folded: Vec::new(),
            handed: Bits::default(),
            cut: Bits::default(),
            canonicals: Vec::new(),
            beyond: HashSet::new(),
            reached: 0,
        }
    }

    /// The scope, to widen it (a start page that redirected to another host).
    pub fn scope_mut(&mut self) -> &mut Scope {
        &mut self.scope
    }

    /// A start page: in scope, depth 0, never fetched twice.
    pub fn add_start(&mut self, url: &Url) {
        self.scope.add(url);
        if let Some((id, _)) = self.urls.intern(url.as_str()) {
            self.repeats.mark(id);
            self.handed.set(id);
        }
    }

    /// The depth of the level being fetched.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Pages handed out so far (start pages included).
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    /// URLs discovered (start pages included; links as linked, before
    /// normalization, aside).
    pub fn discovered(&self) -> usize {
        self.urls.len() - self.folded.len()
    }

    /// URLs discovered and not fetched yet.
    pub fn queued(&self) -> usize {
        self.found.len() + self.patterns.values().map(|(_, p)| p.waiting.len()).sum::<usize>()
    }

    fn normalized(&self, url: &Url) -> Option<Url> {
        crate::fetch::url::normalize_url(url.clone(), self.limits.keep_query).ok()
    }

    /// One page of the current level was fetched: `requested` is its URL,
    /// `final_url` where it was served from, `links` what it links to (none
    /// for a failure or a page that is not HTML) and `x_robots_tag` its
    /// header. Pages may come in any order. A canonical target fetched
    /// beyond the limits is only a verdict: its links are not read.
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
        let own = match &landed {
            Some(f) => {
                let id = self.urls.intern(f.as_str()).map(|(id, _)| id);
                self.finals.extend(id);
                id
            }
            None => self.urls.id(requested.as_str()),
        };
        if self.urls.id(requested.as_str()).is_some_and(|id| self.beyond.contains(&id)) {
            return;
        }
        let pattern = trap::pattern(requested).map(|p| hash(&p));
        self.level.push((key, pattern, sketch));
        let Some(links) = links else {
            return;
        };
        // A URL of a trap pattern is judged with its pattern; chains of
        // repeats are cut among the URLs no pattern covers.
        let expand = self.repeats.page(self.urls.id(requested.as_str()), sketch, pattern.is_some());
        if expand == Expand::No {
            self.not_followed.repeating += (links.links.len() + links.dropped) as u64;
            return;
        }
        self.not_followed.unusable += links.dropped as u64;
        let page_nofollow = links.nofollow || x_robots_tag.is_some_and(forbids_following);
        let mut targets: Vec<u32> = Vec::new();
        let mut canonical = None;
        for link in &links.links {
            let Some(url) = self.normalized(&link.url) else {
                self.not_followed.unusable += 1;
                continue;
            };
            if !self.scope.contains(&url) {
                self.not_followed.out_of_scope += 1;
                continue;
            }
            self.note_folded(&link.url, &url);
            let text = url.as_str();
            if (page_nofollow || link.nofollow) && !self.limits.follow_nofollow {
                self.not_followed.nofollow += 1;
                if link.kind != LinkKind::Canonical
                    && let Some(id) = self.urls.id(text)
                    && Some(id) != own
                {
                    targets.push(id);
                }
                continue;
            }
            if !self.limits.include.is_empty() && !self.limits.include.iter().any(|r| r.is_match(text)) {
                self.not_followed.excluded += 1;
                continue;
            }
            if self.limits.exclude.iter().any(|r| r.is_match(text)) {
                self.not_followed.excluded += 1;
                continue;
            }
            let Some((id, new)) = self.urls.intern(text) else {
                self.not_followed.unusable += 1;
                continue;
            };
            if new {
                self.found.push(id);
            }
            if expand == Expand::Original {
                self.repeats.mark(id);
            }
            if link.kind == LinkKind::Canonical {
                canonical = canonical.or((Some(id) != own).then_some(id));
            } else if Some(id) != own {
                targets.push(id);
            }
        }
        self.canonicals.extend(canonical);
        targets.sort_unstable();
        targets.dedup();
        self.edges.extend(targets.into_iter().map(|t| (key, t)));
    }

    /// Records a link the normalization made another URL (a tracking
    /// parameter dropped): only the path or query count, as a user would
    /// call the URLs different. A linked URL that normalization changes is
    /// never one the crawl follows, so it is new to [`Urls`] exactly once,
    /// whoever links it; what it folds into is worked out again at the end
    /// (interning it here would hide it from the queue).
    fn note_folded(&mut self, linked: &Url, into: &Url) {
        if linked.path() == into.path() && linked.query() == into.query() {
            return;
        }
        if let Some((id, true)) = self.urls.intern(linked.as_str()) {
            self.folded.push(id);
        }
    }

    /// Ends the current level and gives the ids of the URLs of the next
    /// one ([`Frontier::url`]), sorted by URL; empty when the crawl is done.
    pub fn next_level(&mut self) -> Vec<u32> {
        self.judge_level();
        let mut candidates = std::mem::take(&mut self.found);
        // Patterns cleared by this level release the URLs they held back.
        for (_, p) in self.patterns.values_mut() {
            if p.verdict == Verdict::Cleared && !p.waiting.is_empty() {
                candidates.append(&mut p.waiting);
            }
        }
        candidates.retain(|id| !self.finals.contains(id));
        let urls = &self.urls;
        candidates.sort_unstable_by(|&a, &b| urls.get(a).cmp(urls.get(b)));
        let next_depth = self.depth + 1;
        let mut next = Vec::with_capacity(candidates.len());
        if self.limits.max_depth.is_some_and(|d| next_depth > d) {
            self.not_followed.beyond_depth += candidates.len() as u64;
            candidates.iter().for_each(|&id| self.cut.set(id));
        } else {
            self.admit(candidates, &mut next);
            if let Some(max) = self.limits.max_pages {
                let room = max.saturating_sub(self.fetched) as usize;
                if next.len() > room {
                    self.not_followed.beyond_max_pages += (next.len() - room) as u64;
                    next[room..].iter().for_each(|&id| self.cut.set(id));
                    next.truncate(room);
                }
            }
        }
        next.iter().for_each(|&id| self.handed.set(id));
        if !next.is_empty() {
            self.reached = next_depth;
        }
        next.extend(self.canonicals_beyond());
        if !next.is_empty() {
            self.depth = next_depth;
        }
        self.fetched += next.len() as u64;
        next
    }

    /// Moves the candidates (sorted) that no trap holds back to `next`.
    fn admit(&mut self, candidates: Vec<u32>, next: &mut Vec<u32>) {
        for id in candidates {
            let pattern = Url::parse(self.urls.get(id)).ok().and_then(|u| trap::pattern(&u));
            let Some(pattern) = pattern else {
                next.push(id);
                continue;
            };
            let (_, p) = self.patterns.entry(hash(&pattern)).or_insert_with(|| (pattern, Pattern::default()));
            match p.verdict {
                Verdict::Trap => p.skipped += 1,
                Verdict::Open if p.admitted >= TRAP_PAGES => p.waiting.push(id),
                Verdict::Open | Verdict::Cleared => {
                    if p.verdict == Verdict::Open {
                        p.admitted += 1;
                    }
                    next.push(id);
                }
            }
        }
    }

    /// The canonical targets of the level just fetched that the limits left
    /// out, sorted by URL: fetched anyway, once each, so the audit knows
    /// what they answer (live, gone, moved, noindex) rather than guess. At
    /// most one a page, and their own canonicals are not followed.
    fn canonicals_beyond(&mut self) -> Vec<u32> {
        let mut targets = std::mem::take(&mut self.canonicals);
        targets.retain(|&id| self.cut.has(id) && !self.handed.has(id) && !self.finals.contains(&id));
        let urls = &self.urls;
        targets.sort_unstable_by(|&a, &b| urls.get(a).cmp(urls.get(b)));
        targets.dedup();
        for &id in &targets {
            self.handed.set(id);
            self.beyond.insert(id);
        }
        targets
    }

    /// The URL of an id [`Frontier::next_level`] gave.
    pub fn url(&self, id: u32) -> &str {
        self.urls.get(id)
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
        self.repeats.end_level();
        let mut level = std::mem::take(&mut self.level);
        level.sort_by_key(|(k, _, _)| *k);
        for (_, pattern, sketch) in level {
            if let Some((_, p)) = pattern.and_then(|h| self.patterns.get_mut(&h)) {
                p.judge(sketch);
            }
        }
        // A pattern judged a trap skips what it held back.
        for (_, p) in self.patterns.values_mut() {
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
        for (_, (pattern, p)) in self.patterns.drain() {
            if p.verdict == Verdict::Trap {
                traps.push(Trap { pattern, fetched: p.admitted, skipped: p.skipped });
            } else {
                self.not_followed.beyond_max_pages += p.waiting.len() as u64;
            }
        }
        traps.sort_by(|a, b| a.pattern.cmp(&b.pattern));
        let mut inlinks: BTreeMap<Box<str>, u32> = BTreeMap::new();
        for &(_, to) in &self.edges {
            *inlinks.entry(self.urls.get(to).into()).or_default() += 1;
        }
        let mut edges: Vec<(DocKey, Box<str>)> =
            self.edges.iter().map(|&(from, to)| (from, self.urls.get(to).into())).collect();
        edges.sort_unstable();
        let urls = &self.urls;
        self.folded.sort_unstable_by(|&a, &b| urls.get(a).cmp(urls.get(b)));
        let folded_beyond = self.folded.len().saturating_sub(MAX_FOLDED) as u64;
        let folded = self.folded[..self.folded.len().min(MAX_FOLDED)]
            .iter()
            .filter_map(|&id| {
                let linked = urls.get(id);
                let into = self.normalized(&Url::parse(linked).ok()?)?;
                Some((linked.into(), into.as_str().into()))
            })
            .collect();
        CrawlSummary {
            pages: self.fetched - self.not_followed.robots,
            depth: self.reached,
            canonicals_beyond: self.beyond.len() as u64,
            not_followed: self.not_followed,
            traps,
            edges,
            inlinks,
            moved_starts: Vec::new(),
            folded,
            folded_beyond,
            listed: None,
        }
    }
}

/// What a crawl did, besides the pages it fetched.
#[derive(Debug, Clone, Default)]
pub struct CrawlSummary {
    /// Pages fetched (start pages and canonical targets beyond the limits
    /// included; none robots.txt disallows).
    pub pages: u64,
    /// The deepest level fetched (canonical targets beyond the limits aside).
    pub depth: u32,
    /// Canonical targets beyond `--max-depth` or `--max-pages` fetched
    /// anyway (at most one a page), so their verdict is known; in `pages`,
    /// and still counted as links not followed.
    pub canonicals_beyond: u64,
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
    /// Links the crawl's URL normalization folded into another URL
    /// (tracking parameters dropped, ...): (linked URL, folded into),
    /// sorted, without repeats; the first [`MAX_FOLDED`].
    pub folded: Vec<(Box<str>, Box<str>)>,
    /// Folded links past the first [`MAX_FOLDED`], not listed.
    pub folded_beyond: u64,
    /// The URLs the sitemaps given as inputs listed (normalized, sorted),
    /// when any was given: orphan and unlisted pages are judged by them.
    pub listed: Option<Vec<Box<str>>>,
}

/// A sitemap's URLs as [`CrawlSummary::listed`] holds them: normalized as
/// the crawl normalizes the URLs it follows (so they compare with
/// [`CrawlSummary::edges`] and [`CrawlSummary::inlinks`]), sorted, once
/// each; what is no http(s) URL is left out.
pub fn listed<'a>(urls: impl IntoIterator<Item = &'a str>, keep_query: bool) -> Vec<Box<str>> {
    let mut listed: Vec<Box<str>> = urls
        .into_iter()
        .filter_map(|u| crate::fetch::url::normalize(u, keep_query).ok())
        .map(|u| u.as_str().into())
        .collect();
    listed.sort_unstable();
    listed.dedup();
    listed
}

fn hash(pattern: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(pattern.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::links::Link;
    use super::super::scope::ScopeKind;
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// A frontier whose start page https://example.com/ was handed out.
    fn frontier(limits: Limits) -> Frontier {
        let mut f = Frontier::new(Scope::new(ScopeKind::Host), limits);
        f.add_start(&u("https://example.com/"));
        f.started(1);
        f
    }

    fn links(links: &[(&str, LinkKind, bool)]) -> PageLinks {
        let links = links.iter().map(|&(l, kind, nofollow)| Link { url: u(l), kind, nofollow }).collect();
        PageLinks { links, ..PageLinks::default() }
    }

    /// Page `key` served from `url` itself, linking `to` (followable anchors).
    fn visit(f: &mut Frontier, key: u64, url: &str, to: &[&str]) {
        let to: Vec<(&str, LinkKind, bool)> = to.iter().map(|&t| (t, LinkKind::Anchor, false)).collect();
        f.observe(DocKey(key), &u(url), Some(&u(url)), Some(&links(&to)), None, None);
    }

    fn level(f: &mut Frontier) -> Vec<String> {
        f.next_level().into_iter().map(|id| f.url(id).to_string()).collect()
    }

    #[test]
    fn links_the_normalization_changes_are_kept_with_what_they_fold_into() {
        let mut f = frontier(Limits::default());
        let page = links(&[
            ("https://example.com/a?utm_source=x", LinkKind::Anchor, false),
            ("https://example.com/a?utm_source=y", LinkKind::Anchor, false),
            ("https://example.com/c?utm_medium=m&id=2", LinkKind::Anchor, false),
            // Only the host's case, the default port and a fragment: no other URL.
            ("https://EXAMPLE.com:443/b#part", LinkKind::Anchor, false),
            // Not followed, still linked: kept.
            ("https://example.com/n?gclid=1", LinkKind::Anchor, true),
            // Out of scope: not the site's link.
            ("https://other.org/?utm_source=z", LinkKind::Anchor, false),
        ]);
        let start = u("https://example.com/");
        f.observe(DocKey(0), &start, Some(&start), Some(&page), None, None);
        assert_eq!(level(&mut f), ["https://example.com/a", "https://example.com/b", "https://example.com/c?id=2"]);
        // Linked again from another page: listed once.
        visit(&mut f, 1, "https://example.com/a", &["https://example.com/a?utm_source=x", "https://example.com/"]);
        visit(&mut f, 2, "https://example.com/b", &[]);
        visit(&mut f, 3, "https://example.com/c?id=2", &[]);
        assert!(level(&mut f).is_empty());
        let s = f.finish();
        let folded: Vec<(&str, &str)> = s.folded.iter().map(|(a, b)| (&**a, &**b)).collect();
        assert_eq!(
            folded,
            [
                ("https://example.com/a?utm_source=x", "https://example.com/a"),
                ("https://example.com/a?utm_source=y", "https://example.com/a"),
                ("https://example.com/c?utm_medium=m&id=2", "https://example.com/c?id=2"),
                ("https://example.com/n?gclid=1", "https://example.com/n"),
            ]
        );
        assert_eq!(s.folded_beyond, 0);
        // The folded URLs are no pages, and link no inlink of their own.
        assert_eq!(s.pages, 4);
        assert!(s.inlinks.keys().all(|k| !k.contains("utm_")), "{:?}", s.inlinks);
    }

    #[test]
    fn folded_links_are_listed_up_to_a_bound_and_the_rest_counted() {
        let many = |from: usize| -> Vec<String> {
            (from..from + MAX_FOLDED / 2 + 3).map(|i| format!("https://example.com/p{i:06}?utm_source=x")).collect()
        };
        let (one, two) = (many(0), many(MAX_FOLDED / 2 + 3));
        fn refs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        // Two pages of a level observed in either order: the same list.
        let crawl = |first: bool| {
            let mut f = frontier(Limits { max_depth: Some(0), ..Limits::default() });
            let mut pages = [(0, "https://example.com/", refs(&one)), (1, "https://example.com/x", refs(&two))];
            if !first {
                pages.reverse();
            }
            for (key, url, to) in &pages {
                visit(&mut f, *key, url, to);
            }
            assert!(level(&mut f).is_empty());
            f.finish()
        };
        let s = crawl(true);
        assert_eq!(s.folded.len(), MAX_FOLDED);
        assert_eq!(s.folded_beyond, 6);
        assert_eq!(&*s.folded[0].0, "https://example.com/p000000?utm_source=x");
        assert_eq!(&*s.folded[0].1, "https://example.com/p000000");
        assert_eq!(&*s.folded[MAX_FOLDED - 1].1, format!("https://example.com/p{:06}", MAX_FOLDED - 1));
        assert_eq!(crawl(false).folded, s.folded);
    }

    /// Page `key` served from `url`, naming `canonical` and linking `to`.
    fn visit_canonical(f: &mut Frontier, key: u64, url: &str, canonical: &str, to: &[&str]) {
        let mut named = vec![(canonical, LinkKind::Canonical, false)];
        named.extend(to.iter().map(|&t| (t, LinkKind::Anchor, false)));
        f.observe(DocKey(key), &u(url), Some(&u(url)), Some(&links(&named)), None, None);
    }

    #[test]
    fn a_canonical_target_beyond_the_depth_is_fetched_once_and_read_no_further() {
        let exclude = vec![Regex::new("/excluded").unwrap()];
        let mut f = frontier(Limits { max_depth: Some(1), exclude, ..Limits::default() });
        visit(
            &mut f,
            0,
            "https://example.com/",
            &["https://example.com/a", "https://example.com/b", "https://example.com/c"],
        );
        assert_eq!(level(&mut f), ["https://example.com/a", "https://example.com/b", "https://example.com/c"]);
        visit_canonical(
            &mut f,
            1,
            "https://example.com/a",
            "https://example.com/target",
            &["https://example.com/deep"],
        );
        // Named twice: fetched once. Its own URL, or one excluded: nothing.
        visit_canonical(&mut f, 2, "https://example.com/b", "https://example.com/target", &[]);
        visit_canonical(&mut f, 3, "https://example.com/c", "https://example.com/c", &["https://example.com/excluded"]);
        assert_eq!(level(&mut f), ["https://example.com/target"]);
        assert_eq!(f.depth(), 2, "a level of its own, for the walk");
        // Its links and canonical are not followed.
        visit_canonical(&mut f, 4, "https://example.com/target", "https://example.com/t2", &["https://example.com/t3"]);
        assert!(level(&mut f).is_empty());
        let s = f.finish();
        assert_eq!((s.pages, s.depth, s.canonicals_beyond), (5, 1, 1));
        assert_eq!(s.not_followed.beyond_depth, 2);
        assert!(!s.inlinks.contains_key("https://example.com/t3"));

        let nofollow = {
            let mut f = frontier(Limits { max_depth: Some(0), ..Limits::default() });
            let page = links(&[("https://example.com/target", LinkKind::Canonical, true)]);
            let start = u("https://example.com/");
            f.observe(DocKey(0), &start, Some(&start), Some(&page), None, None);
            level(&mut f)
        };
        assert!(nofollow.is_empty(), "a nofollow canonical is not fetched: {nofollow:?}");
    }

    #[test]
    fn canonical_targets_beyond_max_pages_are_fetched_one_a_page_at_most() {
        let mut f = frontier(Limits { max_pages: Some(3), ..Limits::default() });
        visit(
            &mut f,
            0,
            "https://example.com/",
            &["https://example.com/a", "https://example.com/b", "https://example.com/c"],
        );
        assert_eq!(level(&mut f), ["https://example.com/a", "https://example.com/b"]);
        // /c was cut by --max-pages at this level, /d at the next: both
        // canonical targets, both fetched; /e only linked, not.
        visit_canonical(&mut f, 1, "https://example.com/a", "https://example.com/c", &["https://example.com/e"]);
        visit_canonical(&mut f, 2, "https://example.com/b", "https://example.com/d", &[]);
        assert_eq!(level(&mut f), ["https://example.com/c", "https://example.com/d"]);
        visit(&mut f, 3, "https://example.com/c", &["https://example.com/f"]);
        visit(&mut f, 4, "https://example.com/d", &[]);
        assert!(level(&mut f).is_empty());
        let s = f.finish();
        assert_eq!((s.pages, s.depth, s.canonicals_beyond), (5, 1, 2));
        assert_eq!(s.not_followed.beyond_max_pages, 3);
    }

    #[test]
    fn urls_are_kept_once_across_blocks() {
        let mut urls = Urls::default();
        let names: Vec<String> =
            (0..40_000).map(|i| format!("https://example.com/{i:05}/{}", "x".repeat(40))).collect();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(urls.intern(n), Some((i as u32, true)));
        }
        assert!(urls.blocks.len() > 1, "the text spans blocks");
        for (i, n) in names.iter().enumerate() {
            assert_eq!(urls.intern(n), Some((i as u32, false)));
            assert_eq!(urls.get(i as u32), n);
            assert_eq!(urls.id(n), Some(i as u32));
        }
        assert_eq!(urls.id("https://example.com/other"), None);
        assert_eq!(urls.intern(&"y".repeat(70_000)), None);
        assert_eq!(urls.len(), names.len());
    }
}
