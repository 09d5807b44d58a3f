//! The Java recipes of docs/recipes (StormCrawler, Nutch) against a real
//! `webdup serve` on 127.0.0.1: docs/recipes/java/*.java are compiled with
//! `javac` and RecipeDemo runs the recipes' logic (RecipeLogic, which the
//! docs' framework classes call) through WebdupClient. Needs a JDK (11+);
//! without `javac` or `java` the tests fail, saying so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/serve.rs"]
mod serve_process;

use serve_process::start;
use webdup_eval::synth::{SynthConfig, corpus};

fn recipes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recipes")
}

/// Runs a JDK tool; a missing JDK is a failure that says what to install.
fn jdk(tool: &str, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(tool).args(args).output().unwrap_or_else(|e| {
        panic!(
            "cannot run `{tool}` ({e}): tests/recipes_java.rs compiles and runs docs/recipes/java \
             and needs a JDK 11 or later on PATH (e.g. apt-get install openjdk-17-jdk-headless)"
        )
    })
}

/// Compiles docs/recipes/java/*.java into `classes`.
fn compile(classes: &Path) {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(recipes().join("java"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 3, "WebdupClient, RecipeLogic and RecipeDemo: {sources:?}");
    let mut args = vec![std::ffi::OsStr::new("-Xlint:all"), "-Werror".as_ref(), "-d".as_ref(), classes.as_os_str()];
    args.extend(sources.iter().map(|p| p.as_os_str()));
    let o = jdk("javac", &args);
    assert!(
        o.status.success(),
        "javac failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `java -cp classes RecipeDemo ARGS...`.
fn demo(classes: &Path, args: &[&str]) -> Output {
    let mut all = vec![std::ffi::OsStr::new("-cp"), classes.as_os_str(), "RecipeDemo".as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    jdk("java", &all)
}

fn html(title: &str, text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let paragraphs: String = words.chunks(60).map(|c| format!("<p>{}</p>\n", c.join(" "))).collect();
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body>\
         <nav><a href=/>Home</a> <a href=/news>News</a></nav>\n<article><h1>{title}</h1>\n{paragraphs}</article>\
         <footer>Contact us</footer></body></html>"
    )
}

/// One line of RecipeDemo's output: url, new|duplicate, signature URL,
/// signature MD5, duplicate_of, jaccard.
struct Line {
    url: String,
    verdict: String,
    signature_url: String,
    signature_md5: String,
    duplicate_of: String,
    jaccard: String,
}

fn lines(o: &Output) -> Vec<Line> {
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "RecipeDemo failed:\n{stdout}{}", String::from_utf8_lossy(&o.stderr));
    stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 6, "{l:?}");
            Line {
                url: f[0].into(),
                verdict: f[1].into(),
                signature_url: f[2].into(),
                signature_md5: f[3].into(),
                duplicate_of: f[4].into(),
                jaccard: f[5].into(),
            }
        })
        .collect()
}

#[test]
fn recipes_mark_exact_and_near_copies_with_the_first_pages_url() {
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    compile(&classes);

    let t =
        corpus(&SynthConfig { documents: 2, words_per_document: 300, copy_share: 0.0, seed: 21, ..Default::default() });
    // A few words changed: with 300 words, Jaccard stays around 0.9.
    let edited: String = t[0]
        .split(' ')
        .enumerate()
        .map(|(i, w)| if i % 100 == 50 { "changed" } else { w })
        .collect::<Vec<_>>()
        .join(" ");
    // The near copy ties between the article and its exact copy; the server
    // orders ties by URL, and the article's sorts first (docs/recipes/nutch.md).
    let pages = [
        ("https://news.test/2024/article", html("Article", &t[0])),
        ("https://www.news.test/print/article", html("Article", &t[0])),
        ("https://blog.test/copied", html("Article (copied)", &edited)),
        ("https://other.test/unrelated", html("Something else", &t[1])),
    ];
    let mut args: Vec<String> = Vec::new();
    for (i, (url, page)) in pages.iter().enumerate() {
        let file = dir.path().join(format!("page{i}.html"));
        std::fs::write(&file, page).unwrap();
        args.extend([url.to_string(), file.display().to_string()]);
    }

    let server = start(&dir.path().join("index.db"), &[]);
    let mut argv = vec![server.base()];
    argv.extend(args);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = lines(&demo(&classes, &argv));
    assert_eq!(out.len(), 4);
    let first = pages[0].0;
    for (line, (url, _)) in out.iter().zip(&pages) {
        assert_eq!(line.url, *url);
    }

    let [article, exact, near, unrelated] = &out[..] else { unreachable!() };
    assert_eq!(
        (
            article.verdict.as_str(),
            article.signature_url.as_str(),
            article.duplicate_of.as_str(),
            article.jaccard.as_str()
        ),
        ("new", first, "-", "-")
    );
    assert_eq!(
        (exact.verdict.as_str(), exact.signature_url.as_str(), exact.duplicate_of.as_str()),
        ("duplicate", first, first)
    );
    assert_eq!(exact.jaccard, "1.0000");
    assert_eq!(
        (near.verdict.as_str(), near.signature_url.as_str(), near.duplicate_of.as_str()),
        ("duplicate", first, first)
    );
    let j: f64 = near.jaccard.parse().unwrap();
    assert!(j > 0.8 && j < 1.0, "near copy's Jaccard {j}");
    assert_eq!(
        (unrelated.verdict.as_str(), unrelated.signature_url.as_str(), unrelated.duplicate_of.as_str()),
        ("new", pages[3].0, "-")
    );
    // Nutch's signature: the same 16 bytes for the article and its copies.
    assert_eq!(article.signature_md5.len(), 32);
    assert_eq!((&exact.signature_md5, &near.signature_md5), (&article.signature_md5, &article.signature_md5));
    assert_ne!(unrelated.signature_md5, article.signature_md5);

    // The docs' framework classes call the tested logic.
    let storm = std::fs::read_to_string(recipes().join("stormcrawler.md")).unwrap();
    assert!(storm.contains("RecipeLogic.metadata(") && storm.contains("checkAndInsert("), "stormcrawler.md");
    let nutch = std::fs::read_to_string(recipes().join("nutch.md")).unwrap();
    assert!(nutch.contains("RecipeLogic.signature(") && nutch.contains("checkAndInsert("), "nutch.md");
}

#[test]
fn the_client_sends_the_token_and_reports_a_401_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    compile(&classes);
    let t =
        corpus(&SynthConfig { documents: 1, words_per_document: 200, copy_share: 0.0, seed: 5, ..Default::default() });
    let file = dir.path().join("page.html");
    std::fs::write(&file, html("Page", &t[0])).unwrap();
    let file = file.display().to_string();

    let server = start(&dir.path().join("index.db"), &["--token", "s3cret-token"]);
    let base = server.base();
    let o = demo(&classes, &[&base, "https://a.test/page", &file]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(stderr.contains("/v1/check-and-insert: HTTP 401: "), "{stderr}");

    let out = lines(&demo(&classes, &["--token", "s3cret-token", &base, "https://a.test/page", &file]));
    assert_eq!((out.len(), out[0].verdict.as_str(), out[0].signature_url.as_str()), (1, "new", "https://a.test/page"));
}
