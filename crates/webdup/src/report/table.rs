//! Plain-text tables for people at a terminal.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::{ClusterReport, ComparisonReport, NeighborReport};
use crate::dedup::{IDENTICAL, SAME_TEXT};
use crate::verify::MIN_SHARED_SHINGLES;

/// `s` as a terminal shows it without obeying it: control characters (an
/// escape sequence, a carriage return, a line feed that would start a
/// made-up row) and the characters that reorder text on screen (bidi
/// overrides and isolates) are written as `\x1b`, `\u{202e}`. Names, URLs,
/// titles and messages come from files and servers, and a table is read on a
/// terminal.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

pub fn write_cluster_table(r: &ClusterReport, out: &mut dyn Write) -> io::Result<()> {
    for c in &r.clusters {
        writeln!(
            out,
            "cluster {} · {} documents · {}",
            c.id,
            c.size,
            match c.kind {
                IDENTICAL => "identical pages",
                SAME_TEXT => "same text",
                "contained" => "each contained in the representative",
                _ => "near duplicates",
            }
        )?;
        writeln!(out, "  {:>7}  {:>7}  {:>6}  document", "jaccard", "contain", "words")?;
        for m in &c.members {
            let mark = if m.representative {
                "  (representative)".to_string()
            } else if m.identical {
                "  (identical)".to_string()
            } else if m.same_text {
                "  (same text)".to_string()
            } else if c.kind == "contained" {
                format!("  (contained in representative {:.2})", m.containment)
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {:>7.4}  {:>7.4}  {:>6}  {}{}",
                m.jaccard,
                m.containment,
                m.words,
                terminal_safe(&m.id),
                mark
            )?;
        }
        writeln!(out)?;
    }
    if !r.template_only.is_empty() {
        writeln!(
            out,
            "template only ({}): no text of their own beyond their site's template, never duplicates on it:",
            r.template_only.len()
        )?;
        for id in &r.template_only {
            writeln!(out, "  {}", terminal_safe(id))?;
        }
        writeln!(out)?;
    }
    if !r.errors.is_empty() {
        writeln!(out, "failed documents ({}):", r.errors.len())?;
        for e in &r.errors {
            writeln!(out, "  {}  [{}] {}", terminal_safe(&e.id), e.kind, terminal_safe(&e.message))?;
        }
        writeln!(out)?;
    }
    if !r.redirected.is_empty() {
        writeln!(out, "redirects to pages already in this run ({}), not counted again:", r.redirected.len())?;
        for d in &r.redirected {
            let status = d.chain.first().map_or(String::new(), |h| format!("{} ", h.status));
            writeln!(
                out,
                "  {}  {}→ {}  (as {})",
                terminal_safe(&d.id),
                status,
                terminal_safe(&d.final_url),
                terminal_safe(&d.same_as)
            )?;
        }
        writeln!(out)?;
    }
    let s = &r.summary;
    writeln!(
        out,
        "{}: {} fingerprinted, {} failed; {} ({} identical, {} same text) covering {}; {}, {} confirmed at {} >= {}",
        plural(s.documents, "document"),
        s.fingerprinted,
        s.failed,
        plural(s.clusters, "cluster"),
        s.identical_clusters,
        s.same_text_clusters,
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
        writeln!(out, "{}", terminal_safe(&d.id))?;
        if d.neighbors.is_empty() {
            writeln!(out, "  (none at {} >= {})", measure_name(r.measure), r.min_similarity)?;
        }
        for n in &d.neighbors {
            writeln!(
                out,
                "  {:>7.4}  {:>7.4}  {:>7.4}  {}",
                n.jaccard,
                n.containment,
                n.contained,
                terminal_safe(&n.id)
            )?;
        }
    }
    if !r.errors.is_empty() {
        writeln!(out, "\nfailed documents ({}):", r.errors.len())?;
        for e in &r.errors {
            writeln!(out, "  {}  [{}] {}", terminal_safe(&e.id), e.kind, terminal_safe(&e.message))?;
        }
    }
    Ok(())
}

pub fn write_comparison_table(r: &ComparisonReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.comparison;
    writeln!(out, "A: {}", terminal_safe(&r.a))?;
    writeln!(out, "B: {}", terminal_safe(&r.b))?;
    writeln!(out, "exact Jaccard          {:.4}", c.jaccard)?;
    writeln!(out, "MinHash estimate       {:.4}", c.minhash_estimate)?;
    writeln!(out, "SimHash distance       {}", plural(c.simhash_distance as usize, "bit"))?;
    writeln!(out, "containment A in B     {:.4}", c.containment_a_in_b)?;
    writeln!(out, "containment B in A     {:.4}", c.containment_b_in_a)?;
    writeln!(out, "shingles shared        {}", c.shared_shingles)?;
    writeln!(out, "shingles only in A     {}", c.only_in_a)?;
    writeln!(out, "shingles only in B     {}", c.only_in_b)?;
    let verdict = if c.identical {
        "identical (the same decoded page)".to_string()
    } else if c.same_text && c.duplicate {
        "same text (same normalized text, different pages)".to_string()
    } else if c.duplicate {
        format!("near duplicate (Jaccard >= {})", c.threshold)
    } else if c.shared_shingles < MIN_SHARED_SHINGLES {
        format!("not a duplicate (fewer than {MIN_SHARED_SHINGLES} shingles shared: too little text to judge)")
    } else {
        format!("not a duplicate (Jaccard < {})", c.threshold)
    };
    writeln!(out, "verdict                {verdict}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_safe_escapes_control_and_reordering_characters() {
        assert!(matches!(terminal_safe("a/b é.html"), Cow::Borrowed(_)));
        assert_eq!(terminal_safe("x\u{1b}[2J\r\ny\u{9b}z"), "x\\x1b[2J\\x0d\\x0ay\\u{9b}z");
        assert_eq!(terminal_safe("evil\u{202e}lmth.exe"), "evil\\u{202e}lmth.exe");
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(plural(1, "bit"), "1 bit");
        assert_eq!(plural(0, "bit"), "0 bits");
        assert_eq!(plural(3, "cluster"), "3 clusters");
    }
}
