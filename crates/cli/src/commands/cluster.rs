//! `webdup cluster`: a run's clusters of identical, same-text and near duplicates.

use std::path::Path;
use std::process::ExitCode;

use webdup::run::Clustered;

use crate::args::{CommonArgs, OutputArgs};
use crate::commands::index;
use crate::common::{exit_for, load_corpus, write_output};

/// `webdup cluster`, with `--explain` and `--index`.
pub fn run(
    inputs: &[String],
    common: &CommonArgs,
    output: &OutputArgs,
    explain: bool,
    index: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    // The report shows fingerprints and fetches, not page records.
    let config = webdup::Config { skip_records: true, ..common.to_config()? };
    if explain {
        explain_lsh(&config);
    }
    if let Some(path) = index {
        return index::cluster(path, inputs, common, output);
    }
    // One page per final URL: an old URL that redirects to a page of the
    // run is a redirect, not a duplicate of its target.
    let Clustered { corpus, report, .. } = webdup::run::cluster(load_corpus(inputs, common, &config)?, &config)?;
    // The report holds what it shows: the fingerprints are freed first.
    let exit = exit_for(&corpus);
    drop(corpus);
    write_output(output, |fmt, out| report.write(fmt, out))?;
    Ok(exit)
}

/// Prints the LSH banding `cluster` uses and its S-curve to standard error:
/// the banding is tuned for the lower of the two thresholds, so that its
/// candidates cover both rules.
fn explain_lsh(config: &webdup::Config) {
    let threshold = config.lowest_threshold();
    let p = config.lsh_params();
    eprintln!(
        "LSH: {} bands x {} rows ({} of {} permutations) for threshold {threshold}",
        p.bands,
        p.rows,
        p.used_rows(),
        config.fingerprint.permutations,
    );
    if let Some(cross) = config.matching.cross_site_threshold {
        eprintln!(
            "  the lower of --threshold {} (pages of one site) and --cross-site-threshold {cross}",
            config.matching.threshold
        );
    }
    eprintln!(
        "  chosen by minimizing 0.5 x false-positive area + 0.5 x false-negative area among bandings \
         that catch at least {:.1}% of pairs at the threshold",
        webdup::candidates::lsh::RECALL_FLOOR * 100.0
    );
    eprintln!("  similarity  P(candidate)");
    let mut points: Vec<f64> = vec![0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, threshold];
    points.sort_by(f64::total_cmp);
    points.dedup();
    for s in points {
        let mark = if s == threshold { "  <- threshold" } else { "" };
        eprintln!("  {s:>10.2}  {:>12.4}{mark}", p.probability(s));
    }
    eprintln!(
        "  false-positive area {:.4}, false-negative area {:.4}",
        p.false_positive_area(threshold),
        p.false_negative_area(threshold)
    );
}
