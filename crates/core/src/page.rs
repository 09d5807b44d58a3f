//! A page as observed, beside its content: what its markup says about
//! itself and what its HTTP exchange said. Plain data; the parsers live in
//! webdup-web, the storage in webdup-store.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// An alternate-language version of the page (`<link rel=alternate hreflang>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hreflang {
    pub lang: String,
    pub href: String,
}

/// What a page says about itself in its markup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageMeta {
    /// `<title>`, whitespace folded.
    pub title: Option<String>,
    /// `<meta name=description>`.
    pub description: Option<String>,
    /// The first `<h1>`'s text.
    pub h1: Option<String>,
    /// `<link rel=canonical>`, resolved against the page URL when one is known.
    pub canonical: Option<String>,
    /// `<meta name=robots>` (or `googlebot`) as written.
    pub robots: Option<String>,
    /// The robots directives forbid indexing (`noindex` or `none`).
    pub noindex: bool,
    pub hreflang: Vec<Hreflang>,
    /// `<html lang>`, else `<meta http-equiv=content-language>`.
    pub language: Option<String>,
}

/// What a page showed beside its fingerprint: the title its extractor found,
/// what its markup says about itself, and its main text (the last two only
/// when kept: `webdup::Config::keep_pages`). Its [`PageRecord`] is made from
/// it and the page's exchange ([`PageRecord::observed`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageView {
    /// The title the extractor found, for a page whose markup has none.
    pub title: Option<String>,
    pub meta: Option<Box<PageMeta>>,
    pub text: Option<String>,
}

/// True when robots directives (a meta tag or an `X-Robots-Tag` value, which
/// may name a bot: `googlebot: noindex`) forbid indexing.
pub fn forbids_indexing(directives: &str) -> bool {
    directives.split([',', ';']).any(|d| {
        let d = d.rsplit(':').next().unwrap_or(d).trim().to_ascii_lowercase();
        d == "noindex" || d == "none"
    })
}

/// One response in a redirect chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The URL requested.
    pub url: String,
    /// The status it answered with.
    pub status: u16,
}

/// The plain part of fetching one URL, as every layer may keep it: where it
/// ended, with which status, through which redirects, and what its headers
/// said about canonical and indexing. (webdup-web's `FetchRecord` converts
/// into it; a WARC record would too.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exchange {
    /// The URL that answered last, after redirects.
    pub final_url: Option<String>,
    /// The last status received.
    pub status: Option<u16>,
    /// The responses before the final one, when the URL redirected.
    pub redirects: Vec<Hop>,
    /// The target of a `Link: <...>; rel="canonical"` header.
    pub link_canonical: Option<String>,
    pub x_robots_tag: Option<String>,
    /// Why there is no content: a stable kind (`http_status`, `dns`, ...)
    /// and a sentence for people.
    pub error: Option<(String, String)>,
}

/// True when a canonical can name a page at all: a `javascript:`, `data:`,
/// `mailto:` or any other non-HTTP URL is ignored, as search engines ignore
/// it, so the page counts as having no canonical. Relative and unparseable
/// values (pages read from local files) are kept and compared as written.
pub fn usable_canonical(s: &str) -> bool {
    url::Url::parse(s.trim()).map_or(true, |u| matches!(u.scheme(), "http" | "https"))
}

/// Where a page's canonical came from; serialized (and stored) as
/// [`CanonicalSource::as_str`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CanonicalSource {
    /// The page's own `<link rel=canonical>`.
    Html,
    /// A `Link: <...>; rel="canonical"` header.
    Http,
}

impl CanonicalSource {
    /// The name reports and the index use: `html` or `http`.
    pub fn as_str(self) -> &'static str {
        match self {
            CanonicalSource::Html => "html",
            CanonicalSource::Http => "http",
        }
    }

    /// The source [`CanonicalSource::as_str`] names, if any.
    pub fn from_name(name: &str) -> Option<CanonicalSource> {
        [CanonicalSource::Html, CanonicalSource::Http].into_iter().find(|s| s.as_str() == name)
    }
}

