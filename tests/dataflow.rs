//! `webdup ingest` + `webdup dcluster` on loopback: 1, 2 and 3 processes
//! (on 2 cores, 3 is oversubscribed) and 1 or 2 threads give the bytes of
//! `webdup cluster` on the same inputs; a process killed in the middle of
//! a stage costs that stage only.
//!
//! Every process is a real `webdup` child talking TCP on 127.0.0.1, with a
//! watchdog that kills the lot and fails the test if a run hangs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use webdup::Config;
use webdup::engine::Fingerprinter;
use webdup::source::DocKey;
use webdup_core::candidates::LshParams;
use webdup_core::candidates::lsh::band_key;
use webdup_core::shingle::{ShingleConfig, Shingler};
use webdup_core::sketch::MinHasher;

const BIN: &str = env!("CARGO_BIN_EXE_webdup");
/// Longest a run may take before the watchdog ends it.
const WATCHDOG: Duration = Duration::from_secs(600);

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn words(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A page and `spokes` pages that each share exactly one MinHash band with
/// it (and no other): the page has `spokes` candidates, while the spokes
/// are candidates only of the few that share the same band. Each spoke is
/// the page's text plus words picked so that their shingles break every
/// band but its own.
fn hub_and_spokes(root: &Path, spokes: usize) {
    let config = Config::default().validate().unwrap();
    let params = LshParams::optimal(config.lowest_threshold(), config.fingerprint.permutations);
    let shingler = Shingler::new(ShingleConfig::default());
    let hasher = MinHasher::new(config.fingerprint.permutations, config.fingerprint.seed);
    let fingerprinter = Fingerprinter::new(&config);
    let hub = words("hubword", 60);
    let hub_sig = hasher.sketch(&shingler.shingle(&hub.join(" ")).hashes);
    let hub_bands: Vec<u64> = (0..params.bands).map(|b| band_key(&hub_sig, params, b)).collect();
    write(&root.join("hub/page/page.txt"), &hub.join(" "));
    let mut rng = Rng(7);
    for i in 0..spokes {
        let target = i % params.bands;
        'attempt: loop {
            let mut text = hub.clone();
            let mut broken = vec![false; params.bands];
            broken[target] = true;
            let mut tries = 0;
            while broken.iter().any(|b| !b) {
                tries += 1;
                if tries > 2000 {
                    continue 'attempt;
                }
                let word = format!("sp{i}x{}", rng.next() % 1_000_000);
                let window = [&text[text.len() - 4..], std::slice::from_ref(&word)].concat().join(" ");
                let sig = hasher.sketch(&shingler.shingle(&window).hashes);
                let beats = |b: usize| (b * params.rows..(b + 1) * params.rows).any(|r| sig[r] < hub_sig[r]);
                if beats(target) {
                    continue;
                }
                for (b, flag) in broken.iter_mut().enumerate() {
                    *flag |= beats(b);
                }
                text.push(word);
            }
            // The whole text, fingerprinted as `cluster` does, must agree.
            let f = fingerprinter.fingerprint_text("s".into(), DocKey(0), &text.join(" ")).unwrap();
            let shared: Vec<usize> =
                (0..params.bands).filter(|&b| band_key(&f.minhash, params, b) == hub_bands[b]).collect();
            if shared == [target] {
                write(&root.join(format!("hub/{i:05}/page.txt")), &text.join(" "));
                break;
            }
        }
    }
}

/// One WARC record, gzipped on its own as Common Crawl writes them.
fn warc_record(warc_type: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2026-11-26T00:00:00Z\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&r).unwrap();
    gz.finish().unwrap()
}

