//! The serve API used as a library (`webdup::serve`), in this
//! process, on an ordinary tokio runtime: deep pages are extracted on the
//! router's own large-stack threads, not on the runtime's 2 MiB ones, and
//! `serve` returns within its grace period after the shutdown signal even
//! with a request stuck in flight.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use webdup::engine::Config;
use webdup::serve::{self, ServeConfig};
use webdup::store::Index;

fn post(port: u16, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(25))).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, text)
}

#[test]
fn library_serve_extracts_deep_pages_and_stops_within_its_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    // A caller that accepts deeper and costlier pages than the default
    // budget: 7,000 nested spans overflow a 2 MiB stack (tokio's blocking
    // threads) in extraction, but not the router's worker threads.
    let mut config = Config::default().validate().unwrap();
    config.budget.max_depth = 10_000;
    config.budget.max_nesting_work = u64::MAX;
    let index = Arc::new(Index::open(dir.path().join("i.db"), &config).unwrap());
    let serve_config = ServeConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        shutdown_grace: Duration::from_millis(500),
        body_timeout: Duration::from_secs(60),
        ..ServeConfig::default()
    }
    .validate()
    .unwrap();
    // Default thread stacks, as a library caller's runtime would have.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind(serve_config.bind)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = serve::router(index, &config, &serve_config).unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(async move {
        serve::serve(listener, router, &serve_config, async {
            let _ = stop_rx.await;
        })
        .await
    });

    let deep = format!(
        "<html><body>{}the river path was restored this spring with new gravel{}</body></html>",
        "<span>".repeat(7000),
        "</span>".repeat(7000)
    );
    let body = serde_json::json!({"url": "https://deep.test/", "html": deep}).to_string();
    let (status, text) = post(port, "/v1/check", &body);
    assert_eq!(status, 200, "{text}");

    // A request whose body never completes, then the signal.
    let mut stuck = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "POST /v1/pages HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{"
    );
    stuck.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    stop_tx.send(()).unwrap();
    let result = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(5), server).await });
    let took = t0.elapsed();
    assert!(result.is_ok(), "serve still running 5 s after the signal");
    result.unwrap().unwrap().unwrap();
    assert!(took < Duration::from_secs(2), "{took:?}");
    drop(stuck);
}
