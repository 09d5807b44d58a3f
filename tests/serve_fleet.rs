//! `webdup serve` for crawler fleets, over real HTTP on 127.0.0.1: the
//! atomic check-and-insert under concurrent near copies, the batch forms
//! (order, copies inside a batch, refusals that store nothing), `/metrics`
//! as Prometheus text, `/openapi.yaml` as the repository's file, and the
//! token on the new endpoints.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Barrier};
use std::time::Duration;

#[path = "support/serve.rs"]
mod serve_process;

use serde_json::{Value, json};
use serve_process::{call, request, start};
use webdup_eval::synth::{SynthConfig, corpus};

fn texts(n: usize, words: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: words, copy_share: 0.0, seed, ..Default::default() })
}

/// `text` with its `at`-th word replaced: a near copy (one word in hundreds
/// changes a handful of shingles).
fn edited(text: &str, at: usize) -> String {
    text.split(' ').enumerate().map(|(i, w)| if i == at { "rewordedhere" } else { w }).collect::<Vec<_>>().join(" ")
}

fn html(title: &str, text: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><article><p>{text}</p></article></body></html>")
}

async fn stored_pages(c: &reqwest::Client, base: &str, token: Option<&str>) -> u64 {
    let (st, v) = call(c, reqwest::Method::GET, &format!("{base}/v1/stats"), None, token).await;
    assert_eq!(st, 200, "{v}");
    v["pages"].as_u64().unwrap()
}

/// The URLs a check answer matched: identical, same text or near.
fn matched(v: &Value) -> BTreeSet<String> {
    ["identical", "same_text", "near"]
        .iter()
        .flat_map(|k| v[k].as_array().unwrap().iter().map(|m| m["url"].as_str().unwrap().to_owned()))
        .collect()
}

