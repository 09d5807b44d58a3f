//! The index over HTTP: a small JSON API for crawlers that are not written
//! in Rust (`webdup serve`). Endpoints are listed in `openapi.yaml`.
//!
//! Safety rules: the server binds loopback by default; bound to any other
//! address it refuses to start without a bearer token
//! ([`ServeConfig::validate`]). When a token is set, every endpoint but
//! `/health` requires it, whatever the client's address, and it is checked
//! before a request body is read; the scheme is case-insensitive. Request
//! bodies are capped ([`ServeConfig::max_body_bytes`]); a malformed or
//! oversized body is a 4xx with a JSON error, and the server goes on serving.
//!
//! Browsers: with or without a token, a request a web page was made to send
//! is refused before anything else (the `guard` module): a `Host` that is
//! not the server's address or an [`ServeConfig::allowed_hosts`] name (421:
//! DNS rebinding), an `Origin` that is not the server's own or one of
//! [`ServeConfig::cors_origins`] (403: cross-origin requests), a `POST`
//! that is not `Content-Type: application/json` (415: forms). `/health` is
//! exempt.
//!
//! Hostile clients: [`serve`] closes a connection whose request headers take
//! longer than [`ServeConfig::header_timeout`] (idle keep-alive connections
//! too), answers 408 to a body that takes longer than
//! [`ServeConfig::body_timeout`], and holds at most
//! [`ServeConfig::max_connections`] connections, at most
//! [`ServeConfig::max_connections_per_ip`] from one address: at a limit the
//! connection that has waited longest for a request makes room, so sockets
//! that trickle headers cannot starve clients that send theirs at once, and
//! `/health` keeps a reserve of its own ([`HEALTH_RESERVE`]). After the
//! shutdown signal it waits at most [`ServeConfig::shutdown_grace`] for
//! requests in flight.
//!
//! Extraction and SQLite work runs on the router's own worker threads, with
//! [`crate::extract::EXTRACT_STACK`] stacks (extraction recurses over the
//! DOM), through a bounded queue: a full queue is a 503, and work whose
//! client went away before it started is skipped.
//!
//! Crawler fleets: `POST /v1/check-and-insert` checks and stores a page in
//! one write transaction ([`Index::check_and_insert`]), so of two crawlers
//! posting near copies at once exactly one hears that its page is new. The
//! `/batch` forms take up to [`MAX_BATCH_PAGES`] pages per request, spread
//! their extraction over the workers, and answer all or nothing: a batch
//! with a page that cannot be used is refused whole, naming every such page
//! by its index, and an inserting batch is stored in one transaction.
//! `GET /metrics` reports requests, latencies, pages checked and inserted,
//! and the index's size in the Prometheus text format.

// Handlers and their helpers return `Result<_, Response>`, the error being
// the answer itself: a refusal is made once per request, so its size (an
// HTTP response is large) costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, Query, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::crawler::{CrawledPage, Crawler, PageError};
use crate::engine::{Config, Fingerprint};
use crate::error::Error as ConfigError;
use crate::store::{CheckResult, Index, Page};

mod guard;
mod listen;
mod metrics;
mod workers;

pub use listen::{HEALTH_RESERVE, serve};
use metrics::Metrics;
use workers::{Workers, lost};

/// Most pages one batch request may hold; a larger batch is refused (413)
/// before any of its pages is looked at. The body size limit
/// ([`ServeConfig::max_body_bytes`]) applies to a batch's whole body too.
pub const MAX_BATCH_PAGES: usize = 1000;

/// Longest `url` (and `final_url`, `canonical`) a page may have, in bytes:
/// a stored URL must fit in a `GET /v1/pages?url=` request line once
/// percent-encoded (up to three bytes each), well within what HTTP servers
/// and clients accept. A longer one is refused (400) before anything is
/// stored, and a lookup of one is a 414.
pub const MAX_URL_BYTES: usize = crate::crawler::MAX_URL_BYTES;

/// Most worker threads [`ServeConfig::workers`] may ask for: each has a
/// [`crate::extract::EXTRACT_STACK`] stack, and far fewer already keep every core busy.
pub const MAX_WORKERS: usize = 1024;

