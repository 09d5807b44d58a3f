//! A crawl of a small site served on 127.0.0.1 by the test itself: what is
//! fetched, what is not (robots.txt, nofollow, out of scope), a calendar
//! trap contained, and the same keys whatever the timing.

#![cfg(feature = "http")]

use std::time::Duration;

#[path = "../../../tests/support/site.rs"]
mod site;

use site::{Reply, Site};

use webdup_core::DocKey;
use webdup_core::progress::Quiet;
use webdup_web::crawl::{CrawlConfig, CrawlSummary, KeyPlan, Limits, ScopeKind};
use webdup_web::fetch::{FetchConfig, FetchOutcome, Fetcher};
use webdup_web::source::{Location, Source};

const ARTICLE: &str = "The harbour office posts the winter ferry timetable every monday morning by the \
    ticket window, and crossings to the island take forty minutes in calm weather.";

/// The site: the reply to a request path.
fn page(path: &str) -> Reply {
    let html = |body: String| Reply::html(format!("<html><head><title>t</title></head><body>{body}</body></html>"));
    match path {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private/\n"),
        "/" => html(
            "<nav><a href=\"/\">home</a></nav><a href=\"/a\">a</a> <a href=\"/a?utm_source=news\">a tracked</a> \
             <a href=\"/b/\">b</a> <a href=\"/print/a\">print</a> <a href=\"/cal?month=0\">events</a> \
             <a href=\"/private/x\">private</a> <a rel=\"nofollow\" href=\"/n\">n</a> \
             <a href=\"/old\">old</a> <a href=\"http://127.0.0.2:9/elsewhere\">elsewhere</a> \
             <a href=\"mailto:x@y.z\">mail</a>"
                .into(),
        ),
        "/a" | "/print/a" => html(format!("<p>{ARTICLE}</p><a href=\"/\">home</a>")),
        "/b/" => html("<p>Another article about the lighthouse and its keeper.</p><a href=\"/B/\">B</a>".into()),
        "/B/" => html("<p>Another article about the lighthouse and its keeper.</p>".into()),
        "/old" => Reply::redirect(301, "/a"),
        // A corner of the site whose pages name canonical targets one level
        // further than a crawl from /canon/ with --max-depth 1 goes.
        "/canon/" => html("<a href=\"/canon/a\">a</a> <a href=\"/canon/b\">b</a> <a href=\"/canon/c\">c</a>".into()),
        "/canon/a" => Reply::html(format!(
            "<html><head><link rel=canonical href=\"/canon/kept\"></head><body><p>{ARTICLE}</p>\
                 <a href=\"/canon/further\">further</a></body></html>"
        )),
        "/canon/b" => Reply::html("<html><head><link rel=canonical href=/canon/gone></head></html>"),
        "/canon/c" => Reply::html("<html><head><link rel=canonical href=/canon/kept></head></html>"),
        "/canon/kept" => Reply::html(format!(
            "<html><head><meta name=robots content=noindex><link rel=canonical href=/canon/beyond></head>\
                 <body><p>{ARTICLE}</p><a href=\"/canon/beyond\">beyond</a></body></html>"
        )),
        p if p.starts_with("/cal?month=") => {
            let m: u64 = p["/cal?month=".len()..].parse().unwrap_or(0);
            html(format!(
                "<h1>Events in month {m}</h1><p>There are no events planned for this month yet. Check back later \
                 or subscribe to the calendar feed to hear about new concerts, talks and markets in the harbour \
                 hall and the library garden.</p><a href=\"/cal?month={}\">next month</a>",
                m + 1
            ))
        }
        _ => Reply::not_found(),
    }
}

fn crawl(site: &Site, limits: Limits, concurrency: usize) -> (Vec<FetchOutcome>, CrawlSummary) {
    crawl_from(site, "/", limits, concurrency)
}

fn crawl_from(site: &Site, path: &str, limits: Limits, concurrency: usize) -> (Vec<FetchOutcome>, CrawlSummary) {
    let fetcher = Fetcher::new(FetchConfig {
        delay: Duration::ZERO,
        concurrency,
        per_host: concurrency,
        retries: 0,
        ..FetchConfig::default()
    })
    .unwrap();
    let start = format!("http://127.0.0.1:{}{path}", site.port);
    let starts = vec![Source { id: start.clone(), key: DocKey(0), location: Location::Url(start) }];
    let config = CrawlConfig { scope: ScopeKind::Host, limits };
    let mut out = Vec::new();
    let summary = fetcher.crawl(starts, &config, KeyPlan { first: 1, step: 1 }, &Quiet, |o| out.push(o));
    out.sort_by_key(|o| o.record.key);
    (out, summary)
}