/// 10 groups of 4 near copies (a text, an exact copy, two copies with one
/// different word each), each group's 4 pages posted by 4 of 8 threads at
/// once behind a barrier, to a server with 8 workers: whichever arrives
/// first, exactly one page per group is answered `new: true`, the others
/// are told about pages of their own group only, and every page is stored.
#[test]
fn check_and_insert_tells_exactly_one_of_near_copies_posted_at_once_that_it_is_new() {
    const GROUPS: usize = 10;
    const COPIES: usize = 4;
    const THREADS: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--workers", "8"]);
    let base = texts(GROUPS, 400, 21);
    let page = |group: usize, copy: usize| {
        let text = match copy {
            0 | 1 => base[group].clone(),
            2 => edited(&base[group], 100),
            _ => edited(&base[group], 300),
        };
        json!({"url": format!("https://g{group}.test/{copy}"), "text": text})
    };
    let barrier = Arc::new(Barrier::new(THREADS));
    let addr = s.addr;
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let barrier = barrier.clone();
            let pages: Vec<(usize, Value)> = (0..GROUPS * COPIES / THREADS)
                .map(|round| {
                    // Two groups per round; which copy a thread posts turns
                    // with the rounds, so that every copy gets to race.
                    let group = round * (THREADS / COPIES) + thread / COPIES;
                    (group, page(group, (thread + round) % COPIES))
                })
                .collect();
            std::thread::spawn(move || {
                pages
                    .into_iter()
                    .map(|(group, body)| {
                        barrier.wait();
                        let (status, v) =
                            request(addr, "POST", "/v1/check-and-insert", Some(&body), Duration::from_secs(60));
                        assert_eq!(status, 201, "{v}");
                        (group, v)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut by_group: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    for t in threads {
        for (group, v) in t.join().unwrap() {
            by_group.entry(group).or_default().push(v);
        }
    }
    assert_eq!(by_group.len(), GROUPS);
    for (group, answers) in &by_group {
        assert_eq!(answers.len(), COPIES);
        let new: Vec<&Value> = answers.iter().filter(|v| v["new"].as_bool().unwrap()).collect();
        assert_eq!(new.len(), 1, "group {group}: {} pages heard they were new: {answers:#?}", new.len());
        assert!(matched(new[0]).is_empty() && new[0]["seen"] == false, "{}", new[0]);
        let own = format!("https://g{group}.test/");
        for v in answers.iter().filter(|v| v["new"] == false) {
            let m = matched(v);
            assert!(v["seen"] == true && !m.is_empty(), "group {group}: {v}");
            assert!(m.iter().all(|u| u.starts_with(&own)), "group {group} matched another group: {v}");
            assert!(!m.contains(v["url"].as_str().unwrap()), "a page matched itself: {v}");
        }
        let ids: BTreeSet<i64> = answers.iter().map(|v| v["id"].as_i64().unwrap()).collect();
        assert_eq!(ids.len(), COPIES, "each page got its own row");
    }
    let index = webdup::store::Index::open_existing(dir.path().join("i.db")).unwrap();
    assert_eq!(index.stats().unwrap().pages, (GROUPS * COPIES) as u64);
    for group in 0..GROUPS {
        for copy in 0..COPIES {
            assert_eq!(index.get(&format!("https://g{group}.test/{copy}")).unwrap().len(), 1);
        }
    }
}

/// The race `/v1/check-and-insert` closes, in the order that loses: two
/// crawlers each check their copy (both hear "not seen") before either
/// inserts, so both take their page for new. The same two steps as
/// check-and-insert calls tell the second crawler about the first page.
#[tokio::test]
async fn check_then_insert_lets_two_crawlers_both_hear_new_where_check_and_insert_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &[]);
    let c = reqwest::Client::new();
    let t = texts(2, 300, 5);
    use reqwest::Method as M;
    let post = |path: &str, url: &str, text: &str| {
        let (c, path, body) = (c.clone(), format!("{}{path}", s.base()), json!({"url": url, "text": text}));
        async move { call(&c, M::POST, &path, Some(body), None).await }
    };

    let (_, a) = post("/v1/check", "https://a.test/1", &t[0]).await;
    let (_, b) = post("/v1/check", "https://b.test/1", &edited(&t[0], 50)).await;
    assert_eq!((a["seen"].as_bool(), b["seen"].as_bool()), (Some(false), Some(false)), "{a} {b}");
    assert_eq!(post("/v1/pages", "https://a.test/1", &t[0]).await.0, 201);
    assert_eq!(post("/v1/pages", "https://b.test/1", &edited(&t[0], 50)).await.0, 201);

    let (st, a) = post("/v1/check-and-insert", "https://a.test/2", &t[1]).await;
    assert_eq!((st, a["new"].as_bool()), (201, Some(true)), "{a}");
    let (st, b) = post("/v1/check-and-insert", "https://b.test/2", &edited(&t[1], 50)).await;
    assert_eq!((st, b["new"].as_bool(), b["seen"].as_bool()), (201, Some(false), Some(true)), "{b}");
    assert_eq!(b["near"][0]["url"], "https://a.test/2", "{b}");
    assert_eq!(b["crawl"], "api");
    assert!(b["id"].as_i64().unwrap() > a["id"].as_i64().unwrap());
    assert_eq!(stored_pages(&c, &s.base(), None).await, 4);
}

/// Page `i` of the batch: every fourth page (3, 7, ...) is a copy of the
/// page three before it, identical when `i % 8 == 3`, with one word changed
/// otherwise; pages `4k + 1` are HTML, the others text.
fn batch_page(t: &[String], i: usize) -> Value {
    let url = format!("https://batch.test/{i}");
    if i % 4 == 3 {
        let original = &t[i - 3];
        let text = if i % 8 == 3 { original.clone() } else { edited(original, 40) };
        json!({"url": url, "text": text, "crawl": "fleet"})
    } else if i % 4 == 1 {
        json!({"url": url, "html": html(&format!("Page {i}"), &t[i]), "crawl": "fleet"})
    } else {
        json!({"url": url, "text": t[i], "crawl": "fleet"})
    }
}

#[tokio::test]
async fn batches_answer_in_order_see_copies_inside_the_batch_and_refuse_bad_pages_whole() {
    const PAGES: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &[]);
    let c = reqwest::Client::new();
    let t = texts(PAGES, 200, 8);
    use reqwest::Method as M;
    let url = |path: &str| format!("{}{path}", s.base());

    let pages: Vec<Value> = (0..PAGES).map(|i| batch_page(&t, i)).collect();
    let (st, v) = call(&c, M::POST, &url("/v1/check-and-insert/batch"), Some(json!({"pages": pages})), None).await;
    assert_eq!(st, 201, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), PAGES);
    let mut ids = Vec::new();
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["url"], format!("https://batch.test/{i}"), "results in the pages' order");
        assert_eq!(r["crawl"], "fleet");
        ids.push(r["id"].as_i64().unwrap());
        if i % 4 == 3 {
            let kind = if i % 8 == 3 { "identical" } else { "near" };
            assert_eq!((r["new"].as_bool(), r["seen"].as_bool()), (Some(false), Some(true)), "{i}: {r}");
            assert_eq!(r[kind][0]["url"], format!("https://batch.test/{}", i - 3), "{i}: {r}");
        } else {
            assert_eq!(r["new"].as_bool(), Some(true), "{i}: {r}");
            assert!(matched(r).is_empty(), "{i}: {r}");
        }
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "one row per page, in order: {ids:?}");
    assert_eq!(stored_pages(&c, &s.base(), None).await, PAGES as u64);

    // The same contents under other URLs: all seen, in order; the batch's
    // pages are checked against the index only.
    let again: Vec<Value> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut p = p.clone();
            p["url"] = json!(format!("https://again.test/{i}"));
            p.as_object_mut().unwrap().remove("crawl");
            p
        })
        .collect();
    let (st, v) = call(&c, M::POST, &url("/v1/check/batch"), Some(json!({"pages": again})), None).await;
    assert_eq!(st, 200, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), PAGES);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["url"], format!("https://again.test/{i}"));
        assert_eq!(r["seen"].as_bool(), Some(true), "{i}: {r}");
        assert!(matched(r).contains(&format!("https://batch.test/{i}")), "{i}: {r}");
        assert!(r.get("id").is_none() && r.get("new").is_none(), "a check stores nothing: {r}");
    }
    assert_eq!(stored_pages(&c, &s.base(), None).await, PAGES as u64);

    // Refusals: JSON errors, and nothing stored.
    let fresh = texts(6, 120, 99);
    let tiny: Vec<Value> = (0..=webdup::serve::MAX_BATCH_PAGES)
        .map(|i| json!({"url": format!("https://big.test/{i}"), "text": "a few words here"}))
        .collect();
    let no_text: Vec<Value> = (0..5)
        .map(|i| {
            let text = if i == 2 { "   " } else { fresh[i].as_str() };
            json!({"url": format!("https://bad.test/{i}"), "text": text})
        })
        .collect();
    let malformed: Vec<Value> = (0..5)
        .map(|i| match i {
            1 => json!({"url": "https://bad.test/1"}),
            3 => json!({"url": "https://bad.test/3", "text": fresh[3], "colour": "red"}),
            _ => json!({"url": format!("https://bad.test/{i}"), "text": fresh[i]}),
        })
        .collect();
    for path in ["/v1/check-and-insert/batch", "/v1/pages/batch", "/v1/check/batch"] {
        let (st, v) = call(&c, M::POST, &url(path), Some(json!({"pages": tiny})), None).await;
        assert_eq!(st, 413, "{path}: {v}");
        assert!(v["error"].as_str().unwrap().contains("at most 1000 pages"), "{path}: {v}");

        let (st, v) = call(&c, M::POST, &url(path), Some(json!({"pages": no_text})), None).await;
        assert_eq!(st, 422, "{path}: {v}");
        assert!(v["error"].as_str().unwrap().contains("pages[2]"), "{path}: {v}");
        let failures = v["failures"].as_array().unwrap();
        assert_eq!(failures.len(), 1, "{path}: {v}");
        assert_eq!((failures[0]["index"].as_u64(), failures[0]["url"].as_str()), (Some(2), Some("https://bad.test/2")));

        let (st, v) = call(&c, M::POST, &url(path), Some(json!({"pages": malformed})), None).await;
        assert_eq!(st, 400, "{path}: {v}");
        let indexes: Vec<u64> =
            v["failures"].as_array().unwrap().iter().map(|f| f["index"].as_u64().unwrap()).collect();
        assert_eq!(indexes, [1, 3], "{path}: every bad page is named: {v}");
        assert!(v["failures"][0]["error"].as_str().unwrap().contains("exactly one of"), "{v}");
        assert!(v["failures"][1]["error"].as_str().unwrap().contains("colour"), "{v}");

        let (st, v) = call(&c, M::POST, &url(path), Some(json!({"pages": [], "extra": 1})), None).await;
        assert_eq!(st, 400, "{path}: {v}");
        assert!(v["error"].is_string());
    }
    assert_eq!(stored_pages(&c, &s.base(), None).await, PAGES as u64, "a refused batch stores nothing");

    // Once the bad page is dropped, the rest goes in, in one request.
    let good: Vec<Value> = no_text.iter().enumerate().filter(|(i, _)| *i != 2).map(|(_, p)| p.clone()).collect();
    let (st, v) = call(&c, M::POST, &url("/v1/pages/batch"), Some(json!({"pages": good})), None).await;
    assert_eq!(st, 201, "{v}");
    let results = v["results"].as_array().unwrap();
    let urls: Vec<&str> = results.iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["https://bad.test/0", "https://bad.test/1", "https://bad.test/3", "https://bad.test/4"]);
    assert!(results.iter().all(|r| r["id"].is_i64() && r["crawl"] == "api"), "{v}");
    assert_eq!(stored_pages(&c, &s.base(), None).await, PAGES as u64 + 4);
    let (st, v) = call(&c, M::POST, &url("/v1/check-and-insert/batch"), Some(json!({"pages": []})), None).await;
    assert_eq!((st, v["results"].as_array().map(Vec::len)), (201, Some(0)), "{v}");
}

