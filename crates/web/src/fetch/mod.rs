//! Fetching pages over HTTP, politely, surviving the real web's failures.
//!
//! A [`Fetcher`] is built from a validated [`FetchConfig`] and called
//! synchronously: it runs its own tokio runtime, so the CLI and tests need no
//! async code. Every URL source gives exactly one [`FetchOutcome`]: the
//! metadata of the exchange ([`FetchRecord`]: redirect chain, headers, bytes,
//! time) and either the decoded document or a [`FetchError`] saying why not.
//! A failure stays confined to its URL; the run goes on.
//!
//! Politeness: at most [`FetchConfig::concurrency`] requests at once, at most
//! [`FetchConfig::per_host`] to one origin, successive requests to an origin
//! spaced by [`FetchConfig::delay`] (or the robots.txt `Crawl-delay`, if
//! longer, capped by [`robots::MAX_CRAWL_DELAY`]). robots.txt is fetched once
//! per origin and obeyed unless [`FetchConfig::ignore_robots`]. URLs are
//! interleaved across origins so one large site does not block the others.
//!
//! Cache: with [`FetchConfig::cache_dir`], successful pages and definitive
//! 4xx answers are stored ([`cache`]) and served on later runs without any
//! request, robots.txt included (a page was allowed when it was fetched).
//! Network failures, 5xx and 429 are never cached, so a re-run retries them.
//!
//! Memory: [`Fetcher::for_each`] hands outcomes over as they complete through
//! a bounded channel, so at most about `2 × concurrency` bodies (each at most
//! [`FetchConfig::max_bytes`]) are held at once, whatever the number of URLs;
//! a slow consumer pauses fetching rather than letting bodies pile up.
//! [`Fetcher::fetch_all`] collects everything and is meant for runs whose
//! pages fit in memory.
//!
//! ```no_run
//! use webdup_web::fetch::{FetchConfig, Fetcher};
//! use webdup_web::source::{DocKey, Location, Source};
//!
//! let fetcher = Fetcher::new(FetchConfig::default().validate().unwrap()).unwrap();
//! let url = "https://example.com/".to_string();
//! let sources = vec![Source { id: url.clone(), key: DocKey(0), location: Location::Url(url) }];
//! for outcome in fetcher.fetch_all(sources, &webdup_core::progress::Quiet) {
//!     match outcome.into_document() {
//!         Ok(doc) => assert!(!doc.body.is_empty()),
//!         Err(e) => eprintln!("{e}"),
//!     }
//! }
//! ```

pub mod cache;
#[cfg(feature = "http")]
mod client;
pub mod policy;
#[cfg(feature = "http")]
mod rendered;
#[cfg(feature = "http")]
mod response;
pub mod robots;
pub mod sitemap;
pub mod url;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{DocError, DocErrorKind, Error, Result};
use crate::render::RenderConfig;
use crate::source::RawDocument;
#[cfg(any(feature = "http", feature = "warc"))]
use crate::source::{Format, Source};
use webdup_core::DocKey;

#[cfg(feature = "http")]
pub use client::{Expansion, Fetcher};
#[cfg(feature = "http")]
pub use rendered::RenderedPage;

/// Content types kept by default: HTML, XHTML and plain text.
pub const DEFAULT_CONTENT_TYPES: &[&str] = &["text/html", "application/xhtml+xml", "text/plain"];

