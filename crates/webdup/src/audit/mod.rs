//! The SEO duplicate-content audit: what `webdup audit` reports.
//!
//! [`Audit::build`] turns a run (a [`Corpus`] built with
//! [`Config::keep_pages`], its [`Clustering`] and the [`FetchRecord`]s of its
//! URLs) into one plain model: a row per page with the columns SEO tools
//! show (closest similarity match, number of near duplicates, canonical,
//! indexability), the clusters with a verdict on whether canonical tags or
//! `noindex` already handle them ([`canonical`]), duplicate titles,
//! descriptions and h1s, thin pages and fetch errors. The writers render
//! that one model: `report.json` (schema in `docs/audit-schema.md`),
//! `pages.csv`, `clusters.csv` ([`csv`]) and a self-contained `report.html`
//! ([`html`]) whose diff view reads the texts kept by [`texts`].
//! [`Audit::from_crawl`] builds the same model from a crawl kept in an index
//! ([`stored`]), without fetching or extracting anything again.
//!
//! ```
//! use webdup::audit::{Audit, AuditConfig};
//! use webdup::engine::{self, Config, Corpus, Quiet};
//! use webdup::source::{Format, RawDocument};
//!
//! let config = Config { keep_pages: true, ..Config::default() }.validate().unwrap();
//! let body = "<p>The river path was restored this spring by volunteers from the village.</p>".repeat(20);
//! let pages = vec![
//!     ("https://example.com/a", format!("<html><head><title>Path</title></head><body>{body}</body></html>")),
//!     ("https://example.com/b", format!("<html><head><title>Path</title></head><body>{body}</body></html>")),
//! ];
//! let corpus = Corpus::build(
//!     pages.into_iter().enumerate().collect(),
//!     |(n, (id, html))| Ok(RawDocument { id: id.into(), key: webdup::DocKey::at(n), format: Format::Html, body: html, url: None }),
//!     &config,
//!     &Quiet,
//! );
//! let clustering = engine::find_duplicates(&corpus, &config);
//! let audit = Audit::build(&corpus, &clustering, &[], &config, &AuditConfig::default());
//! assert_eq!(audit.summary.exact_groups, 1);
//! assert_eq!(audit.clusters[0].status, "problem");
//! assert_eq!(audit.duplicate_titles[0].pages, vec![0, 1]);
//! ```

pub mod canonical;
pub mod csv;
pub mod html;
#[cfg(feature = "store")]
pub mod stored;
pub mod texts;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::engine::{Clustering, Config, Corpus};
use crate::error::Result;
use crate::fetch::FetchRecord;
use crate::source::DocKey;

#[cfg(feature = "store")]
pub use stored::StoredCrawl;
pub use texts::AuditTexts;

/// Version of `report.json`'s schema; bumped when a field changes meaning or
/// goes away (added fields keep the version).
pub const AUDIT_SCHEMA_VERSION: u32 = 1;

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
    pub fingerprint: crate::engine::FingerprintSettings,
    /// Every matching setting, as `webdup cluster` reports them.
    #[serde(rename = "match")]
    pub matching: crate::engine::MatchSettings,
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
    /// Groups of two or more pages with the same normalized main text.
    pub exact_groups: usize,
    /// Pages in those groups.
    pub exact_duplicate_pages: usize,
    /// Clusters of similar pages, exact groups included.
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
    /// `html` or `http`.
    pub canonical_source: Option<&'static str>,
    pub noindex: bool,
    /// `meta` or `x-robots-tag` (the first found).
    pub noindex_source: Option<&'static str>,
    /// Words of main text; absent for pages that failed.
    pub words: Option<usize>,
    pub thin: bool,
    /// The most similar other page at or above the threshold.
    pub closest_page: Option<usize>,
    pub closest_url: Option<String>,
    /// Exact Jaccard with `closest_page`.
    pub closest_similarity: Option<f64>,
    /// Other pages at or above the threshold.
    pub near_duplicates: usize,
    pub cluster: Option<usize>,
    /// Why the page could not be analysed.
    pub error: Option<String>,
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
    /// Same normalized text as the representative.
    pub exact: bool,
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
    /// `exact` when every member has the same text, else `near`.
    pub kind: &'static str,
    pub size: usize,
    pub representative: usize,
    /// `handled` (one URL is left to index) or `problem`.
    pub status: &'static str,
    /// For handled clusters: `canonical`, `noindex` or `canonical+noindex`.
    pub handled_by: Option<&'static str>,
    /// The one URL the members agree on, when they do.
    pub canonical_target: Option<String>,
    /// Lowest member similarity to the representative.
    pub min_similarity: f64,
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
    /// read in this run ([`Audit::from_crawl`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<AuditSource>,
    pub settings: AuditSettings,
    pub summary: AuditSummary,
    pub pages: Vec<PageRow>,
    pub clusters: Vec<AuditCluster>,
    pub duplicate_titles: Vec<ValueGroup>,
    pub duplicate_descriptions: Vec<ValueGroup>,
    pub duplicate_h1s: Vec<ValueGroup>,
    /// Pages under `settings.thin_words` words, fewest first.
    pub thin_pages: Vec<usize>,
    pub errors: Vec<ErrorRow>,
}