fn paths(site: &Site, out: &[FetchOutcome]) -> Vec<(u64, String)> {
    let base = format!("http://127.0.0.1:{}", site.port);
    out.iter().map(|o| (o.record.key.0, o.record.url.clone().unwrap_or_default().replace(&base, ""))).collect()
}

#[test]
fn a_crawl_follows_the_site_and_stops_where_it_must() {
    let site = Site::start(page);
    let (out, summary) = crawl(&site, Limits::default(), 8);
    let got = paths(&site, &out);
    // Depth 1 sorted by URL; the tracked link folds into /a; the nofollow
    // link and the other host are not followed; robots.txt keeps /private/.
    let mut expected: Vec<(u64, String)> = vec![(0, "/".into())];
    let depth1 = ["/a", "/b/", "/cal?month=0", "/old", "/print/a"];
    expected.extend(depth1.iter().enumerate().map(|(i, p)| (i as u64 + 1, p.to_string())));
    // Depth 2: /B/ (from /b/) and the next month; then a month a level.
    // /private/x took key 6 and is no page: robots.txt disallows it.
    expected.push((7, "/B/".into()));
    expected.push((8, "/cal?month=1".into()));
    for m in 2..12u64 {
        expected.push((m + 7, format!("/cal?month={m}")));
    }
    assert_eq!(got, expected);
    assert_eq!(summary.not_followed.robots, 1);
    let served = site.served();
    assert!(!served.iter().any(|p| p.starts_with("/private") || p == "/n" || p == "/cal?month=12"), "{served:?}");
    // The calendar: judged a trap after 12 pages, its 13th month skipped.
    assert_eq!(summary.traps.len(), 1, "{:?}", summary.traps);
    let trap = &summary.traps[0];
    assert_eq!(trap.pattern, format!("127.0.0.1:{}/cal?month", site.port));
    assert_eq!((trap.fetched, trap.skipped), (12, 1));
    assert_eq!(summary.not_followed.nofollow, 1);
    assert_eq!(summary.not_followed.out_of_scope, 1);
    assert_eq!(summary.not_followed.unusable, 1);
    // Internal links: / is linked from /a, /print/a and /old (served as /a);
    // its own link to itself is no inlink.
    let home = format!("http://127.0.0.1:{}/", site.port);
    assert_eq!(summary.inlinks.get(home.as_str()), Some(&3));
}

#[test]
fn the_same_site_gives_the_same_keys_at_any_concurrency_and_limits_cut_in_order() {
    let site = Site::start(page);
    let (one, s1) = crawl(&site, Limits::default(), 1);
    let (many, s2) = crawl(&site, Limits::default(), 16);
    assert_eq!(paths(&site, &one), paths(&site, &many));
    assert_eq!(s1.edges, s2.edges);
    let (cut, summary) = crawl(&site, Limits { max_pages: Some(4), ..Limits::default() }, 8);
    assert_eq!(paths(&site, &cut), paths(&site, &one)[..4].to_vec());
    assert!(summary.not_followed.beyond_max_pages > 0);
    let (shallow, _) = crawl(&site, Limits { max_depth: Some(1), ..Limits::default() }, 8);
    assert_eq!(paths(&site, &shallow), paths(&site, &one)[..6].to_vec());
    let exclude = vec![regex::Regex::new("/cal").unwrap()];
    let (no_cal, _) = crawl(&site, Limits { exclude, ..Limits::default() }, 8);
    assert!(paths(&site, &no_cal).iter().all(|(_, p)| !p.starts_with("/cal")));
}

#[test]
fn canonical_targets_beyond_the_depth_are_fetched_for_their_verdict() {
    let site = Site::start(page);
    let (out, summary) = crawl_from(&site, "/canon/", Limits { max_depth: Some(1), ..Limits::default() }, 8);
    let got: Vec<(u64, String, u16)> = paths(&site, &out)
        .into_iter()
        .zip(&out)
        .map(|((key, path), o)| (key, path, o.record.status.unwrap_or_default()))
        .collect();
    let expected = [
        (0, "/canon/", 200),
        (1, "/canon/a", 200),
        (2, "/canon/b", 200),
        (3, "/canon/c", 200),
        // Beyond --max-depth 1, fetched once for the audit: a level of their own.
        (4, "/canon/gone", 404),
        (5, "/canon/kept", 200),
    ];
    let expected: Vec<(u64, String, u16)> = expected.iter().map(|&(k, p, s)| (k, p.to_string(), s)).collect();
    assert_eq!(got, expected);
    assert!(out[5].document.as_ref().is_some_and(|d| d.body.contains("noindex")));
    assert_eq!((summary.pages, summary.depth, summary.canonicals_beyond), (6, 1, 2));
    // Neither the links of the depth-1 pages nor those of the canonical
    // targets were followed.
    let served = site.served();
    assert!(!served.iter().any(|p| p == "/canon/further" || p == "/canon/beyond"), "{served:?}");
}