/// Every setting of the fetcher. Build with `FetchConfig { .., ..Default::default() }`
/// and check with [`FetchConfig::validate`] before use.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Requests in flight at once, over all hosts.
    pub concurrency: usize,
    /// Requests in flight at once to one origin (scheme, host, port).
    pub per_host: usize,
    /// Least time between the starts of two requests to one origin.
    pub delay: Duration,
    /// Sent as `User-Agent`; its first word (up to `/`) is the robots.txt agent.
    pub user_agent: String,
    pub connect_timeout: Duration,
    /// Whole request, from connecting until the last body byte.
    pub timeout: Duration,
    /// Extra attempts after a connection error, a 5xx or a 429.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub backoff: Duration,
    /// A `Retry-After` longer than this is not waited for: the page fails.
    pub max_retry_wait: Duration,
    /// Largest body accepted after content decoding, enforced while reading.
    pub max_bytes: u64,
    /// Media types kept (compared without parameters, case-insensitively).
    /// A response without `Content-Type` is kept and sniffed.
    pub content_types: Vec<String>,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Fetch pages even where robots.txt disallows them.
    pub ignore_robots: bool,
    /// Keep tracking parameters (`utm_*`, `gclid`, ...) in URLs.
    pub keep_query: bool,
    /// Where fetched pages are kept between runs.
    pub cache_dir: Option<PathBuf>,
    /// Threads of the fetcher's runtime; 0 means one per core.
    pub threads: usize,
    /// Fetch internal addresses (loopback, private, link-local...) from
    /// anywhere, not only from the origins the user named
    /// ([`policy`] says which are refused otherwise).
    pub allow_internal: bool,
    /// Which pages a headless Chromium renders, and how ([`crate::render`]).
    pub render: RenderConfig,
}

/// The default user agent: names the tool and version, and tells a site
/// operator how to reach whoever runs it without pointing at a URL.
pub fn default_user_agent() -> String {
    format!(
        "webdup/{} (duplicate page finder; contact the operator of this crawl, set with --user-agent)",
        env!("CARGO_PKG_VERSION")
    )
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            concurrency: 32,
            per_host: 2,
            delay: Duration::from_millis(250),
            user_agent: default_user_agent(),
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            retries: 2,
            backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(60),
            max_bytes: 10 << 20,
            content_types: DEFAULT_CONTENT_TYPES.iter().map(|s| s.to_string()).collect(),
            max_redirects: 10,
            ignore_robots: false,
            keep_query: false,
            cache_dir: None,
            threads: 0,
            allow_internal: false,
            render: RenderConfig::default(),
        }
    }
}

impl FetchConfig {
    /// Rejects settings that cannot work, saying which and what to use.
    pub fn validate(mut self) -> Result<FetchConfig> {
        let bad = |m: String| Err(Error::Config(m));
        if !(1..=10_000).contains(&self.concurrency) {
            return bad(format!("concurrency must be 1 to 10000, not {}", self.concurrency));
        }
        if !(1..=1_000).contains(&self.per_host) {
            return bad(format!("per-host concurrency must be 1 to 1000, not {}", self.per_host));
        }
        if self.delay > Duration::from_secs(3600) {
            return bad(format!("per-host delay must be at most an hour, not {:?}", self.delay));
        }
        if self.user_agent.trim().is_empty() || self.user_agent.chars().any(|c| c.is_control()) {
            return bad("user agent must be non-empty printable text".into());
        }
        if self.connect_timeout.is_zero() || self.timeout.is_zero() {
            return bad("timeouts must be greater than zero".into());
        }
        if self.retries > 10 {
            return bad(format!("retries must be 0 to 10, not {}", self.retries));
        }
        if self.max_bytes == 0 {
            return bad("maximum body size must be greater than zero".into());
        }
        if self.max_redirects > 100 {
            return bad(format!("redirect limit must be 0 to 100, not {}", self.max_redirects));
        }
        self.content_types =
            self.content_types.iter().map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).collect();
        if self.content_types.is_empty() {
            return bad("at least one content type must be allowed".into());
        }
        self.render = self.render.validate()?;
        Ok(self)
    }
}

/// Why a URL gave no document. Stable names, used in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FetchErrorKind {
    /// Not a parseable URL, or a local file handed to the fetcher.
    InvalidUrl,
    /// Not http or https.
    Scheme,
    /// The host name did not resolve.
    Dns,
    /// The TCP connection failed (refused, reset, unreachable).
    Connect,
    /// Connecting or the whole request took longer than allowed.
    Timeout,
    /// The TLS handshake failed (bad certificate, not TLS at all).
    Tls,
    /// The server's answer is not HTTP (garbage, a malformed status line or
    /// header): retrying would get the same answer.
    Protocol,
    /// The URL was reached from a page the user did not name and is, or
    /// resolves to, an internal address ([`policy`]); never retried.
    InternalAddress,
    /// The final response was not a success (404, 410, 500, 429...).
    HttpStatus,
    /// The body is larger than the configured maximum.
    TooLarge,
    /// The content type is not one of the kept ones.
    WrongType,
    /// robots.txt disallows the URL for our user agent.
    Robots,
    /// A redirect led back to a URL already in the chain.
    RedirectLoop,
    /// More redirects than the configured limit.
    TooManyRedirects,
    /// The connection broke while the body was being read.
    Body,
    /// The body could not be decompressed, or is empty, binary or not text
    /// in any declared charset.
    Decode,
    /// The page was fetched but could not be rendered ([`crate::render`]):
    /// its scripts never stopped, its tab crashed, Chromium exited...
    Render,
    /// An internal failure (a bug); kept so the run goes on.
    Internal,
}

