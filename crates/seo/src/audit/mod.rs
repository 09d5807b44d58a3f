//! The SEO duplicate-content audit: what `webdup audit` reports.
//!
//! [`Audit::build`] turns the pages of a crawl ([`AuditPage`]s: each page's
//! [`PageRecord`] and what became of its content), their fingerprints and
//! the [`Clustering`] of those into one plain model: a row per page with the
//! columns SEO tools show (closest similarity match, number of near
//! duplicates, canonical, indexability), the clusters with a verdict on
//! whether canonical tags or `noindex` already handle them ([`canonical`]),
//! duplicate titles, descriptions and h1s, thin pages and fetch errors.
//! Each cluster names its URL to keep and why its URLs differ ([`keep`]);
//! with a crawl ([`CrawlFacts`], [`site`]) the audit adds inlinks, the links
//! to fix, folded URLs, orphan and unlisted pages and the crawl's traps. The
//! writers render that one model: `report.json` (schema in
//! `docs/audit-schema.md`), `pages.csv`, `clusters.csv`, `links_to_fix.csv`,
//! `parameters.csv` ([`csv`]) and a self-contained `report.html` ([`html`])
//! whose diff view reads the texts kept by [`texts`].
//!
//! A fresh run and a crawl kept in an index reach this one builder through
//! the same page model: the `webdup` facade turns either into
//! [`AuditPage`]s (`webdup::audit::run`, `webdup::audit::from_index`).
//!
//! Two audits of crawls of one index compare through [`since`]: what
//! changed in the duplicates between them, kept as [`Audit::since`].

pub mod canonical;
pub mod csv;
pub mod html;
pub mod keep;
pub mod markup;
mod rows;
#[cfg(test)]
pub(crate) use rows::blank_row;
pub mod since;
pub mod site;
pub mod texts;

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use std::io::Result;
use webdup_core::DocKey;
use webdup_core::dedup::{self, Clustering};
use webdup_core::fingerprint::InFingerprints;
use webdup_core::fingerprint::{Fingerprint, position_of};
use webdup_core::page::PageRecord;
use webdup_core::sets::{self, Sets, Sketches};
use webdup_core::settings::{FingerprintSettings, MatchSettings};
use webdup_core::units::Units;

pub use keep::{KeptUrl, RollupRow};
pub use site::{CrawlSection, FoldedLink, LinkToFix};
pub use texts::AuditTexts;
pub use webdup_core::crawl::{CrawlFacts, MovedStart, NotFollowed, Trap};

use crate::causes::{Cause, ParameterRow};

/// One page of a crawl as the audit reads it: its record (address, the
/// exchange, redirects, metadata with canonical and indexability merged) and
/// what became of its content.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditPage {
    pub record: PageRecord,
    pub content: Content,
}

/// What the report reads of a page once the audit is built
/// ([`Audit::build`] takes the pages): where its text and markup are found.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSource {
    /// The key of the page's fingerprint; `None` when it was not analysed.
    pub doc: Option<DocKey>,
    /// The local file the page was read from, to read its markup again
    /// (`None` for a fetched page or a web archive's record).
    pub file: Option<String>,
    /// The page's main text, when its record held it.
    pub text: Option<String>,
}

/// What became of a page's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Fingerprinted: the key of its fingerprint.
    Doc(DocKey),
    /// Not analysed: a stable kind (`fetch`, `no_text`, ...) and a sentence.
    Failed { kind: String, message: String },
    /// An input that redirected to a page the crawl has under another input
    /// (see `webdup_core::page::fold_redirects`): listed with its own URL
    /// and the redirect's status, never a duplicate of its target.
    Redirect,
}

/// Version of `report.json`'s schema; bumped when a field changes meaning or
/// goes away (added fields keep the version).
pub const AUDIT_SCHEMA_VERSION: u32 = 3;

/// Audit settings beyond the engine's.
#[derive(Debug, Clone, Serialize)]
pub struct AuditConfig {
    /// Pages with fewer main-text words than this are thin.
    pub thin_words: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig { thin_words: 200 }
    }
}

/// The settings a report was made with.
#[derive(Debug, Clone, Serialize)]
pub struct AuditSettings {
    pub threshold: f64,
    pub shingle_size: usize,
    pub extractor: String,
    pub thin_words: usize,
    /// Every fingerprint setting, as `webdup cluster` reports them.
    pub fingerprint: FingerprintSettings,
    /// Every matching setting, as `webdup cluster` reports them.
    #[serde(rename = "match")]
    pub matching: MatchSettings,
}

