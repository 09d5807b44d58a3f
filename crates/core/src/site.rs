//! Which site a document belongs to, when its address does not say.
//!
//! A site decides two things: whose pages a template is learned from
//! ([`crate::template`]) and which similarity rule a pair is held to (the
//! same-site threshold, or the cross-site one across sites). A URL names its
//! site (its host); a local file only names its folder, which is a site when
//! pages were saved one folder per site, and wrong when many sites' pages
//! sit in one folder (a dump, saved browser pages, a corpus without URLs):
//! then every pair gets the same-site rule, and a copy in another site's
//! template is held to it.
//!
//! For local files and archive records a page's site is therefore, in turn:
//!
//! 1. **canonical**: the host of the address the page names for itself
//!    (`<link rel=canonical>`, `og:url`, `<base href>`; absolute http(s)
//!    only), read by whoever parsed the page ([`SiteSignals::hint`]), when
//!    the page is in that host's home: the folder, or template group, with
//!    most of the pages naming it. Elsewhere the page is most often a copy
//!    naming its original (syndication, a print version) and keeps the site
//!    of its own folder or group, whose template it has;
//! 2. **template**: in a folder whose pages fall into several template
//!    groups (pages whose template tokens, [`SiteSignals::template`], are
//!    alike: Jaccard at least [`TEMPLATE_JACCARD`]), its group; a group
//!    that is the home of one host is that host;
//! 3. **folder** (a local file's directory) or **host** (a URL's), as
//!    before.
//!
//! Groups are made in id order and named by their first id, so the answer
//! depends on the set of pages, not on their order or keys.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::candidates::LshParams;
use crate::sketch::MinHasher;
use crate::template::{TemplateScope, site_of};

/// Least Jaccard similarity of two pages' template tokens for them to share
/// a template.
pub const TEMPLATE_JACCARD: f64 = 0.6;
/// MinHash permutations for proposing pages of one template.
const TEMPLATE_PERMUTATIONS: usize = 64;
const TEMPLATE_SEED: u64 = 0x5173_7e3a;

/// What decided a document's site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteBasis {
    /// A local file's directory.
    Folder,
    /// A URL's host.
    Host,
    /// The host of the address the page names for itself.
    Canonical,
    /// The pages that share its template.
    Template,
}

impl SiteBasis {
    /// The name in reports (`folder`, `host`, `canonical`, `template`).
    pub fn as_str(self) -> &'static str {
        match self {
            SiteBasis::Folder => "folder",
            SiteBasis::Host => "host",
            SiteBasis::Canonical => "canonical",
            SiteBasis::Template => "template",
        }
    }
}

/// A document's site and what decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// A host (`example.com`), a folder (`dir:pages`) or a template group
    /// (`dir:pages#p00012.html`, after its first page).
    pub name: String,
    pub basis: SiteBasis,
}

impl Site {
    /// The site its id names ([`site_of`]): a URL's host, a file's folder.
    pub fn of_id(id: &str, scope: TemplateScope) -> Option<Site> {
        let basis = if crate::doc::is_url(id) { SiteBasis::Host } else { SiteBasis::Folder };
        site_of(id, scope).map(|name| Site { name, basis })
    }
}

/// What a page shows of its site, read with its markup; empty for text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteSignals {
    /// The lowercase host of the absolute http(s) address the page names
    /// for itself.
    pub hint: Option<String>,
    /// Hashes of its template's tokens (class and id names, stylesheet and
    /// script addresses), sorted and distinct, at most the
    /// [`TEMPLATE_SAMPLE`] smallest ([`template_sample`]): alike on pages of
    /// one template whatever their text.
    pub template: Vec<u64>,
}

/// Template tokens kept per page. A page names up to a few thousand class
/// names and link texts, and every page's were held until sites were
/// assigned (12 KB a page at 20,000 pages, more than half of `cluster`'s
/// heap). The smallest hashes of a set are a uniform sample of it (a
/// bottom-k sketch), from which [`sample_jaccard`] estimates two sets'
/// Jaccard within about 0.04 at the template threshold; exactly for pages
/// with fewer tokens than this.
pub const TEMPLATE_SAMPLE: usize = 128;

/// `tokens` (well-mixed hashes) sorted and distinct, cut to the
/// [`TEMPLATE_SAMPLE`] smallest.
pub fn template_sample(mut tokens: Vec<u64>) -> Vec<u64> {
    tokens.sort_unstable();
    tokens.dedup();
    tokens.truncate(TEMPLATE_SAMPLE);
    tokens.shrink_to_fit();
    tokens
}