impl FetchErrorKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            FetchErrorKind::InvalidUrl => "invalid_url",
            FetchErrorKind::Scheme => "scheme",
            FetchErrorKind::Dns => "dns",
            FetchErrorKind::Connect => "connect",
            FetchErrorKind::Timeout => "timeout",
            FetchErrorKind::Tls => "tls",
            FetchErrorKind::Protocol => "protocol",
            FetchErrorKind::InternalAddress => "internal_address",
            FetchErrorKind::HttpStatus => "http_status",
            FetchErrorKind::TooLarge => "too_large",
            FetchErrorKind::WrongType => "wrong_type",
            FetchErrorKind::Robots => "robots",
            FetchErrorKind::RedirectLoop => "redirect_loop",
            FetchErrorKind::TooManyRedirects => "too_many_redirects",
            FetchErrorKind::Body => "body",
            FetchErrorKind::Decode => "decode",
            FetchErrorKind::Render => "render",
            FetchErrorKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for FetchErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why one URL gave no document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchError {
    pub kind: FetchErrorKind,
    /// A sentence for people.
    pub message: String,
    /// The kind this failure takes as a [`DocError`]: [`DocErrorKind::Fetch`]
    /// for network failures, the decoder's own kind (`empty`, `binary`,
    /// `encoding`) when the body arrived but was not usable text, so fetched
    /// and local documents fail alike.
    pub doc_kind: DocErrorKind,
}

impl FetchError {
    pub fn new(kind: FetchErrorKind, message: impl Into<String>) -> Self {
        FetchError { kind, message: message.into(), doc_kind: DocErrorKind::Fetch }
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

pub use webdup_core::page::Hop;

/// Everything recorded about fetching one URL, without the body: small
/// enough to keep for all URLs of a run for the reports.
/// Serializable both ways: an ingest task keeps it with the page it
/// fetched, for the distributed job's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FetchRecord {
    /// The source's id (the URL as the user wrote it).
    pub id: String,
    /// The source's key (its position in the input); serialized as `order`,
    /// its name before keys.
    #[serde(rename = "order")]
    pub key: DocKey,
    /// The URL requested, after normalization (`None` if it did not parse).
    pub url: Option<String>,
    /// The URL that answered last, after redirects.
    pub final_url: Option<String>,
    /// The last status received.
    pub status: Option<u16>,
    /// Every response, in order; the last one is the final response.
    pub chain: Vec<Hop>,
    pub content_type: Option<String>,
    pub last_modified: Option<String>,
    pub etag: Option<String>,
    /// The target of a `Link: <...>; rel="canonical"` header, made absolute.
    pub canonical: Option<String>,
    pub x_robots_tag: Option<String>,
    /// Body bytes received (after content decoding).
    pub bytes: u64,
    /// Wall time for this URL, including waits for politeness and retries.
    #[serde(serialize_with = "millis", deserialize_with = "from_millis")]
    pub elapsed: Duration,
    /// Served from the cache, not the network.
    pub from_cache: bool,
    /// Other input ids that normalized to the same URL and were not fetched again.
    pub duplicates: Vec<String>,
    pub error: Option<FetchError>,
    /// The body is the DOM a headless Chromium left after running the
    /// page's scripts ([`crate::render`]). Serialized only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rendered: bool,
    /// The fetched HTML looks like a client-rendered shell
    /// ([`crate::render::looks_client_rendered`]). Serialized only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shell: bool,
}

/// What the counts of rendering ([`RenderCounts`]) read of a fetch: all a
/// run keeps of a fetch whose page's record took the rest of it (an audit's,
/// to stay small at a million pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchFlags {
    pub key: DocKey,
    /// Why it gave no document (or, with `Render`, no rendered one).
    pub error: Option<FetchErrorKind>,
    pub rendered: bool,
    pub shell: bool,
}

