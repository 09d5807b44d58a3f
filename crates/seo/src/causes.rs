//! Why a duplicate cluster exists and which of its URLs to keep, read off its
//! members' URLs, their canonical tags and the crawl's internal links.
//!
//! SEO crawlers show near-duplicate clusters and leave the user to read the
//! URLs; the usual causes are few and mechanical: a tracking, session, sort or
//! pagination parameter in internal links, a trailing slash, letter case, a
//! `/print` or `/amp` copy, `http` beside `https`, `www` beside the bare
//! host. [`causes`] names them; [`url_to_keep`] picks the URL the others
//! should point to and says why; [`rollup`] puts clusters that differ the
//! same way on one line; [`parameters`] says which parameters make duplicate
//! URLs and what to do about each.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use url::Url;
use webdup_core::params::{self, ParamKind};

/// One way a cluster's URLs differ.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// `http` and `https`.
    Scheme,
    /// The host with and without `www.`.
    Www,
    /// Other hosts (a copy on another site).
    Host,
    /// A query parameter present in some members only, or with other values.
    Parameter { name: String, kind: &'static str },
    /// The path with and without a trailing `/`.
    TrailingSlash,
    /// The path in other letter case.
    LetterCase,
    /// A path segment added (`print`, `amp`) or replaced (`2.1` | `2.2`).
    PathSegment { values: BTreeSet<String> },
    /// Paths that differ otherwise: the same content at unrelated URLs.
    Path,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Scheme => f.write_str("scheme (http/https)"),
            Cause::Www => f.write_str("host (www)"),
            Cause::Host => f.write_str("host"),
            Cause::Parameter { name, kind } => write!(f, "parameter `{name}` ({kind})"),
            Cause::TrailingSlash => f.write_str("trailing slash"),
            Cause::LetterCase => f.write_str("letter case"),
            Cause::PathSegment { values } => {
                f.write_str("path segment ")?;
                let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
                f.write_str(&quoted.join(" | "))
            }
            Cause::Path => f.write_str("different paths"),
        }
    }
}

fn bare(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

fn query_map(url: &Url) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in url.query_pairs() {
        m.entry(k.into_owned()).or_default().push(v.into_owned());
    }
    m
}

fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

/// Segment values by where they differ: a segment added at a position
/// (`print`, `amp`), or a segment replaced at a position (`2.1` | `2.2`).
/// One cause per place, so `/news/a` | `/news/a-old` | `/tag/a` reads as two
/// differences, not one list of four values.
type Segments = BTreeMap<(bool, usize), BTreeSet<String>>;

/// The path causes between two paths that are not equal.
fn path_causes(a: &str, b: &str, out: &mut Vec<Cause>, segment_values: &mut Segments) {
    let (ta, tb) = (a.trim_end_matches('/'), b.trim_end_matches('/'));
    if ta != tb && ta.eq_ignore_ascii_case(tb) {
        out.push(Cause::LetterCase);
    }
    if ta.eq_ignore_ascii_case(tb) {
        if a.ends_with('/') != b.ends_with('/') {
            out.push(Cause::TrailingSlash);
        }
        return;
    }
    let (sa, sb) = (segments(a), segments(b));
    let (short, long) = if sa.len() <= sb.len() { (&sa, &sb) } else { (&sb, &sa) };
    if long.len() == short.len() + 1 {
        // One segment inserted anywhere: /print/a, /a/amp.
        if let Some(i) = (0..long.len()).find(|&i| {
            long[..i].iter().zip(&short[..i]).all(|(x, y)| x.eq_ignore_ascii_case(y))
                && long[i + 1..].iter().zip(&short[i..]).all(|(x, y)| x.eq_ignore_ascii_case(y))
        }) {
            segment_values.entry((false, i)).or_default().insert(long[i].to_string());
            return;
        }
    }
    if sa.len() == sb.len() {
        let differing: Vec<usize> = (0..sa.len()).filter(|&i| !sa[i].eq_ignore_ascii_case(sb[i])).collect();
        if let [i] = differing[..] {
            let values = segment_values.entry((true, i)).or_default();
            values.insert(sa[i].to_string());
            values.insert(sb[i].to_string());
            return;
        }
    }
    out.push(Cause::Path);
}

