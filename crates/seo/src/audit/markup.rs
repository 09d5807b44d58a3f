//! What differs in the markup of two pages of one text.
//!
//! Pages of the same text that are not the same page differ only outside
//! their main text: a tracking parameter in links, another navigation, a
//! canonical or robots tag, an inline script. A word diff of their texts
//! shows nothing, so a same-text member of a cluster carries a line diff of
//! its markup against the representative's, each page's markup written one
//! tag (or one run of text) per line, whitespace collapsed, unchanged runs
//! cut to a few lines of context.
//!
//! The audit never holds every page's markup: [`fill`] asks for the markup
//! of the pages it needs, a cluster at a time, through a function the
//! caller gives (a file read again, a spill file, nothing for an index),
//! and a page it cannot have gets a note instead of a diff. Every diff and
//! the report as a whole are capped ([`MAX_DIFF_LINES`],
//! [`MAX_REPORT_LINES`]), so a crawl of many same-text pages does not make a
//! huge report.

use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices, group_diff_ops};

use super::Audit;
use webdup_core::units::Units;

/// Lines of one member's diff kept in the report (changed lines and their
/// context).
pub const MAX_DIFF_LINES: usize = 60;

/// Lines of markup diff kept in the whole report; members past it get a
/// note instead of a diff.
pub const MAX_REPORT_LINES: usize = 20_000;

/// Characters of one markup line kept: a long inline script or a line of
/// base64 is shown by its start.
pub const MAX_LINE_CHARS: usize = 200;

/// Lines of one page's markup compared; the rest is left out (and the diff
/// says it was cut).
pub const MAX_MARKUP_LINES: usize = 50_000;

/// Unchanged lines shown around each change.
const CONTEXT: usize = 2;

/// Most changed lines of two pages together diffed line by line (after
/// their common start and end): Myers' diff costs up to the square of it.
/// Past it the changed middle is shown as removed and added whole, a
/// coarser but correct diff. A bound on the input, not a deadline, so that
/// the same pages always give the same report.
const MAX_DIFFED_LINES: usize = 6_000;

/// Clusters whose diffs are made at once (in parallel) before the report's
/// budget is checked again.
const CLUSTERS_AT_ONCE: usize = 64;

/// A same-text member's markup against the page it was compared with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarkupDiff {
    /// The page compared with: the cluster's representative.
    pub against: usize,
    /// Lines of `against`'s markup not in this page's.
    pub removed: usize,
    /// Lines of this page's markup not in `against`'s.
    pub added: usize,
    /// The changes with a few lines of context; empty when the markup is
    /// the same once whitespace between tags is set aside.
    pub hunks: Vec<Hunk>,
    /// Lines left out: the diff was longer than [`MAX_DIFF_LINES`], or a
    /// page's markup longer than [`MAX_MARKUP_LINES`].
    pub truncated: bool,
    /// Why there is no diff: `markup not available: ...` (the page could not
    /// be read again, or its markup was not kept), or the report's cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// A run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// Line (from 1) of `against`'s markup where the run starts.
    pub a: usize,
    /// Line (from 1) of this page's markup where the run starts.
    pub b: usize,
    /// Each line prefixed by `" "` (in both), `"-"` (only in `against`'s) or
    /// `"+"` (only in this page's).
    pub lines: Vec<String>,
}

impl MarkupDiff {
    /// A member's entry when no diff could be made, and why.
    pub fn unavailable(against: usize, why: String) -> MarkupDiff {
        MarkupDiff { against, removed: 0, added: 0, hunks: Vec::new(), truncated: false, unavailable: Some(why) }
    }

    /// Lines this entry puts in the report.
    fn size(&self) -> usize {
        self.hunks.iter().map(|h| h.lines.len()).sum()
    }
}

/// A page's markup, normalised: one tag (or comment, or run of text) per
/// line, whitespace collapsed, long lines cut to [`MAX_LINE_CHARS`]. The
/// content of `script` and `style` is one line. Returns the lines and
/// whether the page had more than [`MAX_MARKUP_LINES`].
pub fn lines(html: &str) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        if out.len() >= MAX_MARKUP_LINES {
            return (out, true);
        }
        let (piece, after) = if rest.starts_with("<!--") {
            split_after(rest, "-->")
        } else if rest.starts_with('<') {
            split_after(rest, ">")
        } else {
            rest.split_at(rest.find('<').unwrap_or(rest.len()))
        };
        push_line(&mut out, piece);
        rest = after;
        // A script's or style's content is text up to its end tag, whatever
        // `<` it holds.
        if let Some(name) = raw_text_element(piece) {
            let end = find_ignore_case(rest, &format!("</{name}")).unwrap_or(rest.len());
            push_line(&mut out, &rest[..end]);
            rest = &rest[end..];
        }
    }
    (out, false)
}