impl AuditSettings {
    /// The settings of an audit of fingerprints made with `made_with` and
    /// matched by `matching`.
    pub fn new(made_with: &FingerprintSettings, matching: &MatchSettings, audit: &AuditConfig) -> AuditSettings {
        AuditSettings {
            threshold: matching.threshold,
            shingle_size: made_with.shingle_size,
            extractor: made_with.extractor.clone(),
            thin_words: audit.thin_words,
            fingerprint: made_with.clone(),
            matching: matching.clone(),
        }
    }
}

/// The numbers at the top of the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditSummary {
    /// Every input page, fetched or not.
    pub pages: usize,
    /// Pages whose text was read and fingerprinted.
    pub analysed: usize,
    /// Pages that could not be fetched or read.
    pub errors: usize,
    /// Groups of two or more pages that are the same decoded page (the
    /// same bytes).
    pub identical_groups: usize,
    /// Pages in those groups.
    pub identical_pages: usize,
    /// Groups of two or more pages with the same normalized main text (of
    /// at least `webdup_core::verify::MIN_SHARED_SHINGLES` shingles) that
    /// are not all one page.
    pub same_text_groups: usize,
    /// Pages in those groups.
    pub same_text_pages: usize,
    /// Clusters of similar pages, identical and same-text ones included.
    pub clusters: usize,
    /// Clusters whose members are not all the same text.
    pub near_clusters: usize,
    /// Pages in any cluster.
    pub pages_in_clusters: usize,
    /// `pages_in_clusters / analysed`, 0 when nothing was analysed.
    pub share_affected: f64,
    pub clusters_handled: usize,
    pub clusters_with_problems: usize,
    pub duplicate_title_groups: usize,
    pub duplicate_description_groups: usize,
    pub duplicate_h1_groups: usize,
    pub thin_pages: usize,
    /// Pages rendered in a headless Chromium (`--render`); serialized only
    /// when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub rendered_pages: usize,
    /// Pages not rendered whose HTML looks like a client-rendered shell (an
    /// app root and scripts, little text): what they show is their scripts'
    /// doing, so the audit should be made again with `--render`. Serialized
    /// only when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub client_rendered_pages: usize,
    pub noindex_pages: usize,
    /// Pages whose canonical names another URL.
    pub canonicalised_pages: usize,
    pub missing_titles: usize,
    pub missing_descriptions: usize,
    pub missing_h1s: usize,
}

/// One input page.
#[derive(Debug, Clone, Serialize)]
pub struct PageRow {
    /// Position in `pages`; other sections refer to pages by it.
    pub page: usize,
    /// The final URL after redirects; for local files, the path.
    pub url: String,
    /// The input as given, when it differs from `url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Final HTTP status; absent for local files and unreachable URLs.
    pub status: Option<u16>,
    /// `indexable`, `noindex`, `canonicalised` (canonical names another
    /// URL), `non_200`, `error`, or `redirect` (an input that redirected to
    /// a page listed under another input).
    pub indexability: &'static str,
    pub title: Option<String>,
    pub description: Option<String>,
    pub h1: Option<String>,
    /// Resolved canonical URL: the HTML `<link rel=canonical>`, else the
    /// HTTP `Link` header.
    pub canonical: Option<String>,
    pub canonical_source: Option<CanonicalSource>,
    pub noindex: bool,
    /// The first reason found.
    pub noindex_source: Option<NoindexSource>,
    /// Words of main text; absent for pages that failed.
    pub words: Option<usize>,
    pub thin: bool,
    /// Why a page is thin beyond its word count: `template only` when it
    /// has no text of its own beyond its site's template (never a duplicate
    /// on that text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thin_reason: Option<&'static str>,
    /// The most similar other page at or above the threshold.
    pub closest_page: Option<usize>,
    pub closest_url: Option<String>,
    /// Exact Jaccard with `closest_page`.
    pub closest_similarity: Option<f64>,
    /// Other pages at or above the threshold.
    pub near_duplicates: usize,
    pub cluster: Option<usize>,
    /// Pages of the crawl that link to it (with `--follow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inlinks: Option<u32>,
    /// Whether a sitemap given as an input lists it (with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_sitemap: Option<bool>,
    /// Why the page could not be analysed.
    pub error: Option<String>,
    /// Its text is what a headless Chromium showed after running the
    /// page's scripts (`--render`). Serialized only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rendered: bool,
}

