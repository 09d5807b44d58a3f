//! Bytes to text: charset detection and decoding.
//!
//! The order is the one browsers use: a charset named by the transport (the
//! HTTP `Content-Type` header), then a byte-order mark, then a `<meta charset>`
//! or `<meta http-equiv>` declaration near the top of the document, then
//! UTF-8, then (HTML that declares nothing) the encoding Firefox's detector,
//! chardetng, guesses. Decoding never panics: an unknown label falls through
//! to the next source; plain text that is not UTF-8 and declares nothing,
//! and a declared UTF-8 that is not valid, are refused.

use encoding_rs::{Encoding, UTF_8};

/// How far into a document to look for a `<meta charset>`; the HTML standard
/// asks for the first 1024 bytes, and real pages often put it a little later.
const META_SNIFF_BYTES: usize = 4096;

/// Why bytes could not be turned into text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not valid UTF-8 (first bad byte at offset {offset}) and no charset declared")]
    InvalidUtf8 { offset: usize },
    /// UTF-8 was declared (`where` names the declaration) but the bytes are not UTF-8.
    #[error("declared UTF-8 in {declared_in}, but not valid UTF-8 (first bad byte at offset {offset})")]
    MislabeledUtf8 { offset: usize, declared_in: &'static str },
}

/// The text and the name of the encoding it was decoded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    pub encoding: &'static str,
}

/// Decodes a document, trusting in order `header_charset`, a BOM, an HTML
/// meta declaration (only when `is_html`), then strict UTF-8.
pub fn decode(bytes: &[u8], header_charset: Option<&str>, is_html: bool) -> Result<Decoded, DecodeError> {
    let declared = header_charset
        .and_then(|label| Encoding::for_label(label.trim().trim_matches('"').as_bytes()))
        .map(|e| (e, "the Content-Type header"));
    let from_bom = Encoding::for_bom(bytes).map(|(e, _)| (e, "a byte-order mark"));
    let from_meta = || if is_html { sniff_meta_charset(bytes).map(|e| (e, "a <meta> charset")) } else { None };
    // A BOM is more reliable than a header in practice (servers often send a
    // default charset); browsers let the BOM win too.
    let chosen = from_bom.or(declared).or_else(from_meta);
    match chosen {
        // A declared UTF-8 that is not valid UTF-8 is a mislabel; refuse it
        // below rather than silently replacing characters.
        Some((enc, _)) if enc != UTF_8 => {
            let (text, used, _) = enc.decode(bytes);
            Ok(Decoded { text: text.into_owned(), encoding: used.name() })
        }
        _ => {
            let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            match std::str::from_utf8(body) {
                Ok(s) => Ok(Decoded { text: s.to_owned(), encoding: UTF_8.name() }),
                // A page that declares nothing and is not UTF-8: guess as
                // browsers do (chardetng is Firefox's detector). A declared
                // UTF-8 that is not valid stays an error.
                Err(_) if is_html && chosen.is_none() => {
                    let mut detector = chardetng::EncodingDetector::new();
                    detector.feed(bytes, true);
                    let enc = detector.guess(None, true);
                    let (text, used, _) = enc.decode(bytes);
                    Ok(Decoded { text: text.into_owned(), encoding: used.name() })
                }
                Err(e) => Err(match chosen {
                    Some((_, declared_in)) => DecodeError::MislabeledUtf8 { offset: e.valid_up_to(), declared_in },
                    None => DecodeError::InvalidUtf8 { offset: e.valid_up_to() },
                }),
            }
        }
    }
}

/// The charset named by a `Content-Type` value such as `text/html; charset=latin1`.
pub fn charset_from_content_type(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"'))
    })
}

