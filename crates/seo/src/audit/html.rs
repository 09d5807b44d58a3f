//! `report.html`: one self-contained file (inline CSS, JS, SVG; no network),
//! or for a large audit the paged report ([`write_report`], `paged.rs`):
//! the same page with its tables in chunk files beside it.
//!
//! The static part (summary, charts, section headings, table headers) is
//! written here, so the report's outline is readable without JavaScript and
//! testable without a browser. Long tables are rendered by the inline script
//! from a compact JSON blob (rows as arrays, not objects) a page at a time,
//! so a 5,000-page report stays small and responsive. Everything taken from
//! the pages (titles, URLs) reaches the DOM as text, never as markup.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::{Audit, AuditTexts, ValueGroup};
use std::io::Result;

mod paged;

pub use paged::DATA_DIR;

/// Audits of more pages than this get the paged report: about 10 MB as one
/// file, still fine to mail and quick to open.
pub const PAGED_ABOVE: usize = 5_000;

/// How `report.html` is laid out: one file, or a file and its chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportLayout {
    /// Audits of more pages than this get the paged report.
    pub paged_above: usize,
    /// Rows of a table in one chunk of the paged report (a sort order's
    /// chunk holds ten times as many row numbers).
    pub chunk_rows: usize,
}

impl Default for ReportLayout {
    fn default() -> Self {
        ReportLayout { paged_above: PAGED_ABOVE, chunk_rows: 500 }
    }
}

/// Writes `dir/report.html`: one file for audits of up to
/// `layout.paged_above` pages ([`write`]), else the paged report, its
/// tables in chunks under `dir/report-data/` ([`DATA_DIR`]). A stale
/// `report-data/` of an earlier report is removed either way.
pub fn write_report(audit: &Audit, texts: &AuditTexts, dir: &Path, layout: ReportLayout) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    if audit.pages.len() > layout.paged_above {
        return paged::write(audit, texts, dir, layout.chunk_rows);
    }
    let data = dir.join(DATA_DIR);
    if data.exists() {
        std::fs::remove_dir_all(&data)?;
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("report.html"))?);
    write(audit, texts, &mut w)?;
    w.flush()
}

