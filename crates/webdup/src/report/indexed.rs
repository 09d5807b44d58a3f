//! `webdup cluster --index`: a run's clusters, and what an index already
//! holds like each of its documents.

use std::io::Write;

use serde::Serialize;

use super::{ClusterReport, Format, SafeCsvWriter, terminal_safe, write_json};
use crate::error::Result;
use crate::store::{CheckResult, Match, TemplateState};

/// A document of the new crawl and what the index already holds like it.
#[derive(Debug, Clone, Serialize)]
pub struct IndexedRow {
    /// The document's id (its input).
    pub doc: String,
    /// The index's pages like it.
    #[serde(flatten)]
    pub result: CheckResult,
}

impl IndexedRow {
    /// Its matches, identical ones first, each with its kind
    /// (`identical`, `same-text`, `near`).
    fn matches(&self) -> impl Iterator<Item = (&'static str, &Match)> {
        self.result.matches()
    }
}

/// A run's [`ClusterReport`] with the documents an index has seen.
#[derive(Debug, Clone, Serialize)]
pub struct IndexedClusterReport {
    /// Clusters within the new crawl, as `webdup cluster` reports them.
    #[serde(flatten)]
    pub report: ClusterReport,
    /// The index checked, as the user named it.
    pub index: String,
    /// Documents of the new crawl whose content the index has seen.
    pub indexed: Vec<IndexedRow>,
}

impl IndexedClusterReport {
    /// Writes the report in `format`: JSON whole, the cluster table followed
    /// by the documents seen, or CSV/TSV with one row per (document, indexed
    /// match).
    pub fn write(&self, format: Format, out: &mut dyn Write) -> Result<()> {
        match format {
            Format::Csv => self.write_delimited(b',', out),
            Format::Tsv => self.write_delimited(b'\t', out),
            Format::Table => self.write_table(out),
            Format::Json => write_json(self, out),
        }
    }

    fn write_delimited(&self, delimiter: u8, out: &mut dyn Write) -> Result<()> {
        let mut w = SafeCsvWriter::new(delimiter, out);
        w.write_record(["doc", "kind", "url", "crawl", "jaccard", "containment"])?;
        for row in &self.indexed {
            for (kind, m) in row.matches() {
                w.write_record([
                    row.doc.as_str(),
                    kind,
                    &m.url,
                    &m.crawl,
                    &format!("{:.6}", m.jaccard),
                    &format!("{:.6}", m.containment),
                ])?;
            }
        }
        w.flush()?;
        Ok(())
    }

    fn write_table(&self, out: &mut dyn Write) -> Result<()> {
        self.report.write(Format::Table, out)?;
        writeln!(
            out,
            "\nseen in {} ({} of {} documents):",
            terminal_safe(&self.index),
            self.indexed.len(),
            self.report.summary.fingerprinted
        )?;
        for row in &self.indexed {
            // Matched before its site's template was learned: conservatively,
            // and what the pages share may yet prove to be the site's.
            let learning = match row.result.template {
                Some(TemplateState::NotYetLearned) => "  (template not yet learned)",
                _ => "",
            };
            writeln!(out, "{}{learning}", terminal_safe(&row.doc))?;
            for (kind, m) in row.matches() {
                writeln!(
                    out,
                    "  {kind:<9}  jaccard {:.4}  contain {:.4}  {} (crawl {})",
                    m.jaccard,
                    m.containment,
                    terminal_safe(&m.url),
                    terminal_safe(&m.crawl)
                )?;
            }
        }
        Ok(())
    }
}
