//! The HTTP side: scheduling, politeness, retries, redirects, bodies.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ::url::Url;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore, mpsc};

use super::cache::Cache;
use super::policy::{FetchPolicy, PublicResolver, Reached, Trust};
use super::response::{
    classify, entry_of, entry_result, fill_from_entry, fill_from_headers, page_body, retry_after, status_error,
    too_large,
};
use super::robots::{self, Rules};
use super::sitemap::{self, Kind, MAX_SITEMAP_BYTES};
use super::url::{UrlError, normalize, normalize_url, origin_key};
use super::{FetchConfig, FetchError, FetchErrorKind, FetchOutcome, FetchRecord, Hop};
use crate::error::{DocError, DocErrorKind, Error, Result};
use crate::render::RenderMode;
use crate::render::pool::Renderer;
use crate::source::{self, Location, Source};
use webdup_core::DocKey;
use webdup_core::progress::Progress;

/// RFC 9309 asks crawlers to read at least 500 KiB of robots.txt; the rest is ignored.
const MAX_ROBOTS_BYTES: u64 = 512 << 10;
/// RFC 9309: follow at least five redirects for robots.txt.
const MAX_ROBOTS_REDIRECTS: usize = 5;
/// Bounds on sitemap expansion, so a cyclic or huge index always ends.
const MAX_SITEMAP_DEPTH: usize = 4;
const MAX_SITEMAPS: usize = 1_000;
const MAX_SITEMAP_URLS: usize = 1_000_000;

/// Fetches pages; see the [module documentation](super) for the behaviour.
///
/// State shared across calls (robots.txt rules, per-origin timing) lives as
/// long as the fetcher, so robots.txt is fetched once per origin even when
/// sitemaps are expanded before the pages are fetched.
pub struct Fetcher {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    /// For [`Trust::Named`] URLs (and everything with `allow_internal`).
    client: reqwest::Client,
    /// For [`Trust::Public`] URLs: connects only to public addresses.
    public: reqwest::Client,
    pub(super) policy: FetchPolicy,
    /// Sitemap entries found on another origin than the user named: they
    /// are fetched as [`Trust::Public`], not as named inputs. Hashes of
    /// the normalized URLs, so a million entries cost a few MB.
    reached: Mutex<HashSet<u64>>,
    pub(super) config: FetchConfig,
    agent: String,
    hosts: Mutex<HashMap<String, Arc<Host>>>,
    cache: Option<Cache>,
    /// With [`FetchConfig::render`] on: the browser's tabs.
    pub(super) renderer: Option<Renderer>,
}

/// Per-origin politeness state.
struct Host {
    slots: Arc<Semaphore>,
    next_start: Mutex<Instant>,
    robots: OnceCell<Arc<Rules>>,
}

/// What a sitemap expanded into.
#[derive(Debug, Default)]
pub struct Expansion {
    /// Page URLs, in sitemap order, duplicates removed.
    pub urls: Vec<String>,
    /// Sitemaps that could not be read, one error each (id: the sitemap's location).
    pub errors: Vec<DocError>,
}

/// Which rules a request follows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Page,
    Robots,
    Sitemap,
    /// A script, stylesheet or XHR a rendered page asked for: any content
    /// type, up to the page size limit, never cached.
    Subresource,
}

/// One response, with its body when it was wanted and allowed.
pub(super) struct Response {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Option<Vec<u8>>,
}

struct Job {
    source: Source,
    url: Url,
    duplicates: Vec<String>,
}

