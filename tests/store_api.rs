//! The store's library API on real SQLite files: insert, check, lookup,
//! remove, batches, settings guard, bad files, sharing across tokio tasks.

use std::sync::Arc;

use webdup::DocKey;
use webdup::engine::{Config, Fingerprint, Fingerprinter};
use webdup::fetch::Hop;
use webdup::store::{Error, Index, Page};
use webdup_eval::synth::{SynthConfig, corpus};

fn config() -> Config {
    Config::default().validate().unwrap()
}

fn texts(n: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: 200, copy_share: 0.0, seed, ..Default::default() })
}

fn fingerprint(fp: &Fingerprinter, url: &str, text: &str) -> Fingerprint {
    fp.fingerprint_text(url.into(), DocKey(0), text).unwrap()
}

/// Replaces every `every`-th word, for a near duplicate.
fn edited(text: &str, every: usize) -> String {
    text.split(' ').enumerate().map(|(i, w)| if i % every == 0 { "zzzedit" } else { w }).collect::<Vec<_>>().join(" ")
}

#[test]
fn check_finds_exact_and_near_duplicates_with_exact_jaccard() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(20, 7);
    let pages: Vec<Page> = t
        .iter()
        .enumerate()
        .map(|(i, s)| Page::new("c1", format!("https://a.test/{i}"), fingerprint(&fp, "x", s)))
        .collect();
    assert_eq!(index.insert_batch(&pages).unwrap().len(), 20);

    let same = fingerprint(&fp, "https://b.test/copy", &t[3]);
    let r = index.check(&same).unwrap();
    assert_eq!(r.identical.len(), 1);
    assert_eq!(r.identical[0].url, "https://a.test/3");
    assert!(r.near.is_empty(), "{:?}", r.near);

    let near = fingerprint(&fp, "https://b.test/near", &edited(&t[5], 60));
    let r = index.check(&near).unwrap();
    assert!(r.identical.is_empty());
    assert_eq!(r.near.len(), 1, "{r:?}");
    let expected = webdup::verify::Overlap::of(&near.shingles, &pages[5].fingerprint.as_ref().unwrap().shingles);
    assert_eq!(r.near[0].url, "https://a.test/5");
    assert_eq!(r.near[0].jaccard, expected.jaccard());
    assert!(r.near[0].jaccard >= 0.8 && r.near[0].jaccard < 1.0);

    // Far from everything: nothing, and only a handful of candidates looked at.
    let other = fingerprint(&fp, "https://b.test/new", &texts(1, 99)[0]);
    let r = index.check(&other).unwrap();
    assert!(!r.seen());
}

#[test]
fn insert_replaces_the_same_crawl_and_url_and_remove_cleans_bands() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(3, 11);
    let titled = |crawl: &str, f: Fingerprint| {
        let mut page = Page::new(crawl, "https://a.test/p", f);
        page.record.meta.title = Some("title of p".into());
        page
    };
    index.insert(&titled("c1", fingerprint(&fp, "p", &t[0]))).unwrap();
    index.insert(&titled("c1", fingerprint(&fp, "p", &t[1]))).unwrap();
    index.insert(&titled("c2", fingerprint(&fp, "p", &t[1]))).unwrap();
    index.insert(&Page::failed("c2", "https://a.test/gone", "http_status", "HTTP 404")).unwrap();
    let s = index.stats().unwrap();
    assert_eq!((s.pages, s.with_content, s.distinct_urls), (3, 2, 2));
    assert_eq!(s.band_rows, 2 * config.lsh_params().bands as u64);
    assert_eq!(s.crawls.iter().map(|c| c.crawl.as_str()).collect::<Vec<_>>(), ["c1", "c2"]);
    // The replaced text is gone from the candidate table too.
    assert!(!index.check(&fingerprint(&fp, "q", &t[0])).unwrap().seen());
    assert_eq!(index.check(&fingerprint(&fp, "q", &t[1])).unwrap().identical.len(), 2);

    let got = index.get("https://a.test/p").unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].meta.title.as_deref(), Some("title of p"));
    assert_eq!(index.get("https://a.test/gone").unwrap()[0].error_kind.as_deref(), Some("http_status"));

    assert_eq!(index.remove("https://a.test/p").unwrap(), 2);
    assert_eq!(index.remove("https://a.test/p").unwrap(), 0);
    let s = index.stats().unwrap();
    assert_eq!((s.pages, s.band_rows), (1, 0));
    assert!(index.verify().unwrap().is_empty());
}

