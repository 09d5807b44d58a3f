//! `webdup serve` against hostile and careless clients (issue 16), over real
//! sockets on 127.0.0.1: deeply nested pages, slow headers, bodies shorter
//! than announced, clients that leave, and a stop signal with work in
//! flight. Every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

#[path = "support/serve.rs"]
mod serve_process;

use serde_json::json;
use serve_process::{read_response, request, start};
use webdup::synth::{SynthConfig, corpus};

fn healthy(addr: SocketAddr, limit: Duration) -> bool {
    let t0 = Instant::now();
    let ok = std::panic::catch_unwind(|| request(addr, "GET", "/health", None, limit)).ok();
    matches!(ok, Some((200, v)) if v["status"] == "ok") && t0.elapsed() <= limit
}

fn texts(n: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: 150, copy_share: 0.0, seed, ..Default::default() })
}

/// A page whose extraction takes a while: `paragraphs` paragraphs of text.
fn heavy_page(paragraphs: usize, seed: u64) -> String {
    let body = texts(paragraphs, seed).join("</p>\n<p>");
    format!("<html><head><title>Heavy</title></head><body><article><p>{body}</p></article></body></html>")
}

/// Waits up to `limit` for the process to exit.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(exit) = child.try_wait().unwrap() {
            return Some(exit);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Nesting that the default 2 MiB thread stack cannot extract, `<span/>`
/// (which HTML parsers nest: the slash means nothing on a span) and plain
/// deep markup within the extractor's depth limit: each gets an answer, and
/// the server is still there.
#[test]
fn deeply_nested_pages_get_an_answer_and_the_server_survives() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &[]);
    let pages = [
        ("span-7000", format!("<html><body>{}deep text here</body></html>", "<span/>".repeat(7000))),
        ("span-300000", format!("<html><body>{}deep text here</body></html>", "<span/>".repeat(300_000))),
        (
            "div-4000",
            format!(
                "<html><body>{}the river path was restored this spring{}</body></html>",
                "<div>".repeat(4000),
                "</div>".repeat(4000)
            ),
        ),
    ];
    for (name, html) in pages {
        let body = json!({"url": format!("https://deep.test/{name}"), "html": html});
        let (status, v) = request(s.addr, "POST", "/v1/check", Some(&body), Duration::from_secs(25));
        assert!(status == 200 || (400..500).contains(&status), "{name}: {status} {v}");
        if status != 200 {
            assert!(v["error"].is_string(), "{name}: the error is not JSON: {v}");
        }
        assert!(healthy(s.addr, Duration::from_secs(5)), "{name}: the server did not survive");
    }
}

/// 300 connections that send part of a request, a byte at a time, and
/// never finish: /health still answers at once, and the server closes them
/// within the header timeout.
#[test]
fn slow_header_sockets_neither_block_health_nor_stay_open() {
    const SOCKETS: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--header-timeout", "2"]);
    assert!(healthy(s.addr, Duration::from_secs(5)));
    let opened = Instant::now();
    let mut slow: Vec<TcpStream> = (0..SOCKETS)
        .map(|_| {
            let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
            c.write_all(b"POST /v1/check HTTP/1.1\r\nHost: x\r\n").unwrap();
            c
        })
        .collect();
    // Drip one more header byte into every socket while /health is asked.
    let mut worst = Duration::ZERO;
    for round in 0..4 {
        for c in &mut slow {
            let _ = c.write_all(b"X");
        }
        let t0 = Instant::now();
        assert!(healthy(s.addr, Duration::from_secs(2)), "round {round}: /health blocked by slow sockets");
        worst = worst.max(t0.elapsed());
        std::thread::sleep(Duration::from_millis(250));
    }
    println!("/health with {SOCKETS} slow sockets held: slowest answer {worst:?}");
    // Every slow socket is closed by the server (EOF or reset) in time.
    let mut closed = 0;
    for c in &mut slow {
        let limit = Duration::from_secs(6).saturating_sub(opened.elapsed()).max(Duration::from_millis(10));
        c.set_read_timeout(Some(limit)).unwrap();
        let mut buf = [0u8; 512];
        let gone = loop {
            match c.read(&mut buf) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    break false;
                }
                Err(_) => break true,
            }
        };
        closed += usize::from(gone);
    }
    assert_eq!(closed, SOCKETS, "slow-header sockets still open {:?} after they were opened", opened.elapsed());
    assert!(healthy(s.addr, Duration::from_secs(2)));
}

/// A body shorter than its Content-Length is not waited for forever: a JSON
/// 408 within the body timeout, then the connection is closed. Errors from
/// the router (unknown path, wrong method) are JSON too.
#[test]
fn a_body_shorter_than_announced_gets_a_408_and_router_errors_are_json() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--body-timeout", "1.5"]);
    let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t0 = Instant::now();
    c.write_all(
        b"POST /v1/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"url\": ",
    )
    .unwrap();
    let (status, v) = read_response(&mut c).expect("no answer and no close within 10 s");
    let waited = t0.elapsed();
    assert_eq!(status, 408, "{v}");
    assert!(v["error"].as_str().is_some_and(|e| e.contains("did not arrive")), "{v}");
    assert!(waited >= Duration::from_secs(1) && waited < Duration::from_secs(5), "{waited:?}");

    let (status, v) = request(s.addr, "GET", "/v1/check", None, Duration::from_secs(5));
    assert_eq!(status, 405);
    assert!(v["error"].is_string(), "405 is not JSON: {v}");
    let (status, v) = request(s.addr, "GET", "/nowhere", None, Duration::from_secs(5));
    assert_eq!(status, 404);
    assert!(v["error"].is_string(), "404 is not JSON: {v}");
    assert!(healthy(s.addr, Duration::from_secs(2)));
}