fn http_page(status: &str, headers: &str, body: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Two archives of one site's pages: an article copied across them, a
/// redirect and a revisit (skipped, counted).
fn archives(root: &Path) {
    let article = |seed: &str| -> String {
        let words: Vec<String> = (0..120).map(|i| format!("{seed}{}", (i * 7919) % 997)).collect();
        format!(
            "<html><head><title>{seed}</title></head><body><article><p>{}</p></article></body></html>",
            words.join(" ")
        )
    };
    let html = "Content-Type: text/html; charset=utf-8\r\n";
    for (n, name) in ["a", "b"].iter().enumerate() {
        let mut out = Vec::new();
        for i in 0..6 {
            let body = article(&format!("warc{n}p{i}w"));
            out.extend(warc_record(
                "response",
                &format!("https://arch.example/{name}/{i}"),
                &http_page("200 OK", html, &body),
            ));
        }
        // The same story in both archives.
        let shared = article("sharedstory");
        out.extend(warc_record(
            "response",
            &format!("https://arch.example/{name}/shared"),
            &http_page("200 OK", html, &shared),
        ));
        out.extend(warc_record(
            "response",
            &format!("https://arch.example/{name}/old"),
            &http_page("301 Moved Permanently", "Location: /new\r\n", ""),
        ));
        out.extend(warc_record("revisit", &format!("https://arch.example/{name}/0"), b""));
        std::fs::create_dir_all(root.join("archives")).unwrap();
        std::fs::write(root.join(format!("archives/crawl-{name}.warc.gz")), out).unwrap();
    }
}

/// Inputs with every shape the distributed job must get right; returns
/// them as given on the command line.
fn corpus(root: &Path, heavy: bool) -> Vec<String> {
    let mut rng = Rng(1);
    // A site whose pages share a footer (its template), named by two list
    // files at both ends of the inputs, so its pages fall in different tasks.
    let footer = "subscribe to the harbour newsletter for ferry news timetables and island council notices every week";
    let mut list_a = String::new();
    let mut list_b = String::new();
    for p in 0..12 {
        let body: Vec<String> = (0..80).map(|_| format!("s{}", rng.below(3000))).collect();
        let text = if p == 5 {
            // A thin page: little but the template.
            format!("short note {footer} {footer}")
        } else {
            format!("{} {footer} {footer}", body.join(" "))
        };
        write(&root.join(format!("site/p{p:02}.txt")), &text);
        let line = format!("../site/p{p:02}.txt\n");
        if p < 6 { list_a.push_str(&line) } else { list_b.push_str(&line) }
    }
    // Two pages near each other on the site: one edit apart.
    let mut near = std::fs::read_to_string(root.join("site/p00.txt")).unwrap();
    near = near.replacen(' ', " edited ", 1);
    write(&root.join("site/p12.txt"), &near);
    list_b.push_str("../site/p12.txt\n");
    write(&root.join("lists/site-a.txt"), &list_a);
    write(&root.join("lists/site-b.txt"), &list_b);
    // Exact copies, next to each other in the input and so in different tasks.
    let copy = words("copyword", 50).join(" ");
    for c in 0..3 {
        write(&root.join(format!("copies/c{c}.txt")), &copy);
    }
    // A revision chain: each version edits 8 words of the one before, so
    // only neighbours are linked and the component is 50 long.
    let mut text = words("rev", 200);
    for v in 0..50 {
        write(&root.join(format!("chain/v{v:02}/page.txt")), &text.join(" "));
        for _ in 0..8 {
            let at = rng.below(text.len());
            text[at] = format!("edit{v}x{}", rng.below(1_000_000));
        }
    }
    // Pages with no shingle, or no word at all.
    write(&root.join("bare/one-word.txt"), "hello");
    write(&root.join("bare/punctuation.txt"), "!!! ... ???");
    write(&root.join("bare/two-words.txt"), "ok then");
    write(&root.join("bare/empty.txt"), "");
    archives(root);
    let mut inputs =
        vec!["lists/site-a.txt", "copies", "archives/crawl-a.warc.gz", "chain", "bare", "archives/crawl-b.warc.gz"];
    if heavy {
        // A bucket of 5,000 near-identical pages (each its own site, so
        // no template takes their text): every pair is a candidate.
        let base = words("bucket", 40);
        for i in 0..5000 {
            let mut t = base.clone();
            t[i % 40] = format!("b{i}");
            write(&root.join(format!("bucket/{i:04}/page.txt")), &t.join(" "));
        }
        hub_and_spokes(root, 10_000);
        inputs.extend(["bucket", "hub"]);
    }
    inputs.extend(["lists/site-b.txt", "missing.txt"]);
    inputs.into_iter().map(String::from).collect()
}

fn webdup(dir: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(dir).stdin(Stdio::null());
    c
}

/// Waits for every child; kills them all and fails if the watchdog fires.
fn wait_all(mut children: Vec<Child>, what: &str) -> Vec<Output> {
    let deadline = Instant::now() + WATCHDOG;
    loop {
        let mut done = true;
        for c in &mut children {
            if c.try_wait().unwrap().is_none() {
                done = false;
            }
        }
        if done {
            break;
        }
        if Instant::now() > deadline {
            for c in &mut children {
                let _ = c.kill();
            }
            panic!("{what}: the watchdog ended a run that took over {} s", WATCHDOG.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    children.into_iter().map(|c| c.wait_with_output().unwrap()).collect()
}

/// Free loopback ports for `n` processes, as a host file.
fn host_file(dir: &Path, n: usize) -> PathBuf {
    let listeners: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let hosts: Vec<String> =
        listeners.iter().map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port())).collect();
    let path = dir.join(format!("hosts-{}.txt", hosts.join("-").replace([':', '.'], "_")));
    std::fs::write(&path, hosts.join("\n")).unwrap();
    path
}

/// Starts `processes` x `threads` of `dcluster` over `work`; process 0
/// writes `out`. `stall` is given to one process as the fault-injection hook.
fn start_dcluster(
    dir: &Path,
    work: &Path,
    out: &Path,
    processes: usize,
    threads: usize,
    stall: Option<(usize, &str)>,
) -> Vec<Child> {
    let hosts = host_file(dir, processes);
    (0..processes)
        .map(|p| {
            let mut c = webdup(dir);
            c.args(["dcluster", "--work"]).arg(work);
            c.args(["-w", &threads.to_string(), "-n", &processes.to_string(), "-p", &p.to_string()]);
            c.arg("--hostfile").arg(&hosts).args(["-f", "json", "-o"]).arg(out);
            if let Some((sp, stage)) = stall
                && sp == p
            {
                c.env(webdup_dataflow::job::STALL_ENV, format!("{stage}:{p}"));
            }
            c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect()
}

fn ingest(dir: &Path, inputs: &[String], work: &Path, tasks: usize) {
    let children: Vec<Child> = (0..tasks)
        .map(|t| {
            webdup(dir)
                .arg("ingest")
                .args(inputs)
                .arg("--work")
                .arg(work)
                .args(["--task", &format!("{t}/{tasks}"), "-q"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (t, o) in wait_all(children, "ingest").into_iter().enumerate() {
        assert!(o.status.success(), "ingest task {t}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn single_process(dir: &Path, inputs: &[String]) -> (Vec<u8>, Option<i32>) {
    let out = dir.join("single.json");
    let o = webdup(dir).arg("cluster").args(inputs).args(["-q", "-f", "json", "-o"]).arg(&out).output().unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)), "cluster: {}", String::from_utf8_lossy(&o.stderr));
    (std::fs::read(&out).unwrap(), o.status.code())
}

/// Runs every layout over one ingest and compares each report with the
/// single-process one, byte for byte.
fn layouts_match_single_process(heavy: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, heavy);
    let (single, code) = single_process(dir, &inputs);
    let report: serde_json::Value = serde_json::from_slice(&single).unwrap();
    assert!(report["summary"]["clusters"].as_u64().unwrap() >= 3, "{}", report["summary"]);
    // The archives were read, and their skipped records counted.
    assert_eq!(report["warc"]["archives"], 2, "{}", report["warc"]);
    assert_eq!(report["warc"]["skipped"]["revisit"], 2, "{}", report["warc"]);
    let shared = report["clusters"].as_array().unwrap().iter().any(|c| {
        c["members"].as_array().unwrap().iter().filter(|m| m["id"].as_str().unwrap().ends_with("/shared")).count() == 2
    });
    assert!(shared, "the story copied across archives is not a cluster");
    ingest(dir, &inputs, &dir.join("ingested"), 3);
    for (processes, threads) in [(1, 1), (1, 2), (2, 1), (3, 1)] {
        let work = dir.join(format!("work-{processes}x{threads}"));
        copy_dir(&dir.join("ingested/ingest"), &work.join("ingest"));
        let out = dir.join(format!("dist-{processes}x{threads}.json"));
        let children = start_dcluster(dir, &work, &out, processes, threads, None);
        let outputs = wait_all(children, &format!("{processes}x{threads}"));
        for (p, o) in outputs.iter().enumerate() {
            assert_eq!(
                o.status.code(),
                if p == 0 { code } else { Some(0) },
                "{processes}x{threads} process {p}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let dist = std::fs::read(&out).unwrap();
        assert!(
            dist == single,
            "{processes}x{threads}: the report differs from `webdup cluster`'s (see {})",
            out.display()
        );
        // The heavy shapes' stage files run to gigabytes.
        std::fs::remove_dir_all(&work).unwrap();
    }
    if heavy {
        // The shapes are what they claim to be: every pair of the bucket and
        // every spoke with the hub are candidates (the generator checked
        // each spoke's bands), and the hub leads the spokes it is close to.
        let candidates = report["summary"]["candidate_pairs"].as_u64().unwrap();
        assert!(candidates >= 5000 * 4999 / 2 + 10_000, "{candidates} candidate pairs");
        let hub = report["clusters"].as_array().unwrap().iter().find(|c| c["representative"] == "hub/page/page.txt");
        assert!(hub.is_some_and(|c| c["size"].as_u64().unwrap() > 2), "the hub leads no cluster");
        let bucket = report["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["members"].as_array().unwrap().iter().any(|m| m["id"] == "bucket/0000/page.txt"));
        assert_eq!(bucket.map(|c| c["size"].as_u64().unwrap()), Some(5000));
    }
}

#[test]
fn every_layout_gives_the_single_process_report() {
    layouts_match_single_process(false);
}

/// The bucket of 5,000 near-identical pages (12.5 million candidate pairs)
/// and the page with 10,000 candidates, in every layout: about a minute.
#[test]
fn every_layout_gives_the_single_process_report_on_heavy_shapes() {
    layouts_match_single_process(true);
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn a_process_killed_in_a_stage_costs_that_stage_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, false);
    let (single, code) = single_process(dir, &inputs);
    let work = dir.join("work");
    ingest(dir, &inputs, &work, 2);
    let out = dir.join("dist.json");
    // Process 1 stops before writing its part of the edges stage.
    let mut children = start_dcluster(dir, &work, &out, 2, 1, Some((1, "edges")));
    let flag = work.join("stalled-edges-1");
    let deadline = Instant::now() + WATCHDOG;
    while !flag.exists() {
        assert!(Instant::now() < deadline, "process 1 never reached the edges stage");
        if let Some(status) = children[1].try_wait().unwrap() {
            panic!("process 1 ended before the stall: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let sketch: Vec<PathBuf> = (0..2).map(|p| work.join(format!("stages/sketch/part-{p:05}-of-00002.done"))).collect();
    let before: Vec<SystemTime> = sketch.iter().map(|p| mtime(p)).collect();
    children[1].kill().unwrap(); // SIGKILL
    children[1].wait().unwrap();
    // Process 0 loses its peer: it must end (with an error), not hang.
    let zero = children.remove(0);
    let outputs = wait_all(vec![zero], "process 0 after its peer was killed");
    assert_eq!(outputs[0].status.code(), Some(2), "process 0 without its peer: {}", stderr_of(&outputs[0]));
    assert!(!out.exists(), "a report was written by a failed run");
    // Run again: the sketch stage is kept, the rest is done, same bytes.
    std::thread::sleep(Duration::from_millis(1100));
    let outputs = wait_all(start_dcluster(dir, &work, &out, 2, 1, None), "rerun");
    for (p, o) in outputs.iter().enumerate() {
        assert_eq!(
            o.status.code(),
            if p == 0 { code } else { Some(0) },
            "rerun process {p}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let stderr = String::from_utf8_lossy(&outputs[0].stderr);
    assert!(stderr.contains("stage sketch: kept from an earlier run"), "{stderr}");
    assert!(stderr.contains("stage edges: done in"), "{stderr}");
    let after: Vec<SystemTime> = sketch.iter().map(|p| mtime(p)).collect();
    assert_eq!(before, after, "finished sketch parts were redone");
    assert!(std::fs::read(&out).unwrap() == single, "the resumed run's report differs from `webdup cluster`'s");
    // A third run redoes nothing and still gives the same bytes.
    let outputs = wait_all(start_dcluster(dir, &work, &out, 2, 1, None), "third run");
    assert!(String::from_utf8_lossy(&outputs[0].stderr).contains("stage clusters: kept from an earlier run"));
    assert!(std::fs::read(&out).unwrap() == single);
    // Resumed on another layout (one process of 3 workers): the clusters
    // stage alone, reading the 2 processes' sketch parts for its pages; then
    // the edges stage too, each worker the home of the pages it reads.
    for (redo, kept) in [(&["clusters"][..], "edges"), (&["edges", "clusters"][..], "sketch")] {
        for stage in redo {
            std::fs::remove_dir_all(work.join("stages").join(stage)).unwrap();
        }
        std::fs::remove_file(&out).unwrap();
        let outputs = wait_all(start_dcluster(dir, &work, &out, 1, 3, None), "resumed on 3 workers");
        let stderr = String::from_utf8_lossy(&outputs[0].stderr);
        assert_eq!(outputs[0].status.code(), code, "{stderr}");
        assert!(stderr.contains(&format!("stage {kept}: kept from an earlier run")), "{stderr}");
        assert!(stderr.contains("stage clusters: done in"), "{stderr}");
        assert!(std::fs::read(&out).unwrap() == single, "resumed after {redo:?} on 3 workers: the report differs");
    }
}

#[test]
fn a_task_that_finished_is_not_run_again_and_pages_parquet_has_a_row_per_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, false);
    let work = dir.join("work");
    ingest(dir, &inputs, &work, 2);
    let marker = work.join("ingest/task-00001-of-00002.done");
    let before = mtime(&marker);
    let o = webdup(dir).arg("ingest").args(&inputs).arg("--work").arg(&work).args(["--task", "1/2"]).output().unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already ingested, skipped"));
    assert_eq!(mtime(&marker), before);
    // Other settings against the same work directory: refused, named.
    let o = webdup(dir).args(["dcluster", "--work"]).arg(&work).args(["--shingle-size", "4", "-q"]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("other fingerprint settings"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A missing task is named.
    std::fs::remove_file(&marker).unwrap();
    let o = webdup(dir).args(["dcluster", "--work"]).arg(&work).arg("-q").output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("tasks 1 of 2 are not finished"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    ingest(dir, &inputs, &work, 2);
    // A task ingested by an earlier webdup (its marker names no file
    // format: version 1, lists of hashes): dcluster says to ingest again,
    // and ingest redoes that task only.
    let zero = work.join("ingest/task-00000-of-00002.done");
    let mut old: serde_json::Value = serde_json::from_slice(&std::fs::read(&zero).unwrap()).unwrap();
    old.as_object_mut().unwrap().remove("file_version").expect("the marker names its file's format");
    std::fs::write(&zero, serde_json::to_vec(&old).unwrap()).unwrap();
    let o = webdup(dir).args(["dcluster", "--work"]).arg(&work).arg("-q").output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(stderr.contains("task-00000-of-00002.done") && stderr.contains("run `webdup ingest` again"), "{stderr}");
    let kept = mtime(&marker);
    std::thread::sleep(Duration::from_millis(1100));
    ingest(dir, &inputs, &work, 2);
    assert_eq!(mtime(&marker), kept, "a task of this format was ingested again");
    let redone: serde_json::Value = serde_json::from_slice(&std::fs::read(&zero).unwrap()).unwrap();
    assert!(redone.get("file_version").is_some(), "the old task was not ingested again");
    let o = webdup(dir)
        .args(["dcluster", "--work"])
        .arg(&work)
        .args(["-q", "-f", "json", "-o", "r.json"])
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let rows = webdup_dataflow::files::read_pages(&work.join("pages.parquet")).unwrap();
    assert_eq!(rows.len() as u64, report["summary"]["documents"].as_u64().unwrap());
    let clustered = rows.iter().filter(|r| r.cluster.is_some()).count() as u64;
    assert_eq!(clustered, report["summary"]["clustered_documents"].as_u64().unwrap());
    let copy = rows.iter().find(|r| r.url.ends_with("copies/c1.txt")).unwrap();
    assert_eq!((copy.exact, copy.jaccard), (Some(true), Some(1.0)));
    assert!(copy.representative.as_deref().is_some_and(|r| r.ends_with("copies/c0.txt")));
    assert!(rows.iter().any(|r| r.url == "missing.txt" && r.error.is_some()));
}

/// Longest a run that must end promptly may take before the test kills it.
const PROMPT: Duration = Duration::from_secs(60);

/// Waits for `children` for at most `limit`; kills them all and fails if
/// they take longer. Returns the outputs and how long the slowest took.
fn wait_within(mut children: Vec<Child>, limit: Duration, what: &str) -> (Vec<Output>, Duration) {
    let start = Instant::now();
    while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if start.elapsed() > limit {
            for c in &mut children {
                let _ = c.kill();
            }
            let outputs: Vec<String> = children
                .into_iter()
                .map(|c| String::from_utf8_lossy(&c.wait_with_output().unwrap().stderr).into_owned())
                .collect();
            panic!("{what}: still running after {} s (a hang): {outputs:?}", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = start.elapsed();
    (children.into_iter().map(|c| c.wait_with_output().unwrap()).collect(), took)
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Replaces a stage part with bytes that are no Parquet file, and rewrites
/// its marker to vouch for them (size and xxh3, as a marker of this format
/// records them): the part passes every check before the job and fails in
/// the worker that reads it.
fn break_part_behind_its_marker(work: &Path, stage: &str, part: usize, parts: usize) -> PathBuf {
    let name = format!("part-{part:05}-of-{parts:05}");
    let data = work.join(format!("stages/{stage}/{name}.parquet"));
    let done = work.join(format!("stages/{stage}/{name}.done"));
    let garbage = b"PAR1 this is not a parquet file at all, just bytes PAR1".repeat(20);
    std::fs::write(&data, &garbage).unwrap();
    let mut marker: serde_json::Value = serde_json::from_slice(&std::fs::read(&done).unwrap()).unwrap();
    // (A marker without files, which this webdup would not trust, leaves
    // the part distrusted and the test failing on its exit code.)
    for f in marker["files"].as_array_mut().into_iter().flatten().filter(|f| f["name"] == format!("{name}.parquet")) {
        f["bytes"] = garbage.len().into();
        f["xxh3"] = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&garbage)).into();
    }
    std::fs::write(&done, serde_json::to_vec(&marker).unwrap()).unwrap();
    data
}

#[test]
fn dcluster_w_2_with_a_broken_part_exits_in_seconds_instead_of_hanging() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, false);
    let work = dir.join("work");
    ingest(dir, &inputs, &work, 2);
    let out = dir.join("r.json");
    let (outputs, _) = wait_within(start_dcluster(dir, &work, &out, 1, 2, None), WATCHDOG, "first run");
    assert!(matches!(outputs[0].status.code(), Some(0 | 1)), "{}", stderr_of(&outputs[0]));
    let sketch = work.join("stages/sketch");
    let keep = dir.join("sketch-kept");
    copy_dir(&sketch, &keep);
    let rerun = |what: &str| {
        for stage in ["edges", "clusters"] {
            let _ = std::fs::remove_dir_all(work.join("stages").join(stage));
        }
        let _ = std::fs::remove_file(&out);
        what.to_string()
    };

    // One process of two workers: worker 0 fails reading the sketch part
    // in the edges stage, while worker 1 goes on to the clusters stage.
    let what = rerun("-w 2");
    let broken = break_part_behind_its_marker(&work, "sketch", 0, 2);
    let (outputs, took) = wait_within(start_dcluster(dir, &work, &out, 1, 2, None), PROMPT, &what);
    let stderr = stderr_of(&outputs[0]);
    eprintln!("{what}: ended in {:.1} s", took.as_secs_f64());
    assert_eq!(outputs[0].status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&broken.display().to_string()), "the broken part is not named: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists(), "a report was written by a failed run");

    // Two processes: process 1 fails; process 0 loses its connection to it
    // and says why.
    copy_dir(&keep, &sketch);
    let what = rerun("-n 2");
    let broken = break_part_behind_its_marker(&work, "sketch", 1, 2);
    let (outputs, took) = wait_within(start_dcluster(dir, &work, &out, 2, 1, None), PROMPT, &what);
    eprintln!("{what}: ended in {:.1} s", took.as_secs_f64());
    let (zero, one) = (stderr_of(&outputs[0]), stderr_of(&outputs[1]));
    assert_eq!(outputs[1].status.code(), Some(2), "{one}");
    assert!(one.contains(&broken.display().to_string()), "{one}");
    assert_eq!(outputs[0].status.code(), Some(2), "{zero}");
    assert!(zero.contains("process 0 of 2 lost its connection to process 1"), "{zero}");
    assert!(zero.contains("process 1 stopped") && zero.contains(&broken.display().to_string()), "{zero}");
    for s in [&zero, &one] {
        assert!(!s.contains("panicked"), "{s}");
    }
}

#[test]
fn a_killed_peer_ends_the_other_process_with_a_message_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, false);
    let work = dir.join("work");
    ingest(dir, &inputs, &work, 2);
    let out = dir.join("r.json");
    // Process 1 stops before writing its sketch part; process 0 waits for
    // it in the next stage.
    let mut children = start_dcluster(dir, &work, &out, 2, 1, Some((1, "sketch")));
    let flag = work.join("stalled-sketch-1");
    let deadline = Instant::now() + WATCHDOG;
    while !flag.exists() {
        assert!(Instant::now() < deadline, "process 1 never reached the stall");
        if let Some(status) = children[1].try_wait().unwrap() {
            panic!("process 1 ended before the stall: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    children[1].kill().unwrap(); // SIGKILL
    children[1].wait().unwrap();
    let zero = children.remove(0);
    let (outputs, took) = wait_within(vec![zero], PROMPT, "process 0 after its peer was killed");
    eprintln!("process 0 ended {:.1} s after its peer was killed", took.as_secs_f64());
    let stderr = stderr_of(&outputs[0]);
    assert_eq!(outputs[0].status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("process 0 of 2 lost its connection to process 1"), "{stderr}");
    assert!(stderr.contains("killed or its host is unreachable"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Two folders of pages, each with its own pair of near copies.
fn two_input_sets(root: &Path) -> (Vec<String>, Vec<String>) {
    for (set, n) in [("first", 6), ("second", 9)] {
        let base = words(&format!("{set}word"), 120);
        for p in 0..n {
            let mut text = base.clone();
            if p > 1 {
                text = words(&format!("{set}page{p}w"), 120);
            }
            if p == 1 {
                text[60] = "edited".into();
            }
            write(&root.join(format!("{set}/p{p}.txt")), &text.join(" "));
        }
    }
    (vec!["first".to_string()], vec!["second".to_string()])
}

#[test]
fn a_work_directory_ingested_again_with_other_inputs_reports_the_new_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (first, second) = two_input_sets(dir);
    let work = dir.join("work");
    let out = dir.join("r.json");
    let dcluster = || {
        let o = webdup(dir).args(["dcluster", "--work"]).arg(&work).args(["-f", "json", "-o"]).arg(&out).output();
        let o = o.unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr_of(&o));
        std::fs::read(&out).unwrap()
    };
    ingest(dir, &first, &work, 1);
    assert!(dcluster() == single_process(dir, &first).0);
    // Other inputs into the same work directory: the task runs again.
    let o = webdup(dir).arg("ingest").args(&second).arg("--work").arg(&work).output().unwrap();
    let stderr = stderr_of(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("ingesting again") && stderr.contains("inputs differ"), "{stderr}");
    assert!(!stderr.contains("already ingested, skipped"), "{stderr}");
    assert!(dcluster() == single_process(dir, &second).0, "dcluster reports the inputs ingested before");
    // A file of the inputs changed in place: ingested again too.
    std::thread::sleep(Duration::from_millis(20));
    write(&dir.join("second/p1.txt"), &words("rewritten", 120).join(" "));
    let o = webdup(dir).arg("ingest").args(&second).arg("--work").arg(&work).output().unwrap();
    assert!(stderr_of(&o).contains("ingesting again"), "{}", stderr_of(&o));
    assert!(dcluster() == single_process(dir, &second).0);
    // The same inputs again: kept.
    let o = webdup(dir).arg("ingest").args(&second).arg("--work").arg(&work).output().unwrap();
    assert!(stderr_of(&o).contains("already ingested, skipped"), "{}", stderr_of(&o));
}

#[test]
fn a_part_swapped_for_another_valid_part_is_redone_or_refused_not_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let inputs = corpus(dir, false);
    let (single, code) = single_process(dir, &inputs);
    let work = dir.join("work");
    ingest(dir, &inputs, &work, 2);
    let out = dir.join("r.json");
    let run = || {
        let _ = std::fs::remove_file(&out);
        let (outputs, _) = wait_within(start_dcluster(dir, &work, &out, 1, 2, None), WATCHDOG, "dcluster");
        outputs.into_iter().next().unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), code, "{}", stderr_of(&o));
    assert!(std::fs::read(&out).unwrap() == single);
    // A cluster part replaced by the other worker's: valid Parquet, other rows.
    let part = |p: usize| work.join(format!("stages/clusters/part-{p:05}-of-00002.parquet"));
    assert!(std::fs::read(part(0)).unwrap() != std::fs::read(part(1)).unwrap());
    std::fs::copy(part(1), part(0)).unwrap();
    let o = run();
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), code, "{stderr}");
    assert!(std::fs::read(&out).unwrap() == single, "a swapped cluster part was reported: {stderr}");
    assert!(stderr.contains("stage clusters runs again") && stderr.contains("part-00000-of-00002.parquet"), "{stderr}");
    // An ingest file replaced by the other task's: refused, named, until
    // the task is ingested again.
    let task = |t: usize| work.join(format!("ingest/task-{t:05}-of-00002.parquet"));
    std::fs::copy(task(1), task(0)).unwrap();
    let o = run();
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("task-00000-of-00002.parquet") && stderr.contains("run `webdup ingest` again"), "{stderr}");
    assert!(!out.exists());
    let o = webdup(dir).arg("ingest").args(&inputs).arg("--work").arg(&work).args(["--task", "0/2"]).output().unwrap();
    assert!(o.status.success() && stderr_of(&o).contains("ingesting again"), "{}", stderr_of(&o));
    let o = run();
    assert_eq!(o.status.code(), code, "{}", stderr_of(&o));
    assert!(std::fs::read(&out).unwrap() == single);
}
