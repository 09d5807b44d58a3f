//! Sitemaps (sitemaps.org protocol): a `<urlset>` lists pages, a
//! `<sitemapindex>` lists further sitemaps; either may be gzip-compressed.
//!
//! [`parse`] reads one file; [`crate::fetch::Fetcher::expand_sitemap`] follows
//! an index recursively, fetching children over HTTP, with bounds on depth,
//! on the number of sitemaps and on the number of URLs so a hostile or
//! broken index cannot make a run endless.

use std::io::Read;

use quick_xml::events::Event;

/// Largest sitemap accepted after decompression; the protocol allows 50 MB.
pub const MAX_SITEMAP_BYTES: u64 = 64 << 20;

/// Which kind of sitemap a file was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `<urlset>`: its locations are pages.
    UrlSet,
    /// `<sitemapindex>`: its locations are further sitemaps.
    Index,
}

/// One parsed sitemap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sitemap {
    pub kind: Kind,
    /// The `<loc>` values, in document order, entities resolved, trimmed.
    pub locs: Vec<String>,
}

/// Why a sitemap could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SitemapError {
    #[error("cannot decompress sitemap: {0}")]
    Gzip(String),
    #[error("sitemap larger than {MAX_SITEMAP_BYTES} bytes")]
    TooLarge,
    #[error("invalid sitemap XML: {0}")]
    Xml(String),
    #[error("not a sitemap: the root element is <{0}>, not <urlset> or <sitemapindex>")]
    NotSitemap(String),
}

/// True when an input names a sitemap rather than a page or a list: its
/// file name mentions `sitemap` and ends in `.xml` or `.xml.gz`.
pub fn looks_like_sitemap(input: &str) -> bool {
    let path = input.split(['?', '#']).next().unwrap_or(input).to_ascii_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    name.contains("sitemap") && (name.ends_with(".xml") || name.ends_with(".xml.gz"))
}

#[cfg(feature = "http")]
/// Expands a sitemap given as input (a local file or an http(s) URL) into
/// page URLs, following an index; meant for the input collector, which
/// calls it for inputs where [`looks_like_sitemap`] holds.
pub fn expand(location: &str, fetcher: &crate::fetch::Fetcher) -> crate::fetch::Expansion {
    fetcher.expand_sitemap(location)
}

/// Parses a sitemap, decompressing it first when it starts with the gzip
/// magic bytes (a `.xml.gz` served without `Content-Encoding`).
pub fn parse(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    let mut locs = Vec::new();
    let kind = parse_each(bytes, |_, loc| locs.push(loc.to_string()))?;
    Ok(Sitemap { kind, locs })
}

/// Reads a sitemap as [`parse`] does, handing each `<loc>` to `each` (with
/// the sitemap's kind) as it is read instead of collecting them: a sitemap
/// of a million entries then costs its bytes, not a million strings. On an
/// error, `each` has seen the entries before it; check a sitemap with a
/// first pass (`parse_each(bytes, |_, _| {})`) to take all or nothing.
pub fn parse_each(bytes: &[u8], each: impl FnMut(Kind, &str)) -> Result<Kind, SitemapError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .take(MAX_SITEMAP_BYTES + 1)
            .read_to_end(&mut plain)
            .map_err(|e| SitemapError::Gzip(e.to_string()))?;
        if plain.len() as u64 > MAX_SITEMAP_BYTES {
            return Err(SitemapError::TooLarge);
        }
        return parse_xml(&plain, each);
    }
    if bytes.len() as u64 > MAX_SITEMAP_BYTES {
        return Err(SitemapError::TooLarge);
    }
    parse_xml(bytes, each)
}

