//! `webdup serve` over real HTTP on 127.0.0.1: every endpoint, the token
//! rule, bad bodies, and a bounded concurrent load.

use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/serve.rs"]
mod serve_process;

use serde_json::{Value, json};
use serve_process::{call, start};
use webdup_eval::synth::{SynthConfig, corpus};

fn texts(n: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: 150, copy_share: 0.0, seed, ..Default::default() })
}

#[tokio::test]
async fn every_endpoint_answers_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--bind", "127.0.0.1:0"]);
    let c = reqwest::Client::new();
    let t = texts(2, 3);
    use reqwest::Method as M;

    let (st, v) = call(&c, M::GET, &format!("{}/health", s.base()), None, None).await;
    assert_eq!((st, v["status"].as_str()), (200, Some("ok")));

    let page = json!({"url": "https://a.test/one", "crawl": "c1", "text": t[0]});
    let (st, v) = call(&c, M::POST, &format!("{}/v1/pages", s.base()), Some(page), None).await;
    assert_eq!(st, 201, "{v}");
    let html = format!("<html><head><title>Two</title></head><body><article><p>{}</p></article></body></html>", t[1]);
    let (st, _) = call(
        &c,
        M::POST,
        &format!("{}/v1/pages", s.base()),
        Some(json!({"url": "https://a.test/two", "html": html, "final_url": "https://a.test/2",
                    "status": 200, "redirects": [{"url": "https://a.test/two", "status": 301}]})),
        None,
    )
    .await;
    assert_eq!(st, 201);

    let (st, v) = call(
        &c,
        M::POST,
        &format!("{}/v1/check", s.base()),
        Some(json!({"url": "https://b.test/x", "text": t[0]})),
        None,
    )
    .await;
    assert_eq!(st, 200);
    assert_eq!((v["seen"].as_bool(), v["identical"][0]["url"].as_str()), (Some(true), Some("https://a.test/one")));
    let edited: String =
        t[0].split(' ').enumerate().map(|(i, w)| if i % 50 == 0 { "changed" } else { w }).collect::<Vec<_>>().join(" ");
    let (_, v) = call(
        &c,
        M::POST,
        &format!("{}/v1/check", s.base()),
        Some(json!({"url": "https://b.test/y", "text": edited})),
        None,
    )
    .await;
    assert_eq!(v["near"][0]["url"].as_str(), Some("https://a.test/one"), "{v}");
    assert!(v["near"][0]["jaccard"].as_f64().unwrap() < 1.0);
    // b.test has no page stored: its template is not learned (issue 37).
    assert_eq!(v["template"].as_str(), Some("not yet learned"), "{v}");

    let (st, v) = call(&c, M::GET, &format!("{}/v1/pages?url=https%3A%2F%2Fa.test%2Ftwo", s.base()), None, None).await;
    assert_eq!(st, 200);
    assert_eq!((v["pages"][0]["crawl"].as_str(), v["pages"][0]["title"].as_str()), (Some("api"), Some("Two")));
    assert_eq!(v["pages"][0]["redirects"], json!([{"url": "https://a.test/two", "status": 301}]), "{v}");
    let (st, _) = call(&c, M::GET, &format!("{}/v1/pages?url=https%3A%2F%2Fa.test%2Fnone", s.base()), None, None).await;
    assert_eq!(st, 404);

    let (st, v) = call(&c, M::GET, &format!("{}/v1/stats", s.base()), None, None).await;
    assert_eq!((st, v["pages"].as_u64()), (200, Some(2)));
    // The main texts are stored with the pages, for `webdup audit --index`.
    let index = webdup::store::Index::open_existing(dir.path().join("i.db")).unwrap();
    let text_of = |crawl: &str| index.crawl_fingerprints(crawl).unwrap()[0].0.text.clone();
    assert_eq!(text_of("c1").as_deref(), Some(t[0].as_str()));
    assert!(text_of("api").is_some_and(|x| x.contains(&t[1][..60])), "the extracted text of the HTML page");
    drop(index);

    let (st, v) =
        call(&c, M::DELETE, &format!("{}/v1/pages?url=https%3A%2F%2Fa.test%2Fone", s.base()), None, None).await;
    assert_eq!((st, v["removed"].as_u64()), (200, Some(1)));
    let (st, _) =
        call(&c, M::DELETE, &format!("{}/v1/pages?url=https%3A%2F%2Fa.test%2Fone", s.base()), None, None).await;
    assert_eq!(st, 404);
    let (_, v) = call(
        &c,
        M::POST,
        &format!("{}/v1/check", s.base()),
        Some(json!({"url": "https://b.test/x", "text": t[0]})),
        None,
    )
    .await;
    assert_eq!(v["seen"].as_bool(), Some(false));
    let (st, _) = call(&c, M::GET, &format!("{}/nowhere", s.base()), None, None).await;
    assert_eq!(st, 404);
}