impl Fetcher {
    /// Builds the HTTP client and the runtime. Fails only on an unusable
    /// configuration or cache directory. Must not be called from inside an
    /// async runtime (it owns one).
    pub fn new(config: FetchConfig) -> Result<Fetcher> {
        let config = config.validate()?;
        let mut rt = tokio::runtime::Builder::new_multi_thread();
        if config.threads > 0 {
            rt.worker_threads(config.threads);
        }
        let runtime = rt.enable_all().thread_name("webdup-fetch").build().map_err(Error::Output)?;
        let builder = || {
            reqwest::Client::builder()
                .user_agent(config.user_agent.clone())
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(config.connect_timeout)
                .timeout(config.timeout)
                .pool_max_idle_per_host(config.per_host.max(1))
        };
        let build = |b: reqwest::ClientBuilder| {
            b.build().map_err(|e| Error::Config(format!("cannot build the HTTP client: {e}")))
        };
        let (client, public) = {
            let _guard = runtime.enter();
            // Two clients, so a connection opened to a named internal host
            // is never pooled for a public URL.
            (build(builder())?, build(builder().dns_resolver(Arc::new(PublicResolver)))?)
        };
        let policy = FetchPolicy { allow_internal: config.allow_internal };
        let cache = match &config.cache_dir {
            Some(dir) => {
                Some(Cache::open(dir).map_err(|e| Error::Input { path: dir.display().to_string(), source: e })?)
            }
            None => None,
        };
        let agent = robots::product_token(&config.user_agent).to_ascii_lowercase();
        let renderer = (config.render.mode != RenderMode::Off).then(|| Renderer::new(config.render.clone()));
        let inner = Inner {
            renderer,
            client,
            public,
            policy,
            reached: Mutex::new(HashSet::new()),
            config,
            agent,
            hosts: Mutex::new(HashMap::new()),
            cache,
        };
        Ok(Fetcher { runtime, inner: Arc::new(inner) })
    }

    /// Fetches every source and returns the outcomes in input order. Holds
    /// every body in memory; for large runs use [`Fetcher::for_each`].
    pub fn fetch_all(&self, sources: Vec<Source>, progress: &dyn Progress) -> Vec<FetchOutcome> {
        let mut out = Vec::with_capacity(sources.len());
        self.for_each(sources, progress, |o| out.push(o));
        out.sort_by_key(|o| o.record.key);
        out
    }

    /// Fetches every source and calls `f` with each outcome as it completes
    /// (not in input order), on the calling thread. Sources that normalize to
    /// a URL already seen are not fetched again: they appear in the first
    /// one's [`FetchRecord::duplicates`] and get no outcome of their own.
    /// Non-URL sources get an `invalid_url` outcome.
    pub fn for_each(&self, sources: Vec<Source>, progress: &dyn Progress, mut f: impl FnMut(FetchOutcome)) {
        let (jobs, rejected) = plan(sources, self.inner.config.keep_query);
        progress.start("fetch", (jobs.len() + rejected.len()) as u64);
        for o in rejected {
            f(o);
            progress.advance(1);
        }
        let capacity = self.inner.config.concurrency;
        let (tx, mut rx) = mpsc::channel::<FetchOutcome>(capacity);
        let inner = self.inner.clone();
        self.runtime.spawn(dispatch(inner, jobs, tx));
        while let Some(o) = rx.blocking_recv() {
            f(o);
            progress.advance(1);
        }
        progress.finish();
    }

    /// Marks `url` (normalized) as reached from a page rather than named by
    /// the user: it is fetched as [`Trust::Public`], so a crawl that leaves
    /// the origins the user named reaches public addresses only.
    pub(crate) fn reach(&self, url: &Url) {
        self.inner.reached.lock().unwrap_or_else(|e| e.into_inner()).insert(url_hash(url.as_str()));
    }

    /// Expands a sitemap (a local file or an http(s) URL; a sitemap index is
    /// followed recursively, within fixed bounds) into page URLs.
    pub fn expand_sitemap(&self, location: &str) -> Expansion {
        self.runtime.block_on(self.inner.clone().expand_sitemap(location.to_string()))
    }
}