/// The API's description, served at `/openapi.yaml` as it is in the
/// repository, so that the document and the server cannot disagree. It
/// lives in this crate (the top-level `openapi.yaml` links to it), so the
/// packaged crate builds.
const OPENAPI_YAML: &str = include_str!("../openapi.yaml");

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    /// Bearer token required on every endpoint but `/health`.
    pub token: Option<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Crawl name for inserts that give none.
    pub default_crawl: String,
    /// Longest wait for a request's headers, from the first byte of a new
    /// connection or the end of the previous response on a kept-alive one:
    /// a connection that sends nothing, or its headers too slowly, is closed.
    pub header_timeout: Duration,
    /// Longest wait for a request's whole body once its headers are in; a
    /// slower body (or a `Content-Length` larger than what is sent) is
    /// answered 408 and the connection closed.
    pub body_timeout: Duration,
    /// Most connections held open at once. At the limit a new connection
    /// takes the place of the one that has waited longest for a request;
    /// when all are busy it is answered 503 (but `/health`, see
    /// [`HEALTH_RESERVE`]) and closed.
    pub max_connections: usize,
    /// After the shutdown signal, how long requests in flight may take
    /// before their connections are dropped and [`serve`] returns.
    pub shutdown_grace: Duration,
    /// Threads that extract, fingerprint and query the index; 0 means one
    /// per core. At most [`MAX_WORKERS`].
    pub workers: usize,
    /// Requests waiting for a worker beyond which new ones are answered 503.
    pub queue: usize,
    /// Most connections one client address may hold; beyond it, the
    /// address's connection that has waited longest for a request is
    /// closed to make room (see [`serve`]).
    pub max_connections_per_ip: usize,
    /// Further names (or `name:port`s) clients may send in `Host`, besides
    /// the address the server is reached on (`--allow-host`): the name of
    /// this machine, or of a reverse proxy in front of it. A bare name
    /// takes any port.
    pub allowed_hosts: Vec<String>,
    /// Web origins (`https://app.example.com`) whose pages may call the
    /// API from a browser (`--cors`); every other origin is refused 403.
    pub cors_origins: Vec<String>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            token: None,
            max_body_bytes: 4 << 20,
            default_crawl: "api".into(),
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            max_connections: 512,
            shutdown_grace: Duration::from_secs(5),
            workers: 0,
            queue: 64,
            max_connections_per_ip: 256,
            allowed_hosts: Vec::new(),
            cors_origins: Vec::new(),
        }
    }
}

impl ServeConfig {
    /// Refuses a non-loopback address without a token, empty tokens, zero
    /// limits, more than [`MAX_WORKERS`] workers, and `allowed_hosts` or
    /// `cors_origins` that are not a host or an origin.
    pub fn validate(mut self) -> crate::Result<ServeConfig> {
        if let Some(t) = &self.token
            && (t.trim().is_empty() || t.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(ConfigError::Config("the token must be non-empty and contain no spaces".into()));
        }
        if !self.bind.ip().is_loopback() && self.token.is_none() {
            return Err(ConfigError::Config(format!(
                "{} is not a loopback address: anyone who can reach it could read and change the index; \
                 set a bearer token with --token or WEBDUP_TOKEN, or bind 127.0.0.1",
                self.bind
            )));
        }
        if self.max_body_bytes == 0 {
            return Err(ConfigError::Config("the body size limit must be greater than zero".into()));
        }
        if self.default_crawl.is_empty() {
            return Err(ConfigError::Config("the default crawl name must not be empty".into()));
        }
        for (name, d) in [
            ("header timeout", self.header_timeout),
            ("body timeout", self.body_timeout),
            ("shutdown grace period", self.shutdown_grace),
        ] {
            if d.is_zero() {
                return Err(ConfigError::Config(format!("the {name} must be greater than zero")));
            }
        }
        if self.max_connections == 0 || self.queue == 0 || self.max_connections_per_ip == 0 {
            return Err(ConfigError::Config("the connection limits and the queue must be greater than zero".into()));
        }
        if self.workers > MAX_WORKERS {
            return Err(ConfigError::Config(format!(
                "--workers {}: at most {MAX_WORKERS} worker threads (0: one per core)",
                self.workers
            )));
        }
        for host in &self.allowed_hosts {
            guard::allowed_host(host).map_err(ConfigError::Config)?;
        }
        self.cors_origins = self
            .cors_origins
            .iter()
            .map(|o| guard::cors_origin(o))
            .collect::<Result<_, _>>()
            .map_err(ConfigError::Config)?;
        Ok(self)
    }

