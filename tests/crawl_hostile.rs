//! `--follow` against sites that try to make a crawl endless, huge or
//! unsafe (issue 36's bad inputs), each served on 127.0.0.1 by the test: the
//! crawl ends in bounded time, says what it left out, and keeps what it
//! fetched.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[path = "support/site.rs"]
mod site;

use site::{Reply, Site};

const TEXT: &str = "The harbour office posts the winter ferry timetable every monday morning by the ticket \
    window. Crossings to the island take forty minutes in calm weather and an hour when the wind turns north.";

fn html(body: &str) -> Reply {
    Reply::html(format!("<html><head><title>t</title></head><body><main>{body}</main></body></html>"))
}

/// Runs `webdup cluster --follow START` (JSON report) and how long it took.
fn crawl(start: &str, extra: &[&str]) -> (Output, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["cluster", "--follow", start, "--own-site", "-f", "json"])
        .args(extra)
        .output()
        .unwrap();
    (out, t.elapsed())
}

/// Standard error, and the report's failed documents when it has any.
fn stderr(out: &Output) -> String {
    let failed = serde_json::from_slice::<serde_json::Value>(&out.stdout).map(|r| r["errors"].to_string());
    format!("{}{}", String::from_utf8_lossy(&out.stderr), failed.unwrap_or_default())
}

fn report(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(out)))
}

/// A soft-404 server: every URL answers 200 with the same page, whose
/// relative links make new URLs at every level (`a/`, `a/a/`, ...). No URL
/// pattern repeats with digits, so only the pages repeating each other can
/// stop it.
#[test]
fn a_server_that_answers_every_url_with_the_same_page_is_crawled_in_bounded_time() {
    let site =
        Site::start(|_| html(&format!("<p>{TEXT}</p><a href=\"a/\">a</a> <a href=\"b/\">b</a> <a href=\"c\">c</a>")));
    let (out, took) = crawl(&site.url("/"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let served = site.pages_served_since(0).len();
    assert!(served <= 40, "{served} pages fetched from a site of one page");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let err = stderr(&out);
    let cut = err
        .lines()
        .flat_map(|line| line.split(", "))
        .find_map(|part| part.strip_suffix(" links of pages that repeat earlier pages"))
        .and_then(|n| n.trim().parse::<u64>().ok());
    assert!(cut.is_some_and(|n| n > 0), "the crawl says why it stopped: {err}");
}

/// One page links to 300,000 URLs (6 MB of links), each answering the same
/// small page.
#[test]
fn a_page_with_hundreds_of_thousands_of_links_is_cut_and_said() {
    let site = Site::start(|path| {
        if path == "/" {
            let links: String = (0..300_000).map(|i| format!("<a href=\"/p/{i}\">{i}</a>\n")).collect();
            html(&format!("<p>{TEXT}</p>{links}"))
        } else {
            html(&format!("<p>Item {path}. {TEXT}</p>"))
        }
    });
    let (out, took) = crawl(&site.url("/"), &["--max-bytes", "20000000"]);
    // The page itself is too costly to extract (an error of its own); its
    // links are read all the same, 10,000 of them.
    let r = report(&out);
    assert_eq!(r["errors"][0]["kind"], "too_costly", "{}", stderr(&out));
    assert_eq!(r["summary"]["fingerprinted"].as_u64(), Some(12), "{}", stderr(&out));
    let served = site.pages_served_since(0).len();
    assert!(served < 100, "{served} pages fetched: the pattern /p/* repeats itself");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let err = stderr(&out);
    assert!(err.contains(", 290000 unusable links") && err.contains("trap 127.0.0.1:"), "{err}");
}

/// Links with other schemes, a hostile `<base href>`, a 100 KB URL: none is
/// fetched. A relative link resolves against the `<base href>` as a browser
/// does, here to another host, out of scope.
#[test]
fn links_that_are_no_pages_of_the_site_are_not_fetched() {
    let long = format!("/x?q={}", "a".repeat(100_000));
    let body = format!(
        "<p>{TEXT}</p><a href=\"javascript:alert(1)\">j</a> <a href=\"mailto:a@b.c\">m</a> \
         <a href=\"data:text/html,hi\">d</a> <a href=\"file:///etc/passwd\">f</a> <a href=\"{long}\">long</a> \
         <a href=\"next\">next</a>"
    );
    let site = Site::start(move |path| {
        if path == "/" {
            Reply::html(format!(
                "<html><head><base href=\"http://169.254.169.254/latest/\"></head><body>{body}</body></html>"
            ))
        } else {
            html(&format!("<p>Next page. {TEXT}</p>"))
        }
    });
    let (out, _) = crawl(&site.url("/"), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let served = site.pages_served_since(0);
    assert_eq!(served, ["/"], "nothing but the start page");
    let err = stderr(&out);
    assert!(err.contains("1 out of scope") && err.contains("5 unusable links"), "{err}");
}

/// robots.txt disallows everything: the start page is refused with a line
/// naming it, nothing is fetched, the run ends with the error.
#[test]
fn a_robots_txt_that_disallows_everything_fetches_nothing() {
    let site = Site::start(|path| match path {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /\n"),
        _ => html(&format!("<p>{TEXT}</p><a href=\"/a\">a</a>")),
    });
    let (out, _) = crawl(&site.url("/"), &[]);
    assert_eq!(site.served(), ["/robots.txt"]);
    let failed = &report(&out)["errors"][0];
    assert_eq!(failed["id"], site.url("/").as_str(), "{}", stderr(&out));
    assert!(failed["message"].as_str().is_some_and(|m| m.contains("robots")), "{failed}");
}

/// The start URL redirects to another host (`localhost`, another server on
/// this machine): that host is crawled, and the crawl says so.
#[test]
fn a_start_page_that_moves_to_another_host_takes_that_host() {
    let site = Site::start(|path| match path {
        "/home" => html(&format!("<p>{TEXT}</p><a href=\"/a\">a</a>")),
        _ => html(&format!("<p>Page {path} of the moved site, about the lighthouse keeper.</p>")),
    });
    let moved = format!("http://localhost:{}/home", site.port);
    let old = Site::start(move |_| Reply::redirect(301, &moved));
    // Another loopback host is an internal address to a crawl of this one.
    let (out, _) = crawl(&old.url("/"), &["--allow-internal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("redirected to") && err.contains("localhost"), "{err}");
    assert!(site.served().iter().any(|p| p == "/a"), "the new host's links are followed: {:?}", site.served());
    assert_eq!(report(&out)["summary"]["documents"].as_u64(), Some(2), "the start page and the one it links to");
}