/// One sample of a Prometheus text exposition.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Parses the text exposition format strictly enough to catch a malformed
/// line: `# HELP name text`, `# TYPE name kind`, and samples
/// `name{label="value",...} number` whose family was declared before.
fn parse_prometheus(text: &str) -> Vec<Sample> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut helps = BTreeSet::new();
    let mut samples = Vec::new();
    assert!(text.ends_with('\n'), "the exposition ends with a newline");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or_else(|| panic!("HELP without text: {line}"));
            assert!(is_metric_name(name) && !help.is_empty(), "{line}");
            assert!(helps.insert(name.to_owned()), "HELP twice: {line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or_else(|| panic!("TYPE without a kind: {line}"));
            assert!(is_metric_name(name), "{line}");
            assert!(["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind), "{line}");
            assert!(helps.contains(name), "TYPE before HELP: {line}");
            assert!(types.insert(name.to_owned(), kind.to_owned()).is_none(), "TYPE twice: {line}");
            continue;
        }
        assert!(!line.starts_with('#') && !line.is_empty(), "unexpected line: {line:?}");
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("not a number: {line}")),
        };
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').unwrap_or_else(|| panic!("unclosed labels: {line}"));
                let labels = inner
                    .split(',')
                    .map(|pair| {
                        let (k, v) = pair.split_once('=').unwrap_or_else(|| panic!("bad label {pair:?}: {line}"));
                        let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
                        let v = v.unwrap_or_else(|| panic!("unquoted label value: {line}"));
                        assert!(is_metric_name(k) && !v.contains('"'), "{line}");
                        (k.to_owned(), v.to_owned())
                    })
                    .collect();
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        assert!(is_metric_name(name), "{line}");
        let family = match types.get(name) {
            Some(_) => name,
            None => ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    name.strip_suffix(suffix).filter(|f| types.get(*f).is_some_and(|k| k == "histogram"))
                })
                .unwrap_or_else(|| panic!("sample of an undeclared family: {line}")),
        };
        if name.ends_with("_bucket") && family != name {
            assert!(labels.contains_key("le"), "a bucket without le: {line}");
        }
        samples.push(Sample { name: name.to_owned(), labels, value });
    }
    samples
}