    fn worker_threads(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        }
    }
}

struct Service {
    index: Arc<Index>,
    crawler: Crawler,
    serve: ServeConfig,
    workers: Workers,
    /// How many worker threads there are: a batch is cut into that many
    /// chunks.
    threads: usize,
    /// The paths the router serves, which label requests in `/metrics`
    /// (any other path is `other`, so that probes of random paths cannot
    /// grow the metrics without bound).
    routes: Vec<&'static str>,
    metrics: Metrics,
}

/// The API's routes over `index`, for fingerprints made with `config`. The
/// router owns its worker threads (see the module documentation); they stop
/// when the router and its clones are dropped. Fails when the threads
/// cannot be started.
pub fn router(index: Arc<Index>, config: &Config, serve: &ServeConfig) -> std::io::Result<Router> {
    // Every route but /health is behind the token. The one list also names
    // the routes for `/metrics`.
    let protected: Vec<(&'static str, MethodRouter<Arc<Service>>)> = vec![
        ("/v1/check", post(check)),
        ("/v1/check/batch", post(check_batch)),
        ("/v1/check-and-insert", post(check_and_insert)),
        ("/v1/check-and-insert/batch", post(check_and_insert_batch)),
        ("/v1/pages", post(insert).get(lookup).delete(remove)),
        ("/v1/pages/batch", post(insert_batch)),
        ("/v1/stats", get(stats)),
        ("/metrics", get(metrics)),
        ("/openapi.yaml", get(openapi)),
    ];
    let threads = serve.worker_threads();
    let service = Arc::new(Service {
        // Pages keep their metadata and main text, as `index add` stores them.
        crawler: Crawler::new(index.clone(), config, serve.default_crawl.clone()),
        index,
        serve: serve.clone(),
        workers: Workers::start(threads, serve.queue)?,
        threads,
        routes: std::iter::once("/health").chain(protected.iter().map(|(path, _)| *path)).collect(),
        metrics: Metrics::default(),
    });
    let api = protected
        .into_iter()
        .fold(Router::new(), |api, (path, route)| api.route(path, route))
        .route_layer(middleware::from_fn_with_state(service.clone(), authorize));
    Ok(Router::new()
        .route("/health", get(health))
        .merge(api)
        .fallback(|| async { failure(StatusCode::NOT_FOUND, "no such endpoint; see openapi.yaml") })
        .method_not_allowed_fallback(|| async {
            failure(StatusCode::METHOD_NOT_ALLOWED, "method not allowed on this endpoint; see openapi.yaml")
        })
        .layer(DefaultBodyLimit::max(serve.max_body_bytes))
        // Before the token and the routes: a request a web page was made to
        // send is refused whatever it asks.
        .layer(middleware::from_fn_with_state(Arc::new(guard::Guard::new(serve)), guard::guard))
        // Outermost, so that every answer is counted: refusals by the token
        // check, 404s and 413s too.
        .layer(middleware::from_fn_with_state(service.clone(), observe))
        .with_state(service))
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

fn failure(status: StatusCode, message: impl Into<String>) -> Response {
    let mut r = (status, Json(ErrorBody { error: message.into() })).into_response();
    if status == StatusCode::REQUEST_TIMEOUT {
        // The rest of the body may still come: the connection cannot be reused.
        r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

/// A 4xx/5xx answer, small enough to pass around in a `Result`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        failure(self.0, self.1)
    }
}

fn internal(e: impl std::fmt::Display) -> Response {
    failure(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

/// An index error as an answer: a write that waited out the busy timeout
/// (another process held the index) is a 503 the client may retry.
fn index_failure(e: crate::store::Error) -> Response {
    use rusqlite::ErrorCode;
    match &e {
        crate::store::Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
        {
            let mut r = failure(StatusCode::SERVICE_UNAVAILABLE, format!("{e}; retry shortly"));
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
        crate::store::Error::InvalidPage(m) => failure(StatusCode::BAD_REQUEST, m.clone()),
        _ => internal(e),
    }
}

async fn authorize(State(s): State<Arc<Service>>, request: Request, next: Next) -> Response {
    if let Some(token) = &s.serve.token {
        let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer);
        let ok = given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes()));
        if !ok {
            let mut r = failure(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            // The body, if any, is not read: the connection cannot be reused.
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    }
    next.run(request).await
}

/// The token of an `Authorization: Bearer TOKEN` header; the scheme is
/// case-insensitive (RFC 7235).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim_start())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// A page sent for checking or inserting: its URL and either HTML or text,
/// with what the crawler saw of the exchange ([`CrawledPage`], the entrance
/// the Python package shares).
type PageBody = CrawledPage;

/// The request body, read within [`ServeConfig::body_timeout`] and the
/// size limit, or the 4xx that says why not.
struct Body(Result<Bytes, ApiError>);

impl FromRequest<Arc<Service>> for Body {
    type Rejection = Infallible;

    async fn from_request(request: Request, s: &Arc<Service>) -> Result<Self, Infallible> {
        let read = tokio::time::timeout(s.serve.body_timeout, Bytes::from_request(request, s)).await;
        Ok(Body(match read {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) => Err(ApiError(e.status(), e.body_text())),
            Err(_) => Err(ApiError(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body did not arrive within {:?}", s.serve.body_timeout),
            )),
        }))
    }
}

fn malformed(e: serde_json::Error) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, format!("malformed JSON body: {e}"))
}

