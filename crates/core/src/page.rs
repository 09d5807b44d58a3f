//! A page as observed, beside its content: what its markup says about
//! itself and what its HTTP exchange said. Plain data; the parsers live in
//! webdup-web, the storage in webdup-store.

use serde::{Deserialize, Serialize};

/// An alternate-language version of the page (`<link rel=alternate hreflang>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hreflang {
    pub lang: String,
    pub href: String,
}

/// What a page says about itself in its markup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