/// The Jaccard similarity of two sets estimated from their samples
/// ([`template_sample`]): among the smallest [`TEMPLATE_SAMPLE`] values of
/// the samples' union, the share in both. Exact when the union has no more
/// values than that.
pub fn sample_jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut union, mut both) = (0, 0, 0usize, 0usize);
    while union < TEMPLATE_SAMPLE && (i < a.len() || j < b.len()) {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                both += 1;
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => i += 1,
            (Some(_), None) => i += 1,
            _ => j += 1,
        }
        union += 1;
    }
    if union == 0 { 0.0 } else { both as f64 / union as f64 }
}

/// The lowercase host of `url` when it is an absolute http(s) address.
pub fn hint_host(url: &str) -> Option<String> {
    let u = url::Url::parse(url.trim()).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    u.host_str().filter(|h| !h.is_empty()).map(str::to_ascii_lowercase)
}

/// One document's input to [`assign`].
#[derive(Debug, Clone, Copy)]
pub struct SiteInput<'a> {
    pub id: &'a str,
    pub signals: &'a SiteSignals,
}

/// Every document's site (see the module documentation), in `docs`' order.
/// URLs keep their host; with [`TemplateScope::Host`] local files have none,
/// as before.
pub fn assign(docs: &[SiteInput<'_>], scope: TemplateScope) -> Vec<Option<Site>> {
    let mut out: Vec<Option<Site>> = docs.iter().map(|d| Site::of_id(d.id, scope)).collect();
    if scope != TemplateScope::HostOrDirectory {
        return out;
    }
    let mut folders: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, site) in out.iter().enumerate() {
        if let Some(s) = site.as_ref().filter(|s| s.basis == SiteBasis::Folder) {
            folders.entry(s.name.as_str()).or_default().push(i);
        }
    }
    // Units of one site: each template group of a folder that splits, else
    // the whole folder; in folder and then group order.
    let mut units: Vec<(String, Option<usize>, Vec<usize>)> = Vec::new();
    for (folder, mut members) in folders {
        members.sort_by(|&a, &b| docs[a].id.cmp(docs[b].id));
        let sets: Vec<&[u64]> = members.iter().map(|&i| docs[i].signals.template.as_slice()).collect();
        let groups = template_groups(&sets);
        let split = groups.iter().flatten().max().is_some_and(|&g| g > 0);
        let mut by_group: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
        for (m, g) in members.iter().zip(&groups) {
            by_group.entry(if split { *g } else { None }).or_default().push(*m);
        }
        units.extend(by_group.into_iter().map(|(g, unit)| (folder.to_string(), g, unit)));
    }
    // A host's home: the unit with most of the pages that name it (the
    // first on a tie). A page naming a host from another unit is most often
    // a copy that names its original (syndication, a print version): its
    // template is its own unit's, and so is its site.
    let mut named: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (u, (_, _, unit)) in units.iter().enumerate() {
        for &i in unit {
            if let Some(host) = &docs[i].signals.hint {
                let counts = named.entry(host.as_str()).or_insert_with(|| vec![0; units.len()]);
                counts[u] += 1;
            }
        }
    }
    let home: HashMap<&str, usize> = named
        .iter()
        .map(|(host, counts)| {
            let most = counts.iter().max().copied().unwrap_or(0);
            (*host, counts.iter().position(|&c| c == most).unwrap_or(0))
        })
        .collect();
    for (u, (folder, group, unit)) in units.iter().enumerate() {
        let at_home = |i: usize| docs[i].signals.hint.as_deref().filter(|h| home.get(h) == Some(&u));
        let mut hosts: Vec<&str> = unit.iter().filter_map(|&i| at_home(i)).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let (name, basis) = match (hosts.as_slice(), group) {
            ([host], Some(_)) => (host.to_string(), SiteBasis::Template),
            ([host], None) => (host.to_string(), SiteBasis::Folder),
            (_, Some(_)) => (format!("{folder}#{}", file_name(docs[unit[0]].id)), SiteBasis::Template),
            (_, None) => (folder.clone(), SiteBasis::Folder),
        };
        for &i in unit {
            out[i] = Some(match at_home(i) {
                Some(host) => Site { name: host.to_string(), basis: SiteBasis::Canonical },
                None => Site { name: name.clone(), basis },
            });
        }
    }
    out
}