fn parse_body(body: Body) -> Result<PageBody, ApiError> {
    let bytes = body.0?;
    let page: PageBody = serde_json::from_slice(&bytes).map_err(malformed)?;
    page.validate().map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    Ok(page)
}

/// A batch request: pages as the single forms take them. They are kept as
/// JSON values until each is read on its own, so that a bad one is named by
/// its index rather than by a line and column.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchBody {
    pages: Vec<serde_json::Value>,
}

/// A page that makes its batch refused.
#[derive(Debug, Serialize)]
struct ItemFailure {
    /// Its position in the batch's `pages`, from 0.
    index: usize,
    url: Option<String>,
    error: String,
}

/// The answer to a refused batch: [`ErrorBody`]'s `error`, and every page
/// that made it refused, so that a crawler can drop or fix them all and
/// send the rest again in one more request.
#[derive(Serialize)]
struct BatchRefusal {
    error: String,
    failures: Vec<ItemFailure>,
}

fn refuse_batch(status: StatusCode, pages: usize, failures: Vec<ItemFailure>) -> Response {
    let first = &failures[0];
    let error = format!(
        "{} of the batch's {pages} pages cannot be used (the first, pages[{}]: {}); the batch was refused whole \
         and nothing was stored: drop or fix the pages listed in \"failures\" and send it again",
        failures.len(),
        first.index,
        first.error
    );
    (status, Json(BatchRefusal { error, failures })).into_response()
}

/// Reads a batch: its pages, or the 4xx that refuses it (413 over
/// [`MAX_BATCH_PAGES`], 400 naming every malformed page).
fn parse_batch(body: Body) -> Result<Vec<PageBody>, Response> {
    let bytes = body.0.map_err(IntoResponse::into_response)?;
    let batch: BatchBody = serde_json::from_slice(&bytes).map_err(|e| malformed(e).into_response())?;
    let total = batch.pages.len();
    if total > MAX_BATCH_PAGES {
        return Err(failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a batch holds at most {MAX_BATCH_PAGES} pages and this one has {total}; split it"),
        ));
    }
    let mut pages = Vec::with_capacity(total);
    let mut failures = Vec::new();
    for (index, value) in batch.pages.into_iter().enumerate() {
        let url = value.get("url").and_then(serde_json::Value::as_str).map(str::to_owned);
        let page = serde_json::from_value::<PageBody>(value).map_err(|e| e.to_string());
        match page.and_then(|p| p.validate().map_err(|e| e.to_string()).map(|()| p)) {
            Ok(p) => pages.push(p),
            Err(error) => failures.push(ItemFailure { index, url, error }),
        }
    }
    if !failures.is_empty() {
        return Err(refuse_batch(StatusCode::BAD_REQUEST, total, failures));
    }
    Ok(pages)
}

/// The row to store for a page (its fingerprint, what the crawler saw,
/// what the index learns the site's template from).
fn fingerprint(s: &Service, body: &PageBody) -> Result<Page, ApiError> {
    s.crawler.row(body).map_err(|e| match e {
        PageError::Invalid(m) => ApiError(StatusCode::BAD_REQUEST, m),
        PageError::Content { .. } => ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
        PageError::Index(e) => ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    })
}