/// Rounds to 4 decimals: enough to rank pages, stable in snapshots.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

pub use webdup_core::page::forbids_indexing;
use webdup_core::page::{CanonicalSource, Exchange, NoindexSource, observe};

impl Audit {
    /// Builds the audit model. `fetches` may be empty (local files). Pages
    /// come in input order, fetched or failed.
    pub fn build(
        corpus: &Corpus,
        clustering: &Clustering,
        fetches: &[FetchRecord],
        config: &Config,
        audit: &AuditConfig,
    ) -> Audit {
        let rows = rows_of_run(corpus, fetches, audit);
        let statuses = canonical::StatusIndex::new(&rows.pages, fetches);
        Audit::assemble(rows, corpus, clustering, &statuses, config, audit)
    }

    /// Everything that follows from the page rows and the clustering: the
    /// closest matches, clusters and their canonical verdicts, duplicate
    /// values, thin pages and the summary.
    fn assemble(
        rows: Rows,
        corpus: &Corpus,
        clustering: &Clustering,
        statuses: &canonical::StatusIndex,
        config: &Config,
        audit: &AuditConfig,
    ) -> Audit {
        let Rows { mut pages, errors, page_of_doc } = rows;
        fill_matches(&mut pages, corpus, clustering, &page_of_doc, config);
        // The clustering names documents by key; a key the corpus does not
        // hold (a clustering of other documents) names no page.
        let page_of = |key: DocKey| corpus.position(key).map(|i| page_of_doc[i]);

        let clusters: Vec<AuditCluster> = clustering
            .clusters
            .iter()
            .map(|c| {
                let members: Vec<AuditMember> = c
                    .members
                    .iter()
                    .filter_map(|m| {
                        let page = page_of(m.key)?;
                        Some(AuditMember {
                            page,
                            url: pages[page].url.clone(),
                            representative: m.key == c.representative,
                            similarity: round(m.jaccard),
                            containment: round(m.containment),
                            exact: m.exact,
                        })
                    })
                    .collect();
                for m in &members {
                    pages[m.page].cluster = Some(c.id);
                }
                let verdict = canonical::analyse(&members, &pages, statuses);
                AuditCluster {
                    id: c.id,
                    kind: if c.is_exact() { "exact" } else { "near" },
                    size: members.len(),
                    representative: page_of(c.representative).unwrap_or_default(),
                    status: if verdict.issues.is_empty() { "handled" } else { "problem" },
                    handled_by: verdict.handled_by,
                    canonical_target: verdict.target,
                    min_similarity: members.iter().map(|m| m.similarity).fold(1.0, f64::min),
                    issues: verdict.issues,
                    members,
                }
            })
            .collect();

        let duplicate_titles = value_groups(&pages, |p| p.title.as_deref());
        let duplicate_descriptions = value_groups(&pages, |p| p.description.as_deref());
        let duplicate_h1s = value_groups(&pages, |p| p.h1.as_deref());
        let mut thin_pages: Vec<usize> = pages.iter().filter(|p| p.thin).map(|p| p.page).collect();
        thin_pages.sort_by_key(|&p| (pages[p].words, p));

        let mut exact: HashMap<[u8; 16], usize> = HashMap::new();
        for d in &corpus.docs {
            *exact.entry(d.digest).or_default() += 1;
        }
        let analysed = corpus.docs.len();
        let pages_in_clusters: usize = clusters.iter().map(|c| c.size).sum();
        // Pages that answered with content of their own (not redirects).
        let ok = || pages.iter().filter(|p| p.error.is_none() && p.indexability != "redirect");
        let summary = AuditSummary {
            pages: pages.len(),
            analysed,
            errors: errors.len(),
            exact_groups: exact.values().filter(|&&n| n > 1).count(),
            exact_duplicate_pages: exact.values().filter(|&&n| n > 1).sum(),
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
            noindex_pages: ok().filter(|p| p.noindex).count(),
            canonicalised_pages: ok().filter(|p| p.indexability == "canonicalised").count(),
            missing_titles: ok().filter(|p| p.title.is_none()).count(),
            missing_descriptions: ok().filter(|p| p.description.is_none()).count(),
            missing_h1s: ok().filter(|p| p.h1.is_none()).count(),
        };
        Audit {
            schema_version: AUDIT_SCHEMA_VERSION,
            generator: format!("webdup {}", env!("CARGO_PKG_VERSION")),
            source: None,
            settings: AuditSettings {
                threshold: config.threshold,
                shingle_size: config.shingle_size,
                extractor: config.extract.extractor.as_str().to_string(),
                thin_words: audit.thin_words,
                fingerprint: config.fingerprint_settings(),
                matching: config.match_settings(),
            },
            summary,
            pages,
            clusters,
            duplicate_titles,
            duplicate_descriptions,
            duplicate_h1s,
            thin_pages,
            errors,
        }
    }