fn file_name(id: &str) -> &str {
    id.rsplit(['/', '\\']).next().unwrap_or(id)
}

/// Template groups of `sets` (taken in order): each set joins the group of
/// the first earlier group leader whose set it is alike ([`TEMPLATE_JACCARD`]),
/// else leads a group of its own. Groups are numbered from 0 in order of
/// their leaders; an empty set is in no group.
pub fn template_groups(sets: &[&[u64]]) -> Vec<Option<usize>> {
    let hasher = MinHasher::new(TEMPLATE_PERMUTATIONS, TEMPLATE_SEED);
    // Called once per folder: the banding is worked out once per process.
    static PARAMS: std::sync::OnceLock<LshParams> = std::sync::OnceLock::new();
    let params = *PARAMS.get_or_init(|| LshParams::optimal(TEMPLATE_JACCARD, TEMPLATE_PERMUTATIONS));
    // Band key to the groups whose leader has it, in group order.
    let mut table: HashMap<(usize, u64), Vec<usize>> = HashMap::new();
    let mut leaders: Vec<&[u64]> = Vec::new();
    let mut out = Vec::with_capacity(sets.len());
    for set in sets {
        if set.is_empty() {
            out.push(None);
            continue;
        }
        let sig = hasher.sketch(set);
        let keys: Vec<(usize, u64)> = (0..params.bands)
            .map(|b| (b, xxhash_rust::xxh3::xxh3_64(&bytes_of(&sig[b * params.rows..(b + 1) * params.rows]))))
            .collect();
        let mut candidates: Vec<usize> = keys.iter().filter_map(|k| table.get(k)).flatten().copied().collect();
        candidates.sort_unstable();
        candidates.dedup();
        let found = candidates.into_iter().find(|&g| sample_jaccard(set, leaders[g]) >= TEMPLATE_JACCARD);
        let group = found.unwrap_or_else(|| {
            leaders.push(set);
            let g = leaders.len() - 1;
            for k in keys {
                table.entry(k).or_default().push(g);
            }
            g
        });
        out.push(Some(group));
    }
    out
}