/// Parses a page body, fingerprints it on a worker and hands both to `f`
/// there, unless the client went away in between.
async fn with_fingerprint(
    s: Arc<Service>,
    body: Body,
    f: impl FnOnce(&Service, &PageBody, Page) -> Response + Send + 'static,
) -> Response {
    let body = match parse_body(body) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    let service = s.clone();
    s.workers
        .run(move |connected| match fingerprint(&service, &body) {
            Ok(_) if !connected() => failure(StatusCode::REQUEST_TIMEOUT, "the client went away"),
            Ok(fp) => f(&service, &body, fp),
            Err(r) => r.into_response(),
        })
        .await
        .unwrap_or_else(|r| r)
}

/// Runs `f` on a worker.
async fn blocking(s: Arc<Service>, f: impl FnOnce(&Service) -> Response + Send + 'static) -> Response {
    let service = s.clone();
    s.workers.run(move |_| f(&service)).await.unwrap_or_else(|r| r)
}

/// What became of a batch's pages on one worker: `each`'s answers, in
/// order, unless some pages could not be fingerprinted.
struct Chunk<T> {
    done: Vec<T>,
    failures: Vec<ItemFailure>,
}

/// Fingerprints `pages` (those of a batch from `first` on) and hands each
/// with its fingerprint to `each`, on a worker. A page that cannot be
/// fingerprinted is a failure of the batch; a server failure (or the
/// client leaving) ends the chunk.
fn fingerprint_chunk<T>(
    s: &Service,
    first: usize,
    pages: &[PageBody],
    connected: &dyn Fn() -> bool,
    each: impl Fn(&Service, &PageBody, Page) -> Result<T, Response>,
) -> Result<Chunk<T>, Response> {
    let mut chunk = Chunk { done: Vec::with_capacity(pages.len()), failures: Vec::new() };
    for (i, body) in pages.iter().enumerate() {
        if !connected() {
            return Err(failure(StatusCode::REQUEST_TIMEOUT, "the client went away"));
        }
        match fingerprint(s, body) {
            Ok(fp) if chunk.failures.is_empty() => chunk.done.push(each(s, body, fp)?),
            // The batch is refused: the rest is only fingerprinted to name
            // every page that cannot be, not to check or store it.
            Ok(_) => {}
            Err(ApiError(status, error)) if status.is_client_error() => {
                chunk.failures.push(ItemFailure { index: first + i, url: Some(body.url.clone()), error });
            }
            Err(e) => return Err(e.into_response()),
        }
    }
    Ok(chunk)
}

/// Fingerprints a batch's pages on the workers, one contiguous chunk per
/// worker thread, and hands each page and its fingerprint to `each` there:
/// `each`'s answers in page order, or the batch's refusal (422 naming every
/// page without usable content, or the first server failure).
async fn fingerprint_batch<T, F>(s: &Arc<Service>, pages: Vec<PageBody>, each: F) -> Result<Vec<T>, Response>
where
    T: Send + 'static,
    F: Fn(&Service, &PageBody, Page) -> Result<T, Response> + Copy + Send + 'static,
{
    let total = pages.len();
    let chunk_len = total.div_ceil(s.threads.max(1)).max(1);
    let mut pages = pages.into_iter();
    let mut queued = Vec::new();
    let mut first = 0;
    while first < total {
        let chunk: Vec<PageBody> = pages.by_ref().take(chunk_len).collect();
        let service = s.clone();
        let at = first;
        first += chunk.len();
        // All chunks are queued before any is awaited, so they run side by
        // side; returning early drops the receivers, which cancels the
        // chunks not yet started.
        queued.push(s.workers.submit(move |connected| fingerprint_chunk(&service, at, &chunk, connected, each))?);
    }
    let mut done = Vec::with_capacity(total);
    let mut failures = Vec::new();
    for chunk in queued {
        let chunk = chunk.await.map_err(lost)??;
        done.extend(chunk.done);
        failures.extend(chunk.failures);
    }
    if !failures.is_empty() {
        return Err(refuse_batch(StatusCode::UNPROCESSABLE_ENTITY, total, failures));
    }
    Ok(done)
}