#[test]
fn a_failed_batch_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(2, 3);
    let good = Page::new("c", "https://a.test/1", fingerprint(&fp, "1", &t[0]));
    let bad = Page::new("", "https://a.test/2", fingerprint(&fp, "2", &t[1]));
    let e = index.insert_batch(&[good, bad]).unwrap_err();
    assert!(matches!(e, Error::InvalidPage(_)), "{e}");
    assert_eq!(index.stats().unwrap().pages, 0);
}

#[test]
fn other_settings_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("i.db");
    Index::open(&path, &config()).unwrap();
    let mut other = Config::default();
    other.fingerprint.permutations = 64;
    let other = other.validate().unwrap();
    let e = Index::open(&path, &other).err().unwrap();
    assert!(matches!(e, Error::SettingsMismatch { setting: "permutations", .. }), "{e}");
    assert!(e.to_string().contains("permutations = 128"), "{e}");
    // A fingerprint made elsewhere with other settings cannot be checked or inserted.
    let index = Index::open(&path, &config()).unwrap();
    let small = Fingerprinter::new(&other).fingerprint_text("u".into(), DocKey(0), &texts(1, 1)[0]).unwrap();
    assert!(matches!(index.check(&small), Err(Error::Fingerprint { .. })));
    assert!(matches!(index.insert(&Page::new("c", "u", small)), Err(Error::Fingerprint { .. })));
}

/// Issue 40, item 7: an index whose `seed` row was missing was opened with
/// the seed asked for (42 by default) filled in, and its stored signatures
/// compared as another seed's. Now opening it names the index and the row,
/// and the file is left as it was.
#[test]
fn an_index_without_its_seed_row_is_refused_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seedless.db");
    let index = Index::open(&path, &config()).unwrap();
    let fp = Fingerprinter::new(&config());
    index.insert(&Page::new("c", "https://a.test/", fingerprint(&fp, "https://a.test/", &texts(1, 3)[0]))).unwrap();
    drop(index);
    let seed_rows = || -> i64 {
        rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("SELECT count(*) FROM meta WHERE key = 'seed'", [], |r| r.get(0))
            .unwrap()
    };
    rusqlite::Connection::open(&path).unwrap().execute("DELETE FROM meta WHERE key = 'seed'", []).unwrap();
    let e = Index::open(&path, &config()).err().expect("a seedless index is refused");
    let message = e.to_string();
    assert!(message.contains("seedless.db") && message.contains("\"seed\" row"), "{message}");
    assert_eq!(seed_rows(), 0, "nothing was filled in");
    let e = Index::open_existing(&path).err().expect("read-only use too");
    assert!(e.to_string().contains("seedless.db") && e.to_string().contains("\"seed\" row"), "{e}");
}

#[test]
fn files_that_are_not_indexes_are_refused_with_their_path() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let e = Index::open(&junk, &config()).err().unwrap();
    assert!(e.to_string().contains("junk.db"), "{e}");

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    let e = Index::open(&foreign, &config()).err().unwrap();
    assert!(e.to_string().contains("not a webdup index"), "{e}");

    let newer = dir.path().join("newer.db");
    rusqlite::Connection::open(&newer).unwrap().execute_batch("PRAGMA user_version = 99").unwrap();
    let e = Index::open(&newer, &config()).err().unwrap();
    assert!(e.to_string().contains("newer"), "{e}");
}

