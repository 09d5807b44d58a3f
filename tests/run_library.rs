//! `webdup::run` without the binary: local files and URLs on a loopback
//! server, expanded, fetched, read and fingerprinted by the library alone.

mod support;

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use webdup::engine::{Config, Quiet};
use webdup::run::{Run, RunConfig};
use webdup::template::Templates;

const ARTICLE: &str = "The harbour office posts the winter ferry timetable on the board by the ticket window every \
    Monday morning, and crossings take forty minutes when the sea is calm.";

#[test]
fn a_library_run_loads_files_and_loopback_urls_in_input_order() {
    let page =
        format!("<html><head><title>Ferry</title></head><body><article><p>{ARTICLE}</p></article></body></html>");
    let copy = page.clone();
    let app = Router::new()
        .route("/ferry", get(move || async move { Html(page) }))
        .route("/ferry-copy", get(move || async move { Html(copy) }));
    let port = support::serve_on_loopback(app);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ferry.txt");
    std::fs::write(&file, ARTICLE).unwrap();

    let inputs = [
        format!("http://127.0.0.1:{port}/ferry"),
        file.display().to_string(),
        format!("http://127.0.0.1:{port}/ferry-copy"),
        format!("http://127.0.0.1:{port}/missing"),
    ];
    let config = Config::default().validate().unwrap();
    let mut run = Run::new(RunConfig::default());
    let loaded = run.load_all(&inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet).unwrap();

    let ids: Vec<&str> = loaded.corpus.docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [inputs[0].as_str(), inputs[1].as_str(), inputs[2].as_str()]);
    // The two fetched copies share their text; the file holds the same words.
    assert_eq!(loaded.corpus.docs[0].digest, loaded.corpus.docs[2].digest);
    assert!(loaded.corpus.docs.iter().all(|d| !d.minhash.is_empty()), "finished: every page sketched");
    // The 404 is an error of the corpus, and its fetch is recorded.
    assert_eq!(loaded.corpus.errors.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [inputs[3].as_str()]);
    let statuses: Vec<Option<u16>> = loaded.fetches.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [Some(200), Some(200), Some(404)]);

    // Nothing to read is an error of the run, not a panic.
    let none = run.expand(&[dir.path().join("nothing-here").display().to_string()], &mut std::io::empty());
    assert!(none.is_ok_and(|c| c.sources.is_empty() && c.errors.len() == 1));
    let empty = tempfile::tempdir().unwrap();
    let nothing = run.expand(&[empty.path().display().to_string()], &mut std::io::empty());
    assert!(matches!(nothing, Err(webdup::Error::NoDocuments)), "{nothing:?}");
}

/// `webdup extract` as a library call: pages in input order, each with its
/// metadata, the failures (missing file, plain text, a 404) each its own.
#[test]
fn a_library_run_extracts_pages_in_input_order_and_keeps_failures_apart() {
    let page = format!(
        "<html lang=en><head><title>Ferry</title><meta name=description content=\"Winter crossings\">\
         <link rel=canonical href=/ferry></head><body><article><h1>Ferry times</h1><p>{ARTICLE}</p></article></body></html>"
    );
    let served = page.clone();
    let app = Router::new().route("/ferry", get(move || async move { Html(served) }));
    let port = support::serve_on_loopback(app);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("ferry.html");
    std::fs::write(&html, &page).unwrap();
    let text = dir.path().join("ferry.txt");
    std::fs::write(&text, ARTICLE).unwrap();
    let inputs = [
        format!("http://127.0.0.1:{port}/ferry"),
        html.display().to_string(),
        dir.path().join("gone.html").display().to_string(),
        text.display().to_string(),
        format!("http://127.0.0.1:{port}/missing"),
    ];
    let config = webdup::extract::ExtractConfig::default();
    let results = Run::new(RunConfig::default()).extract(&inputs, None, &config).unwrap();
    assert_eq!(results.len(), inputs.len());
    let fetched = results[0].as_ref().unwrap();
    assert!(fetched.text.contains("winter ferry timetable"), "{fetched:?}");
    assert_eq!(fetched.meta.description.as_deref(), Some("Winter crossings"));
    assert_eq!(fetched.meta.canonical.as_deref(), Some(format!("http://127.0.0.1:{port}/ferry").as_str()));
    let local = results[1].as_ref().unwrap();
    assert_eq!((local.text.as_str(), local.meta.h1.as_deref()), (fetched.text.as_str(), Some("Ferry times")));
    for (i, kind) in [(2, "io"), (3, "no_text"), (4, "fetch")] {
        let e = results[i].as_ref().unwrap_err();
        assert_eq!((e.id.as_str(), e.kind.as_str()), (inputs[i].as_str(), kind), "{e:?}");
    }
    // A page address names one page only.
    assert!(Run::new(RunConfig::default()).extract(&inputs, Some("https://a.test/"), &config).is_err());
}

