//! Plain-text tables for people at a terminal.

use std::io::{self, Write};

use super::{ClusterReport, ComparisonReport, NeighborReport};

pub fn write_cluster_table(r: &ClusterReport, out: &mut dyn Write) -> io::Result<()> {
    for c in &r.clusters {
        writeln!(
            out,
            "cluster {} · {} documents · {}",
            c.id,
            c.size,
            if c.kind == "exact" { "exact duplicates" } else { "near duplicates" }
        )?;
        writeln!(out, "  {:>7}  {:>7}  {:>6}  document", "jaccard", "contain", "words")?;
        for m in &c.members {
            let mark = if m.representative {
                "  (representative)"
            } else if m.exact {
                "  (exact)"
            } else {
                ""
            };
            writeln!(out, "  {:>7.4}  {:>7.4}  {:>6}  {}{}", m.jaccard, m.containment, m.words, m.id, mark)?;
        }
        writeln!(out)?;
    }
    if !r.errors.is_empty() {
        writeln!(out, "failed documents ({}):", r.errors.len())?;
        for e in &r.errors {
            writeln!(out, "  {}  [{}] {}", e.id, e.kind, e.message)?;
        }
        writeln!(out)?;
    }
    if !r.redirected.is_empty() {
        writeln!(out, "redirects to pages already in this run ({}), not counted again:", r.redirected.len())?;
        for d in &r.redirected {
            let status = d.chain.first().map_or(String::new(), |h| format!("{} ", h.status));
            writeln!(out, "  {}  {}→ {}  (as {})", d.id, status, d.final_url, d.same_as)?;
        }
        writeln!(out)?;
    }
    let s = &r.summary;
    writeln!(
        out,
        "{}: {} fingerprinted, {} failed; {} ({} exact) covering {}; {}, {} confirmed at {} >= {}",
        plural(s.documents, "document"),
        s.fingerprinted,
        s.failed,
        plural(s.clusters, "cluster"),
        s.exact_clusters,
        plural(s.clustered_documents, "document"),
        plural(s.candidate_pairs, "candidate pair"),
        s.confirmed_pairs,
        measure_name(r.settings.matching.measure.name()),
        r.settings.matching.threshold
    )
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A measure's name in a sentence.
fn measure_name(name: &str) -> &str {
    if name == "jaccard" { "Jaccard" } else { name }
}

pub fn write_neighbor_table(r: &NeighborReport, out: &mut dyn Write) -> io::Result<()> {
    // The document's share found in the neighbor, and the neighbor's in it.
    writeln!(out, "  {:>7}  {:>7}  {:>7}  neighbor", "jaccard", "in nbr", "nbr in")?;
    for d in &r.documents {
        writeln!(out, "{}", d.id)?;
        if d.neighbors.is_empty() {
            writeln!(out, "  (none at {} >= {})", measure_name(r.measure), r.min_similarity)?;
        }
        for n in &d.neighbors {
            writeln!(out, "  {:>7.4}  {:>7.4}  {:>7.4}  {}", n.jaccard, n.containment, n.contained, n.id)?;
        }
    }
    if !r.errors.is_empty() {
        writeln!(out, "\nfailed documents ({}):", r.errors.len())?;
        for e in &r.errors {
            writeln!(out, "  {}  [{}] {}", e.id, e.kind, e.message)?;
        }
    }
    Ok(())
}

pub fn write_comparison_table(r: &ComparisonReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.comparison;
    writeln!(out, "A: {}", r.a)?;
    writeln!(out, "B: {}", r.b)?;
    writeln!(out, "exact Jaccard          {:.4}", c.jaccard)?;
    writeln!(out, "MinHash estimate       {:.4}", c.minhash_estimate)?;
    writeln!(out, "SimHash distance       {}", plural(c.simhash_distance as usize, "bit"))?;
    writeln!(out, "containment A in B     {:.4}", c.containment_a_in_b)?;
    writeln!(out, "containment B in A     {:.4}", c.containment_b_in_a)?;
    writeln!(out, "shingles shared        {}", c.shared_shingles)?;
    writeln!(out, "shingles only in A     {}", c.only_in_a)?;
    writeln!(out, "shingles only in B     {}", c.only_in_b)?;
    let verdict = if c.exact {
        "exact duplicate (same normalized text)".to_string()
    } else if c.duplicate {
        format!("near duplicate (Jaccard >= {})", c.threshold)
    } else {
        format!("not a duplicate (Jaccard < {})", c.threshold)
    };
    writeln!(out, "verdict                {verdict}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(plural(1, "bit"), "1 bit");
        assert_eq!(plural(0, "bit"), "0 bits");
        assert_eq!(plural(3, "cluster"), "3 clusters");
    }
}
