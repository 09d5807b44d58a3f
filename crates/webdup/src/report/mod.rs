//! Reports: the results of a run as a terminal table, JSON, CSV or TSV.
//!
//! Reports are built from the engine's output into plain serializable
//! structs ([`ClusterReport`], [`NeighborReport`]) first, so every format
//! shows the same facts, and failed documents appear in every format.

#[cfg(feature = "store")]
mod indexed;
mod redirects;
mod table;

use std::io::Write;

use serde::Serialize;

use crate::dedup::{IDENTICAL, NEAR, SAME_TEXT};
use crate::engine::{Clustering, Comparison, Config, Corpus, Measure, Neighbor, RunSettings};
use crate::error::{DocError, Result};
use crate::fetch::FetchRecord;

/// An input whose fetch redirected to a page another input of the run
/// already is: one page, reported once, under the input kept for it (see
/// `run::Loaded::fold_redirects`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirected {
    /// The input as given.
    pub id: String,
    /// Where it ended.
    pub final_url: String,
    /// Every response, the redirects first.
    pub chain: Vec<crate::fetch::Hop>,
    /// The input that stands for that page in the run.
    pub same_as: String,
}

#[cfg(feature = "store")]
pub use indexed::{IndexedClusterReport, IndexedRow};
pub use redirects::{RedirectFormat, Skipped, write_redirects};
pub use table::{terminal_safe, write_cluster_table, write_comparison_table, write_neighbor_table};
pub use webdup_seo::csv_safe::{SafeCsvWriter, UTF8_BOM, spreadsheet_safe};

/// Version of the JSON schema; bumped when a field changes meaning or goes away.
///
/// 2: `settings` holds two objects, `fingerprint` (everything that makes
/// fingerprints comparable, the extractor included) and `match` (how they
/// were compared), in place of version 1's flat list.
///
/// 3: "exact" is split in two: a member's `identical` (the same decoded
/// page) and `same_text` (the same normalized text, another page) in place
/// of `exact`, cluster kinds `identical`, `same-text` and `near`, the
/// summary's `identical_clusters` and `same_text_clusters` in place of
/// `exact_clusters`, and in a comparison `identical` and `same_text`.
pub const SCHEMA_VERSION: u32 = 3;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Tsv,
}

/// Counts shown at the top or bottom of every report.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub documents: usize,
    pub fingerprinted: usize,
    pub failed: usize,
    pub clusters: usize,
    pub clustered_documents: usize,
    /// Clusters of one decoded page (the same bytes).
    pub identical_clusters: usize,
    /// Clusters of one normalized text, not all one page.
    pub same_text_clusters: usize,
    pub candidate_pairs: usize,
    pub confirmed_pairs: usize,
}

/// A member of a reported cluster.
#[derive(Debug, Clone, Serialize)]
pub struct MemberRow {
    pub id: String,
    pub representative: bool,
    /// Exact Jaccard with the representative.
    pub jaccard: f64,
    /// Share of this member's shingles found in the representative.
    pub containment: f64,
    /// The same decoded page as the representative (same bytes).
    pub identical: bool,
    /// The representative's normalized text, not known to be its page.
    pub same_text: bool,
    pub words: usize,
    /// Its site (a host, `dir:FOLDER`, a template group
    /// `dir:FOLDER#FIRST-PAGE`), when it has one: what decides its rule
    /// against another page (same site or across).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// What decided its site: `folder`, `host`, `canonical` or `template`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_from: Option<&'static str>,
}

/// A reported cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRow {
    pub id: usize,
    pub size: usize,
    /// `identical` when every member is the representative's page,
    /// `same-text` when every member has its text; else `contained` under
    /// `--measure containment` (every member is contained in the
    /// representative, by its `containment`), or `near`.
    pub kind: &'static str,
    pub representative: String,
    pub members: Vec<MemberRow>,
}

/// A document that could not be processed.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorRow {
    pub id: String,
    pub kind: String,
    pub message: String,
}

impl From<&DocError> for ErrorRow {
    fn from(e: &DocError) -> Self {
        ErrorRow { id: e.id.clone(), kind: e.kind.as_str().to_string(), message: e.message.clone() }
    }
}