/// Normalizes and deduplicates sources, interleaving origins round-robin so
/// a site with many URLs does not hold every slot while others wait.
fn plan(sources: Vec<Source>, keep_query: bool) -> (Vec<Job>, Vec<FetchOutcome>) {
    let mut rejected = Vec::new();
    let mut by_url: HashMap<String, (usize, usize)> = HashMap::new();
    let mut queues: Vec<VecDeque<Job>> = Vec::new();
    let mut origin_index: HashMap<String, usize> = HashMap::new();
    for source in sources {
        let raw = match &source.location {
            Location::Url(u) => u.clone(),
            Location::File(p) => {
                let e =
                    FetchError::new(FetchErrorKind::InvalidUrl, format!("{} is a local file, not a URL", p.display()));
                rejected.push(failed(&source, None, e));
                continue;
            }
        };
        let url = match normalize(&raw, keep_query) {
            Ok(u) => u,
            Err(e) => {
                let kind = match e {
                    UrlError::Scheme(_) => FetchErrorKind::Scheme,
                    UrlError::Invalid(_) => FetchErrorKind::InvalidUrl,
                };
                rejected.push(failed(&source, None, FetchError::new(kind, format!("{e}: {raw}"))));
                continue;
            }
        };
        if let Some(&(q, i)) = by_url.get(url.as_str()) {
            queues[q][i].duplicates.push(source.id);
            continue;
        }
        let origin = origin_key(&url);
        let q = *origin_index.entry(origin).or_insert_with(|| {
            queues.push(VecDeque::new());
            queues.len() - 1
        });
        by_url.insert(url.to_string(), (q, queues[q].len()));
        queues[q].push_back(Job { source, url, duplicates: Vec::new() });
    }
    let total = queues.iter().map(VecDeque::len).sum();
    let mut jobs = Vec::with_capacity(total);
    while jobs.len() < total {
        for q in queues.iter_mut() {
            if let Some(j) = q.pop_front() {
                jobs.push(j);
            }
        }
    }
    (jobs, rejected)
}

fn failed(source: &Source, url: Option<&Url>, error: FetchError) -> FetchOutcome {
    let mut record = empty_record(source, url);
    record.error = Some(error);
    FetchOutcome { record, document: None }
}

pub(super) fn empty_record(source: &Source, url: Option<&Url>) -> FetchRecord {
    FetchRecord {
        id: source.id.clone(),
        key: source.key,
        url: url.map(Url::to_string),
        final_url: None,
        status: None,
        chain: Vec::new(),
        content_type: None,
        last_modified: None,
        etag: None,
        canonical: None,
        x_robots_tag: None,
        bytes: 0,
        elapsed: Duration::ZERO,
        from_cache: false,
        duplicates: Vec::new(),
        error: None,
        rendered: false,
        shell: false,
    }
}

/// Starts one task per job, never more than `concurrency` at once. The
/// permit is held until the outcome is handed over, which is what bounds
/// memory when the consumer is slower than the network.
async fn dispatch(inner: Arc<Inner>, jobs: Vec<Job>, tx: mpsc::Sender<FetchOutcome>) {
    let global = Arc::new(Semaphore::new(inner.config.concurrency));
    for job in jobs {
        let Ok(permit) = global.clone().acquire_owned().await else {
            return;
        };
        let inner = inner.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let source = job.source.clone();
            let url = job.url.clone();
            let duplicates = job.duplicates.clone();
            // A panic in one fetch becomes that URL's error, not a lost URL.
            let outcome = match tokio::spawn(async move {
                let url = job.url.clone();
                let outcome = inner.fetch_job(job).await;
                inner.render_page(&url, outcome).await
            })
            .await
            {
                Ok(o) => o,
                Err(e) => {
                    let mut o = failed(&source, Some(&url), FetchError::new(FetchErrorKind::Internal, e.to_string()));
                    o.record.duplicates = duplicates;
                    o
                }
            };
            let _ = tx.send(outcome).await;
            drop(permit);
        });
    }
}

