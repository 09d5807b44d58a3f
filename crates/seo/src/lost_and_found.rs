//! Lost and found for moved URLs (Broder's proposed service): after a site
//! changes, where did each old URL's content go?
//!
//! For every URL of the old crawl that had content, the new crawl's answer
//! for the same URL decides whether it is *gone*:
//!
//! - missing from the new crawl, 404/410 or another error status, a DNS or
//!   connection failure;
//! - a redirect to the home page, or to a page not about its content;
//! - a soft 404: a success whose content is a generic template (the same
//!   text served under several URLs, or a "not found" title) rather than the
//!   old content;
//! - a success with unrelated content (the URL was reused).
//!
//! A URL that redirects to a page with its content is listed apart as
//! already redirected. For each gone URL the new crawl's live pages are
//! searched for the best home of its content: exact Jaccard and containment
//! of the old shingle set in each page sharing any shingle with it (an
//! inverted index over the new pages, so no candidate is missed, merged
//! pages included), with the titles as further evidence.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use webdup_core::page::{Crawl, PageRecord};

use crate::{Error, Result};

/// How sure a proposed redirect is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }

    fn lower(self) -> Confidence {
        match self {
            Confidence::High => Confidence::Medium,
            _ => Confidence::Low,
        }
    }
}

/// Thresholds for a match; the defaults suit moved, renamed, lightly edited
/// and merged pages.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Least Jaccard for a match on content alone.
    pub min_jaccard: f64,
    /// Least share of the old page's shingles found in the new page for a
    /// match on content alone (the old page was merged into a larger one).
    pub min_containment: f64,
    /// With matching titles, a weaker content match is accepted: this
    /// Jaccard or this containment divided by the Jaccard floor ratio.
    pub min_jaccard_with_title: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { min_jaccard: 0.5, min_containment: 0.8, min_jaccard_with_title: 0.3 }
    }
}

/// A redirect the site should add.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Redirect {
    pub old_url: String,
    pub new_url: String,
    /// Why the old URL counts as gone.
    pub reason: String,
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub jaccard: f64,
    /// Share of the old page's shingles found in the new page.
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub containment: f64,
    pub title_match: bool,
    pub confidence: Confidence,
    /// The evidence, in words.
    pub evidence: String,
}

/// A gone URL whose content was not found in the new crawl.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    pub old_url: String,
    pub reason: String,
    /// The most similar live page, too dissimilar to propose.
    pub best_url: Option<String>,
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub best_jaccard: f64,
}

/// An old URL that already redirects to a page with its content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlreadyRedirected {
    pub old_url: String,
    pub final_url: String,
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub jaccard: f64,
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub containment: f64,
}

/// The answer of [`lost_and_found`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RedirectMap {
    pub old_crawl: String,
    pub new_crawl: String,
    /// Old URLs with content in the old crawl.
    pub old_pages: usize,
    /// Old URLs still serving their content at the same address.
    pub unchanged: usize,
    pub redirects: Vec<Redirect>,
    pub unmatched: Vec<Unmatched>,
    pub already_redirected: Vec<AlreadyRedirected>,
}

/// Builds the redirect map from crawl `old` to crawl `new`.
pub fn lost_and_found(old: &Crawl, new: &Crawl, options: &Options) -> Result<RedirectMap> {
    let (old_pages, new_pages) = (&old.pages, &new.pages);
    for crawl in [old, new] {
        if crawl.pages.is_empty() {
            return Err(Error::EmptyCrawl(crawl.name.clone()));
        }
    }
    let new_by_url: HashMap<&str, &(PageRecord, Vec<u64>)> = new_pages.iter().map(|p| (p.0.url.as_str(), p)).collect();
    let templates = templates(new_pages);

    // Live pages of the new crawl, once per address that served them.
    let mut seen = HashSet::new();
    let targets: Vec<&(PageRecord, Vec<u64>)> = new_pages
        .iter()
        .filter(|(p, s)| {
            !s.is_empty()
                && p.status.is_none_or(|s| (200..300).contains(&s))
                && !templates.contains(p.digest.as_deref().unwrap_or(""))
                && seen.insert(p.effective_url().to_string())
        })
        .collect();
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, (_, shingles)) in targets.iter().enumerate() {
        for &s in shingles {
            postings.entry(s).or_default().push(i as u32);
        }
    }

    let mut map = RedirectMap {
        old_crawl: old.name.clone(),
        new_crawl: new.name.clone(),
        old_pages: 0,
        unchanged: 0,
        redirects: Vec::new(),
        unmatched: Vec::new(),
        already_redirected: Vec::new(),
    };
    for (page, shingles) in old_pages {
        if shingles.is_empty() {
            continue; // already broken in the old crawl
        }
        map.old_pages += 1;
        let reason = match new_by_url.get(page.url.as_str()) {
            None => "absent".to_string(),
            Some((now, _)) if now.digest.is_none() => match (now.status, now.error_kind.as_deref()) {
                (Some(404), _) => "http_404".into(),
                (Some(410), _) => "http_410".into(),
                (Some(s), _) => format!("http_{s}"),
                (None, Some(kind)) => kind.to_string(),
                (None, None) => "no_content".into(),
            },
            Some((now, now_shingles)) => {
                let (jaccard, containment) = overlap(shingles, now_shingles);
                let about_it = accepts(jaccard, containment, false, options);
                let moved = now.final_url.as_deref().is_some_and(|f| f != page.url);
                if moved && is_home(now.effective_url()) && !is_home(&page.url) {
                    "redirect_to_home".into()
                } else if moved && about_it {
                    map.already_redirected.push(AlreadyRedirected {
                        old_url: page.url.clone(),
                        final_url: now.effective_url().into(),
                        jaccard,
                        containment,
                    });
                    continue;
                } else if moved {
                    "redirect_off_topic".into()
                } else if about_it {
                    map.unchanged += 1;
                    continue;
                } else if templates.contains(now.digest.as_deref().unwrap_or("")) || not_found_title(&now.meta.title) {
                    "soft_404".into()
                } else {
                    "content_replaced".into()
                }
            }
        };
        match best_home(page, shingles, &targets, &postings, options) {
            Some(found) => map.redirects.push(Redirect { reason, ..found }),
            None => {
                let best = closest(shingles, &targets, &postings, &page.url);
                map.unmatched.push(Unmatched {
                    old_url: page.url.clone(),
                    reason,
                    best_url: best.map(|(i, _)| targets[i].0.effective_url().to_string()),
                    best_jaccard: best.map_or(0.0, |b| b.1),
                });
            }
        }
    }
    Ok(map)
}

