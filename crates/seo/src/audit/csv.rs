//! `pages.csv`, `clusters.csv`, `links_to_fix.csv` and `parameters.csv`:
//! the audit as spreadsheets.

use std::io::Write;

use super::Audit;
use crate::csv_safe::SafeCsvWriter;
use std::io::Result;
use webdup_core::page::CanonicalSource;

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

fn ratio(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.4}")).unwrap_or_default()
}

/// One row per page, in input order, with the columns SEO tools use.
pub fn write_pages(audit: &Audit, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record([
        "url",
        "status",
        "indexability",
        "title",
        "description",
        "h1",
        "canonical",
        "canonical_source",
        "noindex",
        "words",
        "thin",
        "closest_match",
        "closest_similarity",
        "near_duplicates",
        "cluster",
        "inlinks",
        "in_sitemap",
        "input",
        "error",
    ])?;
    for p in &audit.pages {
        w.write_record([
            p.url.clone(),
            opt(&p.status),
            p.indexability.to_string(),
            opt(&p.title),
            opt(&p.description),
            opt(&p.h1),
            opt(&p.canonical),
            opt(&p.canonical_source.map(CanonicalSource::as_str)),
            p.noindex.to_string(),
            opt(&p.words),
            p.thin.to_string(),
            opt(&p.closest_url),
            ratio(p.closest_similarity),
            p.near_duplicates.to_string(),
            opt(&p.cluster),
            opt(&p.inlinks),
            opt(&p.in_sitemap),
            opt(&p.input),
            opt(&p.error),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// One row per cluster member; the cluster's verdict repeats on each row so
/// the sheet can be filtered by it.
pub fn write_clusters(audit: &Audit, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record([
        "cluster",
        "kind",
        "size",
        "status",
        "handled_by",
        "canonical_target",
        "issues",
        "cause",
        "keep_url",
        "keep_reason",
        "url",
        "representative",
        "similarity",
        "containment",
        "identical",
        "same_text",
        "http_status",
        "canonical",
        "noindex",
    ])?;
    for c in &audit.clusters {
        let issues = c.issues.iter().map(|i| i.code).collect::<Vec<_>>().join(" ");
        for m in &c.members {
            let p = &audit.pages[m.page];
            w.write_record([
                c.id.to_string(),
                c.kind.to_string(),
                c.size.to_string(),
                c.status.to_string(),
                opt(&c.handled_by),
                opt(&c.canonical_target),
                issues.clone(),
                c.cause.clone(),
                c.keep.url.clone(),
                c.keep.reason.clone(),
                m.url.clone(),
                m.representative.to_string(),
                format!("{:.6}", m.similarity),
                format!("{:.6}", m.containment),
                m.identical.to_string(),
                m.same_text.to_string(),
                opt(&p.status),
                opt(&p.canonical),
                p.noindex.to_string(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

/// One row per internal link to a duplicate that is not its cluster's URL
/// to keep: the linking page, the URL linked, the URL to link instead.
pub fn write_links_to_fix(audit: &Audit, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record(["from", "link", "to"])?;
    for l in &audit.links_to_fix {
        w.write_record([&l.from, &l.link, &l.to])?;
    }
    w.flush()?;
    Ok(())
}

/// One row per query parameter that makes duplicate URLs, with what to do.
pub fn write_parameters(audit: &Audit, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record(["parameter", "kind", "duplicate_urls", "clusters", "advice"])?;
    for p in &audit.parameters {
        w.write_record([
            p.name.clone(),
            p.kind.to_string(),
            p.duplicate_urls.to_string(),
            p.clusters.to_string(),
            p.advice.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}