/// What differs between `reference` (the URL kept, first) and the other
/// members' URLs, sorted and without repeats. URLs that do not parse are
/// compared as different paths.
pub fn causes(reference: &str, others: &[&str]) -> Vec<Cause> {
    let mut out: Vec<Cause> = Vec::new();
    let mut segment_values = Segments::new();
    let Ok(r) = Url::parse(reference) else {
        return if others.is_empty() { Vec::new() } else { vec![Cause::Path] };
    };
    let rq = query_map(&r);
    for other in others {
        let Ok(u) = Url::parse(other) else {
            out.push(Cause::Path);
            continue;
        };
        if u.scheme() != r.scheme() {
            out.push(Cause::Scheme);
        }
        let (rh, uh) = (r.host_str().unwrap_or_default(), u.host_str().unwrap_or_default());
        if rh != uh || r.port() != u.port() {
            out.push(if bare(rh) == bare(uh) && r.port() == u.port() { Cause::Www } else { Cause::Host });
        }
        let uq = query_map(&u);
        for name in rq.keys().chain(uq.keys()) {
            if rq.get(name) != uq.get(name) {
                out.push(Cause::Parameter { name: name.clone(), kind: params::kind(name).as_str() });
            }
        }
        if r.path() != u.path() {
            path_causes(r.path(), u.path(), &mut out, &mut segment_values);
        }
    }
    for values in segment_values.into_values() {
        out.push(Cause::PathSegment { values });
    }
    out.sort();
    out.dedup();
    out
}

/// One line for the causes of a cluster: `parameter `sort` (sort/filter);
/// trailing slash`.
pub fn summary(causes: &[Cause]) -> String {
    causes.iter().map(Cause::to_string).collect::<Vec<_>>().join("; ")
}

/// Clusters that differ the same way: each set of causes with the
/// positions (in `clusters`' order) of the clusters that have it, most
/// clusters first, then by summary. One pass over the clusters: a million
/// pages' clusters each with their own path segment made a scan of every
/// cluster for every set quadratic.
pub fn rollup<'a>(clusters: impl IntoIterator<Item = &'a [Cause]>) -> Vec<(&'a [Cause], Vec<usize>)> {
    let mut sets: BTreeMap<&'a [Cause], Vec<usize>> = BTreeMap::new();
    for (n, c) in clusters.into_iter().enumerate() {
        sets.entry(c).or_default().push(n);
    }
    let mut out: Vec<(&'a [Cause], Vec<usize>)> = sets.into_iter().collect();
    out.sort_by_cached_key(|(causes, of)| (std::cmp::Reverse(of.len()), summary(causes)));
    out
}

/// One member of a cluster, as [`url_to_keep`] weighs it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    pub url: &'a str,
    /// Its declared canonical target (absolute), if any.
    pub canonical: Option<&'a str>,
    /// Pages of the crawl that link to it; `None` without a crawl (the
    /// links are unknown, and the reason says nothing of them).
    pub inlinks: Option<u32>,
    /// Not `noindex` and answered 200.
    pub indexable: bool,
}

/// The URL a cluster's other members should point to, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Keep {
    pub url: String,
    /// Its position among the members; `None` for a declared canonical
    /// target outside the cluster.
    pub member: Option<usize>,
    /// In words: "declared canonical of 3 members; 14 internal links".
    pub reason: String,
}

fn links(n: Option<u32>) -> Option<String> {
    n.map(|n| if n == 1 { "1 internal link".into() } else { format!("{n} internal links") })
}

/// `first` and, when the crawl counted them, the links: "shortest URL; 2
/// internal links".
fn with_links(first: &str, n: Option<u32>) -> String {
    match links(n) {
        Some(l) => format!("{first}; {l}"),
        None => first.to_string(),
    }
}

/// Picks the URL to keep: the declared canonical target when every member
/// that declares one names the same; else, among indexable members (all if
/// none is), the one with the most internal links, then one that declares
/// itself canonical (a claim to be the original, which a `/print` copy
/// without a canonical does not make), then the fewest query parameters,
/// then the shortest URL, then the first by URL.
pub fn url_to_keep(members: &[Member]) -> Keep {
    let declared: BTreeSet<&str> = members.iter().filter_map(|m| m.canonical).collect();
    if let [target] = declared.iter().copied().collect::<Vec<_>>()[..] {
        let naming = members.iter().filter(|m| m.canonical == Some(target)).count();
        let member = members.iter().position(|m| m.url == target);
        let mut reason = format!("declared canonical of {naming} member{}", if naming == 1 { "" } else { "s" });
        if let Some(l) = member.and_then(|i| links(members[i].inlinks)) {
            reason.push_str(&format!("; {l}"));
        }
        return Keep { url: target.to_string(), member, reason };
    }
    let params = |m: &Member| Url::parse(m.url).map_or(0, |u| u.query_pairs().count());
    let own = |m: &Member| m.canonical == Some(m.url);
    let any_indexable = members.iter().any(|m| m.indexable);
    let mut order: Vec<usize> = (0..members.len()).filter(|&i| members[i].indexable || !any_indexable).collect();
    let rank = |i: &usize| {
        let m = &members[*i];
        (std::cmp::Reverse(m.inlinks), !own(m), params(m), m.url.len(), m.url)
    };
    order.sort_by_key(rank);
    let Some(&best) = order.first() else {
        return Keep { url: String::new(), member: None, reason: "no member".into() };
    };
    let m = &members[best];
    let passed_over = any_indexable && members.iter().any(|m| !m.indexable);
    let mut reason = match order.get(1).map(|&i| &members[i]) {
        None if passed_over => with_links("the only indexable member", m.inlinks),
        None => with_links("the only member", m.inlinks),
        Some(next) if next.inlinks < m.inlinks => format!("most internal links ({})", m.inlinks.unwrap_or(0)),
        Some(next) if own(m) && !own(next) => with_links("declares itself canonical", m.inlinks),
        Some(next) if params(next) > params(m) => with_links("fewest parameters", m.inlinks),
        Some(next) if next.url.len() > m.url.len() => with_links("shortest URL", m.inlinks),
        Some(_) => with_links("first by URL", m.inlinks),
    };
    // Rules that passed others over before the one that decided.
    let tied_on_links = order.iter().all(|&i| members[i].inlinks == m.inlinks);
    if own(m) && tied_on_links && order.iter().any(|&i| !own(&members[i])) && !reason.starts_with("declares") {
        reason = format!("declares itself canonical; {reason}");
    }
    if passed_over && order.len() > 1 {
        reason.push_str("; indexable");
    }
    Keep { url: m.url.to_string(), member: Some(best), reason }
}

