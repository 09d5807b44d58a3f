//! The Python package as a user gets it: `maturin build --sdist` makes the
//! abi3 wheel and the source distribution (whose contents are checked: the
//! package and every crate its build needs), a fresh venv installs the
//! wheel beside pyarrow and Scrapy from PyPI, and
//! the package's tests run there (crates/python/tests: the API, a real
//! Scrapy crawl of a site on 127.0.0.1, crawls of a generated multi-host
//! site in two shuffled orders, checked against `cluster`, and `render=` /
//! `WEBDUP_RENDER` through a real Chromium on a client-rendered site,
//! skipped where no Chromium is installed).
//!
//! The wheel is built in the workspace's target directory (cargo holds no
//! lock on it while tests run) with the dev profile, whose dependencies
//! are optimized as the tests' are (the test profile itself would build the
//! library as a test harness, not a shared object). A release build would
//! compile every dependency a second time, optimized: about 12 minutes on
//! two cores, past what a cold CI run can spend.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_webdup");

fn run(what: &str, cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
fn the_wheel_installs_in_a_fresh_venv_and_passes_its_tests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    run("python -m venv", Command::new(python()).args(["-m", "venv"]).arg(&venv));
    let bin = |name: &str| venv.join("bin").join(name);
    let requirements = root.join("crates/python/tests/requirements.txt");
    run(
        "pip install (the tests' requirements)",
        Command::new(bin("python")).args(["-m", "pip", "install", "-q", "-r"]).arg(&requirements),
    );
    let wheels = tmp.path().join("wheels");
    run(
        "maturin build",
        Command::new(bin("maturin"))
            .args(["build", "-q", "--profile", "dev", "--sdist", "-m"])
            .arg(root.join("crates/python/Cargo.toml"))
            .arg("--out")
            .arg(&wheels),
    );
    check_sdist(&only(&wheels, ".tar.gz"), tmp.path());
    let wheel = only(&wheels, ".whl");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("webdup-") && name.contains("abi3"), "not an abi3 wheel of webdup: {name}");
    run("pip install the wheel", Command::new(bin("python")).args(["-m", "pip", "install", "-q"]).arg(&wheel));
    let site = tmp.path().join("site");
    crawl_corpus(&root, &site);
    let tests = run(
        "the package's tests",
        Command::new(bin("python"))
            .args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(root.join("crates/python/tests"))
            // Not the source tree: the installed wheel is under test.
            .current_dir(tmp.path())
            .env("WEBDUP_BIN", BIN)
            .env("WEBDUP_SITE", &site),
    );
    // The tests' report, with the share of the crawl's known duplicates dropped.
    eprintln!("{}", String::from_utf8_lossy(&tests.stderr));
}

/// The one file of `dir` whose name ends with `suffix`.
fn only(dir: &Path, suffix: &str) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(files.len(), 1, "one {suffix} in {dir:?}: {files:?}");
    files.into_iter().next().unwrap()
}

/// The sdist holds the package (pyproject, the Python half, the native
/// module's sources) and the workspace it builds in: cargo resolves the
/// extension's crate there offline, which fails if a crate of the
/// workspace the build needs was left out.
fn check_sdist(sdist: &Path, tmp: &Path) {
    let name = sdist.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("webdup-"), "not an sdist of webdup: {name}");
    let out = tmp.join("sdist");
    std::fs::create_dir_all(&out).unwrap();
    run("tar xzf (the sdist)", Command::new("tar").arg("xzf").arg(sdist).arg("-C").arg(&out));
    let root = out.join(name.trim_end_matches(".tar.gz"));
    for file in [
        "pyproject.toml",
        "PKG-INFO",
        "Cargo.toml",
        "Cargo.lock",
        "python/webdup/__init__.py",
        "python/webdup/scrapy.py",
        "python/webdup/_webdup.pyi",
        "crates/python/Cargo.toml",
        "crates/python/src/lib.rs",
        "crates/webdup/src/lib.rs",
        "crates/store/src/lib.rs",
        "crates/core/src/lib.rs",
    ] {
        assert!(root.join(file).is_file(), "{file} is not in the sdist {name}");
    }
    let pkg_info = std::fs::read_to_string(root.join("PKG-INFO")).unwrap();
    for extra in ["Provides-Extra: arrow", "Provides-Extra: scrapy"] {
        assert!(pkg_info.contains(extra), "{extra} not in the sdist's PKG-INFO:\n{pkg_info}");
    }
    run(
        "cargo metadata (the sdist's workspace)",
        Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["metadata", "-q", "--offline", "--format-version", "1", "--manifest-path"])
            .arg(root.join("crates/python/Cargo.toml")),
    );
}

/// The pages of the Scrapy crawl: real articles in real templates, from the
/// extraction data sets in ../shared/data (webdup_eval::corpus, docs/near-dup-corpus.md),
/// with exact copies (mirrors), near copies on the same site (revisions),
/// the same body in another site's template, and thin pages sharing a
/// template. Syndicated copies (edited, in another template) are left out:
/// the index answers by one Jaccard threshold, without `cluster`'s
/// cross-site rule that finds them. `pages/` holds the pages and
/// `truth.tsv` and `manifest.tsv` their clusters and kinds.
fn crawl_corpus(root: &Path, out: &Path) {
    use webdup_eval::corpus::{CorpusConfig, Shares, generate};
    let config = CorpusConfig {
        pages: 120,
        pages_per_template: 4.0,
        seed: 19,
        sources_per_dataset: Some(150),
        shares: Shares { mirror: 0.12, syndicated: 0.0, revision: 0.12, template_sibling: 0.10, thin: 0.20 },
        ..CorpusConfig::default()
    };
    let corpus = generate(&root.join("../shared/data"), &config).expect("the data sets in ../shared/data");
    std::fs::create_dir_all(out).unwrap();
    corpus.write(out).unwrap();
}