impl Inner {
    fn host(&self, url: &Url) -> Arc<Host> {
        let key = origin_key(url);
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        hosts
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Host {
                    slots: Arc::new(Semaphore::new(self.config.per_host)),
                    next_start: Mutex::new(Instant::now()),
                    robots: OnceCell::new(),
                })
            })
            .clone()
    }

    /// The trust of a URL handed to [`Fetcher::for_each`]: named by the
    /// user, unless a sitemap on another origin listed it.
    pub(super) fn trust_of(&self, url: &Url) -> Trust {
        let reached = self.reached.lock().unwrap_or_else(|e| e.into_inner());
        if !reached.is_empty() && reached.contains(&url_hash(url.as_str())) {
            Trust::Public
        } else {
            Trust::Named(origin_key(url))
        }
    }

    /// True if every hop of a recorded redirect chain from `start` passes
    /// the policy (hosts written as addresses; names are not resolved).
    fn chain_allowed(&self, start: &Url, mut trust: Trust, chain: &[Hop]) -> bool {
        if trust == Trust::Public && self.policy.check_public(start).is_err() {
            return false;
        }
        let mut current = start.clone();
        for hop in chain.iter().skip(1) {
            let Ok(next) = Url::parse(&hop.url) else {
                return false;
            };
            match self.policy.check(&next, Reached::From { from: &current, trust: &trust }) {
                Ok(t) => trust = t,
                Err(_) => return false,
            }
            current = next;
        }
        true
    }

    async fn fetch_job(&self, job: Job) -> FetchOutcome {
        let start = Instant::now();
        let mut record = empty_record(&job.source, Some(&job.url));
        record.duplicates = job.duplicates;
        let key = job.url.as_str();
        let trust = self.trust_of(&job.url);
        let cached = match &self.cache {
            Some(cache) => tokio::task::block_in_place(|| cache.get(key)),
            None => None,
        };
        // A page cached by a run without this policy, or with
        // --allow-internal, is fetched again unless its chain passes now.
        let cached = cached.filter(|(entry, _)| self.chain_allowed(&job.url, trust.clone(), &entry.chain));
        let result = if let Some((entry, body)) = cached {
            record.from_cache = true;
            fill_from_entry(&mut record, &entry);
            record.bytes = body.len() as u64;
            entry_result(&entry, body)
        } else {
            let r = self.follow(&job.url, Purpose::Page, &mut record, trust).await;
            if let (Some(cache), Ok(resp)) = (&self.cache, &r) {
                let cacheable = resp.status.is_success() && resp.body.is_some()
                    || resp.status.is_client_error() && !matches!(resp.status.as_u16(), 408 | 429);
                if cacheable {
                    let body = resp.body.as_deref().unwrap_or_default();
                    let entry = entry_of(&record, key, body.len() as u64);
                    // A cache that cannot be written only costs a re-fetch next time.
                    let _ = tokio::task::block_in_place(|| cache.put(&entry, body));
                }
            }
            r.and_then(page_body)
        };
        let outcome = match result {
            Ok((body, content_type)) => super::decode_body(&job.source, record, body, content_type.as_deref()),
            Err(e) => {
                record.error = Some(e);
                FetchOutcome { record, document: None }
            }
        };
        let mut outcome = outcome;
        outcome.record.elapsed = start.elapsed();
        outcome
    }

    /// Follows redirects from `url`, fetched with `trust` (which the caller
    /// got from [`FetchPolicy::check`]), checking every hop against the
    /// policy and robots.txt (for pages and sitemaps), recording every
    /// response in `record`.
    pub(super) async fn follow(
        &self,
        url: &Url,
        purpose: Purpose,
        record: &mut FetchRecord,
        mut trust: Trust,
    ) -> Result<Response, FetchError> {
        let max = if purpose == Purpose::Robots { MAX_ROBOTS_REDIRECTS } else { self.config.max_redirects };
        let mut current = url.clone();
        let mut seen: HashSet<String> = HashSet::new();
        seen.insert(current.to_string());
        loop {
            if trust == Trust::Public {
                self.policy
                    .check_public(&current)
                    .map_err(|r| FetchError::new(FetchErrorKind::InternalAddress, format!("{current}: {r}")))?;
            }
            if purpose != Purpose::Robots && !self.config.ignore_robots {
                let rules = self.robots(&current, &trust).await;
                rules
                    .check(current.as_str())
                    .map_err(|why| FetchError::new(FetchErrorKind::Robots, format!("{why}: {current}")))?;
            }
            let (resp, permit) = match self.request(&current, &trust).await {
                Err(e) if e.kind == FetchErrorKind::InternalAddress && record.chain.is_empty() => {
                    return Err(FetchError::new(e.kind, format!("{current}: {}", e.message)));
                }
                Err(e) if e.kind == FetchErrorKind::InternalAddress => {
                    let from = record.final_url.as_deref().unwrap_or_default();
                    return Err(FetchError::new(e.kind, format!("redirect to {current} (from {from}): {}", e.message)));
                }
                r => r?,
            };
            let status = resp.status();
            record.chain.push(Hop { url: current.to_string(), status: status.as_u16() });
            record.final_url = Some(current.to_string());
            record.status = Some(status.as_u16());
            fill_from_headers(record, resp.headers(), &current);
            if !status.is_redirection() || status == StatusCode::NOT_MODIFIED {
                // The origin's slot is held until the body is read.
                let result = self.read(resp, purpose).await;
                drop(permit);
                return result;
            }
            let Some(location) = resp.headers().get(header::LOCATION).and_then(|v| v.to_str().ok()) else {
                return Err(FetchError::new(
                    FetchErrorKind::HttpStatus,
                    format!("HTTP {status} without a Location header"),
                ));
            };
            let next = current
                .join(location.trim())
                .map_err(|e| {
                    FetchError::new(FetchErrorKind::InvalidUrl, format!("bad redirect target {location:?}: {e}"))
                })
                .and_then(|u| {
                    normalize_url(u, self.config.keep_query).map_err(|e| {
                        let kind = if matches!(e, UrlError::Scheme(_)) {
                            FetchErrorKind::Scheme
                        } else {
                            FetchErrorKind::InvalidUrl
                        };
                        FetchError::new(kind, format!("redirect to {location}: {e}"))
                    })
                })?;
            trust = self.policy.check(&next, Reached::From { from: &current, trust: &trust }).map_err(|r| {
                FetchError::new(FetchErrorKind::InternalAddress, format!("redirect to {r} ({next}, from {current})"))
            })?;
            if !seen.insert(next.to_string()) {
                return Err(FetchError::new(
                    FetchErrorKind::RedirectLoop,
                    format!("redirect loop: {current} leads back to {next} after {} hops", record.chain.len()),
                ));
            }
            if record.chain.len() > max {
                return Err(FetchError::new(
                    FetchErrorKind::TooManyRedirects,
                    format!("more than {max} redirects (stopped at {next})"),
                ));
            }
            current = next;
        }
    }

    /// The robots.txt rules of `url`'s origin, fetched on first use.
    /// `trust` is the page's: robots.txt is on the page's origin.
    async fn robots(&self, url: &Url, trust: &Trust) -> Arc<Rules> {
        let host = self.host(url);
        host.robots.get_or_init(|| self.fetch_robots(url.clone(), trust.clone())).await.clone()
    }

    /// Boxed because robots.txt is fetched through [`Inner::follow`], which
    /// itself asks for robots rules: the future would otherwise contain itself.
    fn fetch_robots(&self, url: Url, trust: Trust) -> Pin<Box<dyn Future<Output = Arc<Rules>> + Send + '_>> {
        Box::pin(async move {
            let Ok(robots_url) = url.join("/robots.txt") else {
                return Arc::new(Rules::AllowAll);
            };
            let mut record = empty_record(
                &Source { id: String::new(), key: DocKey(0), location: Location::Url(String::new()) },
                None,
            );
            let rules = match self.follow(&robots_url, Purpose::Robots, &mut record, trust).await {
                Ok(r) if r.status.is_success() => Rules::parse(&self.agent, r.body.as_deref().unwrap_or_default()),
                Ok(r) if r.status.is_server_error() || r.status == StatusCode::TOO_MANY_REQUESTS => {
                    Rules::DisallowAll(format!(
                        "robots.txt unavailable (HTTP {}); RFC 9309 asks to assume everything disallowed",
                        r.status.as_u16()
                    ))
                }
                // RFC 9309 2.3.1.4: robots.txt unreachable through a server or
                // network error (a server that accepts the connection, then
                // times out or breaks it) means complete disallow.
                Err(e) if matches!(e.kind, FetchErrorKind::Timeout | FetchErrorKind::Body) => Rules::DisallowAll(
                    format!("robots.txt unreachable ({e}); RFC 9309 asks to assume everything disallowed"),
                ),
                // 4xx, too many redirects: no rules. A host that cannot be
                // reached at all (DNS, refused) is reported by the page
                // request itself, under its own error kind.
                _ => Rules::AllowAll,
            };
            Arc::new(rules)
        })
    }

    fn delay_for(&self, host: &Host) -> Duration {
        let crawl = if self.config.ignore_robots { None } else { host.robots.get().and_then(|r| r.crawl_delay()) };
        crawl.map_or(self.config.delay, |c| c.max(self.config.delay))
    }

    /// One request with retries. The per-origin slot is held from the send
    /// until the body is read, and given back while waiting to retry.
    async fn request(&self, url: &Url, trust: &Trust) -> Result<(reqwest::Response, OwnedSemaphorePermit), FetchError> {
        let host = self.host(url);
        let client = if *trust == Trust::Public && !self.policy.allow_internal { &self.public } else { &self.client };
        let mut attempt = 0u32;
        loop {
            let permit = host
                .slots
                .clone()
                .acquire_owned()
                .await
                .map_err(|e| FetchError::new(FetchErrorKind::Internal, e.to_string()))?;
            let delay = self.delay_for(&host);
            // Consulted even without a delay: a Retry-After pushes it forward.
            let start = {
                let mut next = host.next_start.lock().unwrap_or_else(|e| e.into_inner());
                let start = (*next).max(Instant::now());
                *next = start + delay;
                start
            };
            if start > Instant::now() {
                tokio::time::sleep_until(start.into()).await;
            }
            let retry_wait = match client.get(url.clone()).send().await {
                Err(e) => {
                    let err = classify(&e);
                    if attempt < self.config.retries
                        && matches!(err.kind, FetchErrorKind::Connect | FetchErrorKind::Dns)
                    {
                        self.backoff(attempt)
                    } else {
                        return Err(err);
                    }
                }
                Ok(resp) => {
                    let status = resp.status();
                    let retryable = status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS;
                    let wait = retry_after(resp.headers()).unwrap_or_else(|| self.backoff(attempt));
                    if retryable && attempt < self.config.retries && wait <= self.config.max_retry_wait {
                        // The whole origin waits, not just this URL.
                        let mut next = host.next_start.lock().unwrap_or_else(|e| e.into_inner());
                        *next = (*next).max(Instant::now() + wait);
                        wait
                    } else {
                        return Ok((resp, permit));
                    }
                }
            };
            drop(permit);
            tokio::time::sleep(retry_wait).await;
            attempt += 1;
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        self.config.backoff.saturating_mul(1u32 << attempt.min(16)).min(self.config.max_retry_wait)
    }

    /// Reads the body of a success when it is wanted: pages only of a kept
    /// content type and within the size limit, counted while streaming.
    async fn read(&self, mut resp: reqwest::Response, purpose: Purpose) -> Result<Response, FetchError> {
        let status = resp.status();
        let headers = resp.headers().clone();
        if !status.is_success() {
            return Ok(Response { status, headers, body: None });
        }
        let (limit, truncate) = match purpose {
            Purpose::Page | Purpose::Subresource => (self.config.max_bytes, false),
            Purpose::Robots => (MAX_ROBOTS_BYTES, true),
            Purpose::Sitemap => (MAX_SITEMAP_BYTES, false),
        };
        if purpose == Purpose::Page {
            if let Some(ct) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
                let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
                if !self.config.content_types.contains(&essence) {
                    return Err(FetchError::new(
                        FetchErrorKind::WrongType,
                        format!("content type {essence} is not kept"),
                    ));
                }
            }
            // Only trust Content-Length when the body is not content-encoded.
            if !headers.contains_key(header::CONTENT_ENCODING) && resp.content_length().is_some_and(|n| n > limit) {
                return Err(too_large(limit));
            }
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() as u64 + chunk.len() as u64 > limit {
                        if truncate {
                            body.extend_from_slice(&chunk[..(limit as usize).saturating_sub(body.len())]);
                            break;
                        }
                        return Err(too_large(limit));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(classify(&e)),
            }
        }
        Ok(Response { status, headers, body: Some(body) })
    }

    async fn expand_sitemap(self: Arc<Self>, location: String) -> Expansion {
        let mut out = Expansion::default();
        // Hashes, not the URLs again: a million entries are kept once, in `out`.
        let mut seen_urls: HashSet<u128> = HashSet::new();
        let mut seen_maps = HashSet::new();
        // A remote sitemap's trust; `None` for one the user named (on the
        // command line or in a local index).
        let mut queue: VecDeque<(String, usize, Option<Trust>)> = VecDeque::from([(location, 0usize, None)]);
        while let Some((loc, depth, trust)) = queue.pop_front() {
            if !seen_maps.insert(loc.clone()) {
                continue;
            }
            if seen_maps.len() > MAX_SITEMAPS {
                out.errors.push(DocError::new(
                    &loc,
                    DocKey(0),
                    DocErrorKind::Fetch,
                    format!("more than {MAX_SITEMAPS} sitemaps; the rest are skipped"),
                ));
                break;
            }
            let is_url = source::is_url(&loc);
            // The sitemap's own URL and trust, when it is remote.
            let mut remote: Option<(Url, Trust)> = None;
            let bytes = if is_url {
                match normalize(&loc, true) {
                    Ok(url) => {
                        let trust = trust.unwrap_or_else(|| Trust::Named(origin_key(&url)));
                        let b = self.fetch_sitemap_bytes(&loc, &url, trust.clone()).await;
                        remote = Some((url, trust));
                        b
                    }
                    Err(e) => Err(DocError::new(&loc, DocKey(0), DocErrorKind::Fetch, format!("invalid_url: {e}"))),
                }
            } else {
                tokio::task::block_in_place(|| source::read_bounded(Path::new(&loc), MAX_SITEMAP_BYTES))
                    .map_err(|e| DocError::new(&loc, DocKey(0), DocErrorKind::Io, format!("cannot read sitemap: {e}")))
            };
            // A first pass checks the whole file, so a broken sitemap gives
            // an error and no entries, as it always did; the second reads
            // the entries one at a time.
            let checked = bytes.and_then(|b| {
                sitemap::parse_each(&b, |_, _| {})
                    .map(|kind| (b, kind))
                    .map_err(|e| DocError::new(&loc, DocKey(0), DocErrorKind::Fetch, format!("sitemap: {e}")))
            });
            let (bytes, map_kind) = match checked {
                Ok(b) => b,
                Err(e) => {
                    out.errors.push(e);
                    continue;
                }
            };
            let mut not_urls = (0usize, String::new());
            let mut internal = 0usize;
            let mut full = false;
            let _ = sitemap::parse_each(&bytes, |kind, entry| {
                // A sitemap names web pages, and a remote one names only web
                // addresses: a local path in a document from a server would
                // make webdup read this machine's files on the server's say-so.
                let entry_is_url = source::is_url(entry);
                let local_child = !is_url && kind == Kind::Index && !entry.contains(':');
                if !entry_is_url && !local_child {
                    if not_urls.0 == 0 {
                        not_urls.1 = entry.chars().take(200).collect();
                    }
                    not_urls.0 += 1;
                    return;
                }
                // An entry of a remote sitemap is reached from it: the
                // policy decides whether it may be fetched, and how.
                let mut entry_trust = None;
                if let (Some((map_url, map_trust)), true) = (&remote, entry_is_url) {
                    let keep_query = kind == Kind::Index || self.config.keep_query;
                    if let Ok(url) = normalize(entry, keep_query) {
                        match self.policy.check(&url, Reached::From { from: map_url, trust: map_trust }) {
                            Ok(t) => entry_trust = Some((url, t)),
                            Err(r) => {
                                internal += 1;
                                if internal <= MAX_REFUSED_LISTED {
                                    out.errors.push(DocError::new(
                                        entry,
                                        DocKey(0),
                                        DocErrorKind::Fetch,
                                        format!(
                                            "{}: sitemap entry on {r} (listed in {loc})",
                                            FetchErrorKind::InternalAddress
                                        ),
                                    ));
                                }
                                return;
                            }
                        }
                    }
                }
                match kind {
                    Kind::UrlSet => {
                        if full {
                            return;
                        }
                        if out.urls.len() >= MAX_SITEMAP_URLS {
                            full = true;
                            out.errors.push(DocError::new(
                                &loc,
                                DocKey(0),
                                DocErrorKind::Fetch,
                                format!("more than {MAX_SITEMAP_URLS} URLs; the rest are skipped"),
                            ));
                            return;
                        }
                        if seen_urls.insert(xxhash_rust::xxh3::xxh3_128(entry.as_bytes())) {
                            if let Some((url, Trust::Public)) = &entry_trust {
                                self.reached.lock().unwrap_or_else(|e| e.into_inner()).insert(url_hash(url.as_str()));
                            }
                            out.urls.push(entry.to_string());
                        }
                    }
                    Kind::Index if depth >= MAX_SITEMAP_DEPTH => {}
                    Kind::Index => {
                        let child = if entry_is_url {
                            entry.to_string()
                        } else {
                            // A local index may name local children, relative to itself.
                            Path::new(&loc)
                                .parent()
                                .unwrap_or(Path::new("."))
                                .join(entry)
                                .to_string_lossy()
                                .into_owned()
                        };
                        // A child of a remote index is never named by the user.
                        let child_trust = match entry_trust {
                            Some((_, t)) => Some(t),
                            None => remote.as_ref().map(|_| Trust::Public),
                        };
                        queue.push_back((child, depth + 1, child_trust));
                    }
                }
            });
            if not_urls.0 > 0 {
                let n = not_urls.0;
                out.errors.push(DocError::new(
                    &loc,
                    DocKey(0),
                    DocErrorKind::Fetch,
                    format!(
                        "sitemap: refused {n} {} that {} not an http(s) URL (first: `{}`)",
                        if n == 1 { "entry" } else { "entries" },
                        if n == 1 { "is" } else { "are" },
                        not_urls.1
                    ),
                ));
            }
            if internal > MAX_REFUSED_LISTED {
                out.errors.push(DocError::new(
                    &loc,
                    DocKey(0),
                    DocErrorKind::Fetch,
                    format!(
                        "{}: sitemap: {} more entries on internal addresses refused; --allow-internal allows them",
                        FetchErrorKind::InternalAddress,
                        internal - MAX_REFUSED_LISTED
                    ),
                ));
            }
            if full {
                return out;
            }
            if depth >= MAX_SITEMAP_DEPTH && map_kind == Kind::Index {
                out.errors.push(DocError::new(
                    &loc,
                    DocKey(0),
                    DocErrorKind::Fetch,
                    format!("sitemap indexes nested deeper than {MAX_SITEMAP_DEPTH}; skipped"),
                ));
            }
        }
        out
    }

    async fn fetch_sitemap_bytes(&self, loc: &str, url: &Url, trust: Trust) -> Result<Vec<u8>, DocError> {
        let err = |e: FetchError| DocError::new(loc, DocKey(0), DocErrorKind::Fetch, e.to_string());
        let mut record = empty_record(
            &Source { id: loc.to_string(), key: DocKey(0), location: Location::Url(loc.to_string()) },
            Some(url),
        );
        let resp = self.follow(url, Purpose::Sitemap, &mut record, trust).await.map_err(err)?;
        match resp.body {
            Some(b) if resp.status.is_success() => Ok(b),
            _ => Err(err(status_error(resp.status))),
        }
    }
}

/// Entries of one sitemap refused by the policy that get an error each;
/// the rest are counted in one.
const MAX_REFUSED_LISTED: usize = 100;

/// The key of a normalized URL in [`Inner::reached`].
fn url_hash(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_dedups_and_interleaves_origins() {
        let src = |i: usize, u: &str| Source { id: u.into(), key: DocKey::at(i), location: Location::Url(u.into()) };
        let sources = vec![
            src(0, "http://a.test/1"),
            src(1, "http://a.test/2"),
            src(2, "http://A.test:80/1#x"),
            src(3, "http://b.test/1"),
            src(4, "ftp://c.test/"),
            src(5, "http://a.test/1?utm_source=x"),
        ];
        let (jobs, rejected) = plan(sources, false);
        let urls: Vec<_> = jobs.iter().map(|j| j.url.as_str()).collect();
        assert_eq!(urls, ["http://a.test/1", "http://b.test/1", "http://a.test/2"]);
        assert_eq!(jobs[0].duplicates, ["http://A.test:80/1#x", "http://a.test/1?utm_source=x"]);
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].record.error.as_ref().unwrap().kind, FetchErrorKind::Scheme);
    }
}
