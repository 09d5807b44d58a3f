//! Pages that repeat pages fetched before, reached only from such pages: a
//! server that answers every URL with the same page (a soft 404) and links
//! relatively (`a/`, then `a/a/`, ...) makes new URLs at every level with no
//! digit or query a trap pattern ([`super::trap`]) could group.
//!
//! The rule: a page whose sketch is within [`REPEAT_BITS`] of a page of an
//! earlier level is a repeat. The links of a repeat are followed only when
//! some page that is no repeat linked to it. So a URL variant of a real
//! page (`?sort=`, a trailing slash, `/print/`) is fetched and its links
//! read, as SEO crawls need; a chain of repeats stops after two steps. URLs
//! a trap pattern covers are left to its judgement, which names them. What
//! a level decides depends on earlier levels only, so the crawl stays the
//! same whatever the fetch timing.

use std::collections::HashMap;

use webdup_core::sketch::simhash;

use super::frontier::Bits;

/// SimHash distance under which a page repeats another: the same text, or
/// nearly (a URL or date echoed in it). Four 16-bit bands find every pair
/// within 3 bits.
pub const REPEAT_BITS: u32 = 3;

/// The sketches of earlier levels, and which URLs a page that is no repeat
/// links to.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// Sketches of the pages of earlier levels.
    earlier: Vec<u64>,
    /// Positions in `earlier`, by the value of each 16-bit band.
    bands: [HashMap<u16, Vec<u32>>; 4],
    /// Sketches of the level being fetched (searchable once it ends).
    level: Vec<u64>,
    /// URL ids linked from a page that is no repeat (or start pages).
    from_original: Bits,
}

fn band(sketch: u64, b: usize) -> u16 {
    (sketch >> (16 * b)) as u16
}

impl Repeats {
    /// Whether `sketch` is within [`REPEAT_BITS`] of an earlier level's page.
    pub(crate) fn repeats(&self, sketch: u64) -> bool {
        (0..4).any(|b| {
            self.bands[b]
                .get(&band(sketch, b))
                .is_some_and(|at| at.iter().any(|&i| simhash::hamming(self.earlier[i as usize], sketch) <= REPEAT_BITS))
        })
    }

    /// A fetched page of the current level with sketch `sketch`, asked for
    /// as URL `id`: whether its links are followed, and whether they count
    /// as linked from a page that is no repeat. Pages without words
    /// (`None`) repeat each other. A page whose URL a trap pattern covers
    /// (`patterned`) is left to the pattern's judgement: its links are
    /// followed.
    pub(crate) fn page(&mut self, id: Option<u32>, sketch: Option<u64>, patterned: bool) -> Expand {
        let s = sketch.unwrap_or(0);
        self.level.push(s);
        if patterned || !self.repeats(s) {
            Expand::Original
        } else if id.is_some_and(|id| self.from_original.has(id)) {
            Expand::Repeat
        } else {
            Expand::No
        }
    }

    /// `id` is a start page or linked from a page that is no repeat.
    pub(crate) fn mark(&mut self, id: u32) {
        self.from_original.set(id);
    }

    /// The level ended: its pages become earlier pages.
    pub(crate) fn end_level(&mut self) {
        for s in std::mem::take(&mut self.level) {
            let at = self.earlier.len() as u32;
            self.earlier.push(s);
            for b in 0..4 {
                self.bands[b].entry(band(s, b)).or_default().push(at);
            }
        }
    }
}

/// What to do with a page's links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expand {
    /// No repeat: follow them, and they are linked from an original.
    Original,
    /// A repeat a page that is no repeat links to: follow them.
    Repeat,
    /// A repeat reached only from repeats: do not follow them.
    No,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_repeats_stops_after_two_steps_and_variants_of_real_pages_are_read() {
        let mut r = Repeats::default();
        let (home, article) = (0x1234_5678_9abc_def0_u64, 0x0fed_cba9_8765_4321_u64);
        r.mark(0);
        assert_eq!(r.page(Some(0), Some(home), false), Expand::Original);
        r.mark(1); // linked from the home page
        r.end_level();
        // Level 1: a variant of the home page (two bits off) linked from it,
        // and a new page.
        assert_eq!(r.page(Some(1), Some(home ^ 0b101), false), Expand::Repeat);
        assert_eq!(r.page(Some(2), Some(article), false), Expand::Original);
        r.end_level();
        // Level 2: the same page again, linked only from the variant.
        assert_eq!(r.page(Some(3), Some(home), false), Expand::No);
        // A page four bits off every earlier page is no repeat.
        let far = home ^ 0xf000_0000_0000_0000;
        assert_eq!(r.page(Some(4), Some(far), false), Expand::Original);
        // Pages of the level being fetched are not compared with each other.
        assert_eq!(r.page(Some(5), Some(far), false), Expand::Original);
        r.end_level();
        assert_eq!(r.page(Some(6), Some(far ^ 1), false), Expand::No);
        // Unless a trap pattern covers its URL.
        assert_eq!(r.page(Some(6), Some(far ^ 1), true), Expand::Original);
    }
}
