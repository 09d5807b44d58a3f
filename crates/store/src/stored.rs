//! A page's shingle set as stored: rebuilt from its stored main text when
//! it can be, else kept whole.
//!
//! The set is what exact verification reads, so every page keeps it; but a
//! page stored with its main text (the default of `index add`) keeps it
//! twice, since the set is the text's shingles less those its site's
//! template took away. Kept whole it costs 8 bytes a shingle (random 64-bit
//! hashes: no coding saves more than about a tenth), as much again as the
//! deflated text. So such a page keeps only the shingles taken away
//! (usually none) and a 64-bit check of the set ([`schema::V11`]), and the
//! set is shingled again from the text when read. The rule is applied when
//! the page is written: if the text's shingles do not give back exactly
//! the set (a thin page whose shingles the template rule took from its
//! context), the set is kept whole. When it is read, a rebuilt set that
//! does not match its check (a text or a shingler changed since) is an
//! error naming the row, never a different answer.
//!
//! [`schema::V11`]: crate::schema::V11

use webdup_core::settings::FingerprintSettings;
use webdup_core::shingle::{ShingleConfig, Shingler, set_digest};

use crate::codec::{decode_u64s, encode_u64s, inflate};
use crate::{Error, Result};

/// Writes and reads shingle sets under an index's shingling settings.
pub(crate) struct ShingleStore {
    shingler: Shingler,
}

/// A shingle set as its page row keeps it: `shingles` and `shingles_check`.
pub(crate) struct StoredSet {
    pub(crate) blob: Vec<u8>,
    pub(crate) check: Option<i64>,
}

/// A page row's main text as stored: plain in `text`, or deflated in
/// `text_deflate`.
#[derive(Default)]
pub(crate) struct StoredText {
    pub(crate) plain: Option<String>,
    pub(crate) deflated: Option<Vec<u8>>,
}

impl StoredText {
    /// Reads columns `at` (`text`) and `at + 1` (`text_deflate`) of `row`.
    pub(crate) fn of(row: &rusqlite::Row, at: usize) -> rusqlite::Result<StoredText> {
        Ok(StoredText { plain: row.get(at)?, deflated: row.get(at + 1)? })
    }

    pub(crate) fn text(self, page_id: i64) -> Result<Option<String>> {
        match self.deflated {
            Some(blob) => Ok(Some(inflate(&blob, page_id)?)),
            None => Ok(self.plain),
        }
    }
}

/// The check kept with a set rebuilt from text.
fn check_of(shingles: &[u64]) -> i64 {
    i64::from_le_bytes(set_digest(shingles)[..8].try_into().expect("8 bytes"))
}

impl ShingleStore {
    pub(crate) fn new(settings: &FingerprintSettings) -> ShingleStore {
        ShingleStore {
            shingler: Shingler::new(ShingleConfig {
                size: settings.shingle_size,
                stopwords: settings.stopwords,
                stem: settings.stem,
                language: settings.language,
            }),
        }
    }

    /// `shingles` (sorted, distinct) as a row keeps them beside `text`, the
    /// main text it stores (if any).
    pub(crate) fn encode(&self, shingles: &[u64], text: Option<&str>) -> StoredSet {
        let whole = || StoredSet { blob: encode_u64s(shingles), check: None };
        let Some(text) = text else { return whole() };
        let all = self.shingler.shingle(text).hashes;
        // Both sorted: the set must be a part of the text's shingles.
        let mut taken = Vec::new();
        let mut rest = shingles.iter().peekable();
        for &h in &all {
            if rest.peek() == Some(&&h) {
                rest.next();
            } else {
                taken.push(h);
            }
        }
        if rest.next().is_some() || taken.len() >= shingles.len() {
            return whole();
        }
        StoredSet { blob: encode_u64s(&taken), check: Some(check_of(shingles)) }
    }

    /// The set a row keeps as `blob` and `check`, its main text read by
    /// `text` only when the set is rebuilt from it.
    pub(crate) fn decode(
        &self,
        page_id: i64,
        blob: &[u8],
        check: Option<i64>,
        text: impl FnOnce() -> Result<Option<String>>,
    ) -> Result<Vec<u64>> {
        let stored = decode_u64s(blob, page_id)?;
        let Some(check) = check else { return Ok(stored) };
        let corrupt = |reason: &str| Error::Corrupt { page_id, reason: reason.into() };
        let text = text()?.ok_or_else(|| corrupt("shingles kept as its text's, and no text stored"))?;
        let mut set = self.shingler.shingle(&text).hashes;
        if !stored.is_empty() {
            set.retain(|h| stored.binary_search(h).is_err());
        }
        if check_of(&set) != check {
            return Err(corrupt("the shingles of its stored text do not match the set it was stored with"));
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> ShingleStore {
        ShingleStore { shingler: Shingler::new(ShingleConfig::default()) }
    }

    const TEXT: &str = "the ferry leaves the harbour at nine and returns before dark every day of the winter";

    #[test]
    fn a_set_made_from_its_text_is_kept_as_the_shingles_taken_away_and_read_back_whole() {
        let s = store();
        let all = s.shingler.shingle(TEXT).hashes;
        let mut kept = all.clone();
        let taken = kept.remove(3);
        let stored = s.encode(&kept, Some(TEXT));
        assert_eq!((stored.blob, stored.check.is_some()), (encode_u64s(&[taken]), true));
        let stored = s.encode(&kept, Some(TEXT));
        let back = s.decode(7, &stored.blob, stored.check, || Ok(Some(TEXT.to_string()))).unwrap();
        assert_eq!(back, kept);
        let whole = s.encode(&all, Some(TEXT));
        assert_eq!((whole.blob.len(), whole.check.is_some()), (0, true));
    }

    #[test]
    fn a_set_not_within_its_text_is_kept_whole() {
        let s = store();
        let mut set = s.shingler.shingle(TEXT).hashes;
        set.push(u64::MAX);
        let stored = s.encode(&set, Some(TEXT));
        assert_eq!((stored.blob, stored.check), (encode_u64s(&set), None));
        assert_eq!(s.decode(7, &encode_u64s(&set), None, || unreachable!()).unwrap(), set);
    }

    #[test]
    fn a_text_that_no_longer_gives_the_set_is_an_error_not_another_set() {
        let s = store();
        let set = s.shingler.shingle(TEXT).hashes;
        let stored = s.encode(&set, Some(TEXT));
        let changed = TEXT.replace("nine", "ten");
        let e = s.decode(7, &stored.blob, stored.check, || Ok(Some(changed))).unwrap_err();
        assert!(matches!(e, Error::Corrupt { page_id: 7, .. }), "{e}");
        let e = s.decode(7, &stored.blob, stored.check, || Ok(None)).unwrap_err();
        assert!(e.to_string().contains("no text stored"), "{e}");
    }
}