#[tokio::test]
async fn bad_bodies_get_a_clear_4xx_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--bind", "127.0.0.1:0", "--max-body", "2000"]);
    let c = reqwest::Client::new();
    use reqwest::Method as M;
    let url = format!("{}/v1/check", s.base());

    let big = json!({"url": "https://a.test/big", "text": "word ".repeat(1000)});
    let (st, v) = call(&c, M::POST, &url, Some(big), None).await;
    assert_eq!(st, 413, "{v}");
    assert!(v["error"].as_str().unwrap().contains("length limit"), "{v}");

    let resp = c.post(&url).header("content-type", "application/json").body("{\"url\": ").send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let v: Value = serde_json::from_slice(&resp.bytes().await.unwrap()).unwrap();
    assert!(v["error"].as_str().unwrap().contains("malformed JSON"), "{v}");

    let (st, v) = call(&c, M::POST, &url, Some(json!({"url": "https://a.test/x"})), None).await;
    assert_eq!(st, 400);
    assert!(v["error"].as_str().unwrap().contains("exactly one of"), "{v}");
    let (st, _) =
        call(&c, M::POST, &url, Some(json!({"url": "https://a.test/x", "text": "a", "extra": 1})), None).await;
    assert_eq!(st, 400);
    let (st, v) = call(&c, M::POST, &url, Some(json!({"url": "https://a.test/x", "text": "   "})), None).await;
    assert_eq!(st, 422, "{v}");
    let (st, _) = call(&c, M::GET, &format!("{}/v1/pages", s.base()), None, None).await;
    assert_eq!(st, 400);

    let (st, _) = call(&c, M::POST, &url, Some(json!({"url": "https://a.test/x", "text": texts(1, 1)[0]})), None).await;
    assert_eq!(st, 200, "still serving after bad requests");
}

