//! Scores the extractors on a data set with ground truth.
//!
//! `cargo run --release --example eval_extract -- DIR [EXTRACTOR...] [--limit N] [--json FILE]`

use std::path::PathBuf;

use webdup::engine::Quiet;
use webdup::extract::ExtractorKind;
use webdup_eval::extract::{EvalOptions, evaluate};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: eval_extract DIR [EXTRACTOR...]"))?);
    let mut options = EvalOptions { extractors: Vec::new(), ..EvalOptions::default() };
    let mut json = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--limit" => options.limit = args.next().map(|n| n.parse()).transpose()?,
            "--threads" => options.threads = args.next().map(|n| n.parse()).transpose()?,
            "--json" => {
                json = args.next();
                options.per_page = true;
            }
            name => options.extractors.push(name.parse::<ExtractorKind>()?),
        }
    }
    if options.extractors.is_empty() {
        options.extractors = ExtractorKind::ALL.to_vec();
    }
    let report = evaluate(&dir, &options, &Quiet)?;
    print!("{report}");
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string(&report)?)?;
    }
    Ok(())
}