/// A member of a cluster.
#[derive(Debug, Clone, Serialize)]
pub struct AuditMember {
    pub page: usize,
    pub url: String,
    pub representative: bool,
    /// Exact Jaccard with the representative.
    pub similarity: f64,
    /// Share of this member's shingles found in the representative.
    pub containment: f64,
    /// The same decoded page as the representative (same bytes).
    pub identical: bool,
    /// The representative's normalized text, not known to be its page.
    pub same_text: bool,
    /// For a same-text member: what differs between its markup and the
    /// representative's ([`markup::fill`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markup: Option<markup::MarkupDiff>,
}

impl AuditMember {
    /// `identical`, `same-text` or `near`: what kind of copy of the
    /// representative it is.
    pub fn kind(&self) -> &'static str {
        if self.identical {
            dedup::IDENTICAL
        } else if self.same_text {
            dedup::SAME_TEXT
        } else {
            dedup::NEAR
        }
    }
}

/// A finding about a cluster's canonical setup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issue {
    /// Stable code, listed in `docs/audit-schema.md`.
    pub code: &'static str,
    pub message: String,
    /// The pages concerned.
    pub pages: Vec<usize>,
}

/// A cluster of duplicate pages and its canonical verdict.
#[derive(Debug, Clone, Serialize)]
pub struct AuditCluster {
    pub id: usize,
    /// `identical` when every member is the same page, `same-text` when
    /// every member has the same text, else `near`.
    pub kind: &'static str,
    pub size: usize,
    /// Rank by severity, 1 the worst (see [`keep::rank_severity`]).
    pub severity: usize,
    /// The member kept ([`AuditCluster::keep`]) when the URL to keep is a
    /// member, else the member with the most confirmed links.
    pub representative: usize,
    /// `handled` (one URL is left to index) or `problem`.
    pub status: &'static str,
    /// For handled clusters: `canonical`, `noindex` or `canonical+noindex`.
    pub handled_by: Option<&'static str>,
    /// The one URL the members agree on, when they do.
    pub canonical_target: Option<String>,
    /// Lowest member similarity to the representative.
    pub min_similarity: f64,
    /// The URL the other members should point to, and why.
    pub keep: KeptUrl,
    /// What differs between the URL kept and the others, in one line.
    pub cause: String,
    pub causes: Vec<Cause>,
    pub issues: Vec<Issue>,
    pub members: Vec<AuditMember>,
}

/// Indexable pages sharing a title, description or h1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueGroup {
    /// The value as the first page writes it.
    pub value: String,
    pub pages: Vec<usize>,
}

/// A page that could not be analysed.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorRow {
    pub page: usize,
    pub url: String,
    pub status: Option<u16>,
    pub kind: String,
    pub message: String,
}

/// Where the pages of an audit built from an index came from.
#[derive(Debug, Clone, Serialize)]
pub struct AuditSource {
    /// `index`.
    pub kind: &'static str,
    /// The index file.
    pub index: String,
    pub crawl: String,
    /// Analysed pages whose main text the index does not hold (stored before
    /// schema version 3, or without text): they are audited like the others,
    /// but cannot be shown in the diff view.
    pub pages_without_text: usize,
}

/// Everything an audit reports; serialized as `report.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    pub schema_version: u32,
    pub generator: String,
    /// Set when the pages were read from an index rather than fetched or
    /// read in this run (`webdup::audit::from_index`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<AuditSource>,
    pub settings: AuditSettings,
    pub summary: AuditSummary,
    pub pages: Vec<PageRow>,
    pub clusters: Vec<AuditCluster>,
    /// Clusters whose URLs differ the same way, one line each.
    pub cause_rollup: Vec<RollupRow>,
    /// The query parameters that make duplicate URLs, with what to do.
    pub parameters: Vec<ParameterRow>,
    /// Internal links to a duplicate that is not its cluster's URL to keep.
    pub links_to_fix: Vec<LinkToFix>,
    /// Linked URLs the crawl's normalization folded into another.
    pub folded: Vec<FoldedLink>,
    /// Sitemap URLs no crawled page links to (with a sitemap and a crawl).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orphan_pages: Option<Vec<String>>,
    /// Linked, indexable pages answering 200 that no sitemap lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlisted_pages: Option<Vec<String>>,
    /// What the crawl did (with `--follow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crawl: Option<CrawlSection>,
    pub duplicate_titles: Vec<ValueGroup>,
    pub duplicate_descriptions: Vec<ValueGroup>,
    pub duplicate_h1s: Vec<ValueGroup>,
    /// Pages under `settings.thin_words` words, fewest first.
    pub thin_pages: Vec<usize>,
    pub errors: Vec<ErrorRow>,
    /// What changed since an older crawl of the index (`--since`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<since::Changes>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Rounds to 4 decimals: enough to rank pages, stable in snapshots.