#[tokio::test]
async fn off_loopback_needs_a_token_and_then_every_client_must_send_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    // Without a token the server refuses to start on a non-loopback address.
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["serve", "--bind", "0.0.0.0:0", "--index"])
        .arg(&db)
        .env_remove("WEBDUP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--token"), "{}", String::from_utf8_lossy(&o.stderr));

    // With one, a request from 127.0.0.1 without it is refused too.
    let s = start(&db, &["--bind", "0.0.0.0:0", "--token", "s3cret-token"]);
    let c = reqwest::Client::new();
    use reqwest::Method as M;
    let stats = format!("{}/v1/stats", s.base());
    assert_eq!(call(&c, M::GET, &stats, None, None).await.0, 401);
    assert_eq!(call(&c, M::GET, &stats, None, Some("wrong")).await.0, 401);
    assert_eq!(call(&c, M::GET, &stats, None, Some("s3cret-token")).await.0, 200);
    let (st, _) =
        call(&c, M::POST, &format!("{}/v1/pages", s.base()), Some(json!({"url": "u", "text": "a b c d e f"})), None)
            .await;
    assert_eq!(st, 401);
    assert_eq!(call(&c, M::GET, &format!("{}/health", s.base()), None, None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_checks_and_inserts_lose_nothing() {
    const CLIENTS: usize = 8;
    const PER_CLIENT: usize = 50;
    let dir = tempfile::tempdir().unwrap();
    let s = start(&dir.path().join("i.db"), &["--bind", "127.0.0.1:0"]);
    let t = std::sync::Arc::new(texts(CLIENTS * PER_CLIENT, 9));
    let c = reqwest::Client::new();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let (c, t, base) = (c.clone(), t.clone(), s.base());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0;
            for i in 0..PER_CLIENT {
                let n = client * PER_CLIENT + i;
                let url = format!("https://load.test/{n}");
                let t0 = Instant::now();
                let (st, _) = call(
                    &c,
                    reqwest::Method::POST,
                    &format!("{base}/v1/pages"),
                    Some(json!({"url": url, "text": t[n]})),
                    None,
                )
                .await;
                errors += usize::from(st != 201);
                let (st, v) = call(
                    &c,
                    reqwest::Method::POST,
                    &format!("{base}/v1/check"),
                    Some(json!({"url": "q", "text": t[n]})),
                    None,
                )
                .await;
                errors += usize::from(st != 200 || v["identical"][0]["url"].as_str() != Some(url.as_str()));
                latencies.push(t0.elapsed());
            }
            (errors, latencies)
        }));
    }
    let mut errors = 0;
    let mut latencies = Vec::new();
    for task in tasks {
        let (e, l) = task.await.unwrap();
        errors += e;
        latencies.extend(l);
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let requests = 2 * CLIENTS * PER_CLIENT;
    println!(
        "load: {requests} requests ({CLIENTS} clients, insert+check pairs) in {:.2}s = {:.0} req/s; pair latency p50 {:?} p99 {:?}; {errors} errors",
        elapsed.as_secs_f64(),
        requests as f64 / elapsed.as_secs_f64(),
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
    );
    assert_eq!(errors, 0);
    let (_, v) = call(&c, reqwest::Method::GET, &format!("{}/v1/stats", s.base()), None, None).await;
    assert_eq!(v["pages"].as_u64(), Some((CLIENTS * PER_CLIENT) as u64), "{v}");
    assert!(elapsed < Duration::from_secs(120));
}

#[tokio::test]
async fn sigterm_lets_the_request_in_flight_finish_then_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    // The slowest extractor and a page big enough that extracting it is
    // still under way when the signal arrives.
    let mut s = start(&db, &["--bind", "127.0.0.1:0", "--extractor", "auto"]);
    let body: String = texts(400, 11).join("</p><p>");
    let html = format!("<html><head><title>Big</title></head><body><article><p>{body}</p></article></body></html>");
    let url = format!("{}/v1/pages", s.base());
    let insert = tokio::spawn(async move {
        let c = reqwest::Client::new();
        call(&c, reqwest::Method::POST, &url, Some(json!({"url": "https://a.test/big", "html": html})), None).await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!insert.is_finished(), "the insert finished before the signal; make the page bigger");
    let pid = s.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let (status, v) = insert.await.unwrap();
    assert_eq!(status, 201, "the insert in flight was cut off: {v}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(exit) = s.child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "still running 20 s after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit:?}");
    let index = webdup::store::Index::open_existing(&db).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(index.stats().unwrap().pages, 1);
}