/// Why a page may not be indexed; serialized (and stored) as
/// [`NoindexSource::as_str`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoindexSource {
    /// An `X-Robots-Tag` header.
    XRobotsTag,
    /// The robots meta tag.
    Meta,
}

impl NoindexSource {
    /// The name reports and the index use: `x-robots-tag` or `meta`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoindexSource::XRobotsTag => "x-robots-tag",
            NoindexSource::Meta => "meta",
        }
    }

    /// The source [`NoindexSource::as_str`] names, if any.
    pub fn from_name(name: &str) -> Option<NoindexSource> {
        [NoindexSource::XRobotsTag, NoindexSource::Meta].into_iter().find(|s| s.as_str() == name)
    }
}

/// A page's canonical and indexability as observed, from what its markup
/// says and what its HTTP exchange said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    pub canonical: Option<String>,
    pub canonical_source: Option<CanonicalSource>,
    pub noindex: bool,
    pub noindex_source: Option<NoindexSource>,
}

/// The one rule that merges a page's markup with its headers, used by the
/// audit, the index and the HTTP API alike:
///
/// - the page's own `<link rel=canonical>` wins over a `Link` header (it is
///   what the site's authors wrote for this page); canonicals that cannot
///   name a page ([`usable_canonical`]) count as none;
/// - a page is noindex when its robots meta tag or its `X-Robots-Tag` says
///   so, and the header is named as the reason first.
pub fn observe(meta: Option<&PageMeta>, exchange: Option<&Exchange>) -> Observed {
    let mut o = Observed::default();
    let usable = |c: &Option<String>| c.as_ref().filter(|c| usable_canonical(c)).cloned();
    if let Some(c) = meta.and_then(|m| usable(&m.canonical)) {
        o.canonical = Some(c);
        o.canonical_source = Some(CanonicalSource::Html);
    } else if let Some(c) = exchange.and_then(|e| usable(&e.link_canonical)) {
        o.canonical = Some(c);
        o.canonical_source = Some(CanonicalSource::Http);
    }
    if exchange.and_then(|e| e.x_robots_tag.as_deref()).is_some_and(forbids_indexing) {
        o.noindex = true;
        o.noindex_source = Some(NoindexSource::XRobotsTag);
    } else if meta.is_some_and(|m| m.noindex) {
        o.noindex = true;
        o.noindex_source = Some(NoindexSource::Meta);
    }
    o
}

/// What the index records of a page beside its content: what the page
/// says about itself, and what its HTTP headers said (the `Link` canonical,
/// `X-Robots-Tag`), merged by [`observe`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordMeta {
    pub title: Option<String>,
    pub canonical: Option<String>,
    pub noindex: Option<bool>,
    pub description: Option<String>,
    pub h1: Option<String>,
    /// Where `canonical` came from; `None` when unknown (rows stored
    /// before schema version 3, canonicals given through the API).
    #[serde(default)]
    pub canonical_source: Option<CanonicalSource>,
    /// Why `noindex` is true.
    #[serde(default)]
    pub noindex_source: Option<NoindexSource>,
}

impl RecordMeta {
    /// What is recorded of a page beside its content: its markup's title,
    /// description and h1 (the title falling back to `title`, the one its
    /// extractor found), and the canonical and indexability that
    /// [`observe`] merges from the markup and the exchange's headers (left
    /// unknown when neither says anything). The metadata is given whole:
    /// its strings move into the record.
    pub fn of(meta: Option<PageMeta>, title: Option<String>, exchange: Option<&Exchange>) -> RecordMeta {
        let headers = exchange.is_some_and(|e| e.link_canonical.is_some() || e.x_robots_tag.is_some());
        let observed = (meta.is_some() || headers).then(|| observe(meta.as_ref(), exchange));
        let (own_title, description, h1) = meta.map(|m| (m.title, m.description, m.h1)).unwrap_or_default();
        let mut out = RecordMeta { title: own_title.or(title), description, h1, ..RecordMeta::default() };
        if let Some(o) = observed {
            out.observe(o);
        }
        out
    }

    /// Takes the canonical and indexability of [`observe`].
    pub fn observe(&mut self, o: Observed) {
        self.canonical = o.canonical;
        self.canonical_source = o.canonical_source;
        self.noindex = Some(o.noindex);
        self.noindex_source = o.noindex_source;
    }
}