/// The fingerprint of a row made by [`Crawler::row`], which always has one.
fn content(page: &Page) -> &Fingerprint {
    page.fingerprint.as_ref().expect("Crawler::row gives every row its fingerprint")
}

/// The answer to a check: the page's URL, whether its content was seen
/// (exactly or nearly), and the matches.
#[derive(Serialize)]
struct Checked {
    url: String,
    seen: bool,
    #[serde(flatten)]
    result: CheckResult,
}

impl Checked {
    fn new(url: String, result: CheckResult) -> Checked {
        Checked { url, seen: result.seen(), result }
    }
}

/// The answer to an insert.
#[derive(Serialize)]
struct Inserted {
    id: i64,
    url: String,
    crawl: String,
}

impl Inserted {
    fn new(page: &Page, id: i64) -> Inserted {
        Inserted { id, url: page.record.url.clone(), crawl: page.record.crawl.clone() }
    }
}

/// The answer to a check-and-insert: the check (what the index held
/// before), the stored row, and `new`, the crawler's one question.
#[derive(Serialize)]
struct CheckedAndInserted {
    #[serde(flatten)]
    checked: Checked,
    id: i64,
    crawl: String,
    new: bool,
}

impl CheckedAndInserted {
    fn new(page: &Page, result: CheckResult, id: i64) -> CheckedAndInserted {
        let checked = Checked::new(page.record.url.clone(), result);
        CheckedAndInserted { new: !checked.seen, checked, id, crawl: page.record.crawl.clone() }
    }
}

/// A batch's answers, in the order of its pages.
#[derive(Serialize)]
struct Results<T> {
    results: Vec<T>,
}

async fn check(State(s): State<Arc<Service>>, body: Body) -> Response {
    with_fingerprint(s, body, |s, body, page| match s.index.check(content(&page)) {
        Ok(result) => {
            let checked = Checked::new(body.url.clone(), result);
            s.metrics.checked(1, u64::from(checked.seen));
            Json(checked).into_response()
        }
        Err(e) => index_failure(e),
    })
    .await
}

async fn insert(State(s): State<Arc<Service>>, body: Body) -> Response {
    with_fingerprint(s, body, |s, _, page| match s.index.insert(&page) {
        Ok(id) => {
            s.metrics.inserted(1);
            (StatusCode::CREATED, Json(Inserted::new(&page, id))).into_response()
        }
        Err(e) => index_failure(e),
    })
    .await
}

async fn check_and_insert(State(s): State<Arc<Service>>, body: Body) -> Response {
    with_fingerprint(s, body, |s, _, page| match s.index.check_and_insert(&page) {
        Ok((result, id)) => {
            let answer = CheckedAndInserted::new(&page, result, id);
            s.metrics.checked(1, u64::from(!answer.new));
            s.metrics.inserted(1);
            (StatusCode::CREATED, Json(answer)).into_response()
        }
        Err(e) => index_failure(e),
    })
    .await
}

/// Each page checked against the index alone (not against the batch's
/// other pages: nothing is stored), on the workers that fingerprint it.
async fn check_batch(State(s): State<Arc<Service>>, body: Body) -> Result<Response, Response> {
    let pages = parse_batch(body)?;
    let results = fingerprint_batch(&s, pages, |s, body, page| match s.index.check(content(&page)) {
        Ok(result) => Ok(Checked::new(body.url.clone(), result)),
        Err(e) => Err(index_failure(e)),
    })
    .await?;
    s.metrics.checked(results.len() as u64, results.iter().filter(|c| c.seen).count() as u64);
    Ok(Json(Results { results }).into_response())
}

/// The pages stored in one transaction, once all are fingerprinted.
async fn insert_batch(State(s): State<Arc<Service>>, body: Body) -> Result<Response, Response> {
    let pages = parse_batch(body)?;
    let pages = fingerprint_batch(&s, pages, |_, _, page| Ok(page)).await?;
    Ok(blocking(s, move |s| match s.index.insert_batch(&pages) {
        Ok(ids) => {
            s.metrics.inserted(pages.len() as u64);
            let results = pages.iter().zip(ids).map(|(page, id)| Inserted::new(page, id)).collect();
            (StatusCode::CREATED, Json(Results { results })).into_response()
        }
        Err(e) => index_failure(e),
    })
    .await)
}

