//! The near-duplicate corpus generator (issue 13) on a handful of the real
//! pages in `../shared/data` (beside the repository, as in CI): the same
//! seed gives the same bytes, every kind is made and labelled as documented.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use webdup_eval::corpus::{CorpusConfig, Kind, generate};

fn data() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    assert!(
        dir.join("aeb/ground-truth.json").is_file() && dir.join("wcxb-dev/ground-truth").is_dir(),
        "this test reads the AEB and WCXB dev pages from {} (see its README.md)",
        dir.display()
    );
    dir
}

fn small() -> CorpusConfig {
    CorpusConfig { pages: 80, pages_per_template: 4.0, seed: 5, sources_per_dataset: Some(12), ..Default::default() }
}

#[test]
fn a_small_corpus_is_deterministic_and_labelled() {
    let config = small();
    let corpus = generate(&data(), &config).unwrap();
    let again = generate(&data(), &config).unwrap();
    assert_eq!(corpus.truth_tsv(), again.truth_tsv());
    let pages = corpus.pages();
    assert_eq!(pages.len(), 80);
    for (a, b) in pages.iter().zip(again.pages()) {
        assert_eq!(corpus.render(a), again.render(b), "{}", a.id);
    }
    let other = generate(&data(), &CorpusConfig { seed: 6, ..config.clone() }).unwrap();
    assert_ne!(corpus.truth_tsv(), other.truth_tsv());

    // The truth is what `webdup eval cluster` reads.
    webdup_eval::score::Truth::parse(&corpus.truth_tsv()).unwrap();
    let counts: HashMap<Kind, usize> = corpus.kind_counts().into_iter().collect();
    assert!(Kind::ALL.iter().all(|k| counts[k] > 0), "{counts:?}");
    assert_eq!(counts[&Kind::Thin], 16);

    let site = |id: &str| id.split('/').nth(1).unwrap().to_string();
    let mut by_cluster: HashMap<&str, Vec<&webdup_eval::corpus::Page>> = HashMap::new();
    for p in pages {
        by_cluster.entry(&p.cluster).or_default().push(p);
    }
    for (cluster, members) in &by_cluster {
        let original = members.iter().find(|p| p.kind == Kind::Original);
        if members.iter().any(|p| p.kind == Kind::Thin) {
            assert_eq!(members.len(), 1, "thin page {cluster} shares its cluster");
            continue;
        }
        let original = original.unwrap_or_else(|| panic!("{cluster} has no original"));
        let html = corpus.render(original);
        for p in members {
            match p.kind {
                Kind::Mirror => {
                    assert_eq!(corpus.render(p), html, "a mirror has its original's bytes");
                    assert_ne!(p.id, original.id);
                }
                Kind::Syndicated | Kind::TemplateSibling => assert_ne!(site(&p.id), site(&original.id)),
                Kind::Revision => {
                    assert_eq!(site(&p.id), site(&original.id));
                    assert_ne!(corpus.render(p), html);
                }
                _ => {}
            }
        }
    }
    // The content sits in the template: the page's text holds its main text,
    // and a thin page's few words are found nowhere else.
    let mut thin_texts = HashSet::new();
    for p in pages {
        let text = corpus.main_text(p);
        let html = corpus.render(p);
        let first: String = text.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
        if p.kind == Kind::Thin {
            let n = text.split_whitespace().count();
            assert!((10..=40).contains(&n), "{n} words");
            assert!(html.contains(&first.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")));
            assert!(thin_texts.insert(text), "a thin text repeats");
        }
    }
}

#[test]
fn written_corpora_are_byte_identical() {
    let config = CorpusConfig { pages: 30, ..small() };
    let corpus = generate(&data(), &config).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    corpus.write(a.path()).unwrap();
    generate(&data(), &config).unwrap().write(b.path()).unwrap();
    for name in ["truth.tsv", "manifest.tsv", "skipped.tsv", "README.md"] {
        assert_eq!(std::fs::read(a.path().join(name)).unwrap(), std::fs::read(b.path().join(name)).unwrap());
    }
    for p in corpus.pages() {
        assert_eq!(std::fs::read(a.path().join(&p.id)).unwrap(), std::fs::read(b.path().join(&p.id)).unwrap());
    }
    // A second write into the same place is refused, not mixed.
    assert!(corpus.write(a.path()).is_err());
}

/// What issue 13 asks of the defaults, end to end as a user runs them: on a
/// generated corpus, `webdup cluster` merges no thin page or template
/// sibling with another content, and finds the light edits (syndicated
/// copies, revisions): all of them on this corpus when this was written, on
/// larger ones 94-99%, so the floor is 90%.
#[test]
fn the_defaults_keep_thin_pages_and_template_siblings_apart_and_find_light_edits() {
    let config = CorpusConfig { pages: 240, pages_per_template: 3.0, seed: 11, ..Default::default() };
    let corpus = generate(&data(), &config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    corpus.write(dir.path()).unwrap();
    let webdup = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "webdup {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    webdup(&["cluster", "pages", "-f", "json", "-o", "out.json", "--quiet"]);
    let eval: serde_json::Value =
        serde_json::from_slice(&webdup(&["eval", "cluster", "truth.tsv", "out.json", "-f", "json"])).unwrap();
    let kind = |name: &str| {
        eval["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == name).unwrap_or_else(|| panic!("{eval}")).clone()
    };
    for name in ["thin", "template_sibling"] {
        assert_eq!(kind(name)["false_merge_pairs"], 0, "{name}: {eval:#}");
    }
    for name in ["syndicated", "revision"] {
        let k = kind(name);
        assert!(k["true_pairs"].as_u64().unwrap() > 0, "{eval:#}");
        assert!(k["recall"].as_f64().unwrap() >= 0.9, "{name}: {eval:#}");
    }
}