/// Everything `webdup cluster` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterReport {
    pub schema_version: u32,
    pub settings: RunSettings,
    pub summary: Summary,
    pub clusters: Vec<ClusterRow>,
    /// Pages with no text of their own beyond their site's template (thin,
    /// "template only"), by id: never duplicates on that text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub template_only: Vec<String>,
    pub errors: Vec<ErrorRow>,
    /// What fetching each URL recorded (status, redirect chain, headers),
    /// and what a web archive recorded of each of its pages; absent when
    /// every input was a local page.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fetches: Vec<FetchRecord>,
    /// Inputs that redirected to a page another input already is: reported
    /// here, once, and never as a duplicate of their target.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redirected: Vec<Redirected>,
    /// What the records of the inputs' web archives gave (pages, failures,
    /// records skipped by reason); absent without an archive.
    #[cfg(feature = "warc")]
    #[serde(skip_serializing_if = "crate::warc::Summary::is_empty")]
    pub warc: crate::warc::Summary,
}

/// Rounds to 6 decimals so reports stay readable and stable.
use crate::verify::round6 as round;

impl ClusterReport {
    pub fn new(corpus: &Corpus, clustering: &Clustering, config: &Config) -> ClusterReport {
        let clusters: Vec<ClusterRow> = clustering
            .clusters
            .iter()
            .map(|c| ClusterRow {
                id: c.id,
                size: c.members.len(),
                kind: match c.kind() {
                    NEAR if config.matching.measure == Measure::Containment => "contained",
                    kind => kind,
                },
                representative: corpus.doc(c.representative).map(|d| d.id.clone()).unwrap_or_default(),
                members: c
                    .members
                    .iter()
                    .filter_map(|m| {
                        let d = corpus.doc(m.key)?;
                        let site = d.site(config.scope());
                        Some(MemberRow {
                            id: d.id.clone(),
                            representative: m.key == c.representative,
                            jaccard: round(m.jaccard),
                            containment: round(m.containment),
                            identical: m.identical,
                            same_text: m.same_text,
                            words: d.word_count,
                            site_from: site.as_ref().map(|s| s.basis.as_str()),
                            site: site.map(|s| s.name),
                        })
                    })
                    .collect(),
            })
            .collect();
        let summary = Summary {
            documents: corpus.len(),
            fingerprinted: corpus.docs.len(),
            failed: corpus.errors.len(),
            clusters: clusters.len(),
            clustered_documents: clusters.iter().map(|c| c.size).sum(),
            identical_clusters: clusters.iter().filter(|c| c.kind == IDENTICAL).count(),
            same_text_clusters: clusters.iter().filter(|c| c.kind == SAME_TEXT).count(),
            candidate_pairs: clustering.stats.candidate_pairs,
            confirmed_pairs: clustering.stats.confirmed_pairs + clustering.stats.exact_duplicates,
        };
        ClusterReport {
            schema_version: SCHEMA_VERSION,
            settings: config.run_settings(),
            summary,
            clusters,
            template_only: corpus.docs.iter().filter(|d| d.template_only).map(|d| d.id.clone()).collect(),
            errors: corpus.errors.iter().map(ErrorRow::from).collect(),
            fetches: Vec::new(),
            redirected: Vec::new(),
            #[cfg(feature = "warc")]
            warc: Default::default(),
        }
    }

    /// Writes the report in `format`.
    pub fn write(&self, format: Format, out: &mut dyn Write) -> Result<()> {
        match format {
            Format::Table => write_cluster_table(self, out)?,
            Format::Json => write_json(self, out)?,
            Format::Csv => self.write_delimited(b',', out)?,
            Format::Tsv => self.write_delimited(b'\t', out)?,
        }
        Ok(())
    }

    /// One row per clustered document, one per template-only page (kind
    /// `template only`, no cluster), then one per failed document (with an
    /// empty cluster and the reason in `error`).
    fn write_delimited(&self, delimiter: u8, out: &mut dyn Write) -> Result<()> {
        let mut w = SafeCsvWriter::new(delimiter, out);
        w.write_record([
            "cluster",
            "kind",
            "document",
            "representative",
            "jaccard",
            "containment",
            "identical",
            "same_text",
            "words",
            "error",
            "site",
            "site_from",
        ])?;
        for c in &self.clusters {
            for m in &c.members {
                w.write_record([
                    c.id.to_string(),
                    c.kind.to_string(),
                    m.id.clone(),
                    m.representative.to_string(),
                    format!("{:.6}", m.jaccard),
                    format!("{:.6}", m.containment),
                    m.identical.to_string(),
                    m.same_text.to_string(),
                    m.words.to_string(),
                    String::new(),
                    m.site.clone().unwrap_or_default(),
                    m.site_from.unwrap_or_default().to_string(),
                ])?;
            }
        }
        for id in &self.template_only {
            w.write_record(["", "template only", id, "", "", "", "", "", "", "", "", ""])?;
        }
        for e in &self.errors {
            let error = format!("{}: {}", e.kind, e.message);
            w.write_record(["", "", &e.id, "", "", "", "", "", "", &error, "", ""])?;
        }
        w.flush()?;
        Ok(())
    }
}

