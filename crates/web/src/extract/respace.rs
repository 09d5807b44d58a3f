//! The spaces between words as the page shows them, put back into a
//! third-party extractor's text.
//!
//! trafilatura and rs-trafilatura join the text of a page's elements with a
//! separator wherever the nesting changes, so `<b>Java</b><i>Script</i>`
//! comes out as two words and highlighted code (`<span>fn</span>
//! <span>main</span>()`) as `fn main ()`. The page's visible text
//! ([`super::visible_text`]) keeps whitespace as a browser renders it. Both
//! texts hold the same characters once whitespace is left out, so the
//! extractor's text is aligned with the visible text on those characters,
//! and where a stretch of it is the visible text's, the visible text
//! decides whether two neighbouring characters have whitespace between
//! them. Text the extractor made up or moved keeps its own spacing.

use std::collections::HashMap;

/// Characters an anchor holds: a stretch this long, whitespace aside, is
/// taken to be the same place in both texts.
const ANCHOR: usize = 12;

/// Characters after a candidate continuation that must match too before it
/// counts as one: a single character matches by chance.
const CONFIRM: usize = 4;

/// `text` with whitespace between two of its characters exactly where
/// `shown` has it, wherever the two texts run alike (whitespace aside).
pub(super) fn respace(text: &str, shown: &str) -> String {
    let (o, o_space) = strip(text);
    let (s, s_space) = strip(shown);
    if o.len() < ANCHOR || s.len() < ANCHOR {
        return text.to_string();
    }
    // Anchors start at words (after whitespace) in both texts: most words
    // start alike in both, and the index stays a fifth of the characters.
    let mut anchors: HashMap<&[char], Vec<usize>> = HashMap::new();
    for (p, w) in s.windows(ANCHOR).enumerate().filter(|&(p, _)| p == 0 || !s_space[p].is_empty()) {
        anchors.entry(w).or_default().push(p);
    }
    // Where each of the text's characters is in `shown`, when known.
    let mut at: Vec<Option<usize>> = vec![None; o.len()];
    let mut last: Option<usize> = None;
    for i in 0..o.len() {
        let next = last.map(|q| q + 1).filter(|&p| {
            let n = CONFIRM.min(o.len() - i).min(s.len().saturating_sub(p));
            n > 0 && o[i..i + n] == s[p..p + n]
        });
        let found = next.or_else(|| {
            if i > 0 && o_space[i].is_empty() {
                return None;
            }
            let key = o.get(i..i + ANCHOR)?;
            let ps = anchors.get(key)?;
            let after = last.map_or(0, |q| q + 1);
            Some(ps.iter().copied().find(|&p| p >= after).unwrap_or(ps[0]))
        });
        at[i] = found;
        last = found.or(last);
    }
    let mut out = String::with_capacity(text.len());
    for i in 0..o.len() {
        let gap = &o_space[i];
        let contiguous = i > 0 && matches!((at[i - 1], at[i]), (Some(a), Some(b)) if b == a + 1);
        if !contiguous || s_space[at[i].unwrap_or_default()].is_empty() == gap.is_empty() {
            out.push_str(gap);
        } else if gap.is_empty() {
            out.push(' ');
        }
        out.push(o[i]);
    }
    out.push_str(o_space.last().map_or("", String::as_str));
    out
}

/// The characters of `text` other than whitespace, each with the whitespace
/// before it; one more entry holds the whitespace at the end.
fn strip(text: &str) -> (Vec<char>, Vec<String>) {
    let mut chars = Vec::new();
    let mut spaces = vec![String::new()];
    for c in text.chars() {
        if c.is_whitespace() {
            if let Some(s) = spaces.last_mut() {
                s.push(c);
            }
        } else {
            chars.push(c);
            spaces.push(String::new());
        }
    }
    // `spaces[i]` precedes `chars[i]`; the last entry trails the text.
    (chars, spaces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_follows_the_page_where_the_texts_run_alike() {
        let shown = "Written in JavaScript with fetch.\nfn main() { let x = 1; }";
        assert_eq!(
            respace("Written in Java Script with fetch.\nfn main () { let x = 1; }", shown),
            "Written in JavaScript with fetch.\nfn main() { let x = 1; }"
        );
        assert_eq!(respace("importnumpy as np", "Say import numpy as np now"), "import numpy as np");
    }

    #[test]
    fn text_not_on_the_page_keeps_its_own_spacing() {
        let shown = "The first paragraph of the story.\nThe second paragraph of it.";
        let text = "A title not shown\nThe first paragraph of the story.";
        assert_eq!(respace(text, shown), text);
        assert_eq!(respace("short", shown), "short");
    }
}
