//! The index over HTTP: a small JSON API for crawlers that are not written
//! in Rust (`webdup serve`). Endpoints are listed in `openapi.yaml`.
//!
//! Safety rules: the server binds loopback by default; bound to any other
//! address it refuses to start without a bearer token
//! ([`ServeConfig::validate`]). When a token is set, every endpoint but
//! `/health` requires it, whatever the client's address, and it is checked
//! before a request body is read. Request bodies are capped
//! ([`ServeConfig::max_body_bytes`]); a malformed or oversized body is a 4xx
//! with a JSON error, and the server goes on serving.
//!
//! Hostile clients: [`serve`] closes a connection whose request headers take
//! longer than [`ServeConfig::header_timeout`] (idle keep-alive connections
//! too), answers 408 to a body that takes longer than
//! [`ServeConfig::body_timeout`], and holds at most
//! [`ServeConfig::max_connections`] connections (more are answered 503 and
//! closed), so slow sockets cannot starve the accept loop. After the shutdown
//! signal it waits at most [`ServeConfig::shutdown_grace`] for requests in
//! flight.
//!
//! Extraction and SQLite work runs on the router's own worker threads, with
//! [`crate::extract::EXTRACT_STACK`] stacks (extraction recurses over the
//! DOM), through a bounded queue: a full queue is a 503, and work whose
//! client went away before it started is skipped.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{DefaultBodyLimit, FromRequest, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use super::{Index, Page};
use crate::engine::{Config, Fingerprint, Fingerprinter};
use crate::error::Error as ConfigError;
use crate::extract::EXTRACT_STACK;
use crate::fetch::Hop;
use crate::source::{DocKey, Format, RawDocument};

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
    /// Most connections held open at once; further ones are answered 503
    /// and closed until some close.
    pub max_connections: usize,
    /// After the shutdown signal, how long requests in flight may take
    /// before their connections are dropped and [`serve`] returns.
    pub shutdown_grace: Duration,
    /// Threads that extract, fingerprint and query the index; 0 means one
    /// per core.
    pub workers: usize,
    /// Requests waiting for a worker beyond which new ones are answered 503.
    pub queue: usize,
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
        }
    }
}

impl ServeConfig {
    /// Refuses a non-loopback address without a token, empty tokens, and
    /// zero limits.
    pub fn validate(self) -> crate::Result<ServeConfig> {
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
        if self.max_connections == 0 || self.queue == 0 {
            return Err(ConfigError::Config("the connection limit and the queue must be greater than zero".into()));
        }
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
    fingerprinter: Fingerprinter,
    serve: ServeConfig,
    workers: Workers,
}

type Job = Box<dyn FnOnce() + Send>;

/// The threads that run extraction and SQLite work, off the async workers
/// and with stacks deep enough for extraction, whoever runs the router.
struct Workers {
    queue: SyncSender<Job>,
}

impl Workers {
    fn start(threads: usize, queue: usize) -> std::io::Result<Workers> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("webdup-serve-{i}"))
                .stack_size(EXTRACT_STACK)
                .spawn(move || work(&rx))?;
        }
        Ok(Workers { queue: tx })
    }

    /// Runs `f` on a worker. `f` is told whether the client is still there
    /// (false once the request was dropped); the job is skipped altogether
    /// when the client went away while it waited.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Fn() -> bool) -> T + Send + 'static,
    ) -> Result<T, Response> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            if tx.is_closed() {
                return;
            }
            let out = f(&|| !tx.is_closed());
            let _ = tx.send(out);
        });
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let mut r = failure(StatusCode::SERVICE_UNAVAILABLE, "the server is busy; retry shortly");
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return Err(r);
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err(failure(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"));
            }
        }
        rx.await.map_err(|_| internal("the request failed unexpectedly; see the server's log"))
    }
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            // The router is gone.
            Err(_) => return,
        };
        // A panic fails that request (its sender is dropped), not the worker.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}

/// The API's routes over `index`, for fingerprints made with `config`. The
/// router owns its worker threads (see the module documentation); they stop
/// when the router and its clones are dropped. Fails when the threads
/// cannot be started.
pub fn router(index: Arc<Index>, config: &Config, serve: &ServeConfig) -> std::io::Result<Router> {
    let service = Arc::new(Service {
        index,
        // Pages keep their metadata and main text, as `index add` stores them.
        fingerprinter: Fingerprinter::new(&Config { keep_pages: true, ..config.clone() }),
        serve: serve.clone(),
        workers: Workers::start(serve.worker_threads(), serve.queue)?,
    });
    let api = Router::new()
        .route("/v1/check", post(check))
        .route("/v1/pages", post(insert).get(lookup).delete(remove))
        .route("/v1/stats", get(stats))
        .route_layer(middleware::from_fn_with_state(service.clone(), authorize));
    Ok(Router::new()
        .route("/health", get(health))
        .merge(api)
        .fallback(|| async { failure(StatusCode::NOT_FOUND, "no such endpoint; see openapi.yaml") })
        .method_not_allowed_fallback(|| async {
            failure(StatusCode::METHOD_NOT_ALLOWED, "method not allowed on this endpoint; see openapi.yaml")
        })
        .layer(DefaultBodyLimit::max(serve.max_body_bytes))
        .with_state(service))
}