/// One page of one crawl as recorded (without its shingles): where it was
/// asked for and where it ended, what the exchange answered, what the page
/// said. The index reads these back; the SEO
/// reports (webdup-seo) read nothing else.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageRecord {
    /// The index's row id (0 for a page seen in a run).
    pub id: i64,
    pub crawl: String,
    pub url: String,
    pub final_url: Option<String>,
    pub status: Option<u16>,
    /// Seconds since the Unix epoch; ISO 8601 (UTC) in JSON.
    #[serde(serialize_with = "serialize_iso8601")]
    pub fetched_at: i64,
    pub error_kind: Option<String>,
    pub error: Option<String>,
    #[serde(flatten)]
    pub meta: RecordMeta,
    /// The responses before the final one, when the URL redirected
    /// (stored since schema version 5).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<Hop>,
    pub word_count: usize,
    /// MD5 of the normalized text, hex; `None` without content.
    pub digest: Option<String>,
    pub simhash: Option<u64>,
    pub shingle_count: usize,
    /// The main text, when kept ([`PageView::text`]) or stored; never
    /// serialized (an audit's diff view shows it).
    #[serde(skip)]
    pub text: Option<String>,
}

impl PageRecord {
    /// The record of a page seen in a run rather than read from an index
    /// (`id` 0, no crawl, `fetched_at` 0): `url` as asked for, what its
    /// exchange answered (none for a local file), and what the page showed
    /// (its markup merged with the exchange's headers by [`RecordMeta::of`],
    /// its main text). Its content's sizes and digest are
    /// [`PageRecord::with_content`]'s.
    pub fn observed(url: String, page: Option<PageView>, exchange: Option<&Exchange>) -> PageRecord {
        PageRecord::exchanged(url, page, exchange.cloned())
    }

    /// [`PageRecord::observed`] with the exchange given whole: the page's
    /// and the exchange's strings move into the record.
    pub fn exchanged(url: String, page: Option<PageView>, exchange: Option<Exchange>) -> PageRecord {
        let page = page.unwrap_or_default();
        let meta = RecordMeta::of(page.meta.map(|m| *m), page.title, exchange.as_ref());
        let Exchange { final_url, status, redirects, error, .. } = exchange.unwrap_or_default();
        let (error_kind, error) = error.unzip();
        PageRecord {
            id: 0,
            crawl: String::new(),
            url,
            final_url,
            status,
            fetched_at: 0,
            error_kind,
            error,
            meta,
            redirects,
            word_count: 0,
            digest: None,
            simhash: None,
            shingle_count: 0,
            text: page.text,
        }
    }

    /// The record with its content's sizes and digest: its words, the MD5
    /// of its normalized text, its SimHash and its count of shingles.
    pub fn with_content(
        mut self,
        word_count: usize,
        digest: &[u8; 16],
        simhash: u64,
        shingle_count: usize,
    ) -> PageRecord {
        self.set_content(word_count, digest, simhash, shingle_count);
        self
    }

    /// [`PageRecord::with_content`] in place.
    pub fn set_content(&mut self, word_count: usize, digest: &[u8; 16], simhash: u64, shingle_count: usize) {
        let mut hex = String::with_capacity(32);
        for b in digest {
            // Writing to a string cannot fail.
            let _ = write!(hex, "{b:02x}");
        }
        self.digest = Some(hex);
        (self.word_count, self.simhash, self.shingle_count) = (word_count, Some(simhash), shingle_count);
    }

    /// Where the content was actually served: the final URL, else the URL.
    pub fn effective_url(&self) -> &str {
        self.final_url.as_deref().unwrap_or(&self.url)
    }
}

/// One crawl read back whole: its name, and each page's record with its
/// shingle set (empty when the page had no content), in the order stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Crawl {
    pub name: String,
    pub pages: Vec<(PageRecord, Vec<u64>)>,
}