fn parse_xml(bytes: &[u8], mut each: impl FnMut(Kind, &str)) -> Result<Kind, SitemapError> {
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut kind = None;
    let mut in_loc = false;
    let mut loc = String::new();
    let xml_err = |e: &dyn std::fmt::Display| SitemapError::Xml(e.to_string());
    loop {
        match reader.read_event_into(&mut buf).map_err(|e| xml_err(&e))? {
            Event::Start(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if kind.is_none() {
                    kind = Some(match name {
                        "urlset" => Kind::UrlSet,
                        "sitemapindex" => Kind::Index,
                        other => return Err(SitemapError::NotSitemap(other.to_string())),
                    });
                } else if name == "loc" {
                    in_loc = true;
                    loc.clear();
                }
            }
            Event::Empty(e) if kind.is_none() => {
                let name = e.local_name();
                kind = Some(match name.as_ref() {
                    "urlset" => Kind::UrlSet,
                    "sitemapindex" => Kind::Index,
                    other => return Err(SitemapError::NotSitemap(other.to_string())),
                });
            }
            Event::Text(t) if in_loc => loc.push_str(&t.xml10_content()),
            Event::CData(t) if in_loc => loc.push_str(&t),
            Event::GeneralRef(r) if in_loc => {
                if let Some(c) = r.resolve_char_ref().map_err(|e| xml_err(&e))? {
                    loc.push(c);
                } else {
                    let name = r.into_inner();
                    match quick_xml::escape::resolve_predefined_entity(&name) {
                        Some(s) => loc.push_str(s),
                        None => return Err(SitemapError::Xml(format!("unknown entity &{name};"))),
                    }
                }
            }
            Event::End(e) if in_loc && e.local_name().as_ref() == "loc" => {
                in_loc = false;
                let l = loc.trim();
                if let (false, Some(k)) = (l.is_empty(), kind) {
                    each(k, l);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    kind.ok_or_else(|| SitemapError::NotSitemap("nothing".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlset_with_entities_and_namespace() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://e.com/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc><![CDATA[http://e.com/b]]></loc></url>
</urlset>"#;
        let s = parse(xml).unwrap();
        assert_eq!(s.kind, Kind::UrlSet);
        assert_eq!(s.locs, ["http://e.com/a?x=1&y=2", "http://e.com/b"]);
    }

    #[test]
    fn index_and_gzip() {
        use std::io::Write;
        let xml = b"<sitemapindex><sitemap><loc>http://e.com/s1.xml.gz</loc></sitemap></sitemapindex>";
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(xml).unwrap();
        let s = parse(&enc.finish().unwrap()).unwrap();
        assert_eq!(s.kind, Kind::Index);
        assert_eq!(s.locs, ["http://e.com/s1.xml.gz"]);
    }

    #[test]
    fn html_and_broken_input_are_errors() {
        assert!(matches!(parse(b"<html><body>x</body></html>"), Err(SitemapError::NotSitemap(n)) if n == "html"));
        assert!(matches!(parse(b"\x1f\x8b garbage"), Err(SitemapError::Gzip(_))));
        assert!(parse(b"<urlset><url><loc>http://e.com/</loc></url></wrong>").is_err());
    }

    #[test]
    fn parse_each_streams_the_entries_parse_collects() {
        let xml = b"<urlset><url><loc>http://e.com/1</loc></url><url><loc> </loc></url><url><loc>http://e.com/2</loc></url></urlset>";
        let mut seen = Vec::new();
        assert_eq!(parse_each(xml, |k, l| seen.push((k, l.to_string()))), Ok(Kind::UrlSet));
        assert_eq!(seen, [(Kind::UrlSet, "http://e.com/1".to_string()), (Kind::UrlSet, "http://e.com/2".to_string())]);
        assert_eq!(parse(xml).unwrap().locs, ["http://e.com/1", "http://e.com/2"]);
    }

    #[test]
    fn sitemap_names() {
        assert!(looks_like_sitemap("https://e.com/sitemap.xml"));
        assert!(looks_like_sitemap("dir/sitemap-news.xml.gz"));
        assert!(looks_like_sitemap("https://e.com/Sitemap_Index.XML?x=1"));
        assert!(!looks_like_sitemap("https://e.com/page.xml"));
        assert!(!looks_like_sitemap("https://e.com/sitemap.html"));
    }
}