/// The value of the one sample named `name` with (at least) these labels.
fn sample(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == name && labels.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)))
        .map(|s| s.value)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} matches {} samples", found.len());
    found.first().copied()
}

#[tokio::test]
async fn metrics_count_every_request_and_parse_as_prometheus_text() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &[]);
    let c = reqwest::Client::new();
    let t = texts(4, 150, 31);
    use reqwest::Method as M;
    let url = |path: &str| format!("{}{path}", s.base());
    let page = |i: usize| json!({"url": format!("https://m.test/{i}"), "text": t[i]});

    // 12 requests: 3 checks (one seen), 2 inserts, 1 check-and-insert (seen),
    // a check batch of 2 (1 seen), a bad body, a 404, a 405, /health, /v1/stats.
    assert_eq!(call(&c, M::POST, &url("/v1/check"), Some(page(0)), None).await.0, 200);
    assert_eq!(call(&c, M::POST, &url("/v1/pages"), Some(page(0)), None).await.0, 201);
    assert_eq!(call(&c, M::POST, &url("/v1/pages"), Some(page(1)), None).await.0, 201);
    assert_eq!(call(&c, M::POST, &url("/v1/check"), Some(page(0)), None).await.0, 200);
    assert_eq!(call(&c, M::POST, &url("/v1/check"), Some(page(2)), None).await.0, 200);
    let (st, v) = call(&c, M::POST, &url("/v1/check-and-insert"), Some(page(1)), None).await;
    assert_eq!((st, v["new"].as_bool()), (201, Some(false)), "{v}");
    let batch = json!({"pages": [page(1), page(3)]});
    assert_eq!(call(&c, M::POST, &url("/v1/check/batch"), Some(batch), None).await.0, 200);
    assert_eq!(call(&c, M::POST, &url("/v1/check"), Some(json!({"url": "x"})), None).await.0, 400);
    assert_eq!(call(&c, M::GET, &url("/nowhere/at/all"), None, None).await.0, 404);
    assert_eq!(call(&c, M::GET, &url("/v1/check"), None, None).await.0, 405);
    assert_eq!(call(&c, M::GET, &url("/health"), None, None).await.0, 200);
    let (st, stats) = call(&c, M::GET, &url("/v1/stats"), None, None).await;
    assert_eq!(st, 200);
    const REQUESTS: f64 = 12.0;

    let resp = c.get(url("/metrics")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    let text = resp.text().await.unwrap();
    let samples = parse_prometheus(&text);

    let requests = |endpoint: &str, method: &str, status: &str| {
        sample(
            &samples,
            "webdup_http_requests_total",
            &[("endpoint", endpoint), ("method", method), ("status", status)],
        )
    };
    assert_eq!(requests("/v1/check", "POST", "200"), Some(3.0), "{text}");
    assert_eq!(requests("/v1/check", "POST", "400"), Some(1.0));
    assert_eq!(requests("/v1/check", "GET", "405"), Some(1.0));
    assert_eq!(requests("/v1/pages", "POST", "201"), Some(2.0));
    assert_eq!(requests("/v1/check-and-insert", "POST", "201"), Some(1.0));
    assert_eq!(requests("/v1/check/batch", "POST", "200"), Some(1.0));
    assert_eq!(requests("other", "GET", "404"), Some(1.0), "unknown paths are not labels of their own");
    assert_eq!(requests("/health", "GET", "200"), Some(1.0));
    assert_eq!(requests("/v1/stats", "GET", "200"), Some(1.0));
    assert_eq!(requests("/metrics", "GET", "200"), None, "a scrape is counted once answered");
    let total: f64 = samples.iter().filter(|s| s.name == "webdup_http_requests_total").map(|s| s.value).sum();
    assert_eq!(total, REQUESTS, "{text}");

    // The histogram: per route and method, cumulative buckets ending in
    // +Inf, equal to _count, which equals the requests counted.
    let series: BTreeSet<(String, String)> = samples
        .iter()
        .filter(|s| s.name == "webdup_http_request_duration_seconds_count")
        .map(|s| (s.labels["endpoint"].clone(), s.labels["method"].clone()))
        .collect();
    let mut histogram_total = 0.0;
    for (endpoint, method) in &series {
        let labels = [("endpoint", endpoint.as_str()), ("method", method.as_str())];
        let count = sample(&samples, "webdup_http_request_duration_seconds_count", &labels).unwrap();
        let counted: f64 = samples
            .iter()
            .filter(|s| {
                s.name == "webdup_http_requests_total"
                    && s.labels["endpoint"] == *endpoint
                    && s.labels["method"] == *method
            })
            .map(|s| s.value)
            .sum();
        assert_eq!(count, counted, "{endpoint} {method}");
        let buckets: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| {
                s.name == "webdup_http_request_duration_seconds_bucket"
                    && s.labels["endpoint"] == *endpoint
                    && s.labels["method"] == *method
            })
            .map(|s| (if s.labels["le"] == "+Inf" { f64::INFINITY } else { s.labels["le"].parse().unwrap() }, s.value))
            .collect();
        assert!(buckets.len() > 5, "{endpoint}: {buckets:?}");
        assert!(buckets.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1), "{endpoint}: {buckets:?}");
        assert_eq!(*buckets.last().unwrap(), (f64::INFINITY, count));
        let sum = sample(&samples, "webdup_http_request_duration_seconds_sum", &labels).unwrap();
        assert!(sum > 0.0 && sum < 60.0 * count, "{endpoint}: {sum}");
        histogram_total += count;
    }
    assert_eq!(histogram_total, REQUESTS);

    // Pages: checked 3 + 1 + 2, seen 1 + 1 + 1, inserted 2 + 1.
    assert_eq!(sample(&samples, "webdup_pages_checked_total", &[]), Some(6.0), "{text}");
    assert_eq!(sample(&samples, "webdup_pages_seen_total", &[]), Some(3.0), "{text}");
    assert_eq!(sample(&samples, "webdup_pages_inserted_total", &[]), Some(3.0), "{text}");
    // The index, read at scrape time: as /v1/stats says (two pages: the
    // check-and-insert replaced the page of its crawl and URL).
    assert_eq!(sample(&samples, "webdup_index_up", &[]), Some(1.0));
    assert_eq!(sample(&samples, "webdup_index_pages", &[]), stats["pages"].as_f64(), "{stats}");
    assert_eq!(sample(&samples, "webdup_index_pages", &[]), Some(2.0));
    assert_eq!(sample(&samples, "webdup_index_distinct_urls", &[]), stats["distinct_urls"].as_f64());
    let file_bytes = sample(&samples, "webdup_index_file_bytes", &[]).unwrap();
    assert!(file_bytes > 0.0 && Some(file_bytes) == stats["file_bytes"].as_f64(), "{file_bytes} {stats}");

    // The next scrape counts the first.
    let (_, again) = call(&c, M::GET, &url("/metrics"), None, None).await;
    let samples = parse_prometheus(again.as_str().unwrap());
    assert_eq!(
        sample(
            &samples,
            "webdup_http_requests_total",
            &[("endpoint", "/metrics"), ("method", "GET"), ("status", "200")]
        ),
        Some(1.0)
    );
}