/// Serves `router` on `listener` until `shutdown` completes, with the
/// timeouts and connection limit of `config`. Then it stops accepting
/// connections, closes idle ones, lets the requests in flight finish for up
/// to [`ServeConfig::shutdown_grace`], and returns, dropping what is left.
/// (An insert cut off there is rolled back whole: the client got no answer.)
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    config: &ServeConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(config.header_timeout).keep_alive(true);
    let permits = Arc::new(tokio::sync::Semaphore::new(config.max_connections));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors or a connection reset before it was
                // accepted: back off a little rather than spin, and go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            connections.spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let http = http.clone();
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let _permit = permit;
            let connection = http.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = stop.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
            }
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(config.shutdown_grace, drained).await;
    connections.abort_all();
    Ok(())
}

/// Answers a connection over the limit with a 503 and closes it.
async fn refuse(mut stream: tokio::net::TcpStream) {
    let body = r#"{"error":"too many connections; retry shortly"}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         retry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
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
fn index_failure(e: super::Error) -> Response {
    use rusqlite::ErrorCode;
    match &e {
        super::Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
        {
            let mut r = failure(StatusCode::SERVICE_UNAVAILABLE, format!("{e}; retry shortly"));
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
        super::Error::InvalidPage(m) => failure(StatusCode::BAD_REQUEST, m.clone()),
        _ => internal(e),
    }
}

async fn authorize(State(s): State<Arc<Service>>, request: Request, next: Next) -> Response {
    if let Some(token) = &s.serve.token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// A page sent for checking or inserting: its URL and either HTML or text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageBody {
    url: String,
    html: Option<String>,
    text: Option<String>,
    crawl: Option<String>,
    final_url: Option<String>,
    status: Option<u16>,
    /// The responses before the final one, when the URL redirected.
    #[serde(default)]
    redirects: Vec<Hop>,
    canonical: Option<String>,
    title: Option<String>,
}

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

fn parse_body(body: Body) -> Result<PageBody, ApiError> {
    let bytes = body.0?;
    let page: PageBody = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("malformed JSON body: {e}")))?;
    if page.url.trim().is_empty() {
        return Err(ApiError(StatusCode::BAD_REQUEST, "\"url\" must not be empty".into()));
    }
    if page.html.is_some() == page.text.is_some() {
        return Err(ApiError(StatusCode::BAD_REQUEST, "give exactly one of \"html\" and \"text\"".into()));
    }
    Ok(page)
}

fn fingerprint(s: &Service, body: &PageBody) -> Result<Fingerprint, ApiError> {
    let mut fp = match (&body.html, &body.text) {
        // The same entrance as `index add`: main text and the page's own
        // metadata (description, h1, robots, canonical). The page budget
        // (depth, elements, attributes) is checked by the extractor itself,
        // before any parser runs.
        (Some(html), _) => s
            .fingerprinter
            .fingerprint_unsketched(RawDocument {
                id: body.url.clone(),
                key: DocKey(0),
                format: Format::Html,
                body: html.clone(),
                url: body.final_url.clone(),
            })
            .map_err(|e| {
                ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("{}: [{}] {}", body.url, e.kind, e.message))
            })?,
        (None, Some(text)) => {
            let mut fp = s
                .fingerprinter
                .shingle_text(body.url.clone(), DocKey(0), text, None, "none")
                .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
            // Stored with the page, for the diff view of `webdup audit --index`.
            fp.text = Some(text.clone());
            fp
        }
        (None, None) => unreachable!("checked by parse_body"),
    };
    // Its site's template, as the index's adds learned it (`index query`
    // applies it too), then the sketches.
    let template =
        s.index.template_for(&body.url).map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    s.fingerprinter.finish_alone(&mut fp, template.as_deref());
    if body.title.is_some() {
        fp.title = body.title.clone();
        if let Some(meta) = &mut fp.meta {
            meta.title = body.title.clone();
        }
    }
    Ok(fp)
}

/// Parses a page body, fingerprints it on a worker and hands both to `f`
/// there, unless the client went away in between.
async fn with_fingerprint(
    s: Arc<Service>,
    body: Body,
    f: impl FnOnce(&Service, &PageBody, Fingerprint) -> Response + Send + 'static,
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

async fn check(State(s): State<Arc<Service>>, body: Body) -> Response {
    with_fingerprint(s, body, |s, body, fp| match s.index.check(&fp) {
        Ok(result) => Json(serde_json::json!({
            "url": body.url,
            "seen": result.seen(),
            "exact": result.exact,
            "near": result.near,
            "candidates": result.candidates,
        }))
        .into_response(),
        Err(e) => index_failure(e),
    })
    .await
}

async fn insert(State(s): State<Arc<Service>>, body: Body) -> Response {
    with_fingerprint(s, body, |s, body, fp| {
        let crawl = body.crawl.clone().unwrap_or_else(|| s.serve.default_crawl.clone());
        // What the crawler saw of the exchange, merged with the page's own
        // markup by the one rule (the page's <link rel=canonical> wins).
        let exchange = webdup_core::page::Exchange {
            final_url: body.final_url.clone(),
            status: body.status,
            redirects: body.redirects.clone(),
            link_canonical: body.canonical.clone(),
            ..Default::default()
        };
        let page = Page::new(crawl.clone(), body.url.clone(), fp).with_fetch(exchange);
        match s.index.insert(&page) {
            Ok(id) => (StatusCode::CREATED, Json(serde_json::json!({ "id": id, "url": body.url, "crawl": crawl })))
                .into_response(),
            Err(e) => index_failure(e),
        }
    })
    .await
}

#[derive(Deserialize)]
struct UrlQuery {
    url: String,
}

fn parse_query(q: Result<Query<UrlQuery>, QueryRejection>) -> Result<String, ApiError> {
    q.map(|q| q.0.url)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("{}; pass ?url=URL (percent-encoded)", e.body_text())))
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
