//! The fetcher against a real HTTP server (axum) on 127.0.0.1, started
//! inside the test binary. Each test uses its own paths, so the shared
//! server's hit counters tell what the fetcher actually requested.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Response, header};
use webdup::DocErrorKind;
use webdup::engine::Quiet;
use webdup::fetch::{FetchConfig, FetchErrorKind, FetchOutcome, Fetcher};
use webdup::source::{DocKey, Format, Location, Source};

#[derive(Default)]
struct Server {
    hits: Mutex<HashMap<String, usize>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Server {
    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn server() -> &'static (u16, Arc<Server>) {
    static SERVER: OnceLock<(u16, Arc<Server>)> = OnceLock::new();
    SERVER.get_or_init(|| {
        let state = Arc::new(Server::default());
        let st = state.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap().port()).unwrap();
                let app = axum::Router::new().fallback(handle).with_state(st);
                axum::serve(listener, app).await.unwrap();
            });
        });
        (rx.recv().unwrap(), state)
    })
}

fn base() -> String {
    format!("http://127.0.0.1:{}", server().0)
}

fn html(body: impl Into<Body>, content_type: &str) -> Response<Body> {
    Response::builder().header(header::CONTENT_TYPE, content_type).body(body.into()).unwrap()
}

fn status(code: u16) -> Response<Body> {
    Response::builder().status(code).body(Body::from(format!("status {code}"))).unwrap()
}