/// Every route the server has, with its methods. `/metrics` labels its
/// requests by the server's own list, checked against this one below.
const ROUTES: [(&str, &[&str]); 10] = [
    ("/health", &["get"]),
    ("/v1/check", &["post"]),
    ("/v1/check/batch", &["post"]),
    ("/v1/check-and-insert", &["post"]),
    ("/v1/check-and-insert/batch", &["post"]),
    ("/v1/pages", &["post", "get", "delete"]),
    ("/v1/pages/batch", &["post"]),
    ("/v1/stats", &["get"]),
    ("/metrics", &["get"]),
    ("/openapi.yaml", &["get"]),
];

/// The paths of openapi.yaml and their methods, read from its layout (two
/// spaces before a path, four before a method) rather than with a YAML
/// parser, which the workspace does not have.
fn documented_routes(yaml: &str) -> BTreeMap<String, BTreeSet<String>> {
    let paths = yaml.split_once("\npaths:\n").expect("a paths section").1;
    let mut routes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current = None;
    for line in paths.lines() {
        if let Some(path) = line.strip_prefix("  /").and_then(|p| p.strip_suffix(':')) {
            current = Some(format!("/{path}"));
            routes.entry(format!("/{path}")).or_default();
        } else if let Some(method) = line.strip_prefix("    ").and_then(|m| m.strip_suffix(':'))
            && ["get", "post", "put", "delete", "patch", "head", "options"].contains(&method)
        {
            routes.get_mut(current.as_ref().expect("a method before any path")).unwrap().insert(method.to_owned());
        } else {
            assert!(line.is_empty() || line.starts_with("    "), "not a path of openapi.yaml: {line:?}");
        }
    }
    routes
}

