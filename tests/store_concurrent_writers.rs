//! Several writers on one index file wait for each other instead of
//! failing with "database is locked" (issue 16): two `Index` handles in one
//! process, two `webdup serve` processes, and `webdup index add` beside a
//! busy server. Every acknowledged page is found afterwards.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[path = "support/serve.rs"]
mod serve_process;

use serde_json::json;
use serve_process::{Server, request, start};

/// How long one request to a busy server may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(40);
use webdup::engine::{Config, Fingerprinter};
use webdup::store::{Index, Page};
use webdup_eval::synth::{SynthConfig, corpus};

fn texts(n: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: 60, copy_share: 0.0, seed, ..Default::default() })
}

#[test]
fn two_index_handles_insert_concurrently_without_failures() {
    const HANDLES: usize = 2;
    const THREADS: usize = 4;
    const PER_THREAD: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let config = Config::default().validate().unwrap();
    let handles: Vec<Arc<Index>> = (0..HANDLES).map(|_| Arc::new(Index::open(&db, &config).unwrap())).collect();
    let t = Arc::new(texts(HANDLES * THREADS * PER_THREAD, 21));
    let mut threads = Vec::new();
    for (h, index) in handles.iter().enumerate() {
        for th in 0..THREADS {
            let (index, t, config) = (index.clone(), t.clone(), config.clone());
            threads.push(std::thread::spawn(move || {
                let fp = Fingerprinter::new(&config);
                let mut failures = Vec::new();
                for i in 0..PER_THREAD {
                    let n = (h * THREADS + th) * PER_THREAD + i;
                    let url = format!("https://two.test/{n}");
                    let f = fp.fingerprint_text(url.clone(), webdup::DocKey::at(n), &t[n]).unwrap();
                    if let Err(e) = index.insert(&Page::new("c", url, f)) {
                        failures.push(e.to_string());
                    }
                }
                failures
            }));
        }
    }
    let failures: Vec<String> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert!(failures.is_empty(), "{} failed inserts, first: {}", failures.len(), failures[0]);
    let index = &handles[0];
    assert_eq!(index.stats().unwrap().pages, (HANDLES * THREADS * PER_THREAD) as u64);
    for n in [0, 1, PER_THREAD * THREADS + 7, HANDLES * THREADS * PER_THREAD - 1] {
        assert_eq!(index.get(&format!("https://two.test/{n}")).unwrap().len(), 1);
    }
    assert_eq!(index.verify().unwrap(), Vec::<String>::new());
}

#[test]
fn two_serve_processes_on_one_index_lose_no_insert() {
    const SERVERS: usize = 2;
    const THREADS: usize = 4;
    const PER_THREAD: usize = 150;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let servers: Vec<Server> = (0..SERVERS).map(|_| start(&db, &[])).collect();
    let t = Arc::new(texts(SERVERS * THREADS * PER_THREAD, 22));
    let started = Instant::now();
    let mut threads = Vec::new();
    for (sv, server) in servers.iter().enumerate() {
        for th in 0..THREADS {
            let (addr, t) = (server.addr, t.clone());
            threads.push(std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                let mut failures = Vec::new();
                for i in 0..PER_THREAD {
                    let n = (sv * THREADS + th) * PER_THREAD + i;
                    let url = format!("https://pair.test/{n}");
                    let (status, v) =
                        request(addr, "POST", "/v1/pages", Some(&json!({"url": url, "text": t[n]})), REQUEST_LIMIT);
                    if status == 201 {
                        acknowledged.push(url);
                    } else {
                        failures.push(format!("{status} {v}"));
                    }
                }
                (acknowledged, failures)
            }));
        }
    }
    let mut acknowledged = Vec::new();
    let mut failures = Vec::new();
    for t in threads {
        let (a, f) = t.join().unwrap();
        acknowledged.extend(a);
        failures.extend(f);
    }
    println!(
        "{} inserts through {SERVERS} servers in {:.1}s, {} failed",
        SERVERS * THREADS * PER_THREAD,
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} inserts failed, first: {}",
        failures.len(),
        acknowledged.len() + failures.len(),
        failures[0]
    );
    // Each server finds every page, whichever server stored it.
    for (i, url) in acknowledged.iter().enumerate() {
        let server = &servers[i % SERVERS];
        let q: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
        let (status, v) = request(server.addr, "GET", &format!("/v1/pages?url={q}"), None, REQUEST_LIMIT);
        assert_eq!(status, 200, "{url}: {v}");
    }
    drop(servers);
    let index = Index::open_existing(&db).unwrap();
    assert_eq!(index.stats().unwrap().pages, (SERVERS * THREADS * PER_THREAD) as u64);
    assert_eq!(index.verify().unwrap(), Vec::<String>::new());
}

#[test]
fn index_add_beside_a_busy_server_stores_every_page() {
    const PAGES: usize = 600;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    for (i, text) in texts(PAGES, 23).iter().enumerate() {
        let html =
            format!("<html><head><title>Page {i}</title></head><body><article><p>{text}</p></article></body></html>");
        std::fs::write(pages.join(format!("{i:04}.html")), html).unwrap();
    }
    let server = start(&db, &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let load_texts = Arc::new(texts(4000, 24));
    let load: Vec<_> = (0..4)
        .map(|th| {
            let (addr, stop, t) = (server.addr, stop.clone(), load_texts.clone());
            std::thread::spawn(move || {
                let (mut ok, mut failed) = (0usize, Vec::new());
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    let n = (th * 1000 + i) % t.len();
                    let body = json!({"url": format!("https://busy.test/{th}/{i}"), "text": t[n]});
                    match request(addr, "POST", "/v1/pages", Some(&body), REQUEST_LIMIT) {
                        (201, _) => ok += 1,
                        (status, v) => failed.push(format!("{status} {v}")),
                    }
                    i += 1;
                }
                (ok, failed)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["index", "add", "--crawl", "batch", "--batch", "50", "--index"])
        .arg(&db)
        .arg(&pages)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let mut served = 0;
    for t in load {
        let (ok, failed) = t.join().unwrap();
        assert!(failed.is_empty(), "{} inserts through serve failed, first: {}", failed.len(), failed[0]);
        served += ok;
    }
    assert!(out.status.success(), "index add: {:?}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(served > 0, "the server was not busy");
    let (status, v) = request(server.addr, "GET", "/v1/stats", None, REQUEST_LIMIT);
    assert_eq!(status, 200);
    let batch = v["crawls"].as_array().unwrap().iter().find(|c| c["crawl"] == "batch").cloned();
    assert_eq!(batch.as_ref().and_then(|c| c["pages"].as_u64()), Some(PAGES as u64), "{v}");
    println!("index add stored {PAGES} pages while serve stored {served}");
}
