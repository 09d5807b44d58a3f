//! The fetch policy against real servers on two loopback ports: the one the
//! user names, and a second one no named page may lead to, which counts
//! every connection it gets. Every address used here is on loopback; the
//! refusal of private, link-local and metadata addresses is unit-tested on
//! the address check (`crates/web/src/fetch/policy.rs`), never by fetching.

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use webdup::engine::Quiet;
use webdup::fetch::{FetchConfig, FetchErrorKind, FetchOutcome, Fetcher};
use webdup::source::{DocKey, Location, Source};

const PAGE: &str = "<html><body><p>a public page about foxes and dogs and the quick brown fox</p></body></html>";
const SECRET: &str = "<html><body><p>internal secret answer</p></body></html>";

/// A raw HTTP/1.1 server on `listener`: one request per connection,
/// answered by `route(path)` as (status line, extra headers, body).
fn serve(listener: TcpListener, hits: Arc<AtomicUsize>, route: impl Fn(&str) -> String + Send + Sync + 'static) {
    let route = Arc::new(route);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            hits.fetch_add(1, Ordering::SeqCst);
            let route = route.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let _ = stream.write_all(route(&path).as_bytes());
            });
        }
    });
}

fn response(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
        body.len()
    )
}

/// The second server: answers everything with a secret and counts
/// connections, on 127.0.0.1 and, when this machine has IPv6 loopback, on
/// `[::1]` at the same port.
struct Internal {
    port: u16,
    hits: Arc<AtomicUsize>,
    v6: bool,
}

fn internal() -> Internal {
    let hits = Arc::new(AtomicUsize::new(0));
    let route = |_: &str| response("200 OK", "", SECRET);
    // Find a port free on both families, so `[::1]:P2` is the same server.
    for _ in 0..20 {
        let v4 = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = v4.local_addr().unwrap().port();
        match TcpListener::bind(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port))) {
            Ok(v6) => {
                serve(v4, hits.clone(), route);
                serve(v6, hits.clone(), route);
                return Internal { port, hits, v6: true };
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(_) => {
                serve(v4, hits.clone(), route);
                return Internal { port, hits, v6: false };
            }
        }
    }
    panic!("no port free on both 127.0.0.1 and [::1]");
}

/// A name other than `localhost` that /etc/hosts maps to a loopback
/// address: it reaches the resolver check, not the check of the URL's
/// text. Read from the file, so finding it sends no DNS query.
fn loopback_alias() -> Option<String> {
    let hosts = std::fs::read_to_string("/etc/hosts").ok()?;
    hosts.lines().find_map(|l| {
        let mut words = l.split('#').next()?.split_whitespace();
        let ip: Ipv4Addr = words.next()?.parse().ok()?;
        if !ip.is_loopback() {
            return None;
        }
        words
            .find(|w| !w.eq_ignore_ascii_case("localhost") && !w.to_ascii_lowercase().ends_with(".localhost"))
            .map(str::to_string)
    })
}

/// The named server: `/r/N` redirects to `targets[N]`, `/sitemap.xml`
/// lists `entries`, anything else is a page; `:SELF/` in a target or an
/// entry stands for the server's own port.
fn named(targets: Vec<String>, entries: Vec<String>) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    serve(listener, hits.clone(), move |path| {
        if let Some(n) = path.strip_prefix("/r/").and_then(|n| n.parse::<usize>().ok()) {
            let to = targets[n].replace(":SELF/", &format!(":{port}/"));
            return response("302 Found", &format!("location: {to}\r\n"), "");
        }
        match path {
            "/robots.txt" => response("404 Not Found", "", ""),
            "/sitemap.xml" => {
                let locs: String = entries
                    .iter()
                    .map(|e| format!("<url><loc>{}</loc></url>", e.replace(":SELF/", &format!(":{port}/"))))
                    .collect();
                let xml = format!("<?xml version=\"1.0\"?><urlset>{locs}</urlset>");
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{xml}",
                    xml.len()
                )
            }
            _ => response("200 OK", "", PAGE),
        }
    });
    (port, hits)
}

fn config() -> FetchConfig {
    FetchConfig {
        delay: Duration::ZERO,
        retries: 0,
        timeout: Duration::from_secs(20),
        user_agent: "webdup-test-policy".into(),
        ..Default::default()
    }
}

fn sources(urls: &[String]) -> Vec<Source> {
    urls.iter()
        .enumerate()
        .map(|(i, u)| Source { id: u.clone(), key: DocKey::at(i), location: Location::Url(u.clone()) })
        .collect()
}

fn fetch(config: FetchConfig, urls: &[String]) -> Vec<FetchOutcome> {
    Fetcher::new(config).unwrap().fetch_all(sources(urls), &Quiet)
}

fn error(o: &FetchOutcome) -> (Option<FetchErrorKind>, String) {
    let e = o.record.error.as_ref();
    (e.map(|e| e.kind), e.map_or_else(String::new, |e| e.message.clone()))
}

