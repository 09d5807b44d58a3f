//! The shortfall guard, shared by every extractor: what an extractor kept,
//! checked against the page's own prose.
//!
//! Extractors drop elements by their class names, and sites name the
//! wrappers of their content like furniture (`category-popular`,
//! `sidebar-and-content-body`, a page builder's `…-widget-wrap`). On a thin
//! page the extractor is then left with the tagline, the heading or a
//! caption, and every such page of the site comes out alike. So the kept
//! text is compared with the page's longest run of content blocks read
//! without class-name rules ([`super::blocks::longest_run`]): when the run
//! is [`FAR_SMALLER`] times the kept text or more and the kept text holds
//! little of it, the run is added to the kept text. A run is measured by
//! what it says once ([`said_once`]): a carousel's slides or a list of
//! per-country notices repeat one sentence many times, and are a banner,
//! not the page's prose.

use super::Extracted;
use super::words::share_of_words_in;

/// How many times the kept text's words the page's own run of prose must
/// hold before the kept text counts as cut short.
pub(super) const FAR_SMALLER: usize = 4;

/// Share of the run's words the kept text must hold to count as having it.
const MIN_SHARE_OF_RUN: f64 = 0.5;

/// `found`, with the page's own run of prose added when `found` missed it.
pub(super) fn make_up(html: &str, found: Extracted) -> Extracted {
    let kept = super::word_count(&found.text);
    // Most pages keep a good share of all their text: they are spared the
    // second reading.
    if kept.saturating_mul(FAR_SMALLER) >= rough_words(html) {
        return found;
    }
    let Some((run, words)) = super::blocks::longest_run(html) else { return found };
    let text = joined(found.text, kept, &run, words);
    Extracted { text, ..found }
}

/// `text` (of `kept` words), with `run` (of `words` words) after it when
/// the run says [`FAR_SMALLER`] times as much as the text or more and the
/// text holds little of it.
pub(super) fn joined(text: String, kept: usize, run: &str, words: usize) -> String {
    let far_smaller = |words: usize| kept.saturating_mul(FAR_SMALLER) < words;
    if !far_smaller(words) || !far_smaller(said_once(run)) || share_of_words_in(run, &text) >= MIN_SHARE_OF_RUN {
        return text;
    }
    if text.trim().is_empty() { run.to_string() } else { format!("{text}\n{run}") }
}

/// Words of `text` with every repeated stretch counted once: its distinct
/// word 5-grams (case folded), plus the four words the first one starts
/// after; a text of fewer than five words counts its words.
fn said_once(text: &str) -> usize {
    use std::hash::{Hash, Hasher};
    let words: Vec<String> = super::words::tokens(text).into_iter().map(str::to_lowercase).collect();
    if words.len() < SAID_IN {
        return words.len();
    }
    let grams: std::collections::HashSet<u64> = words
        .windows(SAID_IN)
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect();
    grams.len() + SAID_IN - 1
}

/// Words in the stretches [`said_once`] counts, as in the duplicate
/// finder's shingles.
const SAID_IN: usize = 5;

/// An upper bound, roughly, of the words a browser would show: runs of
/// letters and digits outside tags, scripts, styles and comments.
fn rough_words(html: &str) -> usize {
    let bare = super::strip::strip(html);
    let (mut n, mut in_tag, mut in_word) = (0usize, false, false);
    for &b in bare.as_bytes() {
        match b {
            b'<' => (in_tag, in_word) = (true, false),
            b'>' => (in_tag, in_word) = (false, false),
            _ if in_tag => {}
            _ if b.is_ascii_alphanumeric() || b >= 0x80 => {
                n += usize::from(!in_word);
                in_word = true;
            }
            _ => in_word = false,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARA: &str = "The compost bays behind the tool shed reached sixty degrees last week, hot enough to \
                        kill the bindweed roots that volunteers pulled out of the raised beds.";

    const OWN: &str = "We rent out tents for weddings, fairs and camps across the county.";

    fn kept(text: &str) -> Extracted {
        Extracted { text: text.into(), title: None, extractor: "blocks", context: None }
    }

    #[test]
    fn a_caption_kept_instead_of_the_body_gets_the_body_added() {
        let html = format!(
            "<body><p class=caption>The gate in spring</p><div class=x-sidebar-y><p>{PARA}</p><p>{PARA}</p></div></body>"
        );
        let e = make_up(&html, kept("The gate in spring"));
        assert!(e.text.starts_with("The gate in spring\n") && e.text.contains("sixty degrees"), "{e:?}");
        // Kept text that holds the run, or is not far smaller, stays as it is.
        let body = format!("{PARA}\n{PARA}");
        assert_eq!(make_up(&html, kept(&body)).text, body);
        assert_eq!(make_up(&html, kept(PARA)).text, PARA);
    }

    #[test]
    fn a_banner_repeating_one_sentence_is_no_prose_to_add() {
        // Twelve slides of a promotion bar, one sentence for three regions.
        let regions = ["Austria", "Canada", "Denmark"].repeat(4);
        let slides: String = regions
            .iter()
            .map(|r| {
                format!(
                    "<p>Free delivery to {r} on larger orders. For more information on delivery rates and \
                     timelines, please visit our international page</p>"
                )
            })
            .collect();
        let html = format!("<body><div class=promo-bar>{slides}</div><h3>{OWN}</h3></body>");
        assert_eq!(make_up(&html, kept(OWN)).text, OWN);
        // Fewer words, each paragraph saying something new: prose the text missed.
        let html = format!(
            "<body><div class=promo-bar><p>{PARA}</p><p>Seed swaps run on the first Saturday of each month \
             in the library hall, and anyone who brings a packet of saved seeds takes home three others.</p>\
             <p>The oldest pear tree, planted by the founding members in 1983, fruited again after two years \
             of careful pruning and a new mulch of wood chips.</p></div><h3>{OWN}</h3></body>"
        );
        assert!(make_up(&html, kept(OWN)).text.contains("sixty degrees"));
        assert_eq!(said_once("a b c d e a b c d e a b c d e"), 9);
        assert_eq!(said_once("A b"), 2);
    }

    #[test]
    fn a_sidebar_named_outright_is_no_prose_of_the_page() {
        let html =
            format!("<body><h1>Tent rental</h1><p>{OWN}</p><div id=sidebar><p>{PARA}</p><p>{PARA}</p></div></body>");
        let own = format!("Tent rental\n{OWN}");
        assert_eq!(make_up(&html, kept(&own)).text, own);
        assert!(rough_words("<p>two <b>words</b></p><script>var x = 1;</script>") == 2);
    }
}