/// Issue 14, defect 1: the API used to fingerprint HTML without the page's
/// metadata, so a noindex page posted to `/v1/pages` was stored without
/// `noindex`, `description` and `h1`, and `audit --index` called it
/// indexable. The same page added from a file kept them.
#[tokio::test]
async fn a_page_posted_to_the_api_audits_like_the_same_page_added_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let html = "<html><head><title>Ferry timetable</title><meta name=\"description\" content=\"Winter sailings\">\n\
        <meta name=\"robots\" content=\"noindex\"><link rel=\"canonical\" href=\"https://ferry.test/timetable\"></head><body><h1>Winter ferry timetable</h1><p>The ferry timetable \
        changes in winter and the harbour office posts it weekly on the board by the ticket window. Crossings take \
        forty minutes and the first boat leaves at seven.</p></body></html>";
    std::fs::write(dir.path().join("page.html"), html).unwrap();
    let db = dir.path().join("meta.db");
    let webdup = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_webdup"));
        c.current_dir(dir.path());
        c
    };
    let out = webdup()
        .args(["index", "add", "--crawl", "cli", "--index"])
        .arg(&db)
        .args(["page.html", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let s = start(&db, &[]);
    let c = reqwest::Client::new();
    let (st, v) = call(
        &c,
        reqwest::Method::POST,
        &format!("{}/v1/pages", s.base()),
        Some(json!({"url": "page.html", "html": html, "crawl": "api"})),
        None,
    )
    .await;
    assert_eq!(st, 201, "{v}");
    let (st, v) = call(&c, reqwest::Method::GET, &format!("{}/v1/pages?url=page.html", s.base()), None, None).await;
    assert_eq!(st, 200, "{v}");
    drop(s);
    let stored = v["pages"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(stored.len(), 2, "{v}");
    let fields = |p: &Value| {
        ["title", "description", "h1", "noindex", "noindex_source", "canonical"].map(|k| p[k].clone()).to_vec()
    };
    assert_eq!(fields(&stored[0]), fields(&stored[1]), "{v}");
    assert_eq!(stored[0]["noindex"], json!(true), "{v}");
    assert_eq!(stored[0]["description"], json!("Winter sailings"), "{v}");
    assert_eq!(stored[1]["canonical"], json!("https://ferry.test/timetable"), "{v}");

    let mut rows = Vec::new();
    for crawl in ["cli", "api"] {
        let out_dir = dir.path().join(format!("audit-{crawl}"));
        let out = webdup()
            .args(["audit", "--index"])
            .arg(&db)
            .args(["--crawl", crawl, "--out"])
            .arg(&out_dir)
            .arg("-q")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
        let mut row = report["pages"][0].clone();
        assert!(row.is_object(), "{report}");
        row.as_object_mut().unwrap().remove("fetched_at");
        rows.push(row);
    }
    assert_eq!(rows[0]["indexability"], json!("noindex"), "{}", rows[0]);
    assert_eq!(rows[0], rows[1]);
}

/// A page checked through the API alone is fingerprinted with its site's
/// template as `index add` learned it: a lightly edited copy of a stored
/// page of a site with a long shared footer is found.
#[tokio::test]
async fn the_api_applies_the_template_index_add_learned_for_the_site() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("urls.txt");
    let pages = texts(12, 21);
    let footer =
        ["subscribe to our newsletter for weekly ferry news and harbour updates from the island council office"; 4]
            .join(" ");
    let site = tempfile::tempdir().unwrap();
    let mut names = Vec::new();
    for (i, t) in pages.iter().enumerate() {
        // Short pages: the footer is a third of each.
        let body: Vec<&str> = t.split(' ').take(60).collect();
        let name = site.path().join(format!("p{i:02}.txt"));
        std::fs::write(&name, format!("{} {footer}", body.join(" "))).unwrap();
        names.push(name.display().to_string());
    }
    std::fs::write(&list, names.join("\n")).unwrap();
    let db = dir.path().join("t.db");
    let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["index", "add", "--crawl", "c", "--index"])
        .arg(&db)
        .arg(&list)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["templates"], 1, "{summary}");

    let s = start(&db, &[]);
    let c = reqwest::Client::new();
    let stored = std::fs::read_to_string(&names[0]).unwrap();
    let edited: String =
        stored.split(' ').enumerate().map(|(i, w)| if i == 30 { "changed" } else { w }).collect::<Vec<_>>().join(" ");
    // Same folder, so the same site.
    let url = site.path().join("p00-edited.txt").display().to_string();
    let (st, v) = call(
        &c,
        reqwest::Method::POST,
        &format!("{}/v1/check", s.base()),
        Some(json!({"url": url, "text": edited})),
        None,
    )
    .await;
    assert_eq!(st, 200, "{v}");
    let near: Vec<&str> = v["near"].as_array().unwrap().iter().filter_map(|m| m["url"].as_str()).collect();
    assert_eq!(near, [names[0].as_str()], "{v}");
}