/// Splits after the first `end`, or at the end of `s` when there is none.
fn split_after<'a>(s: &'a str, end: &str) -> (&'a str, &'a str) {
    s.split_at(s.find(end).map_or(s.len(), |i| i + end.len()))
}

/// `script` or `style` when `tag` opens one.
fn raw_text_element(tag: &str) -> Option<&'static str> {
    let name: String = tag.strip_prefix('<')?.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
    ["script", "style"].into_iter().find(|n| name.eq_ignore_ascii_case(n))
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    (0..h.len().saturating_sub(n.len() - 1)).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

fn push_line(out: &mut Vec<String>, piece: &str) {
    let mut line = String::new();
    let mut chars = 0;
    for word in piece.split_whitespace() {
        if !line.is_empty() {
            line.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars == MAX_LINE_CHARS {
                line.push('…');
                out.push(line);
                return;
            }
            line.push(c);
            chars += 1;
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
}

/// The diff of `b`'s markup lines against `a`'s (`against`, its page),
/// with `cut` when either was cut by [`MAX_MARKUP_LINES`].
pub fn diff(against: usize, a: &[String], b: &[String], cut: bool) -> MarkupDiff {
    let ops = line_ops(a, b);
    let (mut removed, mut added) = (0, 0);
    for op in &ops {
        let (_, old, new) = op.as_tag_tuple();
        if !matches!(op, DiffOp::Equal { .. }) {
            removed += old.len();
            added += new.len();
        }
    }
    let mut hunks = Vec::new();
    let mut kept = 0;
    let mut truncated = cut;
    'groups: for group in group_diff_ops(ops, CONTEXT) {
        let Some(first) = group.first() else { continue };
        let mut hunk = Hunk { a: first.old_range().start + 1, b: first.new_range().start + 1, lines: Vec::new() };
        for op in &group {
            let (old, new) = (op.old_range(), op.new_range());
            let tagged: Vec<String> = match op {
                DiffOp::Equal { .. } => a[old].iter().map(|l| format!(" {l}")).collect(),
                _ => a[old].iter().map(|l| format!("-{l}")).chain(b[new].iter().map(|l| format!("+{l}"))).collect(),
            };
            for line in tagged {
                if kept == MAX_DIFF_LINES {
                    truncated = true;
                    hunks.push(hunk);
                    break 'groups;
                }
                hunk.lines.push(line);
                kept += 1;
            }
        }
        hunks.push(hunk);
    }
    hunks.retain(|h| !h.lines.is_empty());
    MarkupDiff { against, removed, added, hunks, truncated, unavailable: None }
}

/// The line diff of `b` against `a`: Myers' within [`MAX_DIFFED_LINES`],
/// else the common start and end kept and the middle replaced whole.
fn line_ops(a: &[String], b: &[String]) -> Vec<DiffOp> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (old_len, new_len) = (a.len() - head - tail, b.len() - head - tail);
    if old_len + new_len <= MAX_DIFFED_LINES {
        return capture_diff_slices(Algorithm::Myers, a, b);
    }
    let mut ops = Vec::with_capacity(3);
    if head > 0 {
        ops.push(DiffOp::Equal { old_index: 0, new_index: 0, len: head });
    }
    ops.push(match (old_len, new_len) {
        (0, _) => DiffOp::Insert { old_index: head, new_index: head, new_len },
        (_, 0) => DiffOp::Delete { old_index: head, old_len, new_index: head },
        _ => DiffOp::Replace { old_index: head, old_len, new_index: head, new_len },
    });
    if tail > 0 {
        ops.push(DiffOp::Equal { old_index: head + old_len, new_index: head + new_len, len: tail });
    }
    ops
}

