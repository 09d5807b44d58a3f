//! Format compatibility the tantivy way: index files written by earlier
//! releases (tests/data/index_v{N}.db, made by scripts/make-compat-index.py
//! with that release's binary from the pages in tests/data/compat-site/)
//! open with today's webdup, migrate, verify, and answer checks. The file of
//! the current schema version is written by the current binary when it is
//! missing, so a schema bump leaves a new file to check in.

use std::path::{Path, PathBuf};
use std::process::Command;

use webdup::engine::{Config, Fingerprinter};
use webdup::source::{DocKey, Format, RawDocument};
use webdup::store::{Index, schema};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Oldest schema version whose file is kept here.
const OLDEST_KEPT: i64 = 4;

/// Writes the current version's file when it is missing (tantivy's `create_format`).
fn current_version_file() -> PathBuf {
    let path = data().join(format!("index_v{}.db", schema::VERSION));
    if !path.exists() {
        let done = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-compat-index.py"))
            .arg(env!("CARGO_BIN_EXE_webdup"))
            .arg(&path)
            .status()
            .expect("python3 runs scripts/make-compat-index.py");
        assert!(done.success() && path.exists(), "could not write {}", path.display());
    }
    path
}

/// A copy of a kept file: opening migrates it, and the kept bytes must not change.
fn open_copy(version: i64, dir: &Path) -> Index {
    let kept = data().join(format!("index_v{version}.db"));
    let copy = dir.join(format!("v{version}.db"));
    std::fs::copy(&kept, &copy).unwrap_or_else(|e| panic!("{}: {e}", kept.display()));
    let found: i64 =
        rusqlite::Connection::open(&copy).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(found, version, "{} is not a version-{version} file", kept.display());
    Index::open_existing(&copy).unwrap_or_else(|e| panic!("index_v{version}.db: {e}"))
}

#[test]
fn every_kept_index_file_opens_verifies_and_finds_its_pages() {
    current_version_file();
    for version in OLDEST_KEPT..=schema::VERSION {
        let dir = tempfile::tempdir().unwrap();
        let index = open_copy(version, dir.path());
        let problems = index.verify().unwrap();
        assert!(problems.is_empty(), "index_v{version}.db: {problems:?}");
        let stats = index.stats().unwrap();
        assert_eq!(stats.pages, 4, "index_v{version}.db: {stats:?}");
        // Settings recorded since version 6 or 7 are today's defaults, and say so.
        let settings = index.settings();
        let default_template = Some(webdup::template::TemplateConfig::default());
        assert_eq!(settings.fingerprint.template, default_template, "v{version}");
        assert_eq!(settings.fingerprint.simhash_weighting, webdup::sketch::SimHashWeighting::Tf, "v{version}");
        let assumed: &[&str] = match version {
            ..6 => &["template", "include_selector", "exclude_selector", "simhash_weighting"],
            6 => &["simhash_weighting"],
            _ => &[],
        };
        assert_eq!(settings.assumed, assumed, "v{version}: {settings:?}");

        let pages = index.crawl_pages("compat").unwrap();
        let url_of = |path: &str| {
            pages.iter().map(|(p, _)| p).find(|p| p.url.ends_with(path)).unwrap_or_else(|| panic!("{path}")).clone()
        };
        // What each page's row says, whichever release wrote it.
        let article = url_of("/article");
        assert_eq!(article.meta.canonical_source.map(|s| s.as_str()), Some("http"), "v{version}");
        assert!(article.meta.canonical.as_deref().is_some_and(|c| c.ends_with("/ferries")), "v{version}");
        assert_eq!(article.meta.h1.as_deref(), Some("Winter ferry timetable"), "v{version}");
        let private = url_of("/private");
        assert_eq!(
            (private.meta.noindex, private.meta.noindex_source.map(|s| s.as_str())),
            (Some(true), Some("x-robots-tag"))
        );
        let old = url_of("/old");
        assert!(old.final_url.as_deref().is_some_and(|u| u.ends_with("/moved")), "v{version}");
        assert_eq!(url_of("/gone").error_kind.as_deref(), Some("http_status"), "v{version}");
        if version >= 5 {
            assert_eq!(old.redirects.iter().map(|h| h.status).collect::<Vec<_>>(), [301], "v{version}");
        }

        // The same pages fingerprinted today are found, under the index's settings.
        let config = index.settings().apply(Config::default()).unwrap();
        let fp = Fingerprinter::new(&config);
        for (file, path) in [("article.html", "/article"), ("moved.html", "/old"), ("private.html", "/private")] {
            let body = std::fs::read_to_string(data().join("compat-site").join(file)).unwrap();
            let stored = url_of(path);
            let raw = RawDocument { id: stored.url.clone(), key: DocKey(0), format: Format::Html, body, url: None };
            let result = index.check(&fp.fingerprint(raw).unwrap()).unwrap();
            // Pages stored before schema 10 have no page digest: the same
            // page is then only known to have the same text.
            let (copies, none) = match version {
                ..10 => (&result.same_text, &result.identical),
                _ => (&result.identical, &result.same_text),
            };
            assert!(none.is_empty(), "index_v{version}.db, {file}: {result:?}");
            assert_eq!(
                copies.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(),
                [stored.url.as_str()],
                "index_v{version}.db, {file}: {result:?}"
            );
        }

        // The main texts come back, deflated or not.
        let fingerprints = index.crawl_fingerprints("compat").unwrap();
        let text = fingerprints
            .iter()
            .find(|(p, _)| p.url.ends_with("/article"))
            .and_then(|(p, _)| p.text.clone())
            .unwrap_or_default();
        assert!(text.len() > 2048 && text.contains("harbour office"), "v{version}: {} bytes", text.len());
        drop(index);

        // A writer asking for other settings than the assumed ones records
        // its own (the file never said); recorded ones are enforced.
        let copy = dir.path().join(format!("v{version}.db"));
        let mut off = config.clone();
        off.fingerprint.template = None;
        let opened = Index::open(&copy, &off);
        assert_eq!(opened.is_ok(), version < 6, "v{version}: {:?}", opened.err());
    }
}