/// `seconds` since the Unix epoch as an ISO 8601 UTC time,
/// `2024-09-01T12:30:05Z`.
pub fn iso8601_utc(seconds: i64) -> String {
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

/// Serializes seconds since the Unix epoch as [`iso8601_utc`] text.
pub fn serialize_iso8601<S: serde::Serializer>(seconds: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&iso8601_utc(*seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(canonical: Option<&str>, noindex: bool) -> PageMeta {
        PageMeta { canonical: canonical.map(Into::into), noindex, ..PageMeta::default() }
    }

    fn exchange(canonical: Option<&str>, robots: Option<&str>) -> Exchange {
        Exchange {
            link_canonical: canonical.map(Into::into),
            x_robots_tag: robots.map(Into::into),
            ..Exchange::default()
        }
    }

    #[test]
    fn the_pages_own_canonical_beats_the_link_header() {
        let o =
            observe(Some(&meta(Some("https://a.test/page"), false)), Some(&exchange(Some("https://a.test/h"), None)));
        assert_eq!(
            (o.canonical.as_deref(), o.canonical_source),
            (Some("https://a.test/page"), Some(CanonicalSource::Html))
        );
        let o = observe(Some(&meta(None, false)), Some(&exchange(Some("https://a.test/h"), None)));
        assert_eq!(
            (o.canonical.as_deref(), o.canonical_source),
            (Some("https://a.test/h"), Some(CanonicalSource::Http))
        );
    }

    #[test]
    fn an_unusable_tag_leaves_the_header_canonical() {
        let o =
            observe(Some(&meta(Some("javascript:void(0)"), false)), Some(&exchange(Some("https://a.test/h"), None)));
        assert_eq!(o.canonical_source, Some(CanonicalSource::Http));
        assert_eq!(observe(Some(&meta(Some("mailto:x@a.test"), false)), None), Observed::default());
    }

    #[test]
    fn the_header_is_named_first_as_the_reason_for_noindex() {
        let o = observe(Some(&meta(None, true)), Some(&exchange(None, Some("googlebot: noindex"))));
        assert_eq!((o.noindex, o.noindex_source), (true, Some(NoindexSource::XRobotsTag)));
        let o = observe(Some(&meta(None, true)), Some(&exchange(None, Some("nofollow"))));
        assert_eq!((o.noindex, o.noindex_source), (true, Some(NoindexSource::Meta)));
        assert!(!observe(Some(&meta(None, false)), None).noindex);
    }
}

/// One page per final URL. `pages[i]` is page `i`'s final URL (`None`:
/// unknown, never folded) and whether it got there through redirects.
/// Returns, per page, the page it is folded into: a page that redirected to
/// a URL another page also reached is that page. The page kept for a URL is
/// the one that asked for it directly, else the first to reach it.
pub fn fold_redirects(pages: &[(Option<&str>, bool)]) -> Vec<Option<usize>> {
    let mut kept: std::collections::HashMap<&str, (bool, usize)> = std::collections::HashMap::new();
    for (i, &(url, redirected)) in pages.iter().enumerate() {
        let Some(url) = url else { continue };
        let direct = !redirected;
        match kept.get(url) {
            Some(&(was_direct, _)) if was_direct || !direct => {}
            _ => {
                kept.insert(url, (direct, i));
            }
        }
    }
    pages
        .iter()
        .enumerate()
        .map(|(i, &(url, redirected))| {
            let k = kept[url?].1;
            (redirected && k != i).then_some(k)
        })
        .collect()
}

#[cfg(test)]
mod fold_tests {
    use super::fold_redirects;

    #[test]
    fn a_redirect_folds_into_the_page_asked_for_directly_whatever_the_order() {
        let pages = [(Some("https://a.test/new"), true), (Some("https://a.test/new"), false), (None, true)];
        assert_eq!(fold_redirects(&pages), [Some(1), None, None]);
        // Two old URLs to a page nobody asked for: the first stands for it.
        let pages = [(Some("https://a.test/new"), true), (Some("https://a.test/new"), true)];
        assert_eq!(fold_redirects(&pages), [None, Some(0)]);
        // A redirect alone is its page.
        assert_eq!(fold_redirects(&[(Some("https://a.test/new"), true)]), [None]);
    }
}