pub(crate) fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

pub use webdup_core::page::forbids_indexing;
use webdup_core::page::{CanonicalSource, NoindexSource};

impl Audit {
    /// Builds the audit model of `pages` (in the order they are to be
    /// listed), whose analysed ones are fingerprinted in `docs` (sorted by
    /// key) and clustered in `clustering`, under `settings`, with what the
    /// `crawl` that found them saw when there was one. `units` runs the
    /// search for near misses.
    ///
    /// Each page's row is made of its record, in the records' memory: at a
    /// million pages, records and rows held side by side were a third of
    /// the audit's peak. What the report reads of the pages afterwards
    /// (their texts, where their markup is) comes back beside the audit.
    pub fn build(
        units: &impl Units,
        pages: Vec<AuditPage>,
        docs: &[Fingerprint],
        clustering: &Clustering,
        crawl: Option<&CrawlFacts>,
        settings: AuditSettings,
    ) -> (Audit, Vec<PageSource>) {
        sets::always(Audit::build_in(units, pages, docs, &InFingerprints(docs), clustering, crawl, settings))
    }

    /// [`Audit::build`] with the documents' shingle sets and signatures
    /// read through `sets` (by position in `docs`), as a run too large to
    /// hold them reads them back from its spill.
    pub fn build_in<S: Sketches + ?Sized>(
        units: &impl Units,
        pages: Vec<AuditPage>,
        docs: &[Fingerprint],
        sets: &S,
        clustering: &Clustering,
        crawl: Option<&CrawlFacts>,
        settings: AuditSettings,
    ) -> std::result::Result<(Audit, Vec<PageSource>), S::Error> {
        let graph = crawl.map(site::LinkGraph::of);
        let mut rows = rows::rows_of(pages, docs, settings.thin_words);
        if let Some(g) = &graph {
            for p in &mut rows.pages {
                p.inlinks = Some(g.inlinks(&p.url));
                p.in_sitemap = g.in_sitemap(p);
            }
        }
        // `statuses`: every response of every redirect chain (so a canonical
        // naming a redirecting URL is seen as 301), and each page's final answer.
        let rows::Rows { mut pages, errors, page_of_doc, sources, statuses } = rows;
        rows::fill_matches(units, &mut pages, docs, sets, clustering, &page_of_doc, &settings)?;
        // The clustering names documents by key; a key `docs` do not hold
        // (a clustering of other documents) names no page.
        let page_of = |key: DocKey| position_of(docs, key).map(|i| page_of_doc[i]);

        let inlinks = |url: &str| graph.as_ref().map(|g| g.inlinks(url));
        let mut clusters: Vec<AuditCluster> = clustering
            .clusters
            .iter()
            .map(|c| {
                let (mut members, doc_of): (Vec<AuditMember>, Vec<usize>) = c
                    .members
                    .iter()
                    .filter_map(|m| {
                        let doc = position_of(docs, m.key)?;
                        let page = page_of_doc[doc];
                        let member = AuditMember {
                            page,
                            url: pages[page].url.clone(),
                            representative: m.key == c.representative,
                            similarity: round(m.jaccard),
                            containment: round(m.containment),
                            identical: m.identical,
                            same_text: m.same_text,
                            markup: None,
                        };
                        Some((member, doc))
                    })
                    .unzip();
                for m in &members {
                    pages[m.page].cluster = Some(c.id);
                }
                let choice = keep::choose(&members, &pages, &statuses, inlinks);
                if let Some(k) = choice.member {
                    keep::represent(&mut members, &doc_of, docs, sets, k)?;
                }
                let representative = match choice.member {
                    Some(k) => members[k].page,
                    None => page_of(c.representative).unwrap_or_default(),
                };
                let verdict = canonical::analyse(&members, &pages, &statuses);
                Ok(AuditCluster {
                    id: c.id,
                    kind: c.kind(),
                    size: members.len(),
                    severity: 0,
                    representative,
                    status: if verdict.issues.is_empty() { "handled" } else { "problem" },
                    handled_by: verdict.handled_by,
                    canonical_target: verdict.target,
                    min_similarity: members.iter().map(|m| m.similarity).fold(1.0, f64::min),
                    keep: choice.keep,
                    cause: crate::causes::summary(&choice.causes),
                    causes: choice.causes,
                    issues: verdict.issues,
                    members,
                })
            })
            .collect::<std::result::Result<_, S::Error>>()?;
        keep::rank_severity(&mut clusters, &pages);
        let cause_rollup = keep::rollup(&clusters);
        let parameters = keep::parameters(&clusters);
        let links_to_fix = graph.as_ref().map(|g| g.links_to_fix(&clusters)).unwrap_or_default();
        let folded = crawl.map(site::folded).unwrap_or_default();
        let orphan_pages = graph.as_ref().zip(crawl).and_then(|(g, c)| g.orphans(c));
        let unlisted_pages = graph.as_ref().and_then(|g| g.unlisted(&pages, &clusters));

        let duplicate_titles = value_groups(&pages, |p| p.title.as_deref());
        let duplicate_descriptions = value_groups(&pages, |p| p.description.as_deref());
        let duplicate_h1s = value_groups(&pages, |p| p.h1.as_deref());
        let mut thin_pages: Vec<usize> = pages.iter().filter(|p| p.thin).map(|p| p.page).collect();
        thin_pages.sort_by_key(|&p| (pages[p].words, p));

        let (identical, same_text) = copy_groups(docs, sets);
        let analysed = docs.len();
        let pages_in_clusters: usize = clusters.iter().map(|c| c.size).sum();
        // Pages that answered with content of their own (not redirects).
        let ok = || pages.iter().filter(|p| p.error.is_none() && p.indexability != "redirect");
        let summary = AuditSummary {
            pages: pages.len(),
            analysed,
            errors: errors.len(),
            identical_groups: identical.len(),
            identical_pages: identical.iter().sum(),
            same_text_groups: same_text.len(),
            same_text_pages: same_text.iter().sum(),
            clusters: clusters.len(),
            near_clusters: clusters.iter().filter(|c| c.kind == "near").count(),
            pages_in_clusters,
            share_affected: if analysed == 0 { 0.0 } else { round(pages_in_clusters as f64 / analysed as f64) },
            clusters_handled: clusters.iter().filter(|c| c.status == "handled").count(),
            clusters_with_problems: clusters.iter().filter(|c| c.status == "problem").count(),
            duplicate_title_groups: duplicate_titles.len(),
            duplicate_description_groups: duplicate_descriptions.len(),
            duplicate_h1_groups: duplicate_h1s.len(),
            thin_pages: thin_pages.len(),
            rendered_pages: 0,
            client_rendered_pages: 0,
            noindex_pages: ok().filter(|p| p.noindex).count(),
            canonicalised_pages: ok().filter(|p| p.indexability == "canonicalised").count(),
            missing_titles: ok().filter(|p| p.title.is_none()).count(),
            missing_descriptions: ok().filter(|p| p.description.is_none()).count(),
            missing_h1s: ok().filter(|p| p.h1.is_none()).count(),
        };
        let audit = Audit {
            schema_version: AUDIT_SCHEMA_VERSION,
            generator: format!("webdup {}", env!("CARGO_PKG_VERSION")),
            source: None,
            settings,
            summary,
            pages,
            clusters,
            cause_rollup,
            parameters,
            links_to_fix,
            folded,
            orphan_pages,
            unlisted_pages,
            crawl: crawl.map(CrawlSection::of),
            duplicate_titles,
            duplicate_descriptions,
            duplicate_h1s,
            thin_pages,
            errors,
            since: None,
        };
        Ok((audit, sources))
    }

