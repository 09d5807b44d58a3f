//! `webdup extract`: a page's main text, or its metadata.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::bail;

use webdup::extract::ExtractorKind;
use webdup::report::terminal_safe;
use webdup::run::{Run, RunConfig};
use webdup::source::ReadLimits;

use crate::args::{ExtractArgs, FetchArgs, TextFormat};
use crate::common::EXIT_SOME_FAILED;

/// `webdup extract`: each page's main text, or JSON with its metadata.
pub fn run(
    pages: &[String],
    args: &ExtractArgs,
    url: Option<&str>,
    format: TextFormat,
    fetch: &FetchArgs,
) -> anyhow::Result<ExitCode> {
    if url.is_some() && pages.len() != 1 {
        bail!("--url applies to a single page; {} were given", pages.len());
    }
    let config = args.to_config(ExtractorKind::Auto)?;
    let limits = ReadLimits::default();
    let mut run = Run::new(RunConfig { fetch: fetch.to_config(limits.max_bytes)?, limits, ..RunConfig::default() });
    let results = run.extract(pages, url, &config)?;
    let mut failed = false;
    let mut out = io::BufWriter::new(io::stdout().lock());
    for (id, r) in pages.iter().zip(results) {
        match r {
            Ok(page) => match format {
                TextFormat::Text => {
                    if pages.len() > 1 {
                        writeln!(out, "==> {id} <==")?;
                    }
                    writeln!(out, "{}", page.text)?;
                }
                TextFormat::Json => {
                    let mut v = serde_json::to_value(&page)?;
                    v["id"] = serde_json::Value::String(id.clone());
                    serde_json::to_writer(&mut out, &v)?;
                    writeln!(out)?;
                }
            },
            Err(e) => {
                failed = true;
                out.flush()?;
                eprintln!("webdup: {}: [{}] {}", terminal_safe(&e.id), e.kind, terminal_safe(&e.message));
            }
        }
    }
    out.flush()?;
    Ok(if failed { ExitCode::from(EXIT_SOME_FAILED) } else { ExitCode::SUCCESS })
}