const CSS: &str = include_str!("report.css");
/// The single file's script: the parts shared with the paged report's
/// script (see [`paged`]) and its own, in an order that is one script.
const JS: &str = concat!(
    include_str!("html/head.js"),
    include_str!("html/data.js"),
    include_str!("html/base.js"),
    include_str!("html/table.js"),
    include_str!("html/diff.js"),
    include_str!("html/overlay.js"),
    include_str!("html/clusters.js"),
    include_str!("html/members.js"),
    include_str!("html/tables.js"),
);

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A bar chart as inline SVG: one `rect.bar` per value, labelled below and
/// counted above.
pub fn bar_chart(id: &str, title: &str, labels: &[String], values: &[usize]) -> String {
    let (w, h, left, bottom, top) = (560.0, 220.0, 36.0, 40.0, 24.0);
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let n = values.len().max(1) as f64;
    let slot = (w - left - 8.0) / n;
    let bar = (slot * 0.7).max(2.0);
    let mut s = format!(
        r#"<svg id="{id}" class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><title>{t}</title>"#,
        t = escape(title)
    );
    let base = h - bottom;
    s.push_str(&format!(r#"<line class="axis" x1="{left}" y1="{base}" x2="{}" y2="{base}"/>"#, w - 4.0));
    for (i, (label, &v)) in labels.iter().zip(values).enumerate() {
        let x = left + slot * i as f64 + (slot - bar) / 2.0;
        let bh = (base - top) * v as f64 / max;
        s.push_str(&format!(
            r#"<rect class="bar" x="{x:.1}" y="{:.1}" width="{bar:.1}" height="{bh:.1}"><title>{}: {v}</title></rect>"#,
            base - bh,
            escape(label)
        ));
        let cx = x + bar / 2.0;
        s.push_str(&format!(r#"<text class="count" x="{cx:.1}" y="{:.1}">{v}</text>"#, base - bh - 5.0));
        s.push_str(&format!(r#"<text class="label" x="{cx:.1}" y="{:.1}">{}</text>"#, base + 16.0, escape(label)));
    }
    s.push_str("</svg>");
    s
}

/// Clusters by size: 2, 3, 4, 5, 6–10, 11–20, 21–50, more.
fn cluster_size_chart(audit: &Audit) -> String {
    let bins: [(usize, usize, &str); 8] = [
        (2, 2, "2"),
        (3, 3, "3"),
        (4, 4, "4"),
        (5, 5, "5"),
        (6, 10, "6–10"),
        (11, 20, "11–20"),
        (21, 50, "21–50"),
        (51, usize::MAX, "51+"),
    ];
    let mut counts = [0usize; 8];
    for c in &audit.clusters {
        if let Some(i) = bins.iter().position(|&(lo, hi, _)| (lo..=hi).contains(&c.size)) {
            counts[i] += 1;
        }
    }
    let labels: Vec<String> = bins.iter().map(|b| b.2.to_string()).collect();
    bar_chart("chart-cluster-sizes", "Clusters by number of pages", &labels, &counts)
}

/// Pages by the similarity of their closest match, in 5-point bins from 50%
/// (near misses below the threshold included) up to 100% (copies of the
/// whole text get their own bar).
fn similarity_chart(audit: &Audit) -> String {
    let low = ((super::NEAR_MISS_FLOOR.min(audit.settings.threshold) * 20.0).floor() as usize).min(19);
    let mut labels: Vec<String> = (low..20).map(|b| format!("{}–{}%", b * 5, b * 5 + 5)).collect();
    labels.push("same text".into());
    let mut counts = vec![0usize; labels.len()];
    for p in &audit.pages {
        if let Some(s) = p.closest_similarity {
            let i = if s >= 1.0 { labels.len() - 1 } else { ((s * 20.0).floor() as usize).clamp(low, 19) - low };
            counts[i] += 1;
        }
    }
    bar_chart("chart-similarity", "Pages by similarity of their closest match", &labels, &counts)
}

fn group_rows(groups: &[ValueGroup]) -> Value {
    Value::Array(groups.iter().map(|g| json!([g.value, g.pages])).collect())
}

/// The data the script renders, rows as arrays (column order in html/*.js).
fn data(audit: &Audit, texts: &AuditTexts) -> Value {
    let pages: Vec<Value> = audit
        .pages
        .iter()
        .map(|p| {
            json!([
                p.url,
                p.status,
                p.indexability,
                p.title,
                p.words,
                p.closest_page,
                p.closest_similarity,
                p.near_duplicates,
                p.cluster,
                p.canonical,
                p.noindex,
            ])
        })
        .collect();
    // Worst first: the table's default order.
    let mut by_severity: Vec<&super::AuditCluster> = audit.clusters.iter().collect();
    by_severity.sort_by_key(|c| (c.severity, c.id));
    let clusters: Vec<Value> = by_severity
        .into_iter()
        .map(|c| {
            let issues: Vec<Value> = c.issues.iter().map(|i| json!([i.code, i.message, i.pages.len()])).collect();
            let members: Vec<Value> =
                c.members.iter().map(|m| json!([m.page, m.similarity, m.containment, m.kind(), m.markup])).collect();
            json!([
                c.id,
                c.kind,
                c.size,
                c.min_similarity,
                c.status,
                c.handled_by,
                c.canonical_target,
                issues,
                members,
                c.representative,
                c.severity,
                c.cause,
                c.keep.url,
                c.keep.reason
            ])
        })
        .collect();
    let errors: Vec<Value> = audit.errors.iter().map(|e| json!([e.page, e.kind, e.message])).collect();
    let text_rows: Vec<Value> = texts.pages.iter().map(|t| json!([t.page, t.base, t.ops])).collect();
    json!({
        "threshold": audit.settings.threshold,
        "pages": pages,
        "clusters": clusters,
        "rollup": audit.cause_rollup.iter().map(|r| json!([r.clusters, r.pages, r.cause, r.example_keep])).collect::<Vec<_>>(),
        "parameters": audit
            .parameters
            .iter()
            .map(|p| json!([p.name, p.kind, p.duplicate_urls, p.clusters, p.advice]))
            .collect::<Vec<_>>(),
        "links": audit.links_to_fix.iter().map(|l| json!([l.from, l.link, l.to])).collect::<Vec<_>>(),
        "folded": audit.folded.iter().map(|f| json!([f.link, f.folded_into, f.cause])).collect::<Vec<_>>(),
        "sitemap": sitemap_rows(audit),
        "titles": group_rows(&audit.duplicate_titles),
        "descriptions": group_rows(&audit.duplicate_descriptions),
        "h1s": group_rows(&audit.duplicate_h1s),
        "thin": audit.thin_pages,
        "errors": errors,
        "bases": texts.bases,
        "texts": text_rows,
        "missing": texts.missing,
    })
}

/// Orphan pages (in a sitemap, linked from no crawled page), then unlisted
/// pages (linked, not in the sitemap), as `[url, what]` rows.
fn sitemap_rows(audit: &Audit) -> Vec<Value> {
    let orphans =
        audit.orphan_pages.iter().flatten().map(|u| json!([u, "orphan: in the sitemap, linked from no page"]));
    let unlisted = audit.unlisted_pages.iter().flatten().map(|u| json!([u, "unlisted: linked, not in the sitemap"]));
    orphans.chain(unlisted).collect()
}

/// A section whose table the script renders from rows of `columns.len()`
/// cells, sortable by any column.
fn sortable_table(id: &str, title: &str, intro: &str, columns: &[&str], count: usize) -> String {
    table_section(id, title, intro, columns, count, true)
}

/// A section with a table the script fills, a filter box and a pager; its
/// headers sort when `sortable` (rows of one cell a column).
fn table_section(id: &str, title: &str, intro: &str, columns: &[&str], count: usize, sortable: bool) -> String {
    let ths: String = columns
        .iter()
        .enumerate()
        .map(|(i, h)| match sortable {
            true => format!(r#"<th data-sort="{i}">{}</th>"#, escape(h)),
            false => format!("<th>{}</th>", escape(h)),
        })
        .collect();
    format!(
        r#"<section id="{id}"><h2>{} <span class="count">{count}</span></h2><p class="intro">{}</p>
<div class="controls"><input type="search" class="filter" placeholder="Filter…" aria-label="Filter {}"></div>
<table id="{id}-table"><thead><tr>{ths}</tr></thead><tbody></tbody></table><div class="pager"></div></section>
"#,
        escape(title),
        escape(intro),
        escape(title)
    )
}

/// The sections on why clusters exist and what to fix: clusters that differ
/// the same way, the parameters that make duplicates and, with a crawl,
/// the links to fix, folded URLs, orphan and unlisted pages, and what the
/// crawl left out.
fn cause_sections(audit: &Audit) -> String {
    let mut h = sortable_table(
        "rollup",
        "What makes the duplicates",
        "Clusters whose URLs differ the same way, on one line each, with the URL kept in one of them.",
        &["Clusters", "Pages", "What differs", "Example URL to keep"],
        audit.cause_rollup.len(),
    );
    h.push_str(&sortable_table(
        "parameters",
        "Parameters that make duplicates",
        "Each query parameter that makes duplicate URLs, how many, and what to do about it.",
        &["Parameter", "Kind", "Duplicate URLs", "Clusters", "What to do"],
        audit.parameters.len(),
    ));
    let Some(crawl) = &audit.crawl else {
        return h;
    };
    h.push_str(&sortable_table(
        "links",
        "Links to fix",
        "Internal links to a duplicate instead of its cluster's URL to keep.",
        &["Page", "Links to", "Should link to"],
        audit.links_to_fix.len(),
    ));
    h.push_str(&sortable_table(
        "folded",
        "Folded URLs",
        "Linked URLs the crawl folded into another before fetching (tracking parameters): duplicates for search engines all the same.",
        &["Linked URL", "Folded into", "What differs"],
        audit.folded.len(),
    ));
    if audit.orphan_pages.is_some() {
        h.push_str(&sortable_table(
            "sitemap",
            "Orphan and unlisted pages",
            "Pages a sitemap lists that no crawled page links to, and linked indexable pages the sitemap leaves out.",
            &["URL", "What"],
            audit.orphan_pages.iter().chain(&audit.unlisted_pages).map(Vec::len).sum(),
        ));
    }
    let n = &crawl.not_followed;
    h.push_str(&format!(
        r#"<section id="crawl"><h2>Crawl</h2><p class="intro">{} pages fetched to depth {}. Not followed: {} disallowed by robots.txt, {} out of scope, {} nofollow, {} excluded, {} beyond the depth limit, {} beyond the page limit, {} unusable links, {} links of pages that repeat earlier pages.</p>"#,
        crawl.pages,
        crawl.depth,
        n.robots,
        n.out_of_scope,
        n.nofollow,
        n.excluded,
        n.beyond_depth,
        n.beyond_max_pages,
        n.unusable,
        n.repeating
    ));
    if crawl.canonicals_beyond > 0 || crawl.folded_beyond > 0 {
        h.push_str(&format!(
            r#"<p class="intro">{} canonical targets beyond the limits fetched anyway, to know their answer; {} folded links beyond those listed.</p>"#,
            crawl.canonicals_beyond, crawl.folded_beyond
        ));
    }
    for m in &crawl.moved_starts {
        h.push_str(&format!(
            r#"<p class="intro">Start page {} redirected to {}: its host was crawled too.</p>"#,
            escape(&m.from),
            escape(&m.to)
        ));
    }
    h.push_str(r#"<table id="traps-table"><thead><tr><th>Trap pattern</th><th>Pages fetched</th><th>URLs skipped</th></tr></thead><tbody>"#);
    for t in &crawl.traps {
        h.push_str(&format!(
            r#"<tr><td class="url">{}</td><td class="num">{}</td><td class="num">{}</td></tr>"#,
            escape(&t.pattern),
            t.fetched,
            t.skipped
        ));
    }
    if crawl.traps.is_empty() {
        h.push_str(r#"<tr><td colspan="3" class="muted">No crawl trap.</td></tr>"#);
    }
    h.push_str("</tbody></table></section>\n");
    h
}

fn card(value: &str, label: &str, class: &str, href: &str) -> String {
    format!(
        r##"<a class="card {class}" href="#{href}"><span class="value">{}</span><span class="label">{}</span></a>"##,
        escape(value),
        escape(label)
    )
}

/// Writes the report as one file.
pub fn write(audit: &Audit, texts: &AuditTexts, out: &mut dyn Write) -> Result<()> {
    let mut h = page(audit, SINGLE_CSP);
    h.push_str("<script type=\"application/json\" id=\"audit-data\">");
    // `<` only occurs inside JSON strings, where \u003c means the same, so
    // no page text can close the script element.
    h.push_str(&serde_json::to_string(&data(audit, texts))?.replace('<', "\\u003c"));
    h.push_str("</script>\n<script>");
    h.push_str(JS);
    h.push_str("</script></body></html>\n");
    out.write_all(h.as_bytes())?;
    Ok(())
}

/// No network: the policy forbids any fetch, so a stray URL in page data
/// can never load.
const SINGLE_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// The report up to its data and script: head, summary, charts and every
/// section's static part, under the content security policy `csp`.
fn page(audit: &Audit, csp: &str) -> String {
    let s = &audit.summary;
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let mut h = String::with_capacity(64 << 10);
    h.push_str(r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">"#);
    h.push_str(r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#);
    h.push_str(&format!(r#"<meta http-equiv="Content-Security-Policy" content="{csp}">"#));
    h.push_str("<title>Duplicate content audit</title><style>");
    h.push_str(CSS);
    h.push_str("</style></head><body>\n");
    h.push_str(r#"<pre id="js-errors" hidden></pre>"#);
    h.push_str(&format!(
        r##"<header><h1>Duplicate content audit</h1><p class="meta">{} · similarity threshold {:.0}% (exact Jaccard of {}-word shingles) · thin below {} words · extractor {}{}</p>
<nav><a href="#summary">Summary</a><a href="#clusters">Clusters</a><a href="#rollup">Causes</a><a href="#parameters">Parameters</a>{}<a href="#diff">Compare</a><a href="#pages">Pages</a><a href="#titles">Titles</a><a href="#descriptions">Descriptions</a><a href="#h1s">H1s</a><a href="#thin">Thin pages</a><a href="#errors">Errors</a></nav></header>
<main>
"##,
        escape(&audit.generator),
        audit.settings.threshold * 100.0,
        audit.settings.shingle_size,
        audit.settings.thin_words,
        escape(&audit.settings.extractor),
        match &audit.source {
            Some(src) => format!(" · from index {}, crawl {}", escape(&src.index), escape(&src.crawl)),
            None => String::new(),
        },
        if audit.crawl.is_some() { r##"<a href="#links">Links to fix</a><a href="#crawl">Crawl</a>"## } else { "" },
    ));
    h.push_str(r#"<section id="summary"><h2>Summary</h2><div class="cards">"#);
    let problem = if s.clusters_with_problems > 0 { "bad" } else { "good" };
    for (value, label, class, href) in [
        (s.pages.to_string(), "pages", "", "pages"),
        (s.identical_groups.to_string(), "identical-page groups", "", "clusters"),
        (s.same_text_groups.to_string(), "same-text groups", "", "clusters"),
        (s.near_clusters.to_string(), "near-duplicate clusters", "", "clusters"),
        (pct(s.share_affected), "of pages affected", "", "clusters"),
        (s.clusters_handled.to_string(), "clusters handled by canonical or noindex", "good", "clusters"),
        (s.clusters_with_problems.to_string(), "clusters with canonical problems", problem, "clusters"),
        (s.duplicate_title_groups.to_string(), "duplicate titles", "", "titles"),
        (s.duplicate_description_groups.to_string(), "duplicate descriptions", "", "descriptions"),
        (s.duplicate_h1_groups.to_string(), "duplicate h1s", "", "h1s"),
        (s.thin_pages.to_string(), "thin pages", "", "thin"),
        (s.errors.to_string(), "fetch errors", if s.errors > 0 { "bad" } else { "" }, "errors"),
    ] {
        h.push_str(&card(&value, label, class, href));
    }
    h.push_str("</div>\n");
    if s.rendered_pages > 0 {
        h.push_str(&format!(
            r#"<p class="intro">{} pages were rendered in a headless Chromium: their text is what their scripts left.</p>"#,
            s.rendered_pages
        ));
    }
    if s.client_rendered_pages > 0 {
        h.push_str(&format!(
            r#"<p class="intro"><b>{} of {} pages look client-rendered</b> (an empty app shell that scripts fill): their text here is the shell's. Audit again with <code>--render auto</code> (only such pages) or <code>--render on</code>.</p>"#,
            s.client_rendered_pages, s.pages
        ));
    }
    h.push_str("<div class=\"charts\"><figure>");
    h.push_str(&cluster_size_chart(audit));
    h.push_str("<figcaption>Clusters by number of pages</figcaption></figure><figure>");
    h.push_str(&similarity_chart(audit));
    h.push_str("<figcaption>Pages by similarity of their closest match</figcaption></figure></div></section>\n");
    h.push_str(&super::since::html_section(audit));

    h.push_str(&format!(
        r#"<section id="clusters"><h2>Duplicate clusters <span class="count">{}</span></h2>
<p class="intro">Pages whose main text is at least {:.0}% the same, worst first: indexable duplicates without a canonical, then other problems, then handled clusters, more pages first. A cluster is <b>handled</b> when its pages agree, by rel=canonical or noindex, on one indexable URL that answers 200. Each names what differs between its URLs and the URL to keep. Click a column to sort, a cluster for its pages and to compare any two.</p>
<div class="controls"><input type="search" class="filter" placeholder="Filter by URL or issue…" aria-label="Filter clusters">
<select class="status-filter" aria-label="Canonical status"><option value="">all clusters</option><option value="problem">problems</option><option value="handled">handled</option></select></div>
<table id="clusters-table"><thead><tr><th data-sort="0">Severity</th><th data-sort="1">Cluster</th><th data-sort="2">Kind</th><th data-sort="3">Pages</th><th data-sort="4">Lowest similarity</th><th data-sort="5">Canonical status</th><th data-sort="6">Issues</th><th data-sort="7">What differs</th><th data-sort="8">URL to keep</th></tr></thead><tbody></tbody></table><div class="pager"></div></section>
"#,
        audit.clusters.len(),
        audit.settings.threshold * 100.0
    ));
    h.push_str(&cause_sections(audit));
    h.push_str(
        r#"<section id="diff"><h2>Compare two pages</h2><p class="intro">Open a cluster above and pick any two of its pages, or follow a closest match in the pages table: their main texts open side by side, words only on the left struck out, words only on the right highlighted.</p></section>
<div id="diff-overlay" class="overlay" hidden><div class="dialog" role="dialog" aria-modal="true" aria-labelledby="diff-title"><div class="dialog-head"><h3 id="diff-title">Compare two pages</h3><button type="button" id="diff-close">Close ✕</button></div><div id="diff-view"></div></div></div>
"#,
    );
    h.push_str(&format!(
        r#"<section id="pages"><h2>Pages <span class="count">{}</span></h2><p class="intro">Every page with its closest match at or above the threshold and its number of near duplicates. Click a column to sort.</p>
<div class="controls"><input type="search" class="filter" placeholder="Filter by URL or title…" aria-label="Filter pages"><label><input type="checkbox" class="dups-only"> only pages with duplicates</label></div>
<table id="pages-table"><thead><tr><th data-sort="0">URL</th><th data-sort="1">Status</th><th data-sort="2">Indexability</th><th data-sort="3">Title</th><th data-sort="4">Words</th><th data-sort="5">Closest match</th><th data-sort="6">Similarity</th><th data-sort="7">Near duplicates</th><th data-sort="8">Cluster</th></tr></thead><tbody></tbody></table><div class="pager"></div></section>
"#,
        audit.pages.len()
    ));
    let groups_intro = "Indexable pages (not noindex, not canonicalised elsewhere) sharing the same text.";
    h.push_str(&table_section(
        "titles",
        "Duplicate titles",
        groups_intro,
        &["Title", "Pages", "URLs"],
        audit.duplicate_titles.len(),
        false,
    ));
    h.push_str(&table_section(
        "descriptions",
        "Duplicate meta descriptions",
        groups_intro,
        &["Description", "Pages", "URLs"],
        audit.duplicate_descriptions.len(),
        false,
    ));
    h.push_str(&table_section(
        "h1s",
        "Duplicate h1s",
        groups_intro,
        &["H1", "Pages", "URLs"],
        audit.duplicate_h1s.len(),
        false,
    ));
    h.push_str(&table_section(
        "thin",
        "Thin pages",
        &format!("Pages with fewer than {} words of main text.", audit.settings.thin_words),
        &["URL", "Words", "Title"],
        audit.thin_pages.len(),
        false,
    ));
    h.push_str(&table_section(
        "errors",
        "Fetch errors",
        "Pages that could not be fetched or read; they are left out of the analysis.",
        &["URL", "Status", "Kind", "Message"],
        audit.errors.len(),
        false,
    ));
    h.push_str("</main>\n");
    h
}
