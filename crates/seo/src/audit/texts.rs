//! The main texts of clustered pages, compactly, for the report's diff view.
//!
//! Near duplicates are mostly the same words, so each cluster's
//! representative text is stored once (its `base`) and every member as an
//! edit script against it: runs of base words to copy (`[start, len]`) and
//! literal words (a string of space-separated words). A 10,000-page report
//! then carries about one text per cluster instead of one per member. The
//! browser rebuilds any member's words from its script and diffs any two
//! members itself, so every pair of a cluster can be compared.
//!
//! Words are whitespace-separated tokens; a line break becomes the token
//! `"\n"` so paragraphs survive.

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use similar::{Algorithm, DiffOp, capture_diff_slices};

use std::borrow::Cow;
use std::collections::HashMap;

use super::{Audit, PageSource};
use webdup_core::DocKey;
use webdup_core::dedup::Clustering;
use webdup_core::units::Units;

/// Longest text kept, in words: enough for any real article; a 10 MB page
/// would otherwise dominate the report.
pub const MAX_WORDS: usize = 20_000;

/// Most words of a member and its base together diffed word by word:
/// Myers' diff costs up to the square of it. Past it the script is made by
/// [`anchored`], in linear time. A bound on the input, not a deadline, so
/// that the same pages always give the same report.
const MAX_DIFFED_WORDS: usize = 6_000;

/// Words a run of the member must share with the base to be copied from it
/// by [`anchored`].
const ANCHOR_WORDS: usize = 4;

/// One step of an edit script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Copy `len` base words from `start`.
    Copy { start: usize, len: usize },
    /// Words not in the base, space-separated.
    Words(String),
}

impl Serialize for Op {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Op::Copy { start, len } => {
                let mut seq = s.serialize_seq(Some(2))?;
                seq.serialize_element(start)?;
                seq.serialize_element(len)?;
                seq.end()
            }
            Op::Words(w) => s.serialize_str(w),
        }
    }
}

/// A page's text as an edit script against a base.
#[derive(Debug, Clone, Serialize)]
pub struct PageText {
    pub page: usize,
    pub base: usize,
    pub ops: Vec<Op>,
}

/// The texts of every clustered page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditTexts {
    /// One per cluster: its representative's words, space-separated (or
    /// the first member's that has a text, when the representative has none).
    pub bases: Vec<String>,
    pub pages: Vec<PageText>,
    /// Clustered pages without a text (read from an index that did not store
    /// it): they have no script, and the diff view says why.
    pub missing: Vec<usize>,
}

/// Splits a text into words, with `"\n"` for each run of line breaks.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let before = out.len();
        if !out.is_empty() {
            out.push("\n");
        }
        out.extend(line.split_whitespace());
        if out.len() == before + 1 {
            out.pop(); // a blank line: no break of its own
        }
        if out.len() >= MAX_WORDS {
            out.truncate(MAX_WORDS);
            break;
        }
    }
    out
}

/// Rebuilds a page's words from its script (what the report's script does).
pub fn rebuild<'a>(base: &'a str, ops: &'a [Op]) -> Vec<&'a str> {
    let base: Vec<&str> = base.split(' ').filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Copy { start, len } => out.extend(base.iter().skip(*start).take(*len).copied()),
            Op::Words(w) => out.extend(w.split(' ').filter(|w| !w.is_empty())),
        }
    }
    out
}

/// Appends literal words to a script, joined to a literal step before them.
fn push_words(out: &mut Vec<Op>, ws: &[&str]) {
    if ws.is_empty() {
        return;
    }
    if let Some(Op::Words(w)) = out.last_mut() {
        w.push(' ');
        w.push_str(&ws.join(" "));
    } else {
        out.push(Op::Words(ws.join(" ")));
    }
}

fn script(base: &[&str], words: &[&str]) -> Vec<Op> {
    if base.len() + words.len() > MAX_DIFFED_WORDS {
        return anchored(base, words);
    }
    let ops = capture_diff_slices(Algorithm::Myers, base, words);
    let mut out: Vec<Op> = Vec::new();
    for op in ops {
        match op {
            DiffOp::Equal { old_index, len, .. } => out.push(Op::Copy { start: old_index, len }),
            DiffOp::Delete { .. } => {}
            DiffOp::Insert { new_index, new_len, .. } | DiffOp::Replace { new_index, new_len, .. } => {
                push_words(&mut out, &words[new_index..new_index + new_len])
            }
        }
    }
    out
}

/// A script for long texts, in linear time: wherever the member's next
/// [`ANCHOR_WORDS`] words start somewhere in the base (at their first
/// place there), the run they start is copied as far as it goes; other
/// words are literal. Coarser than a diff where texts moved or repeat, and
/// always rebuilds the member exactly.
fn anchored(base: &[&str], words: &[&str]) -> Vec<Op> {
    let mut first: std::collections::HashMap<&[&str], usize> = std::collections::HashMap::new();
    for (i, gram) in base.windows(ANCHOR_WORDS).enumerate() {
        first.entry(gram).or_insert(i);
    }
    let mut out: Vec<Op> = Vec::new();
    let (mut i, mut literal) = (0, 0);
    while i < words.len() {
        let at = words.get(i..i + ANCHOR_WORDS).and_then(|gram| first.get(gram).copied());
        let Some(start) = at else {
            i += 1;
            continue;
        };
        push_words(&mut out, &words[literal..i]);
        let len = base[start..].iter().zip(&words[i..]).take_while(|(a, b)| a == b).count();
        out.push(Op::Copy { start, len });
        i += len;
        literal = i;
    }
    push_words(&mut out, &words[literal..]);
    out
}