/// Digests served under two or more addresses of the new crawl: a template
/// (a soft-404 page, a catch-all) rather than content of its own.
fn templates(pages: &[(PageRecord, Vec<u64>)]) -> HashSet<String> {
    let mut addresses: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (p, _) in pages {
        if let Some(d) = &p.digest {
            addresses.entry(d).or_default().insert(p.effective_url());
        }
    }
    addresses.into_iter().filter(|(_, a)| a.len() >= 2).map(|(d, _)| d.to_string()).collect()
}

fn not_found_title(title: &Option<String>) -> bool {
    let Some(t) = title else { return false };
    let t = t.to_lowercase();
    ["not found", "404", "no longer available", "page missing", "does not exist"].iter().any(|p| t.contains(p))
}

/// True for a site's root (`https://host/`, with or without a query).
fn is_home(url: &str) -> bool {
    match url::Url::parse(url) {
        Ok(u) => matches!(u.path(), "" | "/" | "/index.html" | "/index.htm"),
        Err(_) => false,
    }
}

fn overlap(a: &[u64], b: &[u64]) -> (f64, f64) {
    let o = webdup_core::verify::Overlap::of(a, b);
    (o.jaccard(), o.containment_a_in_b())
}

fn accepts(jaccard: f64, containment: f64, title_match: bool, o: &Options) -> bool {
    jaccard >= o.min_jaccard
        || containment >= o.min_containment
        || (title_match && (jaccard >= o.min_jaccard_with_title || containment >= o.min_containment * 0.75))
}

/// Word-set similarity of two titles at least one half.
fn titles_match(a: &Option<String>, b: &Option<String>) -> bool {
    let words = |t: &str| -> HashSet<String> {
        t.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_lowercase).collect()
    };
    match (a, b) {
        (Some(a), Some(b)) => {
            let (a, b) = (words(a), words(b));
            let union = a.union(&b).count();
            union > 0 && a.intersection(&b).count() * 2 >= union
        }
        _ => false,
    }
}

/// Exact shared-shingle counts between `shingles` and every target sharing any.
fn shared_counts(shingles: &[u64], postings: &HashMap<u64, Vec<u32>>) -> HashMap<u32, usize> {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    for s in shingles {
        if let Some(list) = postings.get(s) {
            for &t in list {
                *counts.entry(t).or_default() += 1;
            }
        }
    }
    counts
}

fn scored<'a>(
    shingles: &'a [u64],
    targets: &'a [&(PageRecord, Vec<u64>)],
    postings: &HashMap<u64, Vec<u32>>,
    exclude: &'a str,
) -> impl Iterator<Item = (usize, f64, f64)> + 'a {
    let counts = shared_counts(shingles, postings);
    let mut v: Vec<(usize, f64, f64)> = counts
        .into_iter()
        .filter(|&(t, _)| targets[t as usize].0.effective_url() != exclude)
        .map(|(t, shared)| {
            let len_t = targets[t as usize].1.len();
            let jaccard = shared as f64 / (shingles.len() + len_t - shared) as f64;
            let containment = shared as f64 / shingles.len() as f64;
            (t as usize, jaccard, containment)
        })
        .collect();
    // Deterministic order whatever the hash map's.
    v.sort_by_key(|x| x.0);
    v.into_iter()
}