/// A parameter that makes duplicate URLs, over a whole crawl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParameterRow {
    pub name: String,
    pub kind: &'static str,
    /// Duplicate URLs (members other than the one kept) it appears in or
    /// changes.
    pub duplicate_urls: usize,
    /// Clusters it makes.
    pub clusters: usize,
    pub advice: &'static str,
}

/// What to do about a parameter of `kind` that makes duplicates.
pub fn advice(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Tracking => "strip it from internal links; canonical to the URL without it",
        ParamKind::Session => "keep sessions in cookies, not URLs; strip it from links; Disallow it in robots.txt",
        ParamKind::SortFilter => {
            "canonical to the unsorted, unfiltered listing; Disallow it in robots.txt if it multiplies"
        }
        ParamKind::Pagination => {
            "give page 1 one URL (redirect ?page=1 to the listing); pages 2+ canonical to themselves"
        }
        ParamKind::Other => "canonical to the URL without it, or stop linking to it",
    }
}

/// The parameters that make duplicates, from each cluster's kept URL and
/// its other members: most duplicate URLs first, then by name.
pub fn parameters<'a>(clusters: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>) -> Vec<ParameterRow> {
    let mut rows: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (kept, others) in clusters {
        let mut in_cluster: BTreeSet<String> = BTreeSet::new();
        for other in &others {
            for c in causes(kept, &[other]) {
                if let Cause::Parameter { name, .. } = c {
                    rows.entry(name.clone()).or_default().0 += 1;
                    in_cluster.insert(name);
                }
            }
        }
        for name in in_cluster {
            rows.entry(name).or_default().1 += 1;
        }
    }
    let mut out: Vec<ParameterRow> = rows
        .into_iter()
        .map(|(name, (urls, clusters))| {
            let kind = params::kind(&name);
            ParameterRow { kind: kind.as_str(), advice: advice(kind), name, duplicate_urls: urls, clusters }
        })
        .collect();
    out.sort_by(|a, b| b.duplicate_urls.cmp(&a.duplicate_urls).then_with(|| a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(reference: &str, others: &[&str]) -> String {
        summary(&causes(reference, others))
    }

    #[test]
    fn every_variant_is_named() {
        let r = "https://www.example.com/shoes/red";
        assert_eq!(names(r, &["http://www.example.com/shoes/red"]), "scheme (http/https)");
        assert_eq!(names(r, &["https://example.com/shoes/red"]), "host (www)");
        assert_eq!(names(r, &["https://copy.example.org/shoes/red"]), "host");
        assert_eq!(names(r, &["https://www.example.com/shoes/red/"]), "trailing slash");
        assert_eq!(names(r, &["https://www.example.com/Shoes/Red"]), "letter case");
        assert_eq!(names(r, &["https://www.example.com/print/shoes/red"]), "path segment `print`");
        assert_eq!(names(r, &["https://www.example.com/shoes/red/amp"]), "path segment `amp`");
        assert_eq!(
            names(
                r,
                &["https://www.example.com/shoes/red?utm_source=mail", "https://www.example.com/shoes/red?sort=price"]
            ),
            "parameter `sort` (sort/filter); parameter `utm_source` (tracking)"
        );
        assert_eq!(names(r, &["https://www.example.com/shoes/red?PHPSESSID=ab12"]), "parameter `PHPSESSID` (session)");
        assert_eq!(names(r, &["https://www.example.com/boots/blue"]), "different paths");
        assert_eq!(
            names("https://e.com/news/a", &["https://e.com/news/a-old", "https://e.com/tag/a"]),
            "path segment `a` | `a-old`; path segment `news` | `tag`"
        );
        assert_eq!(names(r, &[r]), "");
    }

    #[test]
    fn version_folders_are_one_segment_and_roll_up() {
        let a = causes(
            "https://docs.example.com/2.3/api/read",
            &["https://docs.example.com/2.1/api/read", "https://docs.example.com/2.2/api/read"],
        );
        assert_eq!(summary(&a), "path segment `2.1` | `2.2` | `2.3`");
        let b = causes(
            "https://docs.example.com/2.3/api/write",
            &["https://docs.example.com/2.1/api/write", "https://docs.example.com/2.2/api/write"],
        );
        let c = causes("https://docs.example.com/a", &["https://docs.example.com/a/"]);
        let rolled = rollup([a.as_slice(), b.as_slice(), c.as_slice()]);
        assert_eq!(rolled.len(), 2);
        assert_eq!(rolled[0].1, vec![0, 1]);
        assert_eq!(summary(rolled[0].0), "path segment `2.1` | `2.2` | `2.3`");
        assert_eq!(rolled[1].1, vec![2]);
    }

    fn member(url: &'static str, canonical: Option<&'static str>, inlinks: u32) -> Member<'static> {
        Member { url, canonical, inlinks: Some(inlinks), indexable: true }
    }

    #[test]
    fn the_declared_canonical_is_kept_when_members_agree() {
        let c = Some("https://example.com/a");
        let k = url_to_keep(&[
            member("https://example.com/a?utm_source=x", c, 0),
            member("https://example.com/a", c, 14),
            member("https://example.com/print/a", None, 1),
        ]);
        assert_eq!(k.url, "https://example.com/a");
        assert_eq!(k.member, Some(1));
        assert_eq!(k.reason, "declared canonical of 2 members; 14 internal links");
    }

    #[test]
    fn without_agreement_links_then_parameters_then_length_decide() {
        let k = url_to_keep(&[
            member("https://example.com/a?sort=x", None, 2),
            member("https://example.com/long/a", None, 9),
        ]);
        assert_eq!((k.url.as_str(), k.reason.as_str()), ("https://example.com/long/a", "most internal links (9)"));
        let k = url_to_keep(&[
            member("https://example.com/a?sort=x", None, 2),
            member("https://example.com/a/b/c", None, 2),
        ]);
        assert_eq!(k.reason, "fewest parameters; 2 internal links");
        let k = url_to_keep(&[member("https://example.com/aa", None, 1), member("https://example.com/a", None, 1)]);
        assert_eq!((k.url.as_str(), k.reason.as_str()), ("https://example.com/a", "shortest URL; 1 internal link"));
        // Disagreeing canonicals are no declaration.
        let k = url_to_keep(&[
            member("https://example.com/x", Some("https://example.com/x"), 1),
            member("https://example.com/y", Some("https://example.com/y"), 5),
        ]);
        assert_eq!(k.url, "https://example.com/y");
        // A noindex member is kept only when none is indexable.
        let mut m = member("https://example.com/a", None, 50);
        m.indexable = false;
        let k = url_to_keep(&[m, member("https://example.com/b", None, 0)]);
        assert_eq!(
            (k.url.as_str(), k.reason.as_str()),
            ("https://example.com/b", "the only indexable member; 0 internal links")
        );
        // A member that declares itself canonical beats a shorter copy without one.
        let (w, c) = ("https://example.com/widgets/w", "https://example.com/widgets/w-copy");
        let k = url_to_keep(&[
            member("https://example.com/print/w", None, 0),
            member(c, Some(c), 0),
            member(w, Some(w), 0),
        ]);
        assert_eq!(
            (k.url.as_str(), k.reason.as_str()),
            (w, "declares itself canonical; shortest URL; 0 internal links")
        );
        // Without a crawl the reason says nothing of links.
        let unknown = |url| Member { url, canonical: None, inlinks: None, indexable: true };
        let k = url_to_keep(&[unknown("https://example.com/a?sort=x"), unknown("https://example.com/a")]);
        assert_eq!((k.url.as_str(), k.reason.as_str()), ("https://example.com/a", "fewest parameters"));
    }

    #[test]
    fn parameters_are_counted_with_advice() {
        let rows = parameters([
            ("https://e.com/a", vec!["https://e.com/a?utm_source=x", "https://e.com/a?utm_source=y&sort=1"]),
            ("https://e.com/b", vec!["https://e.com/b?utm_source=z"]),
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].name.as_str(), rows[0].duplicate_urls, rows[0].clusters), ("utm_source", 3, 2));
        assert_eq!(rows[0].kind, "tracking");
        assert_eq!((rows[1].name.as_str(), rows[1].duplicate_urls), ("sort", 1));
    }
}
