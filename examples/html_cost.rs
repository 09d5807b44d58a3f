//! What real pages cost the extractors, as the page-cost guard estimates it
//! (`webdup::extract::guard`), beside the depth html5ever really builds:
//! the margins between real pages and [`PageBudget`]'s limits.
//!
//! ```text
//! cargo run --release --example html_cost -- ../shared/data/wcxb-dev/html ../shared/data/aeb/html
//! ```
//!
//! Reads `.html` and `.html.gz` files; prints the largest figures and the
//! 99th percentile of each, the time the scan takes per page, and any page
//! whose scanned depth (plus misnesting) is below the parser's, which would
//! be a hole in the guard.

use std::io::Read;
use std::time::{Duration, Instant};

use webdup::extract::guard::{dom_depth, scan};
use webdup::extract::{HtmlCost, PageBudget};

fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    if dirs.is_empty() {
        eprintln!("usage: html_cost DIR...");
        std::process::exit(2);
    }
    let unlimited = PageBudget {
        max_depth: usize::MAX,
        max_elements: usize::MAX,
        max_attribute_work: u64::MAX,
        max_nesting_work: u64::MAX,
    };
    let mut rows: Vec<(String, HtmlCost, usize)> = Vec::new();
    let mut scan_time = Duration::ZERO;
    let mut bytes = 0usize;
    for dir in &dirs {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().contains(".htm"))
            .collect();
        paths.sort();
        for path in paths {
            let raw = std::fs::read(&path).expect("read");
            let mut html = Vec::new();
            if path.extension().is_some_and(|e| e == "gz") {
                flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut html).expect("gunzip");
            } else {
                html = raw;
            }
            let html = String::from_utf8_lossy(&html).into_owned();
            bytes += html.len();
            let t = Instant::now();
            let cost = scan(&html, &unlimited);
            scan_time += t.elapsed();
            rows.push((path.display().to_string(), cost, dom_depth(&html)));
        }
    }
    let n = rows.len();
    if n == 0 {
        eprintln!("no pages");
        std::process::exit(2);
    }
    let budget = PageBudget::default();
    println!("{n} pages, {:.1} MB; scan {:.0} MB/s", bytes as f64 / 1e6, bytes as f64 / 1e6 / scan_time.as_secs_f64());
    let stat = |name: &str, limit: u64, f: &dyn Fn(&(String, HtmlCost, usize)) -> u64| {
        let mut v: Vec<(u64, &str)> = rows.iter().map(|r| (f(r), r.0.as_str())).collect();
        v.sort();
        let p99 = v[(n * 99 / 100).min(n - 1)].0;
        let (max, at) = v[n - 1];
        println!("{name:<22} p99 {p99:>10}  max {max:>10}  limit {limit:>10}  ({at})");
    };
    stat("depth (scan)", budget.max_depth as u64, &|r| r.1.depth as u64);
    stat("depth (html5ever)", budget.max_depth as u64, &|r| r.2 as u64);
    stat("misnested", 0, &|r| r.1.misnested as u64);
    stat("elements", budget.max_elements as u64, &|r| r.1.elements as u64);
    stat("attribute work", budget.max_attribute_work, &|r| r.1.attribute_work);
    stat("nesting work", budget.max_nesting_work, &|r| r.1.nesting_work);
    let exact = rows.iter().filter(|r| r.1.depth + r.1.misnested > budget.max_depth / 8).count();
    println!("pages that would be parsed to measure their depth: {exact}");
    let holes: Vec<_> = rows.iter().filter(|r| r.1.depth + r.1.misnested < r.2).collect();
    println!("pages the scan underestimates: {}", holes.len());
    for (path, cost, real) in holes.iter().take(10) {
        println!("  {path}: scan {} + {} misnested < html5ever {real}", cost.depth, cost.misnested);
    }
}