fn redirect(code: u16, to: &str) -> Response<Body> {
    Response::builder().status(code).header(header::LOCATION, to).body(Body::empty()).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

const PAGE: &str =
    "<html><head><title>t</title></head><body><p>the quick brown fox jumps over the lazy dog</p></body></html>";

async fn handle(State(st): State<Arc<Server>>, req: Request) -> Response<Body> {
    let path = req.uri().path().to_string();
    let hit = {
        let mut h = st.hits.lock().unwrap();
        // Also counted per user agent, so a test can count its own
        // fetcher's requests while other tests use the server.
        let agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
        *h.entry(format!("{agent} {path}")).or_insert(0) += 1;
        let n = h.entry(path.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let latin1 = b"<html><body><p>caf\xe9 cr\xe8me br\xfbl\xe9e</p></body></html>".to_vec();
    let latin1_meta = b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9</p></body></html>".to_vec();
    // "日本語のテキストです。これは少し長い文章で、文字コードの判定に使います。" in Shift_JIS: long enough for a detector to tell.
    let sjis: &[u8] = b"\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x83\x65\x83\x4c\x83\x58\x83\x67\x82\xc5\x82\xb7\x81\x42\x82\xb1\x82\xea\x82\xcd\x8f\xad\x82\xb5\x92\xb7\x82\xa2\x95\xb6\x8f\xcd\x82\xc5\x81\x41\x95\xb6\x8e\x9a\x83\x52\x81\x5b\x83\x68\x82\xcc\x94\xbb\x92\xe8\x82\xc9\x8e\x67\x82\xa2\x82\xdc\x82\xb7\x81\x42";
    let sjis_page = [&b"<html><body><p>"[..], sjis, b"</p></body></html>"].concat();
    let sjis_meta = [
        &b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\"></head><body><p>"[..],
        sjis,
        b"</p></body></html>",
    ]
    .concat();
    match path.as_str() {
        "/robots.txt" => html("User-agent: *\nDisallow: /private\n", "text/plain"),
        "/ok" | "/a/final" | "/other" => html(PAGE, "text/html; charset=utf-8"),
        "/text" => html("plain words here and there", "text/plain"),
        "/private/page" => html(PAGE, "text/html"),
        "/meta" => Response::builder()
            .header(header::CONTENT_TYPE, "text/html")
            .header(header::LAST_MODIFIED, "Wed, 21 Oct 2015 07:28:00 GMT")
            .header(header::ETAG, "\"abc123\"")
            .header(header::LINK, "</canonical/page>; rel=\"canonical\"")
            .header("x-robots-tag", "noindex")
            .body(Body::from(PAGE))
            .unwrap(),
        "/r/1" => redirect(301, "/r/2"),
        "/cached/r" => redirect(301, "/cached/final"),
        "/cached/final" => html(PAGE, "text/html"),
        "/r/2" => redirect(302, "../a/final"),
        "/loop/a" => redirect(302, "/loop/b"),
        "/loop/b" => redirect(307, "/loop/a#frag"),
        p if p.starts_with("/endless/") => {
            let n: usize = p["/endless/".len()..].parse().unwrap_or(0);
            redirect(302, &format!("/endless/{}", n + 1))
        }
        "/404" => status(404),
        p if p.starts_with("/e/") => status(p[3..].parse().unwrap_or(400)),
        "/410" => status(410),
        "/500" => status(500),
        "/429" if hit == 1 => {
            Response::builder().status(429).header(header::RETRY_AFTER, "1").body(Body::empty()).unwrap()
        }
        "/429" => html(PAGE, "text/html"),
        "/429-long" => Response::builder().status(429).header(header::RETRY_AFTER, "3600").body(Body::empty()).unwrap(),
        "/503-then-ok" if hit <= 2 => status(503),
        "/503-then-ok" => html(PAGE, "text/html"),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            html(PAGE, "text/html")
        }
        "/big" => html(vec![b'a'; 200_000], "text/html"),
        "/gzip-bomb" => Response::builder()
            .header(header::CONTENT_TYPE, "text/html")
            .header(header::CONTENT_ENCODING, "gzip")
            .body(Body::from(gzip(&vec![b' '; 5_000_000])))
            .unwrap(),
        "/gzip" => Response::builder()
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header(header::CONTENT_ENCODING, "gzip")
            .body(Body::from(gzip("<html><body><p>compressed café page</p></body></html>".as_bytes())))
            .unwrap(),
        "/binary" => html(vec![0u8, 1, 2, 3], "application/octet-stream"),
        "/image.png" => html(b"\x89PNG\r\n\x1a\n".to_vec(), "image/png"),
        "/latin1/header" => html(latin1, "text/html; charset=ISO-8859-1"),
        "/latin1/meta" => html(latin1_meta, "text/html"),
        "/latin1/none" => html(latin1, "text/html"),
        "/latin1/bogus-charset" => html(latin1_meta, "text/html; charset=x-no-such-thing"),
        "/sjis/header" => html(sjis_page, "text/html; charset=Shift_JIS"),
        "/sjis/meta" => html(sjis_meta, "text/html"),
        "/sjis/none" => html(sjis_page, "text/html"),
        p if p.starts_with("/polite/") => {
            let now = st.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            st.max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(40)).await;
            st.in_flight.fetch_sub(1, Ordering::SeqCst);
            html(PAGE, "text/html")
        }
        "/sitemap_index.xml" => html(
            format!(
                "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                 <sitemap><loc>{b}/sitemap-a.xml</loc></sitemap>\
                 <sitemap><loc>{b}/sitemap-b.xml.gz</loc></sitemap>\
                 <sitemap><loc>{b}/sitemap_index.xml</loc></sitemap>\
                 <sitemap><loc>{b}/sitemap-missing.xml</loc></sitemap></sitemapindex>",
                b = base()
            ),
            "application/xml",
        ),
        "/sitemap-a.xml" => html(
            format!(
                "<urlset><url><loc>{b}/ok</loc></url><url><loc>{b}/other?a=1&amp;b=2</loc></url></urlset>",
                b = base()
            ),
            "text/xml",
        ),
        "/sitemap-b.xml.gz" => html(
            gzip(
                format!("<urlset><url><loc>{b}/meta</loc></url><url><loc>{b}/ok</loc></url></urlset>", b = base())
                    .as_bytes(),
            ),
            "application/gzip",
        ),
        _ => status(404),
    }
}

fn config() -> FetchConfig {
    FetchConfig {
        concurrency: 8,
        per_host: 8,
        delay: Duration::ZERO,
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(1),
        retries: 1,
        backoff: Duration::from_millis(20),
        threads: 2,
        ..Default::default()
    }
}

fn sources(urls: &[&str]) -> Vec<Source> {
    urls.iter()
        .enumerate()
        .map(|(i, u)| {
            let u = if u.starts_with('/') { format!("{}{u}", base()) } else { u.to_string() };
            Source { id: u.clone(), key: DocKey::at(i), location: Location::Url(u) }
        })
        .collect()
}

fn fetch(config: FetchConfig, urls: &[&str]) -> Vec<FetchOutcome> {
    Fetcher::new(config).unwrap().fetch_all(sources(urls), &Quiet)
}

fn fetch_one(config: FetchConfig, url: &str) -> FetchOutcome {
    fetch(config, &[url]).pop().unwrap()
}

fn kind(o: &FetchOutcome) -> Option<FetchErrorKind> {
    o.record.error.as_ref().map(|e| e.kind)
}

fn body(o: &FetchOutcome) -> &str {
    &o.document.as_ref().unwrap_or_else(|| panic!("no document: {:?}", o.record.error)).body
}

#[test]
fn plain_page_records_status_and_headers() {
    let o = fetch_one(config(), "/meta");
    assert_eq!(kind(&o), None);
    assert_eq!(o.record.status, Some(200));
    assert_eq!(o.record.final_url.as_deref(), Some(format!("{}/meta", base()).as_str()));
    assert_eq!(o.record.last_modified.as_deref(), Some("Wed, 21 Oct 2015 07:28:00 GMT"));
    assert_eq!(o.record.etag.as_deref(), Some("\"abc123\""));
    assert_eq!(o.record.canonical.as_deref(), Some(format!("{}/canonical/page", base()).as_str()));
    assert_eq!(o.record.x_robots_tag.as_deref(), Some("noindex"));
    assert_eq!(o.record.bytes, PAGE.len() as u64);
    assert!(body(&o).contains("quick brown fox"));
    assert_eq!(o.document.as_ref().unwrap().format, Format::Html);
    let text = fetch_one(config(), "/text");
    assert_eq!(text.document.unwrap().format, Format::Text);
}

#[test]
fn redirect_chain_is_recorded_hop_by_hop() {
    let o = fetch_one(config(), "/r/1");
    assert_eq!(kind(&o), None);
    let chain: Vec<(String, u16)> =
        o.record.chain.iter().map(|h| (h.url.trim_start_matches(&base()).to_string(), h.status)).collect();
    assert_eq!(chain, [("/r/1".to_string(), 301), ("/r/2".to_string(), 302), ("/a/final".to_string(), 200)]);
    assert_eq!(o.record.final_url, Some(format!("{}/a/final", base())));
    assert_eq!(o.record.id, format!("{}/r/1", base()));
    assert!(body(&o).contains("quick brown fox"));
    // The document knows where it was served from, for resolving its relative links.
    assert_eq!(o.document.as_ref().and_then(|d| d.url.clone()), Some(format!("{}/a/final", base())));
}

#[test]
fn redirect_loop_and_too_many_redirects_are_reported() {
    let out = fetch(config(), &["/loop/a", "/endless/0"]);
    assert_eq!(kind(&out[0]), Some(FetchErrorKind::RedirectLoop));
    assert_eq!(out[0].record.chain.iter().map(|h| h.status).collect::<Vec<_>>(), [302, 307]);
    assert!(out[0].record.error.as_ref().unwrap().message.contains("/loop/a"));
    assert_eq!(kind(&out[1]), Some(FetchErrorKind::TooManyRedirects));
    // The limit is 10 redirects: 11 responses seen, then it stops.
    assert_eq!(out[1].record.chain.len(), 11);
    let few = fetch_one(FetchConfig { max_redirects: 2, ..config() }, "/endless/100");
    assert_eq!(kind(&few), Some(FetchErrorKind::TooManyRedirects));
    assert_eq!(few.record.chain.len(), 3);
}

#[test]
fn http_errors_are_kept_with_their_status() {
    let out = fetch(FetchConfig { retries: 2, ..config() }, &["/e/404", "/e/410", "/e/500"]);
    let got: Vec<_> = out.iter().map(|o| (kind(o), o.record.status)).collect();
    assert_eq!(
        got,
        [
            (Some(FetchErrorKind::HttpStatus), Some(404)),
            (Some(FetchErrorKind::HttpStatus), Some(410)),
            (Some(FetchErrorKind::HttpStatus), Some(500))
        ]
    );
    let s = server();
    assert_eq!(s.1.hits("/e/404"), 1, "a 404 is not retried");
    assert_eq!(s.1.hits("/e/500"), 3, "a 500 is retried twice");
    let e = out[1].clone().into_document().unwrap_err();
    assert_eq!(e.kind, DocErrorKind::Fetch);
    assert!(e.message.contains("http_status") && e.message.contains("410"), "{}", e.message);
}

#[test]
fn retries_5xx_then_succeeds() {
    let o = fetch_one(FetchConfig { retries: 2, ..config() }, "/503-then-ok");
    assert_eq!(kind(&o), None);
    assert_eq!(server().1.hits("/503-then-ok"), 3);
}

#[test]
fn too_many_requests_honours_retry_after() {
    let start = Instant::now();
    let o = fetch_one(config(), "/429");
    assert_eq!(kind(&o), None, "{:?}", o.record.error);
    assert!(start.elapsed() >= Duration::from_millis(950), "waited only {:?}", start.elapsed());
    assert_eq!(server().1.hits("/429"), 2);
    // A Retry-After beyond the allowed wait is not waited for.
    let start = Instant::now();
    let o = fetch_one(FetchConfig { max_retry_wait: Duration::from_secs(5), ..config() }, "/429-long");
    assert_eq!(kind(&o), Some(FetchErrorKind::HttpStatus));
    assert_eq!(o.record.status, Some(429));
    assert!(o.record.error.unwrap().message.contains("Retry-After: 3600"));
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn slow_response_times_out() {
    let start = Instant::now();
    let o = fetch_one(FetchConfig { timeout: Duration::from_millis(300), ..config() }, "/slow");
    assert_eq!(kind(&o), Some(FetchErrorKind::Timeout), "{:?}", o.record.error);
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
}

#[test]
fn bodies_over_the_limit_are_refused_while_streaming() {
    let c = FetchConfig { max_bytes: 100_000, ..config() };
    let out = fetch(c.clone(), &["/big", "/gzip-bomb"]);
    assert_eq!(kind(&out[0]), Some(FetchErrorKind::TooLarge));
    // 5 MB of spaces compress to a few kB: only counting while decompressing catches it.
    assert_eq!(kind(&out[1]), Some(FetchErrorKind::TooLarge));

    // A server that never stops sending: the fetch still ends, quickly.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let endless = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = conn.read(&mut buf);
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n");
        let chunk = [b'x'; 8192];
        let mut sent = 0usize;
        // Bounded: stops once the client hangs up, or after 200 MB.
        while sent < 200 << 20 && conn.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    let start = Instant::now();
    let o = fetch_one(FetchConfig { ignore_robots: true, ..c }, &format!("http://127.0.0.1:{port}/stream"));
    assert_eq!(kind(&o), Some(FetchErrorKind::TooLarge));
    let sent = endless.join().unwrap();
    assert!(sent < 50 << 20, "server sent {sent} bytes before the client hung up");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn binary_and_image_types_are_refused() {
    let out = fetch(config(), &["/binary", "/image.png"]);
    assert_eq!(kind(&out[0]), Some(FetchErrorKind::WrongType));
    assert_eq!(kind(&out[1]), Some(FetchErrorKind::WrongType));
    assert!(out[1].record.error.as_ref().unwrap().message.contains("image/png"));
    assert_eq!(out[1].record.content_type.as_deref(), Some("image/png"));
}

#[test]
fn latin1_and_shift_jis_with_and_without_declared_charset() {
    let out = fetch(
        config(),
        &[
            "/latin1/header",
            "/latin1/meta",
            "/latin1/none",
            "/latin1/bogus-charset",
            "/sjis/header",
            "/sjis/meta",
            "/sjis/none",
        ],
    );
    assert!(body(&out[0]).contains("café crème brûlée"), "{}", body(&out[0]));
    assert!(body(&out[1]).contains("café"));
    // A page that declares no charset and is not UTF-8 is decoded as
    // browsers would (issue 17: it was refused).
    assert!(body(&out[2]).contains("café crème brûlée"), "{}", body(&out[2]));
    // An unknown charset label in the header falls through to the meta declaration.
    assert!(body(&out[3]).contains("café"));
    assert!(body(&out[4]).contains("日本語"), "{}", body(&out[4]));
    assert!(body(&out[5]).contains("日本語"));
    assert!(body(&out[6]).contains("日本語"), "{}", body(&out[6]));
}

#[test]
fn gzip_content_encoding_is_decoded() {
    let o = fetch_one(config(), "/gzip");
    assert!(body(&o).contains("compressed café page"));
    assert_eq!(o.record.bytes, "<html><body><p>compressed café page</p></body></html>".len() as u64);
}

#[test]
fn robots_txt_disallows_and_is_fetched_once_per_fetcher() {
    // An agent of its own: the tests running beside it fetch robots.txt too.
    let agent = "webdup-test-robots-once";
    let fetcher = Fetcher::new(FetchConfig { user_agent: agent.into(), ..config() }).unwrap();
    let out = fetcher.fetch_all(sources(&["/private/page", "/ok", "/other", "/private/page?x=1"]), &Quiet);
    assert_eq!(kind(&out[0]), Some(FetchErrorKind::Robots));
    assert!(out[0].record.chain.is_empty(), "a disallowed page is never requested");
    assert_eq!(kind(&out[1]), None);
    assert_eq!(kind(&out[3]), Some(FetchErrorKind::Robots));
    assert_eq!(server().1.hits(&format!("{agent} /robots.txt")), 1);
    let ignored = fetch_one(FetchConfig { ignore_robots: true, ..config() }, "/private/page");
    assert_eq!(kind(&ignored), None);
}

#[test]
fn sitemap_index_expands_recursively() {
    let fetcher = Fetcher::new(config()).unwrap();
    let exp = fetcher.expand_sitemap(&format!("{}/sitemap_index.xml", base()));
    let paths: Vec<_> = exp.urls.iter().map(|u| u.trim_start_matches(&base()).to_string()).collect();
    assert_eq!(paths, ["/ok", "/other?a=1&b=2", "/meta"]);
    // The index lists itself (ignored, no endless loop) and a missing sitemap (an error).
    assert_eq!(exp.errors.len(), 1, "{:?}", exp.errors);
    assert!(exp.errors[0].id.ends_with("/sitemap-missing.xml"));
    assert!(exp.errors[0].message.contains("404"));

    // A local gzip sitemap works the same.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sitemap.xml.gz");
    std::fs::write(&p, gzip(b"<urlset><url><loc>http://127.0.0.1:1/x</loc></url></urlset>")).unwrap();
    let exp = fetcher.expand_sitemap(p.to_str().unwrap());
    assert_eq!(exp.urls, ["http://127.0.0.1:1/x"]);
}

#[test]
fn one_bad_url_never_stops_the_others() {
    // A port with nothing listening: bind, note it, close.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused = format!("http://127.0.0.1:{closed}/x");
    let tls = format!("https://127.0.0.1:{}/ok", server().0);
    let out = fetch(
        FetchConfig { timeout: Duration::from_millis(500), ..config() },
        &["/ok", "not a url", "ftp://127.0.0.1/x", &refused, &tls, "/slow", "/404", "/other"],
    );
    let kinds: Vec<_> = out.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            None,
            Some(FetchErrorKind::InvalidUrl),
            Some(FetchErrorKind::Scheme),
            Some(FetchErrorKind::Connect),
            Some(FetchErrorKind::Tls),
            Some(FetchErrorKind::Timeout),
            Some(FetchErrorKind::HttpStatus),
            None
        ],
        "{:#?}",
        out.iter().map(|o| &o.record.error).collect::<Vec<_>>()
    );
    assert_eq!(out.iter().map(|o| o.record.key.0).collect::<Vec<_>>(), (0..8).collect::<Vec<u64>>());
    assert!(body(&out[7]).contains("quick brown fox"));
}

#[test]
fn duplicate_urls_are_fetched_once() {
    let shouting = format!("HTTP://127.0.0.1:{}/dup#top", server().0);
    let out = fetch(config(), &["/dup?utm_source=x", &shouting]);
    assert_eq!(out.len(), 1);
    assert_eq!(server().1.hits("/dup"), 1);
    assert_eq!(out[0].record.duplicates.len(), 1);
}

#[test]
fn per_host_limit_is_respected() {
    let urls: Vec<String> = (0..12).map(|i| format!("/polite/{i}")).collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let start = Instant::now();
    let out = fetch(FetchConfig { concurrency: 16, per_host: 2, delay: Duration::from_millis(10), ..config() }, &refs);
    assert!(out.iter().all(|o| kind(o).is_none()));
    assert!(server().1.max_in_flight.load(Ordering::SeqCst) <= 2);
    // 12 requests, 2 at a time, 40 ms each.
    assert!(start.elapsed() >= Duration::from_millis(240), "{:?}", start.elapsed());
}

#[test]
fn cache_serves_a_rerun_without_fetching() {
    let dir = tempfile::tempdir().unwrap();
    let c = FetchConfig { cache_dir: Some(dir.path().to_path_buf()), ..config() };
    let first = fetch(c.clone(), &["/cached/r", "/cached/missing"]);
    let hits = || ["/cached/r", "/cached/final", "/cached/missing"].map(|p| server().1.hits(p));
    assert_eq!(hits(), [1, 1, 1]);
    let again = fetch(c, &["/cached/r", "/cached/missing"]);
    assert_eq!(hits(), [1, 1, 1], "the rerun hit the network");
    assert!(again[0].record.from_cache && !first[0].record.from_cache);
    assert_eq!(body(&again[0]), body(&first[0]));
    assert_eq!(again[0].record.chain, first[0].record.chain);
    assert_eq!(kind(&again[1]), Some(FetchErrorKind::HttpStatus));
    assert_eq!(again[1].record.status, Some(404));
}

#[test]
fn a_host_that_does_not_resolve_is_a_dns_error_naming_the_url() {
    // `.invalid` is reserved (RFC 2606) and never resolves.
    let o = fetch_one(config(), "http://no-such-host.invalid/page");
    assert_eq!(kind(&o), Some(FetchErrorKind::Dns), "{:?}", o.record.error);
    assert!(o.document.is_none());
    assert_eq!(o.record.id, "http://no-such-host.invalid/page");
}

/// RFC 9309 2.3.1.4: a robots.txt that the server accepts but never
/// answers is "unreachable", and the site is then disallowed (issue 16: it
/// was crawled). The page itself is never requested.
#[test]
fn a_robots_txt_that_times_out_disallows_the_site() {
    let page_hits = Arc::new(AtomicUsize::new(0));
    let hits = page_hits.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let app = axum::Router::new()
                .route(
                    "/robots.txt",
                    axum::routing::get(|| async {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        "User-agent: *\nAllow: /\n"
                    }),
                )
                .fallback(move || {
                    hits.fetch_add(1, Ordering::SeqCst);
                    async { "<html><body><p>page</p></body></html>" }
                });
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let port = rx.recv().unwrap();
    let config = FetchConfig { timeout: Duration::from_millis(500), retries: 0, ..config() };
    let o = fetch_one(config, &format!("http://127.0.0.1:{port}/page"));
    assert_eq!(kind(&o), Some(FetchErrorKind::Robots), "{:?}", o.record.error);
    let message = o.record.error.as_ref().unwrap().message.clone();
    assert!(message.contains("unreachable"), "{message}");
    assert_eq!(page_hits.load(Ordering::SeqCst), 0, "the page was requested");
}