fn bytes_of(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(site: u64, n: u64, extra: u64) -> Vec<u64> {
        let mut t: Vec<u64> = (0..n).map(|i| site * 1000 + i).chain((0..extra).map(|i| 900_000 + i)).collect();
        t.sort_unstable();
        t
    }

    fn signals(hint: Option<&str>, template: Vec<u64>) -> SiteSignals {
        SiteSignals { hint: hint.map(str::to_string), template }
    }

    fn sites(docs: &[(&str, SiteSignals)]) -> Vec<(String, &'static str)> {
        let inputs: Vec<SiteInput> = docs.iter().map(|(id, s)| SiteInput { id, signals: s }).collect();
        assign(&inputs, TemplateScope::HostOrDirectory)
            .into_iter()
            .map(|s| s.map(|s| (s.name, s.basis.as_str())).unwrap_or_default())
            .collect()
    }

    #[test]
    fn pages_of_one_flat_folder_are_grouped_by_template() {
        // Two sites' templates sharing some generic tokens, and a page that
        // names its own address.
        let docs = vec![
            ("dump/b1.html", signals(None, tokens(1, 30, 8))),
            ("dump/a1.html", signals(None, tokens(2, 30, 8))),
            ("dump/b2.html", signals(None, tokens(1, 28, 8))),
            ("dump/a2.html", signals(None, tokens(2, 31, 8))),
            ("dump/c1.html", signals(Some("news.example"), tokens(3, 30, 8))),
            ("dump/c2.html", signals(None, tokens(3, 29, 8))),
            ("dump/bare.html", signals(None, Vec::new())),
        ];
        let found = sites(&docs);
        let want = [
            ("dump/b1.html", "dir:dump#b1.html", "template"),
            ("dump/a1.html", "dir:dump#a1.html", "template"),
            ("dump/b2.html", "dir:dump#b1.html", "template"),
            ("dump/a2.html", "dir:dump#a1.html", "template"),
            ("dump/c1.html", "news.example", "canonical"),
            ("dump/c2.html", "news.example", "template"),
            ("dump/bare.html", "dir:dump", "folder"),
        ];
        for ((id, name, basis), got) in want.iter().zip(&found) {
            assert_eq!((name.to_string(), *basis), got.clone(), "{id}");
        }
        // The same sets in another order: the same sites.
        let mut turned = docs.clone();
        turned.reverse();
        let mut back = sites(&turned);
        back.reverse();
        assert_eq!(back, found);
    }

    #[test]
    fn a_folder_of_one_template_and_urls_keep_their_site() {
        let docs = vec![
            ("site/a.html", signals(None, tokens(1, 30, 0))),
            ("site/b.html", signals(None, tokens(1, 27, 0))),
            ("site/c.html", signals(None, Vec::new())),
            ("https://Host.example/x", signals(Some("other.example"), tokens(2, 30, 0))),
        ];
        let found = sites(&docs);
        assert_eq!(found[0], ("dir:site".to_string(), "folder"));
        assert_eq!(found[1], found[0]);
        assert_eq!(found[2], found[0]);
        assert_eq!(found[3], ("host.example".to_string(), "host"));
        // One template whose pages name one host: that host for all of them.
        let docs = vec![
            ("site/a.html", signals(Some("blog.example"), tokens(1, 30, 0))),
            ("site/b.html", signals(None, tokens(1, 30, 0))),
        ];
        assert_eq!(sites(&docs), [("blog.example".into(), "canonical"), ("blog.example".into(), "folder")]);
    }

    #[test]
    fn a_copy_naming_its_original_keeps_its_own_site() {
        // One folder per site: the syndicated copy in b/ names a's host.
        let docs = vec![
            ("a/1.html", signals(Some("a.example"), tokens(1, 30, 0))),
            ("a/2.html", signals(Some("a.example"), tokens(1, 30, 0))),
            ("b/1.html", signals(Some("b.example"), tokens(2, 30, 0))),
            ("b/copy.html", signals(Some("a.example"), tokens(2, 30, 0))),
        ];
        let found = sites(&docs);
        assert_eq!(found[1], ("a.example".into(), "canonical"));
        assert_eq!(found[3], ("b.example".into(), "folder"), "not a.example: b/ is a.example's home by no count");
        // One flat folder: the copy is in b's template group.
        let docs = vec![
            ("dump/a1.html", signals(Some("a.example"), tokens(1, 30, 0))),
            ("dump/a2.html", signals(Some("a.example"), tokens(1, 30, 0))),
            ("dump/b1.html", signals(None, tokens(2, 30, 0))),
            ("dump/b2.html", signals(Some("a.example"), tokens(2, 30, 0))),
        ];
        let found = sites(&docs);
        assert_eq!(found[0], ("a.example".into(), "canonical"));
        assert_eq!(found[3], ("dir:dump#b1.html".into(), "template"));
        assert_eq!(found[2], found[3]);
    }

    #[test]
    fn template_samples_estimate_jaccard_and_are_exact_for_small_sets() {
        let mix = |mut x: u64| crate::sketch::minhash::splitmix64(&mut x);
        // 2,000 tokens each, 1,500 shared: Jaccard 0.6.
        let a: Vec<u64> = (0..2000).map(mix).collect();
        let b: Vec<u64> = (500..2500).map(mix).collect();
        let (sa, sb) = (template_sample(a), template_sample(b));
        assert_eq!((sa.len(), sb.len()), (TEMPLATE_SAMPLE, TEMPLATE_SAMPLE));
        let j = sample_jaccard(&sa, &sb);
        assert!((j - 0.6).abs() < 0.12, "{j}");
        // Under the sample size: the exact figure.
        let small = |r: std::ops::Range<u64>| template_sample(r.map(mix).collect());
        assert_eq!(sample_jaccard(&small(0..30), &small(10..40)), 20.0 / 40.0);
        assert_eq!(sample_jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn only_absolute_web_addresses_name_a_host() {
        assert_eq!(hint_host(" https://News.Example/a?b=1 ").as_deref(), Some("news.example"));
        assert_eq!(hint_host("/relative/path"), None);
        assert_eq!(hint_host("file:///tmp/a.html"), None);
        assert_eq!(hint_host("ftp://files.example/a"), None);
    }

    #[test]
    fn template_groups_follow_their_first_page_and_skip_empty_sets() {
        let (a, b) = (tokens(1, 20, 0), tokens(2, 20, 0));
        let groups = template_groups(&[&b, &[], &a, &b, &a]);
        assert_eq!(groups, [Some(0), None, Some(1), Some(0), Some(1)]);
    }
}
