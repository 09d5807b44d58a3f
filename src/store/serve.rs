//! The index over HTTP: a small JSON API for crawlers that are not written
//! in Rust (`webdup serve`). Endpoints are listed in `openapi.yaml`.
//!
//! Safety rules: the server binds loopback by default; bound to any other
//! address it refuses to start without a bearer token
//! ([`ServeConfig::validate`]). When a token is set, every endpoint but
//! `/health` requires it, whatever the client's address. Request bodies are
//! capped ([`ServeConfig::max_body_bytes`]); a malformed or oversized body is
//! a 4xx with a JSON error, and the server goes on serving.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::{Index, Page};
use crate::engine::{Config, Fingerprint, Fingerprinter};
use crate::error::Error as ConfigError;
use crate::extract;
use crate::fetch::Hop;

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
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            token: None,
            max_body_bytes: 4 << 20,
            default_crawl: "api".into(),
        }
    }
}

impl ServeConfig {
    /// Refuses a non-loopback address without a token, and empty tokens.
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
        Ok(self)
    }
}

struct Service {
    index: Arc<Index>,
    fingerprinter: Fingerprinter,
    config: Config,
    serve: ServeConfig,
}

/// The API's routes over `index`, for fingerprints made with `config`.
pub fn router(index: Arc<Index>, config: &Config, serve: &ServeConfig) -> Router {
    let service = Arc::new(Service {
        index,
        fingerprinter: Fingerprinter::new(config),
        config: config.clone(),
        serve: serve.clone(),
    });
    let api = Router::new()
        .route("/v1/check", post(check))
        .route("/v1/pages", post(insert).get(lookup).delete(remove))
        .route("/v1/stats", get(stats))
        .route_layer(middleware::from_fn_with_state(service.clone(), authorize));
    Router::new()
        .route("/health", get(health))
        .merge(api)
        .fallback(|| async { failure(StatusCode::NOT_FOUND, "no such endpoint; see openapi.yaml") })
        .layer(DefaultBodyLimit::max(serve.max_body_bytes))
        .with_state(service)
}

/// Serves `router` on `listener` until `shutdown` completes, then stops
/// accepting connections and lets the requests in flight finish (an insert
/// is never cut off half way).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await
}

#[derive(Serialize)]
struct ErrorBody {
    error: String,
}

fn failure(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(ErrorBody { error: message.into() })).into_response()
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
            r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
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

fn parse_body(body: Result<axum::body::Bytes, BytesRejection>) -> Result<PageBody, ApiError> {
    let bytes = body.map_err(|e| ApiError(e.status(), e.body_text()))?;
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
    let (text, title, extractor) = match (&body.html, &body.text) {
        (Some(html), _) => {
            let e = extract::extract(html, &s.config.extract)
                .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, format!("{}: {e}", body.url)))?;
            (e.text, e.title, e.extractor)
        }
        (None, Some(text)) => (text.clone(), None, "none"),
        (None, None) => unreachable!("checked by parse_body"),
    };
    let mut fp = s
        .fingerprinter
        .fingerprint_text(body.url.clone(), 0, &text, title, extractor)
        .map_err(|e| ApiError(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    if body.title.is_some() {
        fp.title = body.title.clone();
    }
    // Stored with the page, for the diff view of `webdup audit --index`.
    fp.text = Some(text);
    Ok(fp)
}

/// Runs blocking work (extraction, SQLite) off the async workers.
async fn blocking(s: Arc<Service>, f: impl FnOnce(&Service) -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(move || f(&s)).await.unwrap_or_else(internal)
}

/// Parses a page body, fingerprints it off the async workers and hands both to `f`.
async fn with_fingerprint(
    s: Arc<Service>,
    body: Result<axum::body::Bytes, BytesRejection>,
    f: impl FnOnce(&Service, &PageBody, Fingerprint) -> Response + Send + 'static,
) -> Response {
    let body = match parse_body(body) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    blocking(s, move |s| match fingerprint(s, &body) {
        Ok(fp) => f(s, &body, fp),
        Err(r) => r.into_response(),
    })
    .await
}

async fn check(State(s): State<Arc<Service>>, body: Result<axum::body::Bytes, BytesRejection>) -> Response {
    with_fingerprint(s, body, |s, body, fp| match s.index.check(&fp) {
        Ok(result) => Json(serde_json::json!({
            "url": body.url,
            "seen": result.seen(),
            "exact": result.exact,
            "near": result.near,
            "candidates": result.candidates,
        }))
        .into_response(),
        Err(e) => internal(e),
    })
    .await
}

async fn insert(State(s): State<Arc<Service>>, body: Result<axum::body::Bytes, BytesRejection>) -> Response {
    with_fingerprint(s, body, |s, body, fp| {
        let crawl = body.crawl.clone().unwrap_or_else(|| s.serve.default_crawl.clone());
        let mut page = Page::new(crawl.clone(), body.url.clone(), fp);
        page.final_url = body.final_url.clone();
        page.status = body.status;
        page.redirects = body.redirects.clone();
        page.meta.canonical = body.canonical.clone();
        match s.index.insert(&page) {
            Ok(id) => (StatusCode::CREATED, Json(serde_json::json!({ "id": id, "url": body.url, "crawl": crawl })))
                .into_response(),
            Err(super::Error::InvalidPage(m)) => failure(StatusCode::BAD_REQUEST, m),
            Err(e) => internal(e),
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
        Err(e) => internal(e),
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
        Err(e) => internal(e),
    })
    .await
}

async fn stats(State(s): State<Arc<Service>>) -> Response {
    blocking(s, |s| match s.index.stats() {
        Ok(st) => Json(st).into_response(),
        Err(e) => internal(e),
    })
    .await
}