#[tokio::test]
async fn openapi_yaml_is_served_as_in_the_repository_and_documents_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &[]);
    let c = reqwest::Client::new();
    let file = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap();

    let resp = c.get(format!("{}/openapi.yaml", s.base())).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-type"], "application/yaml");
    assert!(resp.bytes().await.unwrap() == file, "/openapi.yaml differs from the repository's openapi.yaml");

    let documented = documented_routes(std::str::from_utf8(&file).unwrap());
    let known: BTreeMap<String, BTreeSet<String>> = ROUTES
        .iter()
        .map(|(path, methods)| (path.to_string(), methods.iter().map(|m| m.to_string()).collect()))
        .collect();
    assert_eq!(documented, known, "openapi.yaml's paths and methods against the server's routes");

    // The server serves each (no 404 or 405, whatever the empty body does),
    // and /metrics labels each by its path: its route list is this one.
    for (path, methods) in ROUTES {
        for method in methods {
            let method: reqwest::Method = method.to_uppercase().parse().unwrap();
            let (st, v) = call(&c, method.clone(), &format!("{}{path}", s.base()), Some(json!({})), None).await;
            assert!(st != 404 && st != 405, "{method} {path}: {st} {v}");
        }
    }
    let (_, text) = call(&c, reqwest::Method::GET, &format!("{}/metrics", s.base()), None, None).await;
    let labelled: BTreeSet<String> = parse_prometheus(text.as_str().unwrap())
        .into_iter()
        .filter(|s| s.name == "webdup_http_requests_total")
        .map(|s| s.labels["endpoint"].clone())
        .collect();
    assert_eq!(labelled, known.keys().cloned().collect::<BTreeSet<_>>());
}

