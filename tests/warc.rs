//! Web archives as inputs, through the real binary: a WARC.gz (one gzip
//! member per record, as Common Crawl writes them) and a plain WARC built
//! here from pages in several charsets, beside every kind of record a crawl
//! holds that is not a page, and a last record cut short.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn webdup(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_webdup")).args(args).current_dir(dir).output().expect("run webdup")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const CAFE_TITLE: &str = "Café crème à la gare";
const CAFE: &str = "Le café de la gare a rouvert ses portes après trois mois de travaux. La crème brûlée du \
    chef, servie tiède, attire déjà les voyageurs pressés comme les habitués du quartier. Le propriétaire a \
    gardé le comptoir en zinc, les banquettes en cuir et la grande horloge qui règne au-dessus de la caisse \
    depuis soixante ans. Côté menu, rien ne change : omelette, croque-monsieur et tarte aux pommes maison.";

/// The Korean page's title and text, in UTF-8 and as EUC-KR bytes (which
/// are not UTF-8: only a decoder that honours `<meta charset>` reads them).
const WINTER_TITLE: &str = "겨울 축제";
const WINTER_TITLE_EUC_KR: &[u8] = b"\xb0\xdc\xbf\xef \xc3\xe0\xc1\xa6";
const WINTER: &str = "서울 시청 앞 광장에서 열린 겨울 축제는 올해도 많은 시민들이 찾아와 따뜻한 차를 나누고 오래된 노래를 \
    함께 부르며 밤늦게까지 이어졌다. 주최 측은 내년에는 더 많은 음식 부스와 어린이를 위한 놀이 공간을 마련하겠다고 \
    밝혔다. 축제 기간 동안 지하철은 한 시간 연장 운행되었고 자원봉사자들은 길을 잃은 방문객을 안내했다.";
const WINTER_EUC_KR: &[u8] = b"\xbc\xad\xbf\xef \xbd\xc3\xc3\xbb \xbe\xd5 \xb1\xa4\xc0\xe5\xbf\xa1\xbc\xad \xbf\xad\xb8\xb0 \xb0\xdc\xbf\xef \xc3\xe0\xc1\xa6\xb4\xc2 \xbf\xc3\xc7\xd8\xb5\xb5 \xb8\xb9\xc0\xba \xbd\xc3\xb9\xce\xb5\xe9\xc0\xcc \xc3\xa3\xbe\xc6\xbf\xcd \xb5\xfb\xb6\xe6\xc7\xd1 \xc2\xf7\xb8\xa6 \xb3\xaa\xb4\xa9\xb0\xed \xbf\xc0\xb7\xa1\xb5\xc8 \xb3\xeb\xb7\xa1\xb8\xa6 \xc7\xd4\xb2\xb2 \xba\xce\xb8\xa3\xb8\xe7 \xb9\xe3\xb4\xca\xb0\xd4\xb1\xee\xc1\xf6 \xc0\xcc\xbe\xee\xc1\xb3\xb4\xd9. \xc1\xd6\xc3\xd6 \xc3\xf8\xc0\xba \xb3\xbb\xb3\xe2\xbf\xa1\xb4\xc2 \xb4\xf5 \xb8\xb9\xc0\xba \xc0\xbd\xbd\xc4 \xba\xce\xbd\xba\xbf\xcd \xbe\xee\xb8\xb0\xc0\xcc\xb8\xa6 \xc0\xa7\xc7\xd1 \xb3\xee\xc0\xcc \xb0\xf8\xb0\xa3\xc0\xbb \xb8\xb6\xb7\xc3\xc7\xcf\xb0\xda\xb4\xd9\xb0\xed \xb9\xe0\xc7\xfb\xb4\xd9. \xc3\xe0\xc1\xa6 \xb1\xe2\xb0\xa3 \xb5\xbf\xbe\xc8 \xc1\xf6\xc7\xcf\xc3\xb6\xc0\xba \xc7\xd1 \xbd\xc3\xb0\xa3 \xbf\xac\xc0\xe5 \xbf\xee\xc7\xe0\xb5\xc7\xbe\xfa\xb0\xed \xc0\xda\xbf\xf8\xba\xc0\xbb\xe7\xc0\xda\xb5\xe9\xc0\xba \xb1\xe6\xc0\xbb \xc0\xd2\xc0\xba \xb9\xe6\xb9\xae\xb0\xb4\xc0\xbb \xbe\xc8\xb3\xbb\xc7\xdf\xb4\xd9.";

const ABOUT: &str = "This small site collects notes from a travelling cook: railway station cafés, night \
    markets and the recipes their owners were willing to share, written down on the evening of each visit \
    and checked again before anything is published here.";