fn closest(
    shingles: &[u64],
    targets: &[&(PageRecord, Vec<u64>)],
    postings: &HashMap<u64, Vec<u32>>,
    exclude: &str,
) -> Option<(usize, f64)> {
    scored(shingles, targets, postings, exclude)
        .map(|(t, j, _)| (t, j))
        .fold(None, |best: Option<(usize, f64)>, x| if best.is_none_or(|b| x.1 > b.1) { Some(x) } else { best })
}

fn best_home(
    page: &PageRecord,
    shingles: &[u64],
    targets: &[&(PageRecord, Vec<u64>)],
    postings: &HashMap<u64, Vec<u32>>,
    options: &Options,
) -> Option<Redirect> {
    // Score: the mean of Jaccard and containment, so a lightly edited copy
    // beats a larger page that merely contains the old text.
    let mut accepted: Vec<(usize, f64, f64, bool, f64)> = scored(shingles, targets, postings, &page.url)
        .filter_map(|(t, j, c)| {
            let title = titles_match(&page.meta.title, &targets[t].0.meta.title);
            accepts(j, c, title, options).then_some((t, j, c, title, (j + c) / 2.0 + if title { 0.05 } else { 0.0 }))
        })
        .collect();
    accepted.sort_by(|a, b| b.4.total_cmp(&a.4).then(a.0.cmp(&b.0)));
    let &(t, jaccard, containment, title_match, score) = accepted.first()?;
    let mut confidence = if jaccard >= 0.8 || (containment >= 0.9 && (title_match || jaccard >= 0.4)) {
        Confidence::High
    } else if jaccard >= options.min_jaccard || containment >= options.min_containment {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    let mut evidence = format!("jaccard {jaccard:.3}, {:.0}% of the old text found", containment * 100.0);
    if title_match {
        evidence.push_str(", titles match");
    }
    if containment >= options.min_containment && jaccard < options.min_jaccard {
        evidence.push_str(", old page merged into a larger one");
    }
    if let Some(&(r, rj, _, _, rscore)) = accepted.get(1)
        && score - rscore < 0.05
    {
        confidence = confidence.lower();
        evidence.push_str(&format!(", ambiguous: {} scores close (jaccard {rj:.3})", targets[r].0.effective_url()));
    }
    Some(Redirect {
        old_url: page.url.clone(),
        new_url: targets[t].0.effective_url().to_string(),
        reason: String::new(),
        jaccard,
        containment,
        title_match,
        confidence,
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(crawl: &str, url: &str, status: u16, shingles: &[u64]) -> (PageRecord, Vec<u64>) {
        let record = PageRecord {
            id: 0,
            crawl: crawl.into(),
            url: url.into(),
            final_url: None,
            status: Some(status),
            fetched_at: 0,
            error_kind: None,
            error: None,
            meta: Default::default(),
            redirects: Vec::new(),
            word_count: shingles.len(),
            digest: (!shingles.is_empty()).then(|| format!("{:x}", shingles.iter().sum::<u64>())),
            simhash: None,
            shingle_count: shingles.len(),
            text: None,
        };
        (record, shingles.to_vec())
    }

    fn crawl(name: &str, pages: Vec<(PageRecord, Vec<u64>)>) -> Crawl {
        Crawl { name: name.into(), pages }
    }

    #[test]
    fn a_moved_page_is_found_from_two_crawls_alone() {
        let story: Vec<u64> = (0..40).collect();
        let other: Vec<u64> = (100..140).collect();
        let old = crawl(
            "v1",
            vec![page("v1", "https://a.test/story", 200, &story), page("v1", "https://a.test/other", 200, &other)],
        );
        let new = crawl(
            "v2",
            vec![
                page("v2", "https://a.test/story", 404, &[]),
                page("v2", "https://a.test/news/story", 200, &story[..36]),
                page("v2", "https://a.test/other", 200, &other),
            ],
        );
        let map = lost_and_found(&old, &new, &Options::default()).unwrap();
        assert_eq!((map.old_pages, map.unchanged), (2, 1));
        let moved: Vec<(&str, &str, &str)> =
            map.redirects.iter().map(|r| (r.old_url.as_str(), r.new_url.as_str(), r.reason.as_str())).collect();
        assert_eq!(moved, [("https://a.test/story", "https://a.test/news/story", "http_404")]);
        assert!(map.unmatched.is_empty() && map.already_redirected.is_empty());
    }

    #[test]
    fn an_empty_crawl_is_an_error_naming_it() {
        let old = crawl("v1", vec![page("v1", "https://a.test/story", 200, &[1, 2, 3])]);
        let err = lost_and_found(&old, &crawl("v2", Vec::new()), &Options::default()).unwrap_err();
        assert_eq!(err.to_string(), "crawl 'v2' has no pages");
    }
}