#[tokio::test]
async fn metrics_openapi_and_batches_need_the_token_when_one_is_set() {
    const TOKEN: &str = "fleet-token-1";
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--token", TOKEN]);
    let c = reqwest::Client::new();
    let t = texts(3, 150, 41);
    use reqwest::Method as M;
    let url = |path: &str| format!("{}{path}", s.base());
    let batch =
        json!({"pages": [{"url": "https://t.test/0", "text": t[0]}, {"url": "https://t.test/1", "text": t[1]}]});
    let one = json!({"url": "https://t.test/2", "text": t[2]});
    let cases = [
        (M::GET, "/metrics", None, 200),
        (M::GET, "/openapi.yaml", None, 200),
        (M::POST, "/v1/check/batch", Some(batch.clone()), 200),
        (M::POST, "/v1/pages/batch", Some(batch.clone()), 201),
        (M::POST, "/v1/check-and-insert/batch", Some(batch.clone()), 201),
        (M::POST, "/v1/check-and-insert", Some(one), 201),
    ];
    for (method, path, body, _) in &cases {
        let (st, v) = call(&c, method.clone(), &url(path), body.clone(), None).await;
        assert_eq!(st, 401, "{path} without a token: {v}");
        assert!(v["error"].is_string(), "{path}: {v}");
        assert_eq!(call(&c, method.clone(), &url(path), body.clone(), Some("wrong")).await.0, 401, "{path}");
    }
    assert_eq!(stored_pages(&c, &s.base(), Some(TOKEN)).await, 0, "refused requests store nothing");
    for (method, path, body, ok) in &cases {
        let (st, v) = call(&c, method.clone(), &url(path), body.clone(), Some(TOKEN)).await;
        assert_eq!(st, *ok, "{path} with the token: {v}");
    }
    assert_eq!(stored_pages(&c, &s.base(), Some(TOKEN)).await, 3);
    assert_eq!(call(&c, M::GET, &url("/health"), None, None).await.0, 200);
    let (_, text) = call(&c, M::GET, &url("/metrics"), None, Some(TOKEN)).await;
    let samples = parse_prometheus(text.as_str().unwrap());
    let refused = sample(
        &samples,
        "webdup_http_requests_total",
        &[("endpoint", "/v1/pages/batch"), ("method", "POST"), ("status", "401")],
    );
    assert_eq!(refused, Some(2.0), "refusals are counted too");
}