fn page(charset_meta: &str, title: &[u8], text: &[u8]) -> Vec<u8> {
    [
        format!("<!DOCTYPE html><html><head>{charset_meta}<title>").as_bytes(),
        title,
        b"</title></head><body><article><h1>",
        title,
        b"</h1><p>",
        text,
        b"</p></article></body></html>",
    ]
    .concat()
}

fn latin1(text: &str) -> Vec<u8> {
    text.chars().map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character")).collect()
}

fn record(warc_type: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:{:08x}-0000-4000-8000-000000000000>\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\n\r\n",
        block.len() + uri.len(),
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn response(uri: &str, status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut block = format!("HTTP/1.1 {status}\r\n").into_bytes();
    for (name, value) in headers {
        block.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    block.extend_from_slice(b"\r\n");
    block.extend_from_slice(body);
    record("response", uri, "application/http; msgtype=response", &block)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The records of a small crawl, in order (their 0-based numbers are the
/// low bits of the pages' keys).
fn records() -> Vec<Vec<u8>> {
    let about = gzip(&page("<meta charset=\"utf-8\">", b"About these notes", ABOUT.as_bytes()));
    let mut chunked = format!("{:x}\r\n", 100).into_bytes();
    chunked.extend_from_slice(&about[..100]);
    chunked.extend_from_slice(format!("\r\n{:x}\r\n", about.len() - 100).as_bytes());
    chunked.extend_from_slice(&about[100..]);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    vec![
        // 0
        record("warcinfo", "", "application/warc-fields", b"software: webdup tests\r\nformat: WARC 1.0\r\n"),
        // 1
        record(
            "request",
            "https://site.example/cafe",
            "application/http; msgtype=request",
            b"GET /cafe HTTP/1.1\r\nHost: site.example\r\n\r\n",
        ),
        // 2: UTF-8, declared in the header.
        response(
            "https://site.example/cafe",
            "200 OK",
            &[("Content-Type", "text/html; charset=utf-8")],
            &page("", CAFE_TITLE.as_bytes(), CAFE.as_bytes()),
        ),
        // 3
        record("metadata", "https://site.example/cafe", "application/warc-fields", b"fetchTimeMs: 120\r\n"),
        // 4: the same page in ISO-8859-1, declared in the header only.
        response(
            "https://mirror.example/cafe-latin1",
            "200 OK",
            &[
                ("Content-Type", "text/html; charset=ISO-8859-1"),
                ("Link", "<https://site.example/cafe>; rel=\"canonical\""),
            ],
            &page("", &latin1(CAFE_TITLE), &latin1(CAFE)),
        ),
        // 5
        response(
            "https://site.example/old-cafe",
            "301 Moved Permanently",
            &[("Location", "https://site.example/cafe"), ("Content-Type", "text/html")],
            b"<html><body>moved</body></html>",
        ),
        // 6
        record(
            "revisit",
            "https://site.example/cafe",
            "message/http",
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
        ),
        // 7
        response(
            "https://site.example/logo.png",
            "200 OK",
            &[("Content-Type", "image/png")],
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
        ),
        // 8: EUC-KR, declared only in the page's <meta charset>.
        response(
            "https://site.example/winter",
            "200 OK",
            &[("Content-Type", "text/html")],
            &page("<meta charset=\"euc-kr\">", WINTER_TITLE_EUC_KR, WINTER_EUC_KR),
        ),
        // 9: chunked and gzipped, as sent; noindex in a header.
        response(
            "https://site.example/about",
            "200 OK",
            &[
                ("Content-Type", "text/html; charset=utf-8"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
                ("X-Robots-Tag", "noindex"),
            ],
            &chunked,
        ),
        // 10: cut short below.
        response(
            "https://site.example/cut",
            "200 OK",
            &[("Content-Type", "text/html")],
            &page("", b"Cut", b"this page was being written when the crawler was killed"),
        ),
    ]
}

/// Writes `crawl.warc.gz` (a gzip member per record) and `crawl.warc`
/// (plain) into `dir`, each with its last record cut short.
fn write_archives(dir: &Path) {
    let records = records();
    let (last, whole) = records.split_last().unwrap();
    let mut gz: Vec<u8> = whole.iter().flat_map(|r| gzip(r)).collect();
    let member = gzip(last);
    gz.extend_from_slice(&member[..member.len() * 2 / 3]);
    std::fs::write(dir.join("crawl.warc.gz"), gz).unwrap();
    let mut plain = whole.concat();
    plain.extend_from_slice(&last[..last.len() - 40]);
    std::fs::write(dir.join("crawl.warc"), plain).unwrap();
}

fn ids(cluster: &serde_json::Value) -> Vec<&str> {
    cluster["members"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect()
}

fn clusters(v: &serde_json::Value) -> Vec<Vec<&str>> {
    v["clusters"].as_array().unwrap().iter().map(ids).collect()
}

/// The keys (`order`) of the pages' recorded exchanges, by URI.
fn orders(v: &serde_json::Value) -> Vec<(&str, u64)> {
    v["fetches"].as_array().unwrap().iter().map(|f| (f["id"].as_str().unwrap(), f["order"].as_u64().unwrap())).collect()
}

#[test]
fn cluster_reads_an_archive_s_pages_and_counts_what_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    for name in ["crawl.warc.gz", "crawl.warc"] {
        let o = webdup(&["cluster", name, "-f", "json"], dir.path());
        // The cut record failed; the rest of the run did not.
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let v = json(&o);
        // The same page in UTF-8 and in ISO-8859-1 is one cluster of
        // identical pages: only if both decoded to the same characters.
        assert_eq!(clusters(&v), [["https://site.example/cafe", "https://mirror.example/cafe-latin1"]], "{name}");
        assert_eq!(v["clusters"][0]["kind"], "identical");
        assert_eq!(v["summary"]["documents"], 5, "{name}: four pages and the cut record");
        assert_eq!(v["summary"]["fingerprinted"], 4, "{name}");
        let errors = v["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert_eq!(errors[0]["id"], name);
        assert_eq!(errors[0]["kind"], "archive");
        let message = errors[0]["message"].as_str().unwrap();
        assert!(message.starts_with("record 11 ") && message.contains("https://site.example/cut"), "{message}");
        assert!(message.ends_with("the archive ends inside this record (truncated)"), "{message}");
        assert_eq!(
            v["warc"],
            serde_json::json!({
                "archives": 1, "records": 11, "pages": 4, "failed": 1,
                "skipped": {"http_status": 1, "metadata": 1, "not_html": 1, "request": 1, "revisit": 1, "warcinfo": 1}
            }),
            "{name}"
        );
        // One archive is one source: its records are keyed by their number.
        assert_eq!(
            orders(&v),
            [
                ("https://site.example/cafe", 2),
                ("https://mirror.example/cafe-latin1", 4),
                ("https://site.example/winter", 8),
                ("https://site.example/about", 9),
            ]
        );
        assert!(
            stderr(&o).contains(
                "webdup: WARC: 1 archive, 11 records: 4 pages, 1 failed, 6 skipped (1 http_status, 1 metadata, \
                 1 not_html, 1 request, 1 revisit, 1 warcinfo)"
            ),
            "{}",
            stderr(&o)
        );
    }
    let quiet = webdup(&["cluster", "crawl.warc.gz", "-f", "json", "-q"], dir.path());
    assert!(!stderr(&quiet).contains("WARC"), "{}", stderr(&quiet));
}

#[test]
fn an_archive_beside_plain_files_spaces_every_key_and_clusters_across_them() {
    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    std::fs::write(
        dir.path().join("winter.html"),
        page("<meta charset=\"utf-8\">", WINTER_TITLE.as_bytes(), WINTER.as_bytes()),
    )
    .unwrap();
    // The plain file first: the archive is source 1, its records keyed 1 << 32 | r.
    let o = webdup(&["cluster", "winter.html", "crawl.warc", "missing.html", "-f", "json"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    // The EUC-KR record reads as the UTF-8 file does.
    assert_eq!(
        clusters(&v),
        [
            vec!["winter.html", "https://site.example/winter"],
            vec!["https://site.example/cafe", "https://mirror.example/cafe-latin1"],
        ]
    );
    assert_eq!(v["clusters"][0]["representative"], "winter.html");
    let spaced = |r: u64| (1 << 32) | r;
    assert_eq!(
        orders(&v),
        [
            ("https://site.example/cafe", spaced(2)),
            ("https://mirror.example/cafe-latin1", spaced(4)),
            ("https://site.example/winter", spaced(8)),
            ("https://site.example/about", spaced(9)),
        ]
    );
    let errors: Vec<&str> = v["errors"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(errors, ["crawl.warc", "missing.html"], "the cut record, then the input that named nothing");
    // Walked from a directory: `crawl.warc.gz` comes first, so the archive's
    // page now represents the cluster.
    let walk = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("crawl.warc.gz"), walk.path().join("crawl.warc.gz")).unwrap();
    std::fs::copy(dir.path().join("winter.html"), walk.path().join("winter.html")).unwrap();
    let o = webdup(&["cluster", ".", "-f", "json"], walk.path());
    let v = json(&o);
    assert_eq!(clusters(&v)[0], ["https://site.example/cafe", "https://mirror.example/cafe-latin1"]);
    assert_eq!(clusters(&v)[1], ["https://site.example/winter", "./winter.html"]);
}

#[test]
fn audit_reads_status_and_headers_as_a_fetch_records_them() {
    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    let out = dir.path().join("report");
    let o = webdup(&["audit", "crawl.warc.gz", "--out", out.to_str().unwrap(), "-q"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let pages = report["pages"].as_array().unwrap();
    let page = |url: &str| pages.iter().find(|p| p["url"] == url).unwrap_or_else(|| panic!("no {url} in {pages:?}"));
    assert_eq!(pages.len(), 5, "four pages and the cut record");
    let cafe = page("https://site.example/cafe");
    assert_eq!((cafe["status"].as_u64(), cafe["title"].as_str()), (Some(200), Some(CAFE_TITLE)));
    let mirror = page("https://mirror.example/cafe-latin1");
    assert_eq!(mirror["title"], CAFE_TITLE, "decoded with the header's charset");
    assert_eq!(
        (mirror["canonical"].as_str(), mirror["canonical_source"].as_str()),
        (Some("https://site.example/cafe"), Some("http"))
    );
    assert_eq!(page("https://site.example/winter")["h1"], WINTER_TITLE, "decoded with the meta charset");
    let about = page("https://site.example/about");
    assert_eq!((about["noindex"].as_bool(), about["noindex_source"].as_str()), (Some(true), Some("x-robots-tag")));
    assert_eq!(about["title"], "About these notes", "unchunked and gunzipped");
}

#[test]
fn index_add_stores_the_archive_s_pages() {
    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    let o = webdup(&["index", "add", "--crawl", "c1", "--index", "pages.db", "crawl.warc.gz"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!((v["pages"].as_u64(), v["with_content"].as_u64(), v["failed"].as_u64()), (Some(5), Some(4), Some(1)));
    assert_eq!(v["warc"]["pages"], 4);
    // The same text, checked later as a plain file, is found under the archive's URI.
    std::fs::write(
        dir.path().join("winter.html"),
        page("<meta charset=\"utf-8\">", WINTER_TITLE.as_bytes(), WINTER.as_bytes()),
    )
    .unwrap();
    let o = webdup(&["index", "query", "--index", "pages.db", "winter.html"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    // Not identical: the two pages name different charsets.
    assert_eq!(v["same_text"][0]["url"], "https://site.example/winter", "{v}");
}

/// `Run::load` over any subset of the expanded sources (a task of N loads
/// every N-th) keys an archive's pages as the whole run does.
#[test]
fn a_subset_of_the_sources_keys_an_archive_s_pages_as_the_whole_run() {
    use webdup::DocKey;
    use webdup::engine::{Config, Quiet};
    use webdup::run::{Run, RunConfig};

    let dir = tempfile::tempdir().unwrap();
    write_archives(dir.path());
    let winter = dir.path().join("winter.html");
    std::fs::write(&winter, page("<meta charset=\"utf-8\">", WINTER_TITLE.as_bytes(), WINTER.as_bytes())).unwrap();
    let inputs: Vec<String> = [winter, dir.path().join("crawl.warc.gz"), dir.path().join("missing.html")]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let config = Config::default().validate().unwrap();
    let mut run = Run::new(RunConfig::default());
    let expanded = run.expand(&inputs, &mut std::io::empty()).unwrap();
    assert!(expanded.spaced());
    assert_eq!(expanded.sources.iter().map(|s| s.key).collect::<Vec<_>>(), [DocKey(0), DocKey(1 << 32)]);
    assert_eq!(expanded.errors[0].key, DocKey(2 << 32), "after every source and record");
    let keys = |loaded: &webdup::run::Loaded| {
        let docs = loaded.corpus.docs.iter().map(|d| (d.id.clone(), d.key.0));
        let errors = loaded.corpus.errors.iter().map(|e| (e.id.clone(), e.key.0));
        docs.chain(errors).collect::<Vec<_>>()
    };
    let whole = run.load(expanded.sources.clone(), &config, &Quiet).unwrap();
    let archive_only = run.load(vec![expanded.sources[1].clone()], &config, &Quiet).unwrap();
    let spaced = |r: u64| (1 << 32) | r;
    let expected = [
        ("https://site.example/cafe", spaced(2)),
        ("https://mirror.example/cafe-latin1", spaced(4)),
        ("https://site.example/winter", spaced(8)),
        ("https://site.example/about", spaced(9)),
    ];
    let named = |pairs: &[(&str, u64)]| pairs.iter().map(|(id, k)| (id.to_string(), *k)).collect::<Vec<_>>();
    let archive_id = expanded.sources[1].id.clone();
    let mut with_error = named(&expected);
    with_error.push((archive_id.clone(), spaced(10)));
    assert_eq!(keys(&archive_only), with_error);
    let whole_keys = keys(&whole);
    assert_eq!(whole_keys[0], (inputs[0].clone(), 0));
    assert_eq!(whole_keys[1..], with_error[..]);
    assert_eq!(archive_only.warc, whole.warc);
    assert_eq!(archive_only.fetches.iter().map(|f| f.key.0).collect::<Vec<_>>(), [2, 4, 8, 9].map(spaced));
}
