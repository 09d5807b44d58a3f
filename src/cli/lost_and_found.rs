//! `webdup lost-and-found`: a redirect map from an old crawl to a new one.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use webdup::store::lost_and_found::{self, Options, RedirectMap};

use super::args::CommonArgs;
use super::index::{IndexFile, open_with_stored_settings};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MapFormat {
    Json,
    Csv,
}

#[derive(Debug, Args)]
pub struct LostAndFoundArgs {
    #[command(flatten)]
    pub index: IndexFile,
    /// The crawl before the change.
    #[arg(long)]
    pub old: String,
    /// The crawl after the change.
    #[arg(long)]
    pub new: String,
    #[arg(long, value_enum, default_value = "json")]
    pub format: MapFormat,
    /// Write the map to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Least Jaccard for a match on content alone.
    #[arg(long, default_value_t = 0.5)]
    pub min_jaccard: f64,
    /// Least share of the old page's text found in a new page (merged pages).
    #[arg(long, default_value_t = 0.8)]
    pub min_containment: f64,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub fn run(args: LostAndFoundArgs) -> anyhow::Result<ExitCode> {
    for (name, v) in [("min-jaccard", args.min_jaccard), ("min-containment", args.min_containment)] {
        if !(v > 0.0 && v <= 1.0) {
            anyhow::bail!("--{name} must be in (0, 1], not {v}");
        }
    }
    let (index, _) = open_with_stored_settings(&args.index.path, &args.common)?;
    let options =
        Options { min_jaccard: args.min_jaccard, min_containment: args.min_containment, ..Options::default() };
    let map = lost_and_found::lost_and_found(&index, &args.old, &args.new, &options)?;
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = io::BufWriter::new(file);
            write(&map, args.format, &mut w).with_context(|| format!("cannot write {}", path.display()))?;
            w.flush()?;
        }
        None => {
            let mut w = io::BufWriter::new(io::stdout().lock());
            write(&map, args.format, &mut w)?;
            w.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// JSON: the whole map. CSV: one row per old URL, `kind` saying whether it
/// is a redirect to add, unmatched, or already redirected.
fn write(map: &RedirectMap, format: MapFormat, out: &mut dyn Write) -> anyhow::Result<()> {
    match format {
        MapFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, map)?;
            writeln!(out)?;
        }
        MapFormat::Csv => {
            let mut w = webdup::report::SafeCsvWriter::new(b',', out);
            w.write_record([
                "kind",
                "old_url",
                "new_url",
                "reason",
                "jaccard",
                "containment",
                "confidence",
                "evidence",
            ])?;
            for r in &map.redirects {
                w.write_record([
                    "redirect",
                    &r.old_url,
                    &r.new_url,
                    &r.reason,
                    &format!("{:.4}", r.jaccard),
                    &format!("{:.4}", r.containment),
                    r.confidence.as_str(),
                    &r.evidence,
                ])?;
            }
            for u in &map.unmatched {
                let best = u
                    .best_url
                    .as_deref()
                    .map_or(String::new(), |b| format!("closest {b} (jaccard {:.3})", u.best_jaccard));
                w.write_record(["unmatched", &u.old_url, "", &u.reason, "", "", "", &best])?;
            }
            for a in &map.already_redirected {
                w.write_record([
                    "already_redirected",
                    &a.old_url,
                    &a.final_url,
                    "redirects",
                    &format!("{:.4}", a.jaccard),
                    &format!("{:.4}", a.containment),
                    "",
                    "",
                ])?;
            }
            w.flush()?;
        }
    }
    Ok(())
}
