//! Fetch throughput: fetches and decodes N pages from a local server with
//! per-host limits lifted, and prints pages/s. Driven by
//! `scripts/bench-fetch.sh`, which starts the server and measures memory.
//!
//! Usage: `fetch_bench BASE_URL COUNT [CONCURRENCY]`, fetching
//! `BASE_URL/p/<i>.html` for i in 0..COUNT.

use std::time::{Duration, Instant};

use webdup::engine::Quiet;
use webdup::fetch::{FetchConfig, Fetcher};
use webdup::source::{DocKey, Location, Source};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: fetch_bench BASE_URL COUNT [CONCURRENCY]");
        std::process::exit(2);
    }
    let base = args[1].trim_end_matches('/');
    let count: usize = args[2].parse().expect("COUNT must be a number");
    let concurrency: usize = args.get(3).map_or(64, |c| c.parse().expect("CONCURRENCY must be a number"));
    let sources: Vec<Source> = (0..count)
        .map(|i| {
            let url = format!("{base}/p/{i}.html");
            Source { id: url.clone(), key: DocKey::at(i), location: Location::Url(url) }
        })
        .collect();
    let config =
        FetchConfig { concurrency, per_host: concurrency, delay: Duration::ZERO, threads: 2, ..Default::default() };
    let fetcher = Fetcher::new(config).expect("valid config");
    let start = Instant::now();
    let (mut ok, mut failed, mut bytes, mut chars) = (0usize, 0usize, 0u64, 0usize);
    let mut first_error = None;
    fetcher.for_each(sources, &Quiet, |o| {
        bytes += o.record.bytes;
        match o.into_document() {
            Ok(doc) => {
                ok += 1;
                chars += doc.body.len();
            }
            Err(e) => {
                failed += 1;
                first_error.get_or_insert(e.to_string());
            }
        }
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fetched {ok} pages ({failed} failed) in {secs:.2} s: {:.0} pages/s, {:.1} MB received, {chars} chars decoded",
        (ok + failed) as f64 / secs,
        bytes as f64 / 1e6
    );
    if let Some(e) = first_error {
        println!("first error: {e}");
    }
}