    /// Writes `report.json`.
    pub fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        out.write_all(b"\n")?;
        Ok(())
    }

    /// Writes the report files into `dir` (created if missing), with
    /// `changes.csv` when [`Audit::since`] is set; the
    /// CSV files start with a UTF-8 byte-order mark when `csv_bom` is set
    /// (Excel then reads non-Latin text right); `report.html` is paged past
    /// `layout.paged_above` pages ([`html::write_report`]).
    pub fn write_dir(&self, texts: &AuditTexts, dir: &Path, csv_bom: bool, layout: html::ReportLayout) -> Result<()> {
        let bom: &[u8] = if csv_bom { crate::csv_safe::UTF8_BOM } else { b"" };
        std::fs::create_dir_all(dir)?;
        // Each file: created, its prefix (the CSV files' byte-order mark),
        // its writer, flushed so an error is one of this call's.
        let write = |name: &str, prefix: &[u8], body: &dyn Fn(&mut dyn Write) -> Result<()>| -> Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join(name))?);
            w.write_all(prefix)?;
            body(&mut w)?;
            w.flush()
        };
        write("report.json", b"", &|w| self.write_json(w))?;
        write("pages.csv", bom, &|w| csv::write_pages(self, w))?;
        write("clusters.csv", bom, &|w| csv::write_clusters(self, w))?;
        write("links_to_fix.csv", bom, &|w| csv::write_links_to_fix(self, w))?;
        write("parameters.csv", bom, &|w| csv::write_parameters(self, w))?;
        if let Some(changes) = &self.since {
            write("changes.csv", bom, &|w| since::write_csv(changes, w))?;
        }
        // One file, or for a large audit a paged one with its data beside it.
        html::write_report(self, texts, dir, layout)
    }
}