impl From<&FetchRecord> for FetchFlags {
    fn from(r: &FetchRecord) -> Self {
        FetchFlags { key: r.key, error: r.error.as_ref().map(|e| e.kind), rendered: r.rendered, shell: r.shell }
    }
}

/// What a run's fetches say of rendering ([`crate::render`]): one count for
/// every report that speaks of it (the command line's note, the audit).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RenderCounts {
    /// Pages fetched: answered with a page, whether or not it was rendered.
    pub pages: usize,
    /// Pages whose fetched HTML looked like a client-rendered shell.
    pub shells: usize,
    /// Pages rendered.
    pub rendered: usize,
    /// Pages that could not be rendered (each a `render` error).
    pub failed: usize,
    /// Shells read as they came: not rendered, and not failed.
    pub unread_shells: usize,
}

impl RenderCounts {
    /// The counts of fetches by their flags (`records.iter().map(FetchFlags::from)`
    /// for whole fetch records).
    pub fn of(flags: impl IntoIterator<Item = FetchFlags>) -> RenderCounts {
        let mut c = RenderCounts::default();
        for r in flags {
            let failed = r.error == Some(FetchErrorKind::Render);
            c.pages += usize::from(r.error.is_none() || r.rendered || r.shell);
            c.shells += usize::from(r.shell);
            c.rendered += usize::from(r.rendered);
            c.failed += usize::from(failed);
            c.unread_shells += usize::from(r.shell && !r.rendered && r.error.is_none());
        }
        c
    }
}

impl From<&FetchRecord> for webdup_core::page::Exchange {
    fn from(r: &FetchRecord) -> Self {
        webdup_core::page::Exchange {
            final_url: r.final_url.clone(),
            status: r.status,
            redirects: r.chain.split_last().map_or_else(Vec::new, |(_, before)| before.to_vec()),
            link_canonical: r.canonical.clone(),
            x_robots_tag: r.x_robots_tag.clone(),
            error: r.error.as_ref().map(|e| (e.kind.as_str().to_string(), e.message.clone())),
        }
    }
}

impl FetchRecord {
    /// The [`webdup_core::page::Exchange`] that `Exchange::from` copies,
    /// taken: its URLs, redirects and headers move out of the record, which
    /// keeps its key, status, error and render flags.
    pub fn take_exchange(&mut self) -> webdup_core::page::Exchange {
        let mut redirects = std::mem::take(&mut self.chain);
        redirects.pop();
        webdup_core::page::Exchange {
            final_url: self.final_url.take(),
            status: self.status,
            redirects,
            link_canonical: self.canonical.take(),
            x_robots_tag: self.x_robots_tag.take(),
            error: self.error.as_ref().map(|e| (e.kind.as_str().to_string(), e.message.clone())),
        }
    }
}

#[cfg(any(feature = "http", feature = "warc"))]
impl FetchRecord {
    /// Keeps what the reports read from a response's headers: `header(name)`
    /// gives every value of the header `name` (lowercase) joined by `, `, and
    /// a `Link` header's canonical target is made absolute against `base`
    /// (none without a base). Fetched pages and WARC records fill a record
    /// alike.
    pub(crate) fn fill_headers(&mut self, header: impl Fn(&str) -> Option<String>, base: Option<&::url::Url>) {
        self.content_type = header("content-type");
        self.last_modified = header("last-modified");
        self.etag = header("etag");
        self.x_robots_tag = header("x-robots-tag");
        self.canonical = header("link").and_then(|l| canonical_link(&l, base?));
    }
}

