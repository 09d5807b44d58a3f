//! Writes each extractor's text for every page of a data set, with timings,
//! for studying where extractors disagree.
//!
//! `cargo run --release --example dump_texts -- DATA_DIR OUT_DIR`

use std::path::PathBuf;
use std::time::Instant;

use webdup::extract::{ExtractConfig, ExtractorKind, extract_with_url};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let data = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: dump_texts DATA_DIR OUT_DIR"))?);
    let out = PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: dump_texts DATA_DIR OUT_DIR"))?);
    let samples = webdup_eval::extract::load(&data, None)?.samples;
    let mut timings = String::new();
    for kind in ExtractorKind::ALL {
        std::fs::create_dir_all(out.join(kind.as_str()))?;
    }
    std::fs::create_dir_all(out.join("truth"))?;
    for s in &samples {
        std::fs::write(out.join("truth").join(format!("{}.txt", s.id)), &s.truth)?;
        for (name, focus, fallback) in [
            ("traf_nofb", trafilatura::ExtractionFocus::Balanced, false),
            ("traf_prec", trafilatura::ExtractionFocus::FavorPrecision, true),
            ("traf_recall", trafilatura::ExtractionFocus::FavorRecall, true),
        ] {
            std::fs::create_dir_all(out.join(name))?;
            let start = Instant::now();
            let opts = trafilatura::Options::default().with_fallback(fallback).with_focus(focus);
            let text = trafilatura::extract(&s.html, &opts).map(|r| r.content_text).unwrap_or_default();
            let secs = start.elapsed().as_secs_f64();
            std::fs::write(out.join(name).join(format!("{}.txt", s.id)), text)?;
            timings.push_str(&format!("{}\t{name}\t{secs:.6}\n", s.id));
        }
        for kind in ExtractorKind::ALL {
            let start = Instant::now();
            let e = extract_with_url(&s.html, s.url.as_deref(), &ExtractConfig::new(kind));
            let secs = start.elapsed().as_secs_f64();
            let text = e.map(|e| e.text).unwrap_or_default();
            std::fs::write(out.join(kind.as_str()).join(format!("{}.txt", s.id)), text)?;
            timings.push_str(&format!("{}\t{}\t{secs:.6}\n", s.id, kind.as_str()));
        }
    }
    std::fs::write(out.join("timings.tsv"), timings)?;
    Ok(())
}
