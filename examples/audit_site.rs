//! A generated site for the audit benchmark: COUNT pages whose main texts
//! come from `webdup_eval::synth::corpus` (30% edited copies), wrapped in a shop
//! template, with canonical and robots setups that the audit must sort out,
//! served on 127.0.0.1. Driven by `scripts/bench-audit.sh`.
//!
//! Usage: `audit_site COUNT [PORT]` (port 0 picks one); prints
//! `listening on PORT` once the server accepts connections.
//!
//! Page `/p/I.html`: every 5th page names itself canonical, the page after
//! it names it; every 11th has `<meta name=robots content=noindex>`, every
//! 13th is sent with `X-Robots-Tag: noindex`, every 97th names a canonical
//! that answers 404. Titles repeat in pairs, so duplicate titles exist.
//! `/sitemap.xml` lists every page and ten URLs that answer 404 (past
//! 50,000 URLs, as an index of sitemaps of 50,000).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use webdup_eval::synth::{SynthConfig, corpus};

struct Site {
    pages: Vec<String>,
    port: u16,
}

fn render(i: usize, text: &str) -> String {
    let mut head = format!("<title>Article {} | Bench shop</title>", i / 2);
    let words: Vec<&str> = text.split(' ').collect();
    head.push_str(&format!("<meta name=\"description\" content=\"{}\">", words[..words.len().min(12)].join(" ")));
    if i.is_multiple_of(5) {
        head.push_str(&format!("<link rel=\"canonical\" href=\"/p/{i}.html\">"));
    } else if i % 5 == 1 {
        head.push_str(&format!("<link rel=\"canonical\" href=\"/p/{}.html\">", i - 1));
    }
    if i.is_multiple_of(97) {
        head = head.replace(&format!("href=\"/p/{i}.html\""), &format!("href=\"/gone/{i}.html\""));
    }
    if i.is_multiple_of(11) {
        head.push_str("<meta name=\"robots\" content=\"noindex, follow\">");
    }
    let body: String = words.chunks(60).map(|c| format!("<p>{}</p>\n", c.join(" "))).collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">{head}</head><body>\
         <header><nav><a href=\"/\">Home</a> <a href=\"/shop\">Shop</a> <a href=\"/about\">About us</a></nav></header>\
         <main><article><h1>Article {}</h1>\n{body}</article></main>\
         <footer><p>Bench shop, 1 Loopback Lane. Free delivery on orders over fifty pounds.</p></footer></body></html>",
        i / 3
    )
}

async fn page(State(site): State<Arc<Site>>, Path(name): Path<String>) -> Response {
    let Some(i) = name.strip_suffix(".html").and_then(|n| n.parse::<usize>().ok()).filter(|&i| i < site.pages.len())
    else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], site.pages[i].clone()).into_response();
    if i.is_multiple_of(13) {
        r.headers_mut().insert("x-robots-tag", HeaderValue::from_static("noindex"));
    }
    r
}

/// URLs per sitemap file, the protocol's limit: a larger site's
/// `/sitemap.xml` is an index of `/sitemap-K.xml` files.
const PER_SITEMAP: usize = 50_000;

async fn sitemap(State(site): State<Arc<Site>>) -> Response {
    let urls = site.pages.len() + 10;
    if urls <= PER_SITEMAP {
        return urlset(&site, 0..urls);
    }
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for k in 0..urls.div_ceil(PER_SITEMAP) {
        xml.push_str(&format!("<sitemap><loc>http://127.0.0.1:{}/sitemap-{k}.xml</loc></sitemap>", site.port));
    }
    xml.push_str("</sitemapindex>");
    ([(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

async fn part(State(site): State<Arc<Site>>, Path(name): Path<String>) -> Response {
    let urls = site.pages.len() + 10;
    match name.strip_suffix(".xml").and_then(|k| k.parse::<usize>().ok()) {
        Some(k) if k * PER_SITEMAP < urls => urlset(&site, k * PER_SITEMAP..((k + 1) * PER_SITEMAP).min(urls)),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn urlset(site: &Site, range: std::ops::Range<usize>) -> Response {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for i in range {
        xml.push_str(&format!("<url><loc>http://127.0.0.1:{}/p/{i}.html</loc></url>", site.port));
    }
    xml.push_str("</urlset>");
    ([(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count: usize = args.first().and_then(|c| c.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: audit_site COUNT [PORT]");
        std::process::exit(2);
    });
    let port: u16 = args.get(1).map_or(0, |p| p.parse().expect("PORT must be a number"));
    let texts = corpus(&SynthConfig { documents: count, words_per_document: 400, ..Default::default() });
    let pages: Vec<String> = texts.iter().enumerate().map(|(i, t)| render(i, t)).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let site = Arc::new(Site { pages, port });
        let app = axum::Router::new()
            .route("/sitemap.xml", axum::routing::get(sitemap))
            .route("/sitemap-{name}", axum::routing::get(part))
            .route("/p/{name}", axum::routing::get(page))
            .with_state(site);
        println!("listening on {port}");
        axum::serve(listener, app).await.unwrap();
    });
}
