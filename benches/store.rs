//! Index throughput at scale: inserts N synthetic pages (default 1,000,000)
//! into a fresh SQLite index, then times checks of indexed and unseen pages.
//!
//! `cargo bench --bench store` (STORE_BENCH_PAGES, STORE_BENCH_WORDS and
//! STORE_BENCH_DIR override the size, words per page and where the file goes;
//! STORE_BENCH_TEXT=0 leaves the main texts out, as `index add --no-text`;
//! STORE_BENCH_KEEP=1 keeps the file for inspection; STORE_BENCH_ONE_RULE=1
//! makes an index with one threshold for every pair, whose band table is
//! built for 0.8 instead of the cross-site 0.5). Prints pages/s for
//! inserts (overall and for the last 100,000 pages, with the slowest batch),
//! checks/s and p50/p99 check latency, and bytes on disk per page.

use std::time::{Duration, Instant};

use rayon::prelude::*;
use webdup::DocKey;
use webdup::engine::{Config, Fingerprint, Fingerprinter};
use webdup::store::{Index, Page};
use webdup_eval::synth::{SynthConfig, corpus};

const CHUNK: usize = 10_000;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn fingerprints(fp: &Fingerprinter, seed: u64, words: usize, base: usize) -> Vec<Fingerprint> {
    batch(fp, seed, words, base, false).into_iter().filter_map(|p| p.fingerprint).collect()
}

fn batch(fp: &Fingerprinter, seed: u64, words: usize, base: usize, text: bool) -> Vec<Page> {
    let texts = corpus(&SynthConfig { documents: CHUNK, words_per_document: words, seed, ..Default::default() });
    texts
        .into_par_iter()
        .enumerate()
        .map(|(i, t)| {
            let f = fp.fingerprint_text(format!("{}", base + i), DocKey::at(base + i), &t).unwrap();
            let mut page = Page::new("bench", format!("https://bench.test/{}", f.id), f);
            // Stored with the page, as `index add` does by default.
            page.record.text = text.then_some(t);
            page
        })
        .collect()
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs this too, briefly.
    let quick = std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let pages = if quick { 20_000 } else { env("STORE_BENCH_PAGES", 1_000_000) };
    let words = env("STORE_BENCH_WORDS", 200);
    let text = env("STORE_BENCH_TEXT", 1) != 0;
    let dir = match std::env::var("STORE_BENCH_DIR") {
        Ok(d) => tempfile::tempdir_in(d).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    };
    let path = dir.path().join("bench.db");
    let mut config = Config::default();
    if env("STORE_BENCH_ONE_RULE", 0) != 0 {
        config.matching.cross_site_threshold = None;
    }
    let config = config.validate().unwrap();
    let fp = Fingerprinter::new(&config);
    let index = Index::open(&path, &config).unwrap();
    let settings = index.settings();
    println!(
        "thresholds {} / cross-site {:?}: {} bands of {} rows",
        settings.threshold, settings.cross_site_threshold, settings.bands, settings.rows
    );

    let (mut insert_time, mut fingerprint_time) = (Duration::ZERO, Duration::ZERO);
    // Insert time of the last 100,000 pages (10 chunks), so a slowdown as
    // the index grows shows apart from the average.
    let (mut interval_start, mut last_interval) = (Duration::ZERO, (0usize, Duration::ZERO));
    // The batches that merge pending band keys take longest.
    let mut slowest_batch = Duration::ZERO;
    let chunks = pages.div_ceil(CHUNK);
    for c in 0..chunks {
        let t0 = Instant::now();
        let batch = batch(&fp, c as u64 + 1, words, c * CHUNK, text);
        fingerprint_time += t0.elapsed();
        for part in batch.chunks(1000) {
            let t0 = Instant::now();
            index.insert_batch(part).unwrap();
            let t = t0.elapsed();
            insert_time += t;
            slowest_batch = slowest_batch.max(t);
        }
        if (c + 1) % 10 == 0 || c + 1 == chunks {
            let pages_in_interval = (c % 10 + 1) * CHUNK;
            last_interval = (pages_in_interval, insert_time - interval_start);
            interval_start = insert_time;
            eprintln!(
                "{} pages inserted, {:.0} pages/s; last {pages_in_interval}: {:.0} pages/s",
                (c + 1) * CHUNK,
                ((c + 1) * CHUNK) as f64 / insert_time.as_secs_f64(),
                pages_in_interval as f64 / last_interval.1.as_secs_f64()
            );
        }
    }
    let total = chunks * CHUNK;

    // Checks: pages from the first chunk (indexed: exact hits) and a fresh
    // seed (unseen: only LSH lookups and any near candidates).
    let seen = fingerprints(&fp, 1, words, 0);
    let unseen = fingerprints(&fp, 1_000_000, words, 0);
    let mut latencies = Vec::new();
    let (mut hits, mut candidates) = (0usize, 0usize);
    let t0 = Instant::now();
    for f in seen.iter().take(5000).chain(unseen.iter().take(5000)) {
        let t = Instant::now();
        let r = index.check(f).unwrap();
        latencies.push(t.elapsed());
        hits += usize::from(r.seen());
        candidates += r.candidates;
    }
    let check_time = t0.elapsed();
    latencies.sort();
    let checks = latencies.len();

    let stats = index.stats().unwrap();
    drop(index);
    let on_disk: u64 = ["bench.db", "bench.db-wal", "bench.db-shm"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.path().join(f)).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "store bench: {total} pages of {words} words, {} bands x {} rows, texts {}",
        stats.settings.bands,
        stats.settings.rows,
        if text { "stored" } else { "not stored" }
    );
    println!("  fingerprinting (not counted below): {:.0} pages/s", total as f64 / fingerprint_time.as_secs_f64());
    println!(
        "  insert: {:.0} pages/s ({:.1}s, batches of 1000); last {} pages: {:.0} pages/s; slowest batch {:?}",
        total as f64 / insert_time.as_secs_f64(),
        insert_time.as_secs_f64(),
        last_interval.0,
        last_interval.0 as f64 / last_interval.1.as_secs_f64(),
        slowest_batch
    );
    println!(
        "  check: {:.0} checks/s one thread; latency p50 {:?}, p99 {:?}, max {:?}; {hits} of {checks} seen, {:.1} candidates per check",
        checks as f64 / check_time.as_secs_f64(),
        latencies[checks / 2],
        latencies[checks * 99 / 100],
        latencies[checks - 1],
        candidates as f64 / checks as f64
    );
    println!(
        "  on disk: {} bytes = {:.0} bytes per page ({} band keys, of {} pages pending a merge)",
        on_disk,
        on_disk as f64 / total as f64,
        stats.band_rows,
        stats.pending_pages
    );
    if std::env::var("STORE_BENCH_KEEP").is_ok() {
        eprintln!("kept {}", dir.keep().display());
    }
}