impl AuditTexts {
    /// Scripts for every member of every cluster, from the texts of
    /// `pages`' records (kept with `webdup::Config::keep_pages`, or read from
    /// an index that stored them); pages without a text are listed in
    /// `missing`.
    pub fn build(units: &impl Units, pages: &[PageSource], clustering: &Clustering, audit: &Audit) -> AuditTexts {
        let texts = AuditTexts::held(pages);
        AuditTexts::build_with(units, clustering, audit, &|key| texts.get(&key).map(|t| Cow::Borrowed(*t)))
    }

    /// The texts `pages` hold, by document.
    pub fn held(pages: &[PageSource]) -> HashMap<DocKey, &str> {
        pages.iter().filter_map(|p| Some((p.doc?, p.text.as_deref()?))).collect()
    }

    /// [`AuditTexts::build`] with each document's text from `text_of` (a
    /// run too large to hold its texts reads them back from disk): only the
    /// clustered pages' are asked for, once each.
    pub fn build_with<'t>(
        units: &impl Units,
        clustering: &Clustering,
        audit: &Audit,
        text_of: &(dyn Fn(DocKey) -> Option<Cow<'t, str>> + Sync),
    ) -> AuditTexts {
        let per_cluster: Vec<(String, Vec<PageText>, Vec<usize>)> =
            units.map(clustering.clusters.len().min(audit.clusters.len()), |n| {
                let (c, ac) = (&clustering.clusters[n], &audit.clusters[n]);
                let mut texts: HashMap<DocKey, Option<Cow<'t, str>>> = HashMap::new();
                for key in std::iter::once(c.representative).chain(c.members.iter().map(|m| m.key)) {
                    texts.entry(key).or_insert_with(|| text_of(key));
                }
                let text_of = |key| texts.get(&key).and_then(|t| t.as_deref());
                let base_doc = std::iter::once(c.representative)
                    .chain(c.members.iter().map(|m| m.key))
                    .find(|&d| text_of(d).is_some())
                    .unwrap_or(c.representative);
                let base = tokens(text_of(base_doc).unwrap_or_default());
                let mut pages = Vec::with_capacity(c.members.len());
                let mut missing = Vec::new();
                for (m, am) in c.members.iter().zip(&ac.members) {
                    let Some(text) = text_of(m.key) else {
                        missing.push(am.page);
                        continue;
                    };
                    let ops = if m.key == base_doc {
                        vec![Op::Copy { start: 0, len: base.len() }]
                    } else {
                        script(&base, &tokens(text))
                    };
                    pages.push(PageText { page: am.page, base: n, ops });
                }
                (base.join(" "), pages, missing)
            });
        let mut texts = AuditTexts::default();
        for (base, pages, missing) in per_cluster {
            texts.bases.push(base);
            texts.pages.extend(pages);
            texts.missing.extend(missing);
        }
        texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_rebuild_the_member_text() {
        let base_text = "The river path was restored.\nVolunteers came from the village every weekend.";
        let member =
            "The river path was finally restored.\n\nVolunteers came from two villages every weekend. New line.";
        let base = tokens(base_text);
        let words = tokens(member);
        assert_eq!(words.iter().filter(|w| **w == "\n").count(), 1, "blank lines fold into one break");
        let ops = script(&base, &words);
        let joined = base.join(" ");
        assert_eq!(rebuild(&joined, &ops), words);
        assert!(ops.iter().any(|o| matches!(o, Op::Copy { len, .. } if *len >= 4)), "{ops:?}");
        assert_eq!(serde_json::to_string(&Op::Copy { start: 3, len: 2 }).unwrap(), "[3,2]");
    }

    #[test]
    fn empty_and_huge_texts() {
        assert!(tokens("").is_empty());
        assert_eq!(rebuild("", &script(&[], &[])), Vec::<&str>::new());
        let huge = "word ".repeat(MAX_WORDS * 2);
        assert_eq!(tokens(&huge).len(), MAX_WORDS);
    }

    #[test]
    fn long_texts_get_a_linear_script_that_rebuilds_them_the_same_every_time() {
        // Two long texts past the diff's bound: the member moves a block,
        // edits words and adds a paragraph, and repeats a phrase.
        let base_words: Vec<String> = (0..4_000).map(|i| format!("w{}", i % 1_700)).collect();
        let mut member: Vec<String> = base_words[2_000..].to_vec();
        member.extend(base_words[..2_000].iter().cloned());
        member[10] = "edited".into();
        member.splice(500..500, ["a", "new", "paragraph", "\n"].map(String::from));
        let base: Vec<&str> = base_words.iter().map(String::as_str).collect();
        let words: Vec<&str> = member.iter().map(String::as_str).collect();
        assert!(base.len() + words.len() > MAX_DIFFED_WORDS);
        let ops = script(&base, &words);
        assert_eq!(rebuild(&base.join(" "), &ops), words);
        assert_eq!(ops, script(&base, &words), "the same texts give the same script");
        let copied: usize = ops.iter().map(|o| if let Op::Copy { len, .. } = o { *len } else { 0 }).sum();
        assert!(copied > words.len() * 9 / 10, "mostly copied: {copied} of {}", words.len());
        assert!(ops.len() < 20, "a few steps, not a word each: {}", ops.len());
    }
}