/// Pages without a duplicate show their nearest page from this Jaccard up.
pub const NEAR_MISS_FLOOR: f64 = 0.5;

/// The sizes of the groups of two or more identical pages (one decoded
/// page), and of two or more pages of one text with enough text to judge
/// that are not all one page. Found by sorting digests rather than hashing
/// them: at a million pages a hash table of them is several times their size.
fn copy_groups<S: Sets + ?Sized>(docs: &[Fingerprint], sets: &S) -> (Vec<usize>, Vec<usize>) {
    // A page that is only its site's template is no one's copy.
    let judged = || docs.iter().enumerate().filter(|(_, d)| !d.template_only);
    let mut pages: Vec<[u8; 16]> = judged().filter_map(|(_, d)| d.page_digest).collect();
    pages.sort_unstable();
    let identical = pages.chunk_by(|a, b| a == b).map(<[_]>::len).filter(|&n| n > 1).collect();
    drop(pages);
    let mut texts: Vec<([u8; 16], Option<[u8; 16]>)> = judged()
        .filter(|(i, _)| sets.len(*i as u32) >= webdup_core::verify::MIN_SHARED_SHINGLES)
        .map(|(_, d)| (d.digest, d.page_digest))
        .collect();
    texts.sort_unstable_by_key(|t| t.0);
    // Not all one page: a page unknown, or another page than the first.
    let mixed = |ps: &[([u8; 16], Option<[u8; 16]>)]| ps.iter().any(|p| p.1.is_none() || p.1 != ps[0].1);
    let same_text = texts.chunk_by(|a, b| a.0 == b.0).filter(|ps| ps.len() > 1 && mixed(ps)).map(<[_]>::len).collect();
    (identical, same_text)
}