    /// Writes `report.json`.
    pub fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        serde_json::to_writer_pretty(&mut *out, self)?;
        out.write_all(b"\n")?;
        Ok(())
    }

    /// Writes the four report files into `dir` (created if missing); the
    /// CSV files start with a UTF-8 byte-order mark when `csv_bom` is set
    /// (Excel then reads non-Latin text right).
    pub fn write_dir(&self, texts: &AuditTexts, dir: &Path, csv_bom: bool) -> Result<()> {
        let bom: &[u8] = if csv_bom { crate::report::UTF8_BOM } else { b"" };
        std::fs::create_dir_all(dir)?;
        let file = |name: &str| -> Result<std::io::BufWriter<std::fs::File>> {
            Ok(std::io::BufWriter::new(std::fs::File::create(dir.join(name))?))
        };
        let mut w = file("report.json")?;
        self.write_json(&mut w)?;
        w.flush()?;
        let mut w = file("pages.csv")?;
        w.write_all(bom)?;
        csv::write_pages(self, &mut w)?;
        w.flush()?;
        let mut w = file("clusters.csv")?;
        w.write_all(bom)?;
        csv::write_clusters(self, &mut w)?;
        w.flush()?;
        let mut w = file("report.html")?;
        html::write(self, texts, &mut w)?;
        w.flush()?;
        Ok(())
    }
}

/// The page rows of an audit, before matches and clusters are filled in.
struct Rows {
    pages: Vec<PageRow>,
    errors: Vec<ErrorRow>,
    /// The page row of each of the corpus's documents.
    page_of_doc: Vec<usize>,
}

/// A page row with only its URL, input and status known.
fn blank_row(page: usize, url: String, input: Option<String>, status: Option<u16>) -> PageRow {
    PageRow {
        page,
        url,
        input,
        status,
        indexability: "indexable",
        title: None,
        description: None,
        h1: None,
        canonical: None,
        canonical_source: None,
        noindex: false,
        noindex_source: None,
        words: None,
        thin: false,
        closest_page: None,
        closest_url: None,
        closest_similarity: None,
        near_duplicates: 0,
        cluster: None,
        error: None,
    }
}

/// The row of an input that redirected to a page the run has under another
/// input: its own URL and the redirect's status, not analysed, never a
/// duplicate of its target.
fn redirect_row(page: usize, url: String, status: Option<u16>) -> PageRow {
    PageRow { indexability: "redirect", ..blank_row(page, url, None, status) }
}