#[test]
fn open_existing_never_creates_or_adopts_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let e = Index::open_existing(&missing).err().unwrap();
    assert!(matches!(&e, Error::Open { reason, .. } if matches!(**reason, Error::Missing)), "{e}");
    assert!(e.to_string().contains("missing.db"), "{e}");
    assert!(!missing.exists(), "a missing index was created");

    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let e = Index::open_existing(&empty).err().unwrap();
    assert!(e.to_string().contains("empty.db: not a webdup index"), "{e}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "the empty file was written to");

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x); PRAGMA user_version = 7").unwrap();
    let e = Index::open_existing(&foreign).err().unwrap();
    assert!(e.to_string().contains("foreign.db: not a webdup index"), "{e}");
    let mode: String =
        rusqlite::Connection::open(&foreign).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "delete", "the foreign database was switched to WAL");

    // An index made with other settings opens with its own.
    let path = dir.path().join("strict.db");
    let mut strict = config();
    strict.matching.threshold = 0.9;
    let strict = strict.validate().unwrap();
    drop(Index::open(&path, &strict).unwrap());
    let index = Index::open_existing(&path).unwrap();
    assert_eq!(index.settings().threshold, 0.9);
    assert_eq!(index.settings().apply(config()).unwrap().matching.threshold, 0.9);
    assert!(matches!(index.choose_crawl(None), Err(Error::Empty { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shared_across_tokio_tasks_without_losing_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Arc::new(Index::open(dir.path().join("i.db"), &config).unwrap());
    let fp = Arc::new(Fingerprinter::new(&config));
    let t = Arc::new(texts(200, 5));
    let mut tasks = Vec::new();
    for task in 0..8 {
        let (index, fp, t) = (index.clone(), fp.clone(), t.clone());
        tasks.push(tokio::task::spawn_blocking(move || {
            for i in (task..200).step_by(8) {
                let f = fingerprint(&fp, "x", &t[i]);
                index.insert(&Page::new("c", format!("https://a.test/{i}"), f.clone())).unwrap();
                assert_eq!(index.check(&f).unwrap().identical[0].url, format!("https://a.test/{i}"));
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let s = index.stats().unwrap();
    assert_eq!((s.pages, s.distinct_urls), (200, 200));
    assert!(index.verify().unwrap().is_empty());
}

#[test]
fn page_metadata_from_extraction_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { keep_pages: true, ..config() };
    let index = Index::open(dir.path().join("meta.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let body = texts(1, 3).remove(0);
    let html = format!(
        "<html><head><title>Blue widget</title><meta name=description content='A sturdy desk organiser'>\
         <meta name=robots content='noindex, follow'><link rel=canonical href='https://shop.example/widget'></head>\
         <body><h1>The blue widget</h1><article><p>{body}</p></article></body></html>"
    );
    let raw = webdup::source::RawDocument {
        id: "https://shop.example/widget?print=1".into(),
        key: DocKey(0),
        format: webdup::source::Format::Html,
        body: html,
        url: None,
    };
    let (f, shown) = fp.fingerprint_page(raw).unwrap();
    index.insert(&Page::observed("c1", "https://shop.example/widget?print=1", f, Some(shown), None)).unwrap();
    let stored = index.get("https://shop.example/widget?print=1").unwrap();
    let m = &stored[0].meta;
    assert_eq!(m.title.as_deref(), Some("Blue widget"));
    assert_eq!(m.description.as_deref(), Some("A sturdy desk organiser"));
    assert_eq!(m.h1.as_deref(), Some("The blue widget"));
    assert_eq!(m.canonical.as_deref(), Some("https://shop.example/widget"));
    assert_eq!(m.noindex, Some(true));
    assert_eq!(
        (m.canonical_source.map(|s| s.as_str()), m.noindex_source.map(|s| s.as_str())),
        (Some("html"), Some("meta"))
    );
    // The main text is stored by default, and can be left out.
    let (p, _) = &index.crawl_fingerprints("c1").unwrap()[0];
    assert!(p.text.as_deref().is_some_and(|t| t.contains(&body[..40])));
    let f = fp.fingerprint_text("https://shop.example/b".into(), DocKey(0), &body).unwrap();
    let mut page = Page::new("c2", "https://shop.example/b", f);
    page.record.text = Some(body.clone());
    index.insert(&page.without_text()).unwrap();
    assert_eq!(index.crawl_fingerprints("c2").unwrap()[0].0.text, None);
}

/// The responses before a page's final one are kept, for audits of the index.
#[test]
fn redirects_are_stored_with_their_page() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("redirects.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(2, 13);
    let hops = vec![
        Hop { url: "http://a.test/old".into(), status: 301 },
        Hop { url: "https://a.test/old".into(), status: 308 },
    ];
    let mut moved = Page::new("c1", "http://a.test/old", fingerprint(&fp, "https://a.test/new", &t[0]));
    moved.record.final_url = Some("https://a.test/new".into());
    moved.record.redirects = hops.clone();
    let direct = Page::new("c1", "https://a.test/other", fingerprint(&fp, "https://a.test/other", &t[1]));
    index.insert_batch(&[moved, direct]).unwrap();
    assert_eq!(index.get("http://a.test/old").unwrap()[0].redirects, hops);
    let other = &index.get("https://a.test/other").unwrap()[0];
    assert!(other.redirects.is_empty());
    // Left out of JSON when there are none.
    assert!(serde_json::to_value(other).unwrap().get("redirects").is_none());
}

/// Long main texts are stored deflated, short ones as they are, and both
/// read back as they were; a damaged one is reported with its page, not
/// returned garbled.
#[test]
fn long_main_texts_are_stored_compressed_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("texts.db");
    let config = config();
    let index = Index::open(&path, &config).unwrap();
    let fp = Fingerprinter::new(&config);
    // Real articles' texts (AEB, MIT; see fixtures/extract/SOURCES.md).
    let article = |n: usize| {
        std::fs::read_to_string(format!("{}/fixtures/extract/articles/article{n}.txt", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
    };
    let long = format!("{}\n{}\n\nÉté, naïve café: ünïcödé survives.", article(1), article(2));
    let short = "A short note: the ferry runs at nine.".to_string();
    for (url, text) in [("https://a.test/long", &long), ("https://a.test/short", &short)] {
        let mut page = Page::new("c1", url, fingerprint(&fp, url, text));
        page.record.text = Some(text.clone());
        index.insert(&page).unwrap();
    }
    let stored = index.crawl_fingerprints("c1").unwrap();
    let texts: Vec<_> = stored.iter().map(|(p, _)| p.text.clone().unwrap()).collect();
    assert_eq!(texts, [long.clone(), short.clone()]);
    drop(index);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<(Option<String>, Option<Vec<u8>>)> = conn
        .prepare("SELECT text, text_deflate FROM pages ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let deflated = rows[0].1.as_ref().expect("the long text is deflated");
    assert_eq!(rows[0].0, None);
    assert!(deflated.len() * 5 < long.len() * 3, "{} bytes deflated from {}", deflated.len(), long.len());
    assert_eq!(rows[1], (Some(short), None));
    conn.execute("UPDATE pages SET text_deflate = x'ff00ff00' WHERE id = 1", []).unwrap();
    drop(conn);
    let index = Index::open(&path, &config).unwrap();
    match index.crawl_fingerprints("c1") {
        Err(Error::Corrupt { page_id: 1, reason }) => assert!(reason.contains("stored text"), "{reason}"),
        other => panic!("expected a corrupt-page error, got {other:?}"),
    }
}

/// Pages whose band keys are pending and pages whose keys were merged into
/// the band table answer checks alike, and replacing or removing either
/// leaves no key behind.
#[test]
fn pending_and_merged_band_keys_answer_alike_and_are_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let bands = config.lsh_params().bands as u64;
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(40, 21);
    let pages: Vec<Page> = t[..20]
        .iter()
        .enumerate()
        .map(|(i, s)| Page::new("c1", format!("https://a.test/{i}"), fingerprint(&fp, "x", s)))
        .collect();
    index.insert_batch(&pages).unwrap();
    let probes: Vec<Fingerprint> = (0..20)
        .map(|i| {
            let text = if i % 2 == 0 { edited(&t[i], 60) } else { t[i].clone() };
            fingerprint(&fp, "probe", &text)
        })
        .chain([fingerprint(&fp, "probe", &t[30])])
        .collect();
    let pending: Vec<_> = probes.iter().map(|f| index.check(f).unwrap()).collect();
    assert!(pending[..20].iter().all(|r| r.seen()), "{pending:?}");
    assert!(pending[0].near.len() == 1 && pending[1].identical.len() == 1, "{:?}", &pending[..2]);
    assert!(!pending[20].seen());
    let s = index.stats().unwrap();
    assert_eq!((s.pending_pages, s.band_rows), (20, 20 * bands));

    assert_eq!(index.merge_pending().unwrap(), 20);
    assert_eq!(index.merge_pending().unwrap(), 0);
    let s = index.stats().unwrap();
    assert_eq!((s.pending_pages, s.band_rows), (0, 20 * bands));
    let merged: Vec<_> = probes.iter().map(|f| index.check(f).unwrap()).collect();
    assert_eq!(merged, pending);
    assert!(index.verify().unwrap().is_empty());

    // New pages are pending again, beside the merged ones.
    index.insert(&Page::new("c1", "https://a.test/new", fingerprint(&fp, "x", &t[30]))).unwrap();
    assert_eq!(index.check(&probes[20]).unwrap().identical[0].url, "https://a.test/new");
    // Replace a merged page and the pending one with other texts, remove another merged page.
    index.insert(&Page::new("c1", "https://a.test/1", fingerprint(&fp, "x", &t[31]))).unwrap();
    index.insert(&Page::new("c1", "https://a.test/new", fingerprint(&fp, "x", &t[32]))).unwrap();
    assert_eq!(index.remove("https://a.test/3").unwrap(), 1);
    for gone in [1, 3, 20] {
        assert!(!index.check(&probes[gone]).unwrap().seen(), "probe {gone} still matches");
    }
    assert_eq!(index.check(&fingerprint(&fp, "q", &t[31])).unwrap().identical[0].url, "https://a.test/1");
    assert_eq!(index.check(&fingerprint(&fp, "q", &t[32])).unwrap().identical[0].url, "https://a.test/new");
    let s = index.stats().unwrap();
    assert_eq!((s.pages, s.pending_pages, s.band_rows), (20, 2, 20 * bands));
    assert!(index.verify().unwrap().is_empty());
    index.merge_pending().unwrap();
    assert_eq!(index.stats().unwrap().band_rows, 20 * bands);
    assert!(index.verify().unwrap().is_empty());
}

/// Each process keeps its own copy of the pending keys: a second index on
/// the same file sees what the first inserts, before and after a merge.
#[test]
fn another_connection_sees_pending_keys_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let path = dir.path().join("i.db");
    let writer = Index::open(&path, &config).unwrap();
    let reader = Index::open(&path, &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(3, 31);
    let near = |i: usize| fingerprint(&fp, "probe", &edited(&t[i], 60));
    assert!(!reader.check(&near(0)).unwrap().seen());

    writer.insert(&Page::new("c", "https://a.test/0", fingerprint(&fp, "x", &t[0]))).unwrap();
    assert_eq!(reader.check(&near(0)).unwrap().near[0].url, "https://a.test/0");
    writer.merge_pending().unwrap();
    writer.insert(&Page::new("c", "https://a.test/1", fingerprint(&fp, "x", &t[1]))).unwrap();
    assert_eq!(reader.check(&near(0)).unwrap().near[0].url, "https://a.test/0");
    assert_eq!(reader.check(&near(1)).unwrap().near[0].url, "https://a.test/1");
    // Replaced while the reader holds its keys: the old text no longer matches.
    writer.insert(&Page::new("c", "https://a.test/1", fingerprint(&fp, "x", &t[2]))).unwrap();
    assert!(!reader.check(&near(1)).unwrap().seen());
    assert_eq!(reader.check(&near(2)).unwrap().near[0].url, "https://a.test/1");
}

/// The batch that brings enough pending pages together merges them.
#[test]
fn a_batch_past_the_threshold_merges_the_pending_keys() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let bands = config.lsh_params().bands as u64;
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let batch = 1000;
    let threshold = webdup::store::bands::merge_threshold(0) as u64;
    let page = |i: u64| {
        let text = format!("page {i} of the merge test, with words {} and {}", i * 7, i * 13);
        Page::new("c", format!("https://a.test/{i}"), fingerprint(&fp, "x", &text))
    };
    let mut stored = 0;
    while stored < threshold {
        index.insert_batch(&(stored..stored + batch).map(page).collect::<Vec<_>>()).unwrap();
        stored += batch;
        let s = index.stats().unwrap();
        let expected_pending = if stored < threshold { stored } else { 0 };
        assert_eq!((s.pages, s.pending_pages, s.band_rows), (stored, expected_pending, stored * bands));
    }
    assert!(index.verify().unwrap().is_empty());
    let probe = page(17).fingerprint.unwrap();
    assert_eq!(index.check(&probe).unwrap().identical[0].url, "https://a.test/17");
}

#[test]
fn check_and_insert_tells_exactly_one_of_racing_near_copies_that_it_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    // Two handles on one file, as two crawler processes would hold.
    let handles = [
        Arc::new(Index::open(dir.path().join("i.db"), &config).unwrap()),
        Arc::new(Index::open(dir.path().join("i.db"), &config).unwrap()),
    ];
    let fp = Arc::new(Fingerprinter::new(&config));
    let groups = texts(12, 31);
    // Every group arrives as four pages at once: the text, an exact copy
    // and two near copies, from eight threads over the two handles.
    let mut work = Vec::new();
    for (g, text) in groups.iter().enumerate() {
        for (v, body) in [text.clone(), text.clone(), edited(text, 150), edited(text, 200)].into_iter().enumerate() {
            work.push((g, format!("https://g{g}.test/{v}"), body));
        }
    }
    let work = Arc::new(std::sync::Mutex::new(work));
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (index, fp, work, barrier) = (handles[t % 2].clone(), fp.clone(), work.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut new = Vec::new();
                loop {
                    let Some((g, url, body)) = work.lock().unwrap().pop() else { break };
                    let page = Page::new("c", &url, fingerprint(&fp, &url, &body));
                    let (result, id) = index.check_and_insert(&page).unwrap();
                    assert!(id > 0);
                    if !result.seen() {
                        new.push(g);
                    }
                }
                new
            })
        })
        .collect();
    let mut new: Vec<usize> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    new.sort();
    assert_eq!(new, (0..groups.len()).collect::<Vec<_>>(), "exactly one new page per group");
    assert_eq!(handles[0].stats().unwrap().pages, 48);

    // A batch: each page is checked against the ones before it too.
    let text = &texts(1, 77)[0];
    let batch: Vec<Page> = [text.clone(), edited(text, 80), text.clone()]
        .iter()
        .enumerate()
        .map(|(i, body)| Page::new("c", format!("https://batch.test/{i}"), fingerprint(&fp, "x", body)))
        .collect();
    let results = handles[1].check_and_insert_batch(&batch).unwrap();
    assert!(!results[0].0.seen());
    assert_eq!(results[1].0.near[0].url, "https://batch.test/0", "{:?}", results[1].0);
    assert_eq!(results[2].0.identical[0].url, "https://batch.test/0");
    assert_eq!(results[2].0.near[0].url, "https://batch.test/1");
    // And a plain check sees them afterwards, from the other handle.
    assert_eq!(handles[0].check(batch[0].fingerprint.as_ref().unwrap()).unwrap().identical.len(), 2);
}

#[test]
fn matches_carry_their_row_ids_and_equally_near_pages_come_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let text = &texts(1, 31)[0];
    // The article, then a byte-identical mirror whose URL sorts first.
    let article = index.insert(&Page::new("c1", "https://z.test/article", fingerprint(&fp, "a", text))).unwrap();
    let mirror = index.insert(&Page::new("c1", "https://a.test/mirror", fingerprint(&fp, "m", text))).unwrap();
    assert!(article < mirror);
    let r = index.check(&fingerprint(&fp, "https://b.test/copy", text)).unwrap();
    assert_eq!(r.identical.iter().map(|m| m.id).collect::<Vec<_>>(), [article, mirror]);
    // A near copy is as near to both: the one stored first leads.
    let r = index.check(&fingerprint(&fp, "https://b.test/near", &edited(text, 60))).unwrap();
    assert_eq!(r.near.len(), 2, "{r:?}");
    assert_eq!(r.near[0].jaccard, r.near[1].jaccard);
    assert_eq!((r.near[0].id, r.near[0].url.as_str()), (article, "https://z.test/article"));
    assert_eq!(r.near[1].id, mirror);
}

#[test]
fn pages_of_another_site_are_held_to_the_cross_site_threshold() {
    // The same story in another site's template keeps some of each
    // template's text: `cluster` holds such pairs to 0.5, and so does the
    // index, with a band table built for 0.5.
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    assert_eq!(config.matching.cross_site_threshold, Some(0.5));
    let path = dir.path().join("i.db");
    let index = Index::open(&path, &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(30, 23);
    let pages: Vec<Page> = t
        .iter()
        .enumerate()
        .map(|(i, s)| Page::new("c1", format!("https://a.test/{i}"), fingerprint(&fp, "x", s)))
        .collect();
    index.insert_batch(&pages).unwrap();
    let story = &pages[4].fingerprint.as_ref().unwrap().shingles;

    let copy = edited(&t[4], 20);
    let across = fingerprint(&fp, "https://b.test/story", &copy);
    let jaccard = webdup::verify::Overlap::of(&across.shingles, story).jaccard();
    assert!(jaccard > 0.5 && jaccard < 0.8, "{jaccard}");
    let r = index.check(&across).unwrap();
    assert_eq!(r.near.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(), ["https://a.test/4"], "{r:?}");
    assert_eq!(r.near[0].jaccard, jaccard);

    // The same text on the original's own site is held to 0.8.
    let within = fingerprint(&fp, "https://a.test/story", &copy);
    assert!(!index.check(&within).unwrap().seen());

    // check_and_insert applies the same rule; the setting is recorded.
    let (result, _) = index.check_and_insert(&Page::new("c2", "https://b.test/story", across.clone())).unwrap();
    assert!(result.seen());
    drop(index);
    let stored = Index::open_existing(&path).unwrap().settings().clone();
    assert_eq!((stored.threshold, stored.cross_site_threshold), (0.8, Some(0.5)));
    assert_eq!((stored.bands, stored.rows), (config.lsh_params().bands, config.lsh_params().rows));
    assert_eq!(config.lsh_params(), webdup::candidates::LshParams::optimal(0.5, config.fingerprint.permutations));

    // An index with one rule for every pair holds the copy to 0.8.
    let mut one_rule = config.clone();
    one_rule.matching.cross_site_threshold = None;
    let one_rule = one_rule.validate().unwrap();
    let index = Index::open(dir.path().join("one.db"), &one_rule).unwrap();
    index.insert_batch(&pages).unwrap();
    assert!(!index.check(&across).unwrap().seen());
    assert_eq!(
        index.settings().bands,
        webdup::candidates::LshParams::optimal(0.8, config.fingerprint.permutations).bands
    );
}

/// Issue 40, item 7: a NUL in a page's URL or a control character in its
/// crawl name was stored; the index refuses them on insert, whichever
/// front end (CLI, Python, API) made the page.
#[test]
fn a_nul_in_the_url_or_a_control_character_in_the_crawl_is_refused_on_insert() {
    let dir = tempfile::tempdir().unwrap();
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let fp = Fingerprinter::new(&config);
    let t = texts(1, 4);
    for (crawl, url) in [("c", "https://a.test/\0x"), ("c\0", "https://a.test/1"), ("c\n", "https://a.test/1")] {
        let page = Page::new(crawl, url, fingerprint(&fp, "1", &t[0]));
        let e = index.insert(&page).unwrap_err();
        assert!(matches!(e, Error::InvalidPage(_)), "{e}");
        let e = index.check_and_insert(&page).unwrap_err();
        assert!(matches!(e, Error::InvalidPage(_)), "{e}");
    }
    assert_eq!(index.stats().unwrap().pages, 0);
}