/// A document's nearest neighbours.
#[derive(Debug, Clone, Serialize)]
pub struct NeighborRow {
    pub id: String,
    pub neighbors: Vec<NeighborEntry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NeighborEntry {
    pub id: String,
    pub jaccard: f64,
    /// Share of the document's shingles found in this neighbor.
    pub containment: f64,
    /// Share of this neighbor's shingles found in the document.
    pub contained: f64,
}

/// Everything `webdup neighbors` reports.
#[derive(Debug, Clone, Serialize)]
pub struct NeighborReport {
    pub schema_version: u32,
    /// What `min_similarity` measures: `jaccard` or `containment`.
    pub measure: &'static str,
    pub min_similarity: f64,
    pub top: usize,
    pub documents: Vec<NeighborRow>,
    pub errors: Vec<ErrorRow>,
}

impl NeighborReport {
    pub fn new(
        corpus: &Corpus,
        lists: &[Vec<Neighbor>],
        measure: Measure,
        min_similarity: f64,
        top: usize,
    ) -> NeighborReport {
        let documents = corpus
            .docs
            .iter()
            .zip(lists)
            .map(|(d, list)| NeighborRow {
                id: d.id.clone(),
                neighbors: list
                    .iter()
                    .filter_map(|n| {
                        Some(NeighborEntry {
                            id: corpus.doc(n.key)?.id.clone(),
                            jaccard: round(n.jaccard),
                            containment: round(n.containment),
                            contained: round(n.contained),
                        })
                    })
                    .collect(),
            })
            .collect();
        NeighborReport {
            schema_version: SCHEMA_VERSION,
            measure: measure.name(),
            min_similarity,
            top,
            documents,
            errors: corpus.errors.iter().map(ErrorRow::from).collect(),
        }
    }

    pub fn write(&self, format: Format, out: &mut dyn Write) -> Result<()> {
        match format {
            Format::Table => write_neighbor_table(self, out)?,
            Format::Json => write_json(self, out)?,
            Format::Csv | Format::Tsv => {
                let delimiter = if format == Format::Csv { b',' } else { b'\t' };
                let mut w = SafeCsvWriter::new(delimiter, out);
                w.write_record(["document", "rank", "neighbor", "jaccard", "containment", "contained", "error"])?;
                for d in &self.documents {
                    for (rank, n) in d.neighbors.iter().enumerate() {
                        w.write_record([
                            d.id.clone(),
                            (rank + 1).to_string(),
                            n.id.clone(),
                            format!("{:.6}", n.jaccard),
                            format!("{:.6}", n.containment),
                            format!("{:.6}", n.contained),
                            String::new(),
                        ])?;
                    }
                }
                for e in &self.errors {
                    w.write_record([e.id.as_str(), "", "", "", "", "", &format!("{}: {}", e.kind, e.message)])?;
                }
                w.flush()?;
            }
        }
        Ok(())
    }
}

/// What `webdup compare` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonReport {
    pub schema_version: u32,
    pub a: String,
    pub b: String,
    #[serde(flatten)]
    pub comparison: Comparison,
}

impl ComparisonReport {
    pub fn write(&self, format: Format, out: &mut dyn Write) -> Result<()> {
        match format {
            Format::Json => write_json(self, out),
            Format::Table => Ok(write_comparison_table(self, out)?),
            Format::Csv | Format::Tsv => {
                // One header row and one row: the same fields as the JSON.
                let c = &self.comparison;
                let mut w = SafeCsvWriter::new(if format == Format::Csv { b',' } else { b'\t' }, out);
                w.write_record([
                    "a",
                    "b",
                    "jaccard",
                    "minhash_estimate",
                    "simhash_distance",
                    "containment_a_in_b",
                    "containment_b_in_a",
                    "shared_shingles",
                    "only_in_a",
                    "only_in_b",
                    "identical",
                    "same_text",
                    "threshold",
                    "duplicate",
                ])?;
                w.write_record([
                    self.a.clone(),
                    self.b.clone(),
                    format!("{:.6}", c.jaccard),
                    format!("{:.6}", c.minhash_estimate),
                    c.simhash_distance.to_string(),
                    format!("{:.6}", c.containment_a_in_b),
                    format!("{:.6}", c.containment_b_in_a),
                    c.shared_shingles.to_string(),
                    c.only_in_a.to_string(),
                    c.only_in_b.to_string(),
                    c.identical.to_string(),
                    c.same_text.to_string(),
                    c.threshold.to_string(),
                    c.duplicate.to_string(),
                ])?;
                w.flush()?;
                Ok(())
            }
        }
    }
}

fn write_json<T: Serialize>(value: &T, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}
