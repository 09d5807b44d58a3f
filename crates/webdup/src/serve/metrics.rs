//! What `/metrics` reports: request counts and latencies by route, pages
//! checked and inserted, in the Prometheus text format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use axum::http::StatusCode;

use crate::store::Stats;

/// Upper bounds, in seconds, of the request latency histogram's buckets:
/// from a `/health` answer to a batch of large pages.
const LATENCY_BUCKETS: [f64; 13] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// What `/metrics` reports, counted since the router started. Labels come
/// from fixed sets (routes, methods, status codes), so a plain map under a
/// mutex stays small; the lock is held for an increment or a render.
#[derive(Default)]
pub(super) struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, &'static str), Answered>>,
    pages_checked: AtomicU64,
    pages_seen: AtomicU64,
    pages_inserted: AtomicU64,
}

/// The answers of one route to one method.
#[derive(Default)]
struct Answered {
    by_status: BTreeMap<u16, u64>,
    /// Answers per latency bucket (not cumulative: the exposition sums
    /// them); slower answers than the last bound are only in `count`.
    buckets: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    seconds: f64,
}

impl Metrics {
    pub(super) fn answered(&self, endpoint: &'static str, method: &'static str, status: StatusCode, took: Duration) {
        let seconds = took.as_secs_f64();
        let mut requests = lock(&self.requests);
        let a = requests.entry((endpoint, method)).or_default();
        *a.by_status.entry(status.as_u16()).or_default() += 1;
        if let Some(bucket) = LATENCY_BUCKETS.iter().position(|&le| seconds <= le) {
            a.buckets[bucket] += 1;
        }
        a.count += 1;
        a.seconds += seconds;
    }

    /// `pages` were checked, of which `seen` had been seen.
    pub(super) fn checked(&self, pages: u64, seen: u64) {
        self.pages_checked.fetch_add(pages, Ordering::Relaxed);
        self.pages_seen.fetch_add(seen, Ordering::Relaxed);
    }

    pub(super) fn inserted(&self, pages: u64) {
        self.pages_inserted.fetch_add(pages, Ordering::Relaxed);
    }

    /// The Prometheus text exposition (format 0.0.4). Label values are
    /// routes, methods and status codes, none of which needs escaping.
    pub(super) fn render(&self, index: Option<&Stats>) -> String {
        let mut out = String::new();
        let family = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        {
            let requests = lock(&self.requests);
            family(
                &mut out,
                "webdup_http_requests_total",
                "counter",
                "Requests answered, by route (other: no such route), method and status.",
            );
            for ((endpoint, method), a) in requests.iter() {
                for (status, n) in &a.by_status {
                    let _ = writeln!(
                        out,
                        "webdup_http_requests_total{{endpoint=\"{endpoint}\",method=\"{method}\",status=\"{status}\"}} {n}"
                    );
                }
            }
            family(
                &mut out,
                "webdup_http_request_duration_seconds",
                "histogram",
                "Time from a request's arrival to its answer's headers, by route and method.",
            );
            for ((endpoint, method), a) in requests.iter() {
                let labels = format!("endpoint=\"{endpoint}\",method=\"{method}\"");
                let mut cumulative = 0;
                for (le, n) in LATENCY_BUCKETS.iter().zip(a.buckets) {
                    cumulative += n;
                    let _ = writeln!(
                        out,
                        "webdup_http_request_duration_seconds_bucket{{{labels},le=\"{le}\"}} {cumulative}"
                    );
                }
                let _ =
                    writeln!(out, "webdup_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}", a.count);
                let _ = writeln!(out, "webdup_http_request_duration_seconds_sum{{{labels}}} {}", a.seconds);
                let _ = writeln!(out, "webdup_http_request_duration_seconds_count{{{labels}}} {}", a.count);
            }
        }
        let counters = [
            (
                "webdup_pages_checked_total",
                "Pages checked against the index (alone, in batches, or before an insert).",
                &self.pages_checked,
            ),
            (
                "webdup_pages_seen_total",
                "Pages checked whose content the index held, exactly or nearly.",
                &self.pages_seen,
            ),
            ("webdup_pages_inserted_total", "Pages stored in the index.", &self.pages_inserted),
        ];
        for (name, help, n) in counters {
            family(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", n.load(Ordering::Relaxed));
        }
        family(&mut out, "webdup_index_up", "gauge", "1 when the index gauges below could be read for this scrape.");
        let _ = writeln!(out, "webdup_index_up {}", u8::from(index.is_some()));
        if let Some(st) = index {
            let gauges = [
                ("webdup_index_pages", "Pages in the index, all crawls.", st.pages),
                ("webdup_index_pages_with_content", "Pages in the index with a fingerprint.", st.with_content),
                ("webdup_index_distinct_urls", "Distinct URLs in the index.", st.distinct_urls),
                (
                    "webdup_index_pending_pages",
                    "Pages whose band keys are not merged into the band table yet.",
                    st.pending_pages,
                ),
                ("webdup_index_file_bytes", "Size of the index file, in bytes.", st.file_bytes),
            ];
            for (name, help, value) in gauges {
                family(&mut out, name, "gauge", help);
                let _ = writeln!(out, "{name} {value}");
            }
        }
        out
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while counting leaves the counts usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