/// Groups of two or more analysed, indexable pages whose value is the same
/// after folding case and whitespace. Pages that are noindex or canonicalised
/// elsewhere are left out: search engines do not show them, so their titles
/// compete with nothing.
fn value_groups(pages: &[PageRow], value: impl Fn(&PageRow) -> Option<&str>) -> Vec<ValueGroup> {
    // Each page by the 128-bit hash of its folded value (XXH3, as pages'
    // digests are), sorted rather than hashed: a million titles in a hash
    // table of strings and lists held several times what this table does.
    let mut keyed: Vec<([u8; 16], u32)> = pages
        .iter()
        .filter(|p| p.indexability == "indexable")
        .filter_map(|p| {
            let key = value(p)?.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
            (!key.is_empty()).then(|| (webdup_core::fingerprint::page_digest(&key), p.page as u32))
        })
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<ValueGroup> = keyed
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|g| g.len() > 1)
        .map(|g| {
            let pages_of: Vec<usize> = g.iter().map(|&(_, p)| p as usize).collect();
            ValueGroup { value: value(&pages[pages_of[0]]).unwrap_or_default().to_string(), pages: pages_of }
        })
        .collect();
    out.sort_by(|a, b| b.pages.len().cmp(&a.pages.len()).then(a.pages[0].cmp(&b.pages[0])));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use webdup_core::candidates::Method;
    use webdup_core::page::{Hop, RecordMeta};
    use webdup_core::shingle::{ShingleConfig, Shingler};
    use webdup_core::sketch::MinHasher;
    use webdup_core::units::InTurn;
    use webdup_core::verify::Measure;

    fn settings() -> AuditSettings {
        let made_with = FingerprintSettings::default();
        let matching = MatchSettings {
            threshold: 0.8,
            cross_site_threshold: None,
            measure: Measure::Jaccard,
            method: Method::MinHash,
            max_hamming: 3,
            min_cluster_size: 2,
        };
        AuditSettings::new(&made_with, &matching, &AuditConfig { thin_words: 10 })
    }

    fn page(url: &str, content: Content) -> AuditPage {
        AuditPage { record: PageRecord::observed(url.into(), None, None), content }
    }

    /// The audit reads pages and fingerprints alone: no run, no index.
    #[test]
    fn pages_and_fingerprints_alone_make_an_audit() {
        let text = "the harbour office posts the winter ferry timetable on the board every monday morning";
        let sh = Shingler::new(ShingleConfig::default()).shingle(text);
        let minhash = MinHasher::new(128, 42).sketch(&sh.hashes);
        let doc = |url: &str, key: u64| {
            Fingerprint::from_parts(
                url.into(),
                DocKey(key),
                sh.word_count,
                sh.hashes.clone(),
                sh.digest,
                minhash.clone(),
                0,
            )
        };
        // Keys far from positions: the audit must join by key.
        let docs = vec![doc("https://a.test/ferry", 10), doc("https://a.test/ferry-copy", 30)];
        let mut noindexed = page("https://a.test/ferry-copy", Content::Doc(DocKey(30)));
        noindexed.record.meta =
            RecordMeta { noindex: Some(true), noindex_source: Some(NoindexSource::Meta), ..noindexed.record.meta };
        let mut moved = page("https://a.test/old", Content::Redirect);
        moved.record.redirects = vec![Hop { url: "https://a.test/old".into(), status: 301 }];
        let pages = vec![
            page("https://a.test/ferry", Content::Doc(DocKey(10))),
            page(
                "https://a.test/gone",
                Content::Failed { kind: "fetch".into(), message: "http_status: HTTP 404".into() },
            ),
            noindexed,
            moved,
        ];
        let settings = settings();
        let clustering = dedup::find_duplicates(&InTurn, &docs, &settings.matching, &settings.fingerprint);
        let (audit, sources) = Audit::build(&InTurn, pages, &docs, &clustering, None, settings);
        let docs_of: Vec<Option<DocKey>> = sources.iter().map(|s| s.doc).collect();
        assert_eq!(docs_of, [Some(DocKey(10)), None, Some(DocKey(30)), None]);
        assert!(sources.iter().all(|s| s.file.is_none()), "fetched pages name no file to read again");
        // The rows were made in the pages' own memory: a million pages
        // never hold both.
        let in_place = 4 * std::mem::size_of::<AuditPage>() / std::mem::size_of::<PageRow>();
        assert_eq!(audit.pages.capacity(), in_place, "rows made in a vector of their own");
        let rows: Vec<(&str, &str)> = audit.pages.iter().map(|p| (p.url.as_str(), p.indexability)).collect();
        assert_eq!(
            rows,
            [
                ("https://a.test/ferry", "indexable"),
                ("https://a.test/gone", "error"),
                ("https://a.test/ferry-copy", "noindex"),
                ("https://a.test/old", "redirect")
            ]
        );
        assert_eq!((audit.summary.pages, audit.summary.analysed, audit.summary.errors), (4, 2, 1));
        let members: Vec<usize> = audit.clusters[0].members.iter().map(|m| m.page).collect();
        assert_eq!(members, [0, 2]);
        assert_eq!((audit.clusters[0].status, audit.clusters[0].handled_by), ("handled", Some("noindex")));
        assert_eq!((audit.pages[0].closest_page, audit.pages[0].near_duplicates), (Some(2), 1));
        assert_eq!(audit.pages[3].status, Some(301));
        assert_eq!(audit.errors[0].message, "http_status: HTTP 404");
    }

    #[test]
    fn robots_directives_with_and_without_bot_names() {
        assert!(forbids_indexing("noindex, follow"));
        assert!(forbids_indexing("googlebot: noindex"));
        assert!(forbids_indexing("NONE"));
        assert!(!forbids_indexing("index, follow"));
        assert!(!forbids_indexing("unavailable_after: 25 Jun 2010 15:00:00 PST"));
    }
}