/// What the migration to version 6 assumes is what today's webdup writes.
#[test]
fn the_template_setting_assumed_for_old_files_is_todays_default() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::tool();
    let written = webdup::store::Settings::of(&config.validate().unwrap());
    let index = open_copy(5, dir.path());
    assert_eq!(index.settings().fingerprint.template, written.fingerprint.template);
}

/// An index written before the cross-site threshold was recorded holds
/// every pair to its one threshold, with a band table built for it: the
/// command line's default (0.5 across sites) does not apply to it, and
/// adding to it or serving it needs no flag; asking for 0.5 is refused by
/// name.
#[test]
fn files_without_a_cross_site_threshold_keep_one_rule_and_take_new_pages() {
    current_version_file();
    for version in OLDEST_KEPT..=schema::VERSION {
        let dir = tempfile::tempdir().unwrap();
        let index = open_copy(version, dir.path());
        assert_eq!(index.settings().cross_site_threshold, None, "v{version}");
        drop(index);
        let copy = dir.path().join(format!("v{version}.db"));
        let add = |extra: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_webdup"))
                .args(["index", "add", "--quiet", "--index"])
                .arg(&copy)
                .args(["--crawl", "again"])
                .args(extra)
                .arg(data().join("compat-site/article.html"))
                .output()
                .unwrap()
        };
        let refused = add(&["--cross-site-threshold", "0.5"]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success() && stderr.contains("cross_site_threshold"), "v{version}: {stderr}");
        let added = add(&[]);
        assert!(added.status.success(), "v{version}: {}", String::from_utf8_lossy(&added.stderr));
        let index = Index::open_existing(&copy).unwrap();
        assert_eq!((index.stats().unwrap().pages, index.settings().cross_site_threshold), (5, None), "v{version}");
    }
}

/// Version 11 keeps band keys in buckets of 32-bit keys: a version-10 file
/// whose keys were merged into its band table (one row per 64-bit key, as
/// release 10's merge wrote them) migrates to the buckets and answers every
/// check as the same file with its keys still pending.
#[test]
fn a_version_10_file_with_merged_band_rows_answers_as_before_after_migration() {
    let dir = tempfile::tempdir().unwrap();
    let pending = dir.path().join("pending.db");
    let merged = dir.path().join("merged.db");
    std::fs::copy(data().join("index_v10.db"), &pending).unwrap();
    std::fs::copy(data().join("index_v10.db"), &merged).unwrap();
    {
        // Release 10's merge: every pending key becomes a row of `bands`.
        let conn = rusqlite::Connection::open(&merged).unwrap();
        let rows: Vec<(i64, Vec<u8>)> = conn
            .prepare("SELECT page_id, keys FROM bands_pending")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(!rows.is_empty());
        for (page, keys) in rows {
            for (band, key) in keys.chunks_exact(8).enumerate() {
                let key = i64::from_le_bytes(key.try_into().unwrap());
                conn.execute("INSERT INTO bands (band, key, page_id) VALUES (?1, ?2, ?3)", (band as i64, key, page))
                    .unwrap();
            }
        }
        conn.execute_batch(
            "DELETE FROM bands_pending; UPDATE meta SET value = value + 1 WHERE key = 'bands_generation'",
        )
        .unwrap();
    }
    let (pending, merged) = (Index::open_existing(&pending).unwrap(), Index::open_existing(&merged).unwrap());
    for index in [&pending, &merged] {
        assert_eq!(index.verify().unwrap(), Vec::<String>::new());
    }
    let (a, b) = (pending.stats().unwrap(), merged.stats().unwrap());
    assert_eq!((a.schema_version, b.schema_version), (schema::VERSION, schema::VERSION));
    assert_eq!((a.pending_pages, b.pending_pages), (a.with_content, 0));
    assert_eq!(a.band_rows, b.band_rows);
    let mut checked = 0;
    for (page, fp) in pending.crawl_fingerprints("compat").unwrap() {
        let Some(fp) = fp else { continue };
        let (x, y) = (pending.check(&fp).unwrap(), merged.check(&fp).unwrap());
        assert_eq!(x, y, "{}", page.url);
        assert!(x.seen(), "{}: {x:?}", page.url);
        checked += 1;
    }
    assert!(checked >= 3, "{checked} pages checked");
}
