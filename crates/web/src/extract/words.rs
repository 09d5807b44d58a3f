//! Word bags: how much two texts share, ignoring order. Used by the
//! consensus extractor to let extractors vote, and by webdup-eval for WCXB's
//! bag-of-words F1.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+").unwrap_or_else(|_| unreachable!()));

/// The tokens of `text`: runs of Unicode word characters, case kept.
pub fn tokens(text: &str) -> Vec<&str> {
    TOKEN.find_iter(text).map(|m| m.as_str()).collect()
}

/// The lowercased tokens of `text` with their counts.
fn bag(text: &str) -> HashMap<String, u32> {
    let mut m: HashMap<String, u32> = HashMap::new();
    for t in TOKEN.find_iter(text) {
        *m.entry(t.as_str().to_lowercase()).or_insert(0) += 1;
    }
    m
}

/// F1 of two lowercased word multisets: 1 when both are empty, 0 when only
/// one is. Symmetric.
pub fn bag_f1(a: &str, b: &str) -> f64 {
    let (a, b) = (bag(a), bag(b));
    let (na, nb): (u32, u32) = (a.values().sum(), b.values().sum());
    if na == 0 && nb == 0 {
        return 1.0;
    }
    let common: u32 = a.iter().map(|(k, &c)| c.min(b.get(k).copied().unwrap_or(0))).sum();
    if common == 0 {
        return 0.0;
    }
    let (p, r) = (f64::from(common) / f64::from(nb), f64::from(common) / f64::from(na));
    2.0 * p * r / (p + r)
}

/// The share of `part`'s words (with multiplicity, case folded) found in `whole`.
pub fn share_of_words_in(part: &str, whole: &str) -> f64 {
    let mut whole = bag(whole);
    let (mut total, mut found) = (0usize, 0usize);
    for t in TOKEN.find_iter(part) {
        total += 1;
        if let Some(n) = whole.get_mut(&t.as_str().to_lowercase()).filter(|n| **n > 0) {
            *n -= 1;
            found += 1;
        }
    }
    if total == 0 { 0.0 } else { found as f64 / total as f64 }
}

/// The share of `part`'s word trigrams (case folded) that occur in `whole`:
/// unlike single words, trigrams of one text are rarely in an unrelated one.
/// A text of fewer than three words is compared word by word.
pub fn share_of_trigrams_in(part: &str, whole: &str) -> f64 {
    let fold = |t: &str| TOKEN.find_iter(t).map(|m| m.as_str().to_lowercase()).collect::<Vec<_>>();
    let (part, whole) = (fold(part), fold(whole));
    if part.len() < 3 {
        return share_of_words_in(&part.join(" "), &whole.join(" "));
    }
    let known: std::collections::HashSet<&[String]> = whole.windows(3).collect();
    let found = part.windows(3).filter(|w| known.contains(w)).count();
    found as f64 / (part.len() - 2) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bags_compare_words_not_order_or_case() {
        assert_eq!(bag_f1("a b c", "C B A"), 1.0);
        assert_eq!(bag_f1("", ""), 1.0);
        assert_eq!(bag_f1("a", ""), 0.0);
        // 2 words in common, 4 and 2 words: P = 1, R = 0.5.
        assert!((bag_f1("a b c d", "a b") - 2.0 / 3.0).abs() < 1e-12);
        assert!((share_of_words_in("a b a", "a b") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(tokens("it's 3-D"), ["it", "s", "3", "D"]);
        // Same words, other order: no trigram in common.
        assert_eq!(share_of_trigrams_in("a b c d", "d c b a"), 0.0);
        assert!((share_of_trigrams_in("A b c d", "x a b c y") - 0.5).abs() < 1e-12);
        assert_eq!(share_of_trigrams_in("b a", "a b"), 1.0);
    }
}