/// Gives every same-text member of `audit`'s clusters (not identical to
/// its representative) the diff of its markup against the
/// representative's. `markup(page)` returns a page's markup, or why it
/// cannot; a representative's is asked for once per cluster, and no more
/// than a few clusters' markup is held at once. Past
/// [`MAX_REPORT_LINES`] lines of diff in the report, members get a note.
pub fn fill(units: &impl Units, audit: &mut Audit, markup: &(dyn Fn(usize) -> Result<String, String> + Sync)) {
    let wanted: Vec<usize> = (0..audit.clusters.len())
        .filter(|&c| audit.clusters[c].members.iter().any(|m| !m.representative && m.same_text && !m.identical))
        .collect();
    let mut budget = MAX_REPORT_LINES;
    let full = || format!("left out: the report holds at most {MAX_REPORT_LINES} lines of markup diff");
    for chunk in wanted.chunks(CLUSTERS_AT_ONCE) {
        if budget == 0 {
            // Nothing more fits: no page is read again for a diff left out.
            for &c in chunk {
                let rep = audit.clusters[c].representative;
                for m in audit.clusters[c].members.iter_mut() {
                    if !m.representative && m.same_text && !m.identical {
                        m.markup = Some(MarkupDiff::unavailable(rep, full()));
                    }
                }
            }
            continue;
        }
        let clusters = &audit.clusters;
        let diffs: Vec<Vec<(usize, MarkupDiff)>> = units.map(chunk.len(), |n| {
            let c = &clusters[chunk[n]];
            let rep = c.representative;
            let rep_lines = markup(rep).map(|html| lines(&html));
            c.members
                .iter()
                .enumerate()
                .filter(|(_, m)| !m.representative && m.same_text && !m.identical)
                .map(|(i, m)| {
                    let member = |(a, cut_a): &(Vec<String>, bool)| {
                        let (b, cut_b) = lines(&markup(m.page)?);
                        Ok(diff(rep, a, &b, *cut_a || cut_b))
                    };
                    let d = rep_lines.as_ref().map_err(String::clone).and_then(member).unwrap_or_else(|why: String| {
                        MarkupDiff::unavailable(rep, format!("markup not available: {why}"))
                    });
                    (i, d)
                })
                .collect()
        });
        for (&c, found) in chunk.iter().zip(diffs) {
            for (i, d) in found {
                let d = if d.size() > budget {
                    budget = 0;
                    MarkupDiff::unavailable(d.against, full())
                } else {
                    budget -= d.size();
                    d
                };
                audit.clusters[c].members[i].markup = Some(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_one_tag_a_line() {
        let html = "<html>\n<head><title>Ferry  times</title><script>if (a<b) { go(); }</script>\
                    <!-- a > comment --></head><body><p>Winter <b>timetable</b></p></body></html>";
        let (l, cut) = lines(html);
        assert!(!cut);
        assert_eq!(
            l,
            [
                "<html>",
                "<head>",
                "<title>",
                "Ferry times",
                "</title>",
                "<script>",
                "if (a<b) { go(); }",
                "</script>",
                "<!-- a > comment -->",
                "</head>",
                "<body>",
                "<p>",
                "Winter",
                "<b>",
                "timetable",
                "</b>",
                "</p>",
                "</body>",
                "</html>"
            ]
        );
        let long = format!("<p>{}</p>", "x".repeat(MAX_LINE_CHARS * 3));
        assert_eq!(lines(&long).0[1].chars().count(), MAX_LINE_CHARS + 1);
        assert_eq!(lines("<p>unclosed <b").0, ["<p>", "unclosed", "<b"]);
        assert!(lines(&"<br>".repeat(MAX_MARKUP_LINES + 1)).1);
    }

    #[test]
    fn the_diff_names_the_changed_lines_with_context() {
        let page = |link: &str| {
            let nav: String = (0..20).map(|i| format!("<li>item {i}</li>")).collect();
            format!("<html><head><title>T</title></head><body><ul>{nav}</ul><a href=\"{link}\">Next</a></body></html>")
        };
        let (a, _) = lines(&page("/next"));
        let (b, _) = lines(&page("/next?utm_source=mail"));
        let d = diff(7, &a, &b, false);
        assert_eq!((d.against, d.removed, d.added, d.truncated), (7, 1, 1, false));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!(
            h.lines,
            [" </li>", " </ul>", "-<a href=\"/next\">", "+<a href=\"/next?utm_source=mail\">", " Next", " </a>"]
        );
        assert_eq!(a[h.a - 1], "</li>");
        assert!(diff(7, &a, &a, false).hunks.is_empty());
    }

    /// Three pages of one text, their pages unknown (so same text, not
    /// identical): the first is the representative.
    fn same_text_audit() -> Audit {
        use crate::audit::{AuditConfig, AuditPage, AuditSettings, Content};
        use webdup_core::DocKey;
        use webdup_core::dedup;
        use webdup_core::fingerprint::Fingerprint;
        use webdup_core::page::PageRecord;
        use webdup_core::settings::{FingerprintSettings, MatchSettings};
        use webdup_core::shingle::{ShingleConfig, Shingler};
        use webdup_core::sketch::MinHasher;
        use webdup_core::units::InTurn;

        let text = "the harbour office posts the winter ferry timetable on the board every monday morning";
        let sh = Shingler::new(ShingleConfig::default()).shingle(text);
        let minhash = MinHasher::new(128, 42).sketch(&sh.hashes);
        let urls = ["https://a.test/ferry", "https://a.test/ferry?utm=1", "https://a.test/ferry?utm=2"];
        let docs: Vec<Fingerprint> = (0..3)
            .map(|n| {
                let (hashes, key) = (sh.hashes.clone(), DocKey(n as u64));
                Fingerprint::from_parts(urls[n].into(), key, sh.word_count, hashes, sh.digest, minhash.clone(), 0)
            })
            .collect();
        let pages: Vec<AuditPage> = (0..3)
            .map(|n| AuditPage {
                record: PageRecord::observed(urls[n].into(), None, None),
                content: Content::Doc(DocKey(n as u64)),
            })
            .collect();
        let settings =
            AuditSettings::new(&FingerprintSettings::default(), &MatchSettings::default(), &AuditConfig::default());
        let clustering = dedup::find_duplicates(&InTurn, &docs, &settings.matching, &settings.fingerprint);
        Audit::build(&InTurn, pages, &docs, &clustering, None, settings).0
    }

    #[test]
    fn members_get_a_diff_or_a_note_and_the_representative_is_read_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use webdup_core::units::InTurn;

        let mut audit = same_text_audit();
        let rep = audit.clusters[0].representative;
        let reads = AtomicUsize::new(0);
        let markup = |page: usize| {
            reads.fetch_add(1, Ordering::Relaxed);
            match page {
                p if p == rep => Ok("<a href=\"/next\">Next</a>".to_string()),
                2 => Err("gone".to_string()),
                p => Ok(format!("<a href=\"/next?utm={p}\">Next</a>")),
            }
        };
        fill(&InTurn, &mut audit, &markup);
        assert_eq!(reads.load(Ordering::Relaxed), 3, "the representative's markup is read once");
        for m in &audit.clusters[0].members {
            let d = m.markup.as_ref();
            match m.page {
                p if p == rep => assert_eq!(d, None),
                2 => assert_eq!(d.and_then(|d| d.unavailable.as_deref()), Some("markup not available: gone")),
                p => assert_eq!(
                    d.map(|d| d.hunks[0].lines.clone()),
                    Some(vec![
                        "-<a href=\"/next\">".into(),
                        format!("+<a href=\"/next?utm={p}\">"),
                        " Next".into(),
                        " </a>".into()
                    ])
                ),
            }
        }
    }

    #[test]
    fn markup_past_the_bound_gets_a_coarse_diff_the_same_every_time() {
        let page = |n: usize, tag: &str| -> Vec<String> {
            let mut lines: Vec<String> = vec!["<html>".into(), "<body>".into()];
            lines.extend((0..n).map(|i| format!("<div class=\"{tag}\">{i}</div>")));
            lines.extend(["</body>".into(), "</html>".into()]);
            lines
        };
        let (a, b) = (page(4_000, "a"), page(4_000, "b"));
        let d = diff(0, &a, &b, false);
        assert_eq!((d.removed, d.added), (4_000, 4_000));
        assert_eq!(d.hunks[0].a, 1, "{:?}", d.hunks[0]);
        assert_eq!(d.hunks[0].lines[..3], [" <html>", " <body>", "-<div class=\"a\">0</div>"]);
        assert_eq!(diff(0, &a, &b, false), d, "the same pages give the same diff");
        // Only added lines: an insertion, not a replacement.
        let longer = [a.clone(), page(6_500, "c")].concat();
        assert_eq!(line_ops(&a, &longer).len(), 2);
        let d = diff(0, &a, &longer, false);
        assert_eq!((d.removed, d.added), (0, 6_504));
    }

    #[test]
    fn long_diffs_are_cut() {
        let a: Vec<String> = (0..500).map(|i| format!("<p id=\"a{i}\">")).collect();
        let b: Vec<String> = (0..500).map(|i| format!("<p id=\"b{i}\">")).collect();
        let d = diff(0, &a, &b, false);
        assert!(d.truncated);
        assert_eq!(d.size(), MAX_DIFF_LINES);
        assert_eq!((d.removed, d.added), (500, 500));
    }
}