/// A sitemap beside a start page when following links: its URLs are start
/// pages and the crawl's `listed`; a page only the sitemap names has no
/// inlink (being a start page links nothing to it).
#[test]
fn a_followed_run_records_the_urls_its_sitemap_lists() {
    let page = |body: &str| format!("<html><head><title>t</title></head><body><p>{ARTICLE}</p>{body}</body></html>");
    let (home, a, orphan, b) = (
        page(r#"<a href="/a">a</a> <a href="/b">b</a>"#),
        page(r#"<a href="/">home</a>"#),
        page(r#"<a href="/">home</a>"#),
        page(""),
    );
    let app = Router::new()
        .route("/", get(move || async move { Html(home) }))
        .route("/a", get(move || async move { Html(a) }))
        .route("/orphan", get(move || async move { Html(orphan) }))
        .route("/b", get(move || async move { Html(b) }))
        .route(
            "/sitemap.xml",
            get(|headers: axum::http::HeaderMap| async move {
                let host = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default().to_string();
                let locs: String = ["/", "/a", "/orphan", "/a?utm_source=sitemap"]
                    .iter()
                    .map(|p| format!("<url><loc>http://{host}{p}</loc></url>"))
                    .collect();
                let xml = format!(r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>"#);
                ([(axum::http::header::CONTENT_TYPE, "application/xml")], xml)
            }),
        );
    let port = support::serve_on_loopback(app);
    let url = |p: &str| format!("http://127.0.0.1:{port}{p}");
    let config = Config::default().validate().unwrap();
    let follow = RunConfig {
        fetch: webdup::fetch::FetchConfig { delay: std::time::Duration::ZERO, ..Default::default() },
        follow: Some(webdup::crawl::CrawlConfig::default()),
        ..RunConfig::default()
    };
    let load = |config_: RunConfig, inputs: &[String]| {
        Run::new(config_).load_all(inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet).unwrap()
    };
    let loaded = load(follow.clone(), &[url("/"), url("/sitemap.xml")]);
    let crawl = loaded.crawl.expect("a crawl");
    let listed: Vec<&str> = crawl.listed.as_deref().expect("a sitemap was given").iter().map(|u| &**u).collect();
    assert_eq!(listed, [url("/"), url("/a"), url("/orphan")]);
    let inlinks: Vec<(&str, u32)> = crawl.inlinks.iter().map(|(u, n)| (&**u, *n)).collect();
    assert_eq!(inlinks, [(url("/").as_str(), 2), (url("/a").as_str(), 1), (url("/b").as_str(), 1)]);
    let mut ids: Vec<&str> = loaded.corpus.docs.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [url("/"), url("/a"), url("/b"), url("/orphan")]);
    // No sitemap: nothing listed; not following: no crawl.
    assert_eq!(load(follow, &[url("/")]).crawl.expect("a crawl").listed, None);
    assert!(load(RunConfig::default(), &[url("/sitemap.xml")]).crawl.is_none());
}

/// An audit's run (`slim_fetches`) records each page as it arrives, its
/// record taking its fetch's strings; a run that keeps its fetches whole
/// records its pages at the end. Both give every page the same record: a
/// plain page with header directives, its copy, an old URL folded into the
/// page it redirects to, a redirect to a page no other input reached, a
/// 404, a page without text and a local file.
#[test]
fn an_audit_run_records_its_pages_as_they_arrive_as_a_run_that_records_them_at_the_end() {
    use axum::http::{StatusCode, header};
    let page = |title: &str| {
        format!(
            "<html><head><title>{title}</title><meta name=description content=\"The ferry\">\
             <link rel=canonical href=\"/ferry\"></head><body><h1>Ferry</h1><article><p>{ARTICLE}</p>\
             </article></body></html>"
        )
    };
    let (ferry, copy, moved) = (page("Ferry"), page("Ferry copy"), page("Moved"));
    let app = Router::new()
        .route(
            "/ferry",
            get(move || async move {
                (
                    [
                        (header::LINK, "</ferry>; rel=\"canonical\""),
                        (header::HeaderName::from_static("x-robots-tag"), "noarchive"),
                    ],
                    Html(ferry),
                )
            }),
        )
        .route("/ferry-copy", get(move || async move { Html(copy) }))
        .route("/old-ferry", get(|| async { (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, "/ferry")]) }))
        .route("/old-moved", get(|| async { (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, "/moved")]) }))
        .route("/moved", get(move || async move { Html(moved) }))
        .route("/empty", get(|| async { Html("<html><body></body></html>") }));
    let port = support::serve_on_loopback(app);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ferry.html");
    std::fs::write(&file, page("Saved")).unwrap();
    let url = |p: &str| format!("http://127.0.0.1:{port}{p}");
    let inputs = [
        url("/old-ferry"),
        url("/ferry"),
        file.display().to_string(),
        url("/ferry-copy"),
        url("/old-moved"),
        url("/missing"),
        url("/empty"),
    ];
    let run_config = RunConfig {
        fetch: webdup::fetch::FetchConfig { delay: std::time::Duration::ZERO, ..Default::default() },
        ..RunConfig::default()
    };
    let load = |slim_fetches: bool| {
        let config = Config { keep_pages: true, slim_fetches, ..Config::default() }.validate().unwrap();
        let mut loaded = Run::new(run_config.clone())
            .load_all(&inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet)
            .unwrap();
        loaded.fold_redirects();
        loaded
    };
    let (arrived, at_end) = (load(true), load(false));

    assert!(at_end.answered.is_empty(), "a run that keeps its fetches keeps them whole");
    // The fetched pages' records took their fetches: only the failures and
    // the redirects are kept whole.
    let whole: Vec<_> = arrived.fetches.iter().map(|r| r.key).collect();
    assert_eq!(whole, [0, 4, 5, 6].map(|n| arrived.pages[n].key));
    assert_eq!(arrived.answered.len(), 2, "/ferry and /ferry-copy");
    assert_eq!(arrived.render_counts(), at_end.render_counts());

    assert_eq!(arrived.pages.len(), inputs.len());
    for (a, b) in arrived.pages.iter().zip(&at_end.pages) {
        assert_eq!(a, b, "{}", b.id);
    }
    assert_eq!(arrived.redirected, at_end.redirected);
    let kinds: Vec<String> =
        arrived.pages.iter().map(|p| format!("{:?}", p.content).chars().take(4).collect()).collect();
    assert_eq!(kinds, ["Redi", "Doc(", "Doc(", "Doc(", "Doc(", "Fail", "Fail"]);
    let ferry = &arrived.pages[1].record;
    assert_eq!((ferry.meta.title.as_deref(), ferry.meta.noindex), (Some("Ferry"), Some(false)));
    assert!(ferry.word_count > 0 && ferry.digest.is_some() && ferry.shingle_count > 0, "{ferry:?}");
    assert_eq!(arrived.pages[4].record.redirects.len(), 1, "the redirect to a page no other input reached");
}