/// Finds `<meta charset=...>` or `<meta http-equiv="content-type" content="...charset=...">`
/// in the head of a document, byte-wise (the document is not text yet).
fn sniff_meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_SNIFF_BYTES)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = memchr::memmem::find(&lower[from..], b"<meta") {
        let start = from + pos;
        let end = memchr::memchr(b'>', &lower[start..]).map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(cs) = memchr::memmem::find(tag, b"charset") {
            let rest = &tag[cs + "charset".len()..];
            let rest = rest.iter().position(|&b| b == b'=').map(|i| &rest[i + 1..]).unwrap_or(&[]);
            let value: Vec<u8> = rest
                .iter()
                .copied()
                .skip_while(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'')
                .take_while(|b| !(b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b';' | b'/' | b'>')))
                .collect();
            if let Some(enc) = Encoding::for_label(&value) {
                // A page that says UTF-16 in ASCII is not UTF-16 (HTML standard).
                return Some(if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE { UTF_8 } else { enc });
            }
        }
        from = end.max(start + 1);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_through_and_bom_is_dropped() {
        let d = decode("\u{FEFF}héllo".as_bytes(), None, false).unwrap();
        assert_eq!(d.text, "héllo");
        assert_eq!(d.encoding, "UTF-8");
    }

    #[test]
    fn latin1_meta_charset_is_honoured() {
        let mut page = b"<html><head><meta charset=\"iso-8859-1\"></head><body>caf".to_vec();
        page.push(0xE9);
        let d = decode(&page, None, true).unwrap();
        assert!(d.text.ends_with("café"), "{}", d.text);
        assert_eq!(d.encoding, "windows-1252");
    }

    #[test]
    fn http_equiv_declaration_is_found() {
        let page = b"<meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'>\x82\xa0";
        let d = decode(page, None, true).unwrap();
        assert!(d.text.ends_with('あ'), "{}", d.text);
    }

    #[test]
    fn header_wins_over_meta_and_unknown_labels_fall_through() {
        let page = b"<meta charset=utf-8>\xE9";
        assert!(decode(page, Some("latin1"), true).unwrap().text.ends_with('é'));
        assert!(decode(page, Some("no-such-charset"), true).is_err());
    }

    #[test]
    fn invalid_utf8_without_declaration_is_an_error_with_offset() {
        assert_eq!(decode(b"ab\xFFcd", None, false), Err(DecodeError::InvalidUtf8 { offset: 2 }));
    }

    #[test]
    fn undeclared_legacy_pages_are_detected_as_browsers_do() {
        let page =
            b"<html><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade, d\xe9j\xe0 vu.</p></body></html>";
        let d = decode(page, None, true).unwrap();
        assert_eq!(d.encoding, "windows-1252");
        assert!(d.text.contains("Café crème brûlée"), "{}", d.text);
        let sjis = b"<html><body><p>\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x83\x65\x83\x4c\x83\x58\x83\x67\x82\xc5\x82\xb7\x81\x42</p></body></html>";
        assert_eq!(decode(sjis, None, true).unwrap().encoding, "Shift_JIS");
        // Not for plain text, and not when UTF-8 is declared.
        assert!(decode(page, None, false).is_err());
        assert!(decode(b"<meta charset=utf-8><p>\xe9</p>", None, true).is_err());
    }

    #[test]
    fn declared_utf8_that_is_not_utf8_is_not_called_undeclared() {
        let e = decode(b"<meta charset=utf-8><p>\xe9</p>", None, true).unwrap_err();
        assert_eq!(e, DecodeError::MislabeledUtf8 { offset: 23, declared_in: "a <meta> charset" });
        let e = decode(b"caf\xe9", Some("utf-8"), false).unwrap_err().to_string();
        assert!(e.contains("declared UTF-8 in the Content-Type header") && !e.contains("no charset"), "{e}");
        let e = decode(b"\xEF\xBB\xBFcaf\xe9", None, false).unwrap_err().to_string();
        assert!(e.contains("byte-order mark"), "{e}");
    }

    #[test]
    fn content_type_parameter_parsing() {
        assert_eq!(charset_from_content_type("text/html; Charset=\"ISO-8859-1\""), Some("ISO-8859-1"));
        assert_eq!(charset_from_content_type("text/html"), None);
    }
}
