//! Crawl traps: URL patterns whose pages keep coming back as near-duplicates
//! of each other (a calendar linking one month ahead forever, endless
//! pagination, faceted filters, session ids in paths).
//!
//! A URL's pattern is its host, its path up to its last segment that holds
//! a digit with those segments replaced by `*`, and the names of its query
//! parameters (values dropped). A pattern is judged once [`TRAP_PAGES`] of its pages have been
//! fetched: a trap when most of them are near-duplicates of an earlier one
//! (SimHash of their text outside navigation and footers), else cleared for
//! good. Until judged, a pattern gets at most [`TRAP_PAGES`] pages fetched;
//! its other URLs wait, and are fetched once it is cleared or skipped (and
//! counted) once it is a trap. So a trap costs a bounded number of pages and
//! no `--max-pages` is needed to finish a site that has one.

use scraper::Html;
use url::Url;
use webdup_core::sketch::simhash;

use crate::extract::visible_text_of;

/// Pages of a pattern fetched before it is judged.
pub const TRAP_PAGES: usize = 12;

/// SimHash distance (of 64 bits) under which two pages of a pattern are
/// near-duplicates. Pages whose word 3-grams overlap by about 0.8 (Jaccard)
/// differ by 8-9 bits on average, unrelated pages by 32 and pages sharing
/// half their text by about 21: within one URL pattern, 10 tells a page that
/// differs by a date or a few words of a listing from another page.
const NEAR_BITS: u32 = 10;

/// The pattern of a URL (see the module documentation); `None` for a URL
/// with no digit in its path and no query, which no trap generates. The
/// path is cut after its last segment that holds a digit (`/blog/*/*/…`
/// for dated posts), so one pattern covers a site's dated or numbered URLs
/// however their slugs read.
pub fn pattern(url: &Url) -> Option<String> {
    let segments: Vec<&str> = url.path().split('/').skip(1).collect();
    let last_digit = segments.iter().rposition(|s| s.bytes().any(|b| b.is_ascii_digit()));
    if last_digit.is_none() && url.query().is_none() {
        return None;
    }
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let mut p = host.strip_prefix("www.").unwrap_or(&host).to_string();
    if let Some(port) = url.port() {
        p.push(':');
        p.push_str(&port.to_string());
    }
    let kept = last_digit.map_or(segments.len(), |i| i + 1);
    for segment in &segments[..kept] {
        p.push('/');
        if segment.bytes().any(|b| b.is_ascii_digit()) {
            p.push('*');
        } else {
            p.push_str(segment);
        }
    }
    if kept < segments.len() {
        p.push_str("/…");
    }
    if url.query().is_some() {
        let mut names: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
        names.sort();
        names.dedup();
        p.push('?');
        p.push_str(&names.join("&"));
    }
    Some(p)
}

/// The SimHash of the word 3-grams of a page's visible text outside its
/// navigation, header, footer and side bars (what the `none` extractor
/// keeps: [`visible_text_of`]); `None` for a page without words (judged by
/// its URL alone: never near anything).
pub fn page_sketch(doc: &Html) -> Option<u64> {
    let mut words: Vec<u64> = Vec::new();
    let (text, _) = visible_text_of(doc, true);
    webdup_core::shingle::words(&text, |w| words.push(xxhash_rust::xxh3::xxh3_64(w.as_bytes())));
    if words.is_empty() {
        return None;
    }
    let grams: Vec<u64> = if words.len() < 3 {
        words
    } else {
        words.windows(3).map(|w| w[0].rotate_left(2) ^ w[1].rotate_left(1) ^ w[2]).collect()
    };
    Some(simhash::simhash_counted(&grams))
}

/// What is known of one pattern.
#[derive(Debug, Default)]
pub(crate) struct Pattern {
    /// Pages fetched (or admitted to be fetched) while it was being judged.
    pub(crate) admitted: usize,
    /// Sketches of its judged pages, in key order.
    sketches: Vec<Option<u64>>,
    /// Pages near-duplicate of an earlier one.
    near: usize,
    pub(crate) verdict: Verdict,
    /// URLs held back while it was judged.
    pub(crate) waiting: Vec<u32>,
    /// URLs not fetched because it is a trap.
    pub(crate) skipped: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    #[default]
    Open,
    Cleared,
    Trap,
}

impl Pattern {
    /// Takes one fetched page's sketch (pages in key order); judges the
    /// pattern once it has [`TRAP_PAGES`] pages.
    pub(crate) fn judge(&mut self, sketch: Option<u64>) {
        if self.verdict != Verdict::Open {
            return;
        }
        if let Some(s) = sketch
            && self.sketches.iter().flatten().any(|&o| simhash::hamming(o, s) <= NEAR_BITS)
        {
            self.near += 1;
        }
        self.sketches.push(sketch);
        if self.sketches.len() >= TRAP_PAGES {
            // Most pages after the first repeat an earlier one.
            self.verdict =
                if self.near * 4 >= (self.sketches.len() - 1) * 3 { Verdict::Trap } else { Verdict::Cleared };
            self.sketches = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(u: &str) -> String {
        pattern(&Url::parse(u).unwrap()).unwrap_or_default()
    }

    #[test]
    fn patterns_drop_values_and_digit_segments() {
        assert_eq!(p("https://www.example.com/cal?month=2026-12&view=m"), "example.com/cal?month&view");
        assert_eq!(p("https://example.com/cal?view=w&month=2027-01"), "example.com/cal?month&view");
        assert_eq!(p("https://example.com/cal/2026/12/"), "example.com/cal/*/*/…");
        assert_eq!(p("https://example.com/s/ab12cd/list"), "example.com/s/*/…");
        assert_eq!(p("https://example.com/blog/2024/05/first-post"), p("https://example.com/blog/2023/11/other"));
        assert_eq!(p("https://example.com/blog/first-post"), "", "no digit, no query: no pattern");
        assert_eq!(p("http://127.0.0.1:8080/x?y=1"), "127.0.0.1:8080/x?y");
    }

    fn sketch(body: &str) -> Option<u64> {
        page_sketch(&Html::parse_document(body))
    }

    #[test]
    fn sketches_skip_navigation_and_footers() {
        let text = "the harbour office posts the winter ferry timetable every monday by the ticket window";
        let a = sketch(&format!("<nav>home news sport weather</nav><p>{text}</p><footer>contact us</footer>"));
        let b = sketch(&format!("<nav>other menu entirely here</nav><p>{text}</p>"));
        assert_eq!(a, b);
        assert_eq!(sketch("<nav>only a menu</nav>"), None);
    }

    #[test]
    fn near_duplicate_pages_make_a_trap_and_distinct_ones_clear_it() {
        let mut trap = Pattern::default();
        let mut fine = Pattern::default();
        for i in 0..TRAP_PAGES {
            let month = format!(
                "<h1>Events in month {i}</h1><p>There are no events planned for this month yet. Check back \
                 later or subscribe to the calendar feed to hear about new concerts, talks and markets in the \
                 harbour hall and the library garden.</p>"
            );
            trap.judge(sketch(&month));
            let words: Vec<String> = (0..40).map(|w| format!("w{}", i * 1000 + w)).collect();
            fine.judge(sketch(&format!("<p>{}</p>", words.join(" "))));
        }
        assert_eq!(trap.verdict, Verdict::Trap);
        assert_eq!(fine.verdict, Verdict::Cleared);
    }
}