/// SIGTERM while a client trickles a body and pages are still being
/// extracted: the server exits within its grace period, not when the work
/// is done.
#[test]
fn sigterm_exits_within_the_grace_period_with_slow_work_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(&dir.path().join("i.db"), &["--shutdown-grace", "1", "--body-timeout", "60"]);
    // A body that never completes.
    let mut trickle = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
    trickle
        .write_all(
            b"POST /v1/pages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n{",
        )
        .unwrap();
    // And a queue of pages that take a while to extract.
    let page = json!({"url": "https://slow.test/", "html": heavy_page(600, 5)}).to_string();
    let mut busy: Vec<TcpStream> = (0..12)
        .map(|_| {
            let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
            let head = format!(
                "POST /v1/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                page.len()
            );
            c.write_all(head.as_bytes()).unwrap();
            c.write_all(page.as_bytes()).unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let pid = s.child.id().to_string();
    let t0 = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let exit = wait_exit(&mut s.child, Duration::from_secs(10));
    let took = t0.elapsed();
    assert!(exit.is_some(), "still running 10 s after SIGTERM");
    assert!(exit.unwrap().success(), "{exit:?}");
    assert!(took < Duration::from_secs(4), "took {took:?} to stop with a 1 s grace period");
    drop((trickle.write_all(b" "), busy.pop()));
}

/// Reads utime + stime of `pid` in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Waits until the process has used no CPU for a while (bounded); returns
/// the ticks used from `from` on.
fn cpu_until_idle(pid: u32, from: u64, limit: Duration) -> u64 {
    let deadline = Instant::now() + limit;
    let mut last = cpu_ticks(pid);
    let mut quiet = 0;
    while Instant::now() < deadline && quiet < 3 {
        std::thread::sleep(Duration::from_millis(200));
        let now = cpu_ticks(pid);
        quiet = if now - last <= 2 { quiet + 1 } else { 0 };
        last = now;
    }
    last - from
}

/// Clients that send a page to check and leave at once: the work queued for
/// them is skipped rather than done for nobody.
#[cfg(target_os = "linux")]
#[test]
fn work_for_clients_that_left_is_not_done() {
    const LEAVERS: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    // The slowest extractor, so that one page's work is measurable.
    let s = start(&dir.path().join("i.db"), &["--workers", "1", "--extractor", "auto"]);
    let pid = s.child.id();
    let page = json!({"url": "https://heavy.test/", "html": heavy_page(400, 8)});
    // What one such page costs.
    let before = cpu_ticks(pid);
    let (status, v) = request(s.addr, "POST", "/v1/check", Some(&page), Duration::from_secs(25));
    assert_eq!(status, 200, "{v}");
    let one = cpu_until_idle(pid, before, Duration::from_secs(10)).max(5);

    let before = cpu_ticks(pid);
    let body = page.to_string();
    let leavers: Vec<TcpStream> = (0..LEAVERS)
        .map(|_| {
            let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
            let head = format!(
                "POST /v1/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            c.write_all(head.as_bytes()).unwrap();
            c.write_all(body.as_bytes()).unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    drop(leavers);
    let spent = cpu_until_idle(pid, before, Duration::from_secs(25));
    println!("one page: {one} ticks; {LEAVERS} pages whose clients left: {spent} ticks");
    assert!(
        spent < one * 5,
        "{spent} CPU ticks spent after {LEAVERS} clients left, {one} for one page: their queued work was done"
    );
    assert!(healthy(s.addr, Duration::from_secs(5)));
}

/// Over the connection limit, a new connection gets a JSON 503 at once
/// rather than waiting; once connections close, requests are served again.
/// Without the token, a request is refused before its body is read.
#[test]
fn connections_over_the_limit_get_a_503_and_no_token_is_refused_before_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--max-connections", "4", "--token", "s3cret"]);
    let held: Vec<TcpStream> =
        (0..4).map(|_| TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let (status, v) = request(s.addr, "GET", "/health", None, Duration::from_secs(5));
    assert_eq!(status, 503, "{v}");
    assert!(v["error"].is_string(), "{v}");
    assert!(t0.elapsed() < Duration::from_secs(2));
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !healthy(s.addr, Duration::from_secs(2)) {
        assert!(Instant::now() < deadline, "not serving again after the held connections closed");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A 4 MB body announced, none sent, no token: 401 at once.
    let mut c = TcpStream::connect_timeout(&s.addr, Duration::from_secs(5)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"POST /v1/check HTTP/1.1\r\nhost: x\r\ncontent-length: 4000000\r\n\r\n").unwrap();
    let (status, v) = read_response(&mut c).expect("no answer without the body");
    assert_eq!(status, 401, "{v}");
}