/// Each page checked against the index and the batch's earlier pages, and
/// all stored, in one transaction.
async fn check_and_insert_batch(State(s): State<Arc<Service>>, body: Body) -> Result<Response, Response> {
    let pages = parse_batch(body)?;
    let pages = fingerprint_batch(&s, pages, |_, _, page| Ok(page)).await?;
    Ok(blocking(s, move |s| match s.index.check_and_insert_batch(&pages) {
        Ok(checked) => {
            let results: Vec<CheckedAndInserted> = pages
                .iter()
                .zip(checked)
                .map(|(page, (result, id))| CheckedAndInserted::new(page, result, id))
                .collect();
            s.metrics.checked(results.len() as u64, results.iter().filter(|r| !r.new).count() as u64);
            s.metrics.inserted(results.len() as u64);
            (StatusCode::CREATED, Json(Results { results })).into_response()
        }
        Err(e) => index_failure(e),
    })
    .await)
}

#[derive(Deserialize)]
struct UrlQuery {
    url: String,
}

fn parse_query(q: Result<Query<UrlQuery>, QueryRejection>) -> Result<String, ApiError> {
    let url = q.map(|q| q.0.url).map_err(|e| {
        ApiError(StatusCode::BAD_REQUEST, format!("{}; pass ?url=URL (percent-encoded)", e.body_text()))
    })?;
    if url.len() > MAX_URL_BYTES {
        return Err(ApiError(
            StatusCode::URI_TOO_LONG,
            format!("the url is {} bytes long; no stored URL is longer than {MAX_URL_BYTES}", url.len()),
        ));
    }
    Ok(url)
}

async fn lookup(State(s): State<Arc<Service>>, q: Result<Query<UrlQuery>, QueryRejection>) -> Response {
    let url = match parse_query(q) {
        Ok(u) => u,
        Err(r) => return r.into_response(),
    };
    blocking(s, move |s| match s.index.get(&url) {
        Ok(pages) if pages.is_empty() => failure(StatusCode::NOT_FOUND, format!("{url} is not in the index")),
        Ok(pages) => Json(serde_json::json!({ "url": url, "pages": pages })).into_response(),
        Err(e) => index_failure(e),
    })
    .await
}

async fn remove(State(s): State<Arc<Service>>, q: Result<Query<UrlQuery>, QueryRejection>) -> Response {
    let url = match parse_query(q) {
        Ok(u) => u,
        Err(r) => return r.into_response(),
    };
    blocking(s, move |s| match s.index.remove(&url) {
        Ok(0) => failure(StatusCode::NOT_FOUND, format!("{url} is not in the index")),
        Ok(n) => Json(serde_json::json!({ "url": url, "removed": n })).into_response(),
        Err(e) => index_failure(e),
    })
    .await
}

async fn stats(State(s): State<Arc<Service>>) -> Response {
    blocking(s, |s| match s.index.stats() {
        Ok(st) => Json(st).into_response(),
        Err(e) => index_failure(e),
    })
    .await
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/yaml"))], OPENAPI_YAML).into_response()
}

/// Counts and times every answer, labelled by route.
async fn observe(State(s): State<Arc<Service>>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let endpoint = s.routes.iter().copied().find(|route| *route == path).unwrap_or("other");
    let method = method_label(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    s.metrics.answered(endpoint, method, response.status(), started.elapsed());
    response
}

/// A request method as a label: the standard ones, and `other` for any
/// method a client makes up (each would otherwise be a new series).
fn method_label(method: &Method) -> &'static str {
    [Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::DELETE, Method::PATCH, Method::OPTIONS]
        .iter()
        .find(|m| *m == method)
        .map_or("other", Method::as_str)
}

/// `/metrics`: the counters, and the index's size read now. When the index
/// cannot be read (or the workers are all busy) the request metrics are
/// still served, with `webdup_index_up 0` and no index gauges: a scrape
/// should not fail when the server is under load, which is when it matters.
async fn metrics(State(s): State<Arc<Service>>) -> Response {
    let service = s.clone();
    let stats = s.workers.run(move |_| service.index.stats()).await.ok().and_then(Result::ok);
    let text = s.metrics.render(stats.as_ref());
    ([(header::CONTENT_TYPE, HeaderValue::from_static(PROMETHEUS_TEXT))], text).into_response()
}

/// The content type of the Prometheus text exposition format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