/// Marks the row as failed and returns its entry for `errors`.
fn error_row(row: &mut PageRow, e: &crate::error::DocError) -> ErrorRow {
    row.error = Some(format!("{}: {}", e.kind, e.message));
    ErrorRow {
        page: row.page,
        url: row.url.clone(),
        status: row.status,
        kind: e.kind.as_str().to_string(),
        message: e.message.clone(),
    }
}

/// The row's `indexability`, from its error, status, robots and canonical.
fn indexability(row: &PageRow) -> &'static str {
    if row.error.is_some() {
        if row.status.is_some_and(|s| s != 200) { "non_200" } else { "error" }
    } else if row.noindex {
        "noindex"
    } else if row.canonical.as_deref().is_some_and(|c| !canonical::same_url(c, &row.url)) {
        "canonicalised"
    } else {
        "indexable"
    }
}

/// Page rows of a run, in input order: analysed documents and failures
/// interleaved, with what their fetches recorded.
fn rows_of_run(corpus: &Corpus, fetches: &[FetchRecord], audit: &AuditConfig) -> Rows {
    let by_id: HashMap<&str, &FetchRecord> = fetches.iter().map(|r| (r.id.as_str(), r)).collect();

    // Pages in input order: analysed documents and failures interleaved.
    enum Src<'a> {
        Doc(usize),
        Err(&'a crate::error::DocError),
        Redirect(&'a FetchRecord),
    }
    let mut order: Vec<(DocKey, Src)> = corpus.docs.iter().enumerate().map(|(i, d)| (d.key, Src::Doc(i))).collect();
    order.extend(corpus.errors.iter().map(|e| (e.key, Src::Err(e))));
    // Inputs folded into a page of the run (`run::fold_redirects`): their
    // fetch is recorded, their page is another input's.
    let present: HashSet<&str> =
        corpus.docs.iter().map(|d| d.id.as_str()).chain(corpus.errors.iter().map(|e| e.id.as_str())).collect();
    order.extend(
        fetches
            .iter()
            .filter(|r| r.chain.len() > 1 && !present.contains(r.id.as_str()))
            .map(|r| (r.key, Src::Redirect(r))),
    );
    order.sort_by_key(|(o, _)| *o);

    let mut page_of_doc = vec![0usize; corpus.docs.len()];
    let mut pages = Vec::with_capacity(order.len());
    let mut errors = Vec::new();
    for (n, (_, src)) in order.iter().enumerate() {
        let (id, record) = match src {
            Src::Doc(i) => (corpus.docs[*i].id.as_str(), by_id.get(corpus.docs[*i].id.as_str()).copied()),
            Src::Err(e) => (e.id.as_str(), by_id.get(e.id.as_str()).copied()),
            Src::Redirect(r) => {
                pages.push(redirect_row(
                    n,
                    r.url.clone().unwrap_or_else(|| r.id.clone()),
                    r.chain.first().map(|h| h.status),
                ));
                continue;
            }
        };
        let url = record.and_then(|r| r.final_url.clone().or_else(|| r.url.clone())).unwrap_or_else(|| id.to_string());
        let status = record.and_then(|r| r.status);
        let input = (url != id).then(|| id.to_string());
        let mut row = blank_row(n, url, input, status);
        let meta = match src {
            Src::Doc(i) => corpus.docs[*i].meta.as_deref(),
            Src::Err(_) | Src::Redirect(_) => None,
        };
        // The one merge rule of markup and headers.
        let o = observe(meta, record.map(Exchange::from).as_ref());
        row.canonical = o.canonical;
        row.canonical_source = o.canonical_source.map(CanonicalSource::as_str);
        row.noindex = o.noindex;
        row.noindex_source = o.noindex_source.map(NoindexSource::as_str);
        match src {
            Src::Doc(i) => {
                let d = &corpus.docs[*i];
                page_of_doc[*i] = n;
                row.words = Some(d.word_count);
                row.thin = d.word_count < audit.thin_words;
                if let Some(m) = &d.meta {
                    row.title = m.title.clone();
                    row.description = m.description.clone();
                    row.h1 = m.h1.clone();
                } else {
                    row.title = d.title.clone();
                }
            }
            Src::Err(e) => errors.push(error_row(&mut row, e)),
            Src::Redirect(_) => {}
        }
        row.indexability = indexability(&row);
        pages.push(row);
    }
    Rows { pages, errors, page_of_doc }
}

/// Pages without a duplicate show their nearest page from this Jaccard up.
pub const NEAR_MISS_FLOOR: f64 = 0.5;

/// Fills each page's closest match and near-duplicate count from the
/// confirmed pairs. Exact copies only link to the first copy of their text
/// and only first copies take part in the near search, so counts go through
/// the groups of copies: a page is near every other copy of its text, and
/// near every copy of each text its text is near.
fn fill_matches(
    pages: &mut [PageRow],
    corpus: &Corpus,
    clustering: &Clustering,
    page_of_doc: &[usize],
    config: &Config,
) {
    let docs = &corpus.docs;
    let mut first: HashMap<[u8; 16], usize> = HashMap::new();
    let mut group = vec![0usize; docs.len()];
    let mut copies: Vec<Vec<usize>> = vec![Vec::new(); docs.len()];
    for (i, d) in docs.iter().enumerate() {
        let g = *first.entry(d.digest).or_insert(i);
        group[i] = g;
        copies[g].push(i);
    }
    let mut near: Vec<Vec<(usize, f64)>> = vec![Vec::new(); docs.len()];
    for e in &clustering.edges {
        let (Some(a), Some(b)) = (corpus.position(e.a), corpus.position(e.b)) else {
            continue;
        };
        let (a, b) = (group[a], group[b]);
        if a != b {
            let j = e.overlap.jaccard();
            near[a].push((b, j));
            near[b].push((a, j));
        }
    }
    let mut near_misses: Option<Vec<Vec<crate::engine::Neighbor>>> = None;
    for i in 0..docs.len() {
        let g = group[i];
        let others = copies[g].len() - 1;
        let count = others + near[g].iter().map(|&(h, _)| copies[h].len()).sum::<usize>();
        let closest = if others > 0 {
            copies[g].iter().find(|&&c| c != i).map(|&c| (c, 1.0))
        } else {
            near[g].iter().copied().max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)))
        };
        // A page with no duplicate still shows its nearest page from
        // NEAR_MISS_FLOOR up: a copy with a paragraph trimmed (Jaccard 0.79)
        // is worth a look.
        let closest = closest.or_else(|| {
            let misses = near_misses.get_or_insert_with(|| {
                let jaccard = Config { measure: crate::engine::Measure::Jaccard, ..config.clone() };
                crate::engine::neighbors(corpus, &jaccard, NEAR_MISS_FLOOR.min(config.threshold), 1)
            });
            misses[i].first().and_then(|n| Some((corpus.position(n.key)?, n.jaccard)))
        });
        let p = &mut pages[page_of_doc[i]];
        p.near_duplicates = count;
        if let Some((c, j)) = closest {
            p.closest_page = Some(page_of_doc[c]);
            p.closest_similarity = Some(round(j));
        }
    }
    for i in 0..pages.len() {
        if let Some(c) = pages[i].closest_page {
            pages[i].closest_url = Some(pages[c].url.clone());
        }
    }
}

/// Groups of two or more analysed, indexable pages whose value is the same
/// after folding case and whitespace. Pages that are noindex or canonicalised
/// elsewhere are left out: search engines do not show them, so their titles
/// compete with nothing.
fn value_groups(pages: &[PageRow], value: impl Fn(&PageRow) -> Option<&str>) -> Vec<ValueGroup> {
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for p in pages.iter().filter(|p| p.indexability == "indexable") {
        if let Some(v) = value(p) {
            let key = v.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
            if !key.is_empty() {
                groups.entry(key).or_default().push(p.page);
            }
        }
    }
    let mut out: Vec<ValueGroup> = groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| ValueGroup { value: value(&pages[g[0]]).unwrap_or_default().to_string(), pages: g })
        .collect();
    out.sort_by(|a, b| b.pages.len().cmp(&a.pages.len()).then(a.pages[0].cmp(&b.pages[0])));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_directives_with_and_without_bot_names() {
        assert!(forbids_indexing("noindex, follow"));
        assert!(forbids_indexing("googlebot: noindex"));
        assert!(forbids_indexing("NONE"));
        assert!(!forbids_indexing("index, follow"));
        assert!(!forbids_indexing("unavailable_after: 25 Jun 2010 15:00:00 PST"));
    }
}