/// The `rel="canonical"` target of a `Link` header, made absolute.
#[cfg(any(feature = "http", feature = "warc"))]
fn canonical_link(link: &str, base: &::url::Url) -> Option<String> {
    link.split(',').find_map(|part| {
        let (target, params) = part.trim().strip_prefix('<')?.split_once('>')?;
        let is_canonical = params.split(';').any(|p| {
            let Some((k, v)) = p.split_once('=') else {
                return false;
            };
            k.trim().eq_ignore_ascii_case("rel")
                && v.trim().trim_matches('"').split_whitespace().any(|r| r.eq_ignore_ascii_case("canonical"))
        });
        is_canonical.then(|| base.join(target.trim()).map_or_else(|_| target.trim().to_string(), |u| u.to_string()))
    })
}

/// A response body as a document, the one way for every page that came
/// over HTTP (fetched now or recorded in a WARC archive): the charset of the
/// `Content-Type` header, else the page's own declaration or a guess
/// ([`crate::decode::decode`]); `text/plain` is text, anything else HTML. A
/// body that is empty, binary or not text fails with
/// [`FetchErrorKind::Decode`] and the decoder's own [`DocErrorKind`].
#[cfg(any(feature = "http", feature = "warc"))]
pub(crate) fn decode_body(
    source: &Source,
    mut record: FetchRecord,
    body: Vec<u8>,
    content_type: Option<&str>,
) -> FetchOutcome {
    record.bytes = body.len() as u64;
    let charset = content_type.and_then(crate::decode::charset_from_content_type);
    let format = match content_type.map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase()) {
        Some(t) if t == "text/plain" => Format::Text,
        _ => Format::Html,
    };
    match crate::source::bytes_to_document(source, body, charset, format) {
        Ok(mut doc) => {
            doc.url = record.final_url.clone();
            FetchOutcome { record, document: Some(doc) }
        }
        Err(e) => {
            record.error = Some(FetchError { kind: FetchErrorKind::Decode, message: e.message, doc_kind: e.kind });
            FetchOutcome { record, document: None }
        }
    }
}

/// The inverse of [`millis`].
fn from_millis<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
    let ms = f64::deserialize(d)?;
    Ok(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default())
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

/// The result of fetching one URL.
#[derive(Debug, Clone)]
pub struct FetchOutcome {
    pub record: FetchRecord,
    /// The decoded page; `Some` exactly when `record.error` is `None`.
    pub document: Option<RawDocument>,
}

impl FetchOutcome {
    /// Splits the outcome into the metadata (to keep for reports) and what
    /// `engine::Corpus::build` consumes.
    pub fn into_parts(self) -> (FetchRecord, Result<RawDocument, DocError>) {
        let result = match (&self.record.error, self.document) {
            (None, Some(doc)) => Ok(doc),
            (Some(e), _) => Err(DocError::new(&self.record.id, self.record.key, e.doc_kind.clone(), e.to_string())),
            (None, None) => Err(DocError::new(
                &self.record.id,
                self.record.key,
                DocErrorKind::Fetch,
                "internal: no document and no error",
            )),
        };
        (self.record, result)
    }

    /// The document, or a [`DocError`] naming the reason (`http_status: HTTP 404 Not Found`).
    pub fn into_document(self) -> Result<RawDocument, DocError> {
        self.into_parts().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(any(feature = "http", feature = "warc"))]
    fn canonical_link_header() {
        let base = ::url::Url::parse("http://e.com/a/b").unwrap();
        let l = r#"<https://e.com/style.css>; rel="preload", </a/canon>; rel="canonical""#;
        assert_eq!(canonical_link(l, &base).as_deref(), Some("http://e.com/a/canon"));
        assert_eq!(canonical_link("<x>; rel=next", &base), None);
    }

    #[test]
    fn defaults_validate_and_bad_values_are_named() {
        let c = FetchConfig::default().validate().unwrap();
        assert!(c.user_agent.starts_with("webdup/"));
        assert!(!c.user_agent.contains("http"));
        let e = FetchConfig { concurrency: 0, ..Default::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("concurrency"), "{e}");
        let e = FetchConfig { content_types: vec![" ".into()], ..Default::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("content type"), "{e}");
        assert!(FetchConfig { user_agent: "a\nb".into(), ..Default::default() }.validate().is_err());
    }
}
