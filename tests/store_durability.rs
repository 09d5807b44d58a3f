//! `webdup index add` killed with SIGKILL in the middle of a run leaves a
//! consistent index (whole batches only), and a re-run completes it without
//! duplicates.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use webdup::engine::Config;
use webdup::store::Index;
use webdup_eval::synth::{SynthConfig, corpus};

const DOCS: usize = 12_000;
const BATCH: usize = 64;

fn pages_in(db: &std::path::Path) -> Option<i64> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    conn.busy_timeout(Duration::from_secs(5)).ok()?;
    conn.query_row("SELECT count(*) FROM pages", [], |r| r.get(0)).ok()
}

#[test]
fn sigkill_mid_run_leaves_whole_batches_and_a_rerun_completes() {
    kill_and_rerun(4 * BATCH as i64);
}

/// Killed after the first merge of pending band keys into the band table
/// (at 4,096 pending pages): each page's keys are still in exactly one of
/// the two places.
#[test]
fn sigkill_after_band_keys_were_merged_leaves_a_consistent_index() {
    let pages = kill_and_rerun(webdup::store::bands::MERGE_MIN_PAGES + 4 * BATCH as i64);
    assert!(pages.pending_pages < pages.pages, "no merge before the kill: {pages:?}");
}

/// Runs `index add`, kills it once at least `at_least` pages are stored,
/// checks the index, runs it again to the end; returns the stats after the
/// kill.
fn kill_and_rerun(at_least: i64) -> webdup::store::Stats {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    let texts = corpus(&SynthConfig { documents: DOCS, words_per_document: 300, ..Default::default() });
    for (i, t) in texts.iter().enumerate() {
        std::fs::File::create(docs.join(format!("{i:05}.txt"))).unwrap().write_all(t.as_bytes()).unwrap();
    }
    let db = dir.path().join("crawl.db");
    let args = |db: &std::path::Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_webdup"));
        c.args(["index", "add", "-q", "--crawl", "synth", "--batch", &BATCH.to_string(), "--index"])
            .arg(db)
            .arg(&docs)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };

    let mut child = args(&db).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen_before_kill = 0;
    while Instant::now() < deadline {
        if let Some(n) = pages_in(&db)
            && n >= at_least
        {
            seen_before_kill = n;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run finished before it could be killed; make the corpus larger");
    assert!(seen_before_kill > 0, "no batch was committed before the deadline");

    let config = Config::default().validate().unwrap();
    let index = Index::open_existing(&db).unwrap();
    let problems = index.verify().unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    let stats = index.stats().unwrap();
    println!("killed after {} of {DOCS} pages were committed", stats.pages);
    assert!(stats.pages < DOCS as u64, "the kill came after the last batch");
    assert_eq!(stats.pages % BATCH as u64, 0, "a batch was stored in part");
    assert_eq!(stats.band_rows, stats.pages * config.lsh_params().bands as u64);
    drop(index);
    let after_kill = stats;

    let o = args(&db).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = Index::open_existing(&db).unwrap();
    let stats = index.stats().unwrap();
    assert_eq!((stats.pages, stats.distinct_urls), (DOCS as u64, DOCS as u64));
    assert!(index.verify().unwrap().is_empty());
    after_kill
}