#[test]
fn redirects_to_another_internal_origin_are_refused_in_every_spelling() {
    let second = internal();
    let p2 = second.port;
    let mut targets: Vec<(String, &str)> = vec![
        (format!("http://127.0.0.1:{p2}/secret"), "127.0.0.1"),
        (format!("http://localhost:{p2}/secret"), "localhost"),
        (format!("http://2130706433:{p2}/secret"), "127.0.0.1"),
        (format!("http://0x7f000001:{p2}/secret"), "127.0.0.1"),
        (format!("http://0177.0.0.1:{p2}/secret"), "127.0.0.1"),
        (format!("http://127.1:{p2}/secret"), "127.0.0.1"),
        (format!("http://[::ffff:127.0.0.1]:{p2}/secret"), "[::ffff:7f00:1]"),
        (format!("http://[::127.0.0.1]:{p2}/secret"), "[::7f00:1]"),
        (format!("http://127.0.0.2:{p2}/secret"), "127.0.0.2"),
    ];
    if second.v6 {
        targets.push((format!("http://[::1]:{p2}/secret"), "[::1]"));
    }
    let alias = loopback_alias();
    if let Some(a) = &alias {
        targets.push((format!("http://{a}:{p2}/secret"), a.as_str()));
    } else {
        eprintln!("no loopback alias in /etc/hosts: the resolver check is covered by unit tests only");
    }
    let (p1, _) = named(targets.iter().map(|(t, _)| t.clone()).collect(), Vec::new());
    let urls: Vec<String> = (0..targets.len()).map(|i| format!("http://127.0.0.1:{p1}/r/{i}")).collect();
    let out = fetch(config(), &urls);
    for ((target, host), o) in targets.iter().zip(&out) {
        let (kind, message) = error(o);
        assert_eq!(kind, Some(FetchErrorKind::InternalAddress), "{target}: {message}");
        assert!(
            message.contains(&format!("{host}:{p2}")) || message.contains(&format!("{host} resolves")),
            "{target}: {message}"
        );
        assert!(message.contains("--allow-internal"), "{message}");
        assert!(message.contains(&format!("127.0.0.1:{p1}/r/")), "names where the redirect came from: {message}");
        // The refused hop is not in the chain: only the named page answered.
        assert_eq!(o.record.chain.len(), 1, "{target}");
    }
    assert_eq!(second.hits.load(Ordering::SeqCst), 0, "the second server was reached");

    // The same redirect with --allow-internal is followed: what the
    // refusals above kept from being fetched.
    let open = fetch(FetchConfig { allow_internal: true, ..config() }, &urls[..1]);
    assert_eq!(error(&open[0]).0, None, "{:?}", open[0].record.error);
    assert!(open[0].document.as_ref().unwrap().body.contains("internal secret"));
    assert!(second.hits.load(Ordering::SeqCst) >= 1);
}

#[test]
fn a_named_internal_origin_follows_itself() {
    let (p1, hits) = named(vec!["http://127.0.0.1:SELF/page".into(), "/page?same=origin".into()], Vec::new());
    let out = fetch(config(), &[format!("http://127.0.0.1:{p1}/r/0"), format!("http://127.0.0.1:{p1}/r/1")]);
    for o in &out {
        assert_eq!(error(o).0, None, "{:?}", o.record.error);
        assert_eq!(o.record.chain.len(), 2);
    }
    // robots.txt, then two redirects and two pages.
    assert_eq!(hits.load(Ordering::SeqCst), 5);
}

#[test]
fn sitemap_entries_on_another_internal_origin_are_refused() {
    let second = internal();
    let p2 = second.port;
    let mut entries = vec![
        format!("http://127.0.0.1:{p2}/secret"),
        format!("http://localhost:{p2}/secret"),
        format!("http://0x7f000001:{p2}/secret"),
        "http://127.0.0.1:SELF/page".to_string(),
    ];
    let alias = loopback_alias();
    if let Some(a) = &alias {
        entries.push(format!("http://{a}:{p2}/secret"));
    }
    let (p1, _) = named(vec![], entries);
    let sitemap = format!("http://127.0.0.1:{p1}/sitemap.xml");
    let fetcher = Fetcher::new(config()).unwrap();
    let exp = fetcher.expand_sitemap(&sitemap);
    let refused: Vec<&str> = exp.errors.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        refused,
        [
            format!("http://127.0.0.1:{p2}/secret"),
            format!("http://localhost:{p2}/secret"),
            format!("http://0x7f000001:{p2}/secret")
        ]
    );
    for e in &exp.errors {
        assert!(e.message.starts_with("internal_address: sitemap entry on internal address"), "{}", e.message);
        assert!(e.message.contains(&format!(":{p2} (loopback)")) && e.message.contains(&sitemap), "{}", e.message);
        assert!(e.message.contains("--allow-internal"), "{}", e.message);
    }
    // The sitemap's own origin may be internal: the user named it.
    let mut expected = vec![format!("http://127.0.0.1:{p1}/page")];
    // A name is only seen as internal once resolved: the entry is kept, and
    // its fetch refused on the address it resolves to.
    expected.extend(alias.iter().map(|a| format!("http://{a}:{p2}/secret")));
    assert_eq!(exp.urls, expected);
    let out = fetcher.fetch_all(sources(&exp.urls), &Quiet);
    assert_eq!(error(&out[0]).0, None, "{:?}", out[0].record.error);
    if alias.is_some() {
        let (kind, message) = error(&out[1]);
        assert_eq!(kind, Some(FetchErrorKind::InternalAddress), "{message}");
        assert!(message.contains("resolves to internal address 127."), "{message}");
    }
    assert_eq!(second.hits.load(Ordering::SeqCst), 0, "the second server was reached");
}

#[test]
fn protocol_errors_are_not_retried() {
    // A server that answers every request with something that is not HTTP.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let c = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            c.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.6 this is not http\r\n\r\n");
                let _ = stream.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    let config = FetchConfig { retries: 2, backoff: Duration::from_millis(10), ignore_robots: true, ..config() };
    let out = fetch(config, &[format!("http://127.0.0.1:{port}/page")]);
    let (kind, message) = error(&out[0]);
    assert_eq!(kind, Some(FetchErrorKind::Protocol), "{message}");
    assert_eq!(connections.load(Ordering::SeqCst), 1, "a protocol error was retried");
}
