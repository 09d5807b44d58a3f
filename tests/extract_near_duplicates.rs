//! A near-duplicate corpus built from real article bodies (AEB ground truth,
//! MIT; see `fixtures/extract/SOURCES.md`) poured into site templates: what
//! extraction and template suppression must get right for clustering.
//! Every test asserts zero false merges.

use std::collections::BTreeSet;
use std::path::Path;

use webdup::engine::{Config, Corpus, Quiet, find_duplicates};
use webdup::extract::ExtractorKind;
use webdup::source::{DocKey, Format, RawDocument};
use webdup::template::TemplateConfig;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/extract");

fn article(n: usize) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(format!("articles/article{n}.txt"))).unwrap()
}

fn template(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(format!("templates/{name}.html"))).unwrap()
}

fn html_paragraphs(text: &str) -> String {
    text.split('\n').filter(|l| !l.trim().is_empty()).map(|l| format!("<p>{l}</p>\n")).collect()
}

fn page(template_name: &str, title: &str, body_text: &str) -> String {
    template(template_name).replace("{{TITLE}}", title).replace("{{BODY}}", &html_paragraphs(body_text))
}

/// Clusters of document ids, each sorted, found in `pages` (id, html).
fn clusters(pages: Vec<(String, String)>, config: &Config) -> BTreeSet<Vec<String>> {
    let items: Vec<(usize, (String, String))> = pages.into_iter().enumerate().collect();
    let corpus = Corpus::build(
        items,
        |(n, (id, body))| Ok(RawDocument { id, key: DocKey::at(n), format: Format::Html, body, url: None }),
        config,
        &Quiet,
    );
    assert!(corpus.errors.is_empty(), "{:?}", corpus.errors);
    let result = find_duplicates(&corpus, config).unwrap();
    result
        .clusters
        .iter()
        .map(|c| {
            let mut ids: Vec<String> = c.members.iter().map(|m| corpus.doc(m.key).unwrap().id.clone()).collect();
            ids.sort();
            ids
        })
        .collect()
}

/// The default extractor with and without template suppression, and the
/// `fast` extractor with it.
fn configs() -> [(&'static str, Config); 3] {
    let plain = Config::default().validate().unwrap();
    let suppressing = Config::tool().validate().unwrap();
    let mut fast = Config::tool();
    fast.fingerprint.extractor = ExtractorKind::Fast.to_string();
    let fast = fast.validate().unwrap();
    [("plain", plain), ("template suppression", suppressing), ("fast extractor", fast)]
}

fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

#[test]
fn same_article_in_different_sites_templates_clusters() {
    let sites = ["news", "blog", "portal"];
    let mut pages = Vec::new();
    for n in 1..=6 {
        for site in sites {
            pages.push((format!("{site}/article{n}.html"), page(site, &format!("Story {n}"), &article(n))));
        }
    }
    for (name, config) in configs() {
        let expected: BTreeSet<Vec<String>> = (1..=6)
            .map(|n| {
                let mut ids: Vec<String> = sites.iter().map(|s| format!("{s}/article{n}.html")).collect();
                ids.sort();
                ids
            })
            .collect();
        assert_eq!(clusters(pages.clone(), &config), expected, "{name}");
    }
}

#[test]
fn different_articles_in_one_template_do_not_merge() {
    for site in ["news", "blog", "portal"] {
        let pages: Vec<(String, String)> = (1..=6)
            .map(|n| (format!("{site}/article{n}.html"), page(site, &format!("Story {n}"), &article(n))))
            .collect();
        for (name, config) in configs() {
            assert_eq!(clusters(pages.clone(), &config), BTreeSet::new(), "{site}, {name}");
        }
    }
}

#[test]
fn thin_pages_sharing_a_template_do_not_merge() {
    // Six pages of 20 to 45 words each (under 50), different texts, one template.
    for site in ["news", "blog", "portal"] {
        let pages: Vec<(String, String)> = (1..=6)
            .map(|n| {
                let text = first_words(&article(n), 15 + 5 * n);
                assert!(text.split_whitespace().count() < 50);
                (format!("{site}/thin{n}.html"), page(site, &format!("Note {n}"), &text))
            })
            .collect();
        for (name, config) in configs().into_iter().skip(1) {
            assert_eq!(clusters(pages.clone(), &config), BTreeSet::new(), "{site}, {name}");
        }
    }
}

#[test]
fn copies_within_one_site_still_cluster_with_template_suppression() {
    // Five near-copies of one article (each with its own small edit) and
    // four other articles, all on one site: the copies are most of the site,
    // so their shared body is as common as the template.
    let mut pages = Vec::new();
    for c in 1..=5 {
        let body = format!("{}\nCorrection number {c} was appended to this story.", article(1));
        pages.push((format!("news/copy{c}.html"), page("news", "Story 1", &body)));
    }
    for n in 2..=5 {
        pages.push((format!("news/article{n}.html"), page("news", &format!("Story {n}"), &article(n))));
    }
    let mut config = Config::default();
    config.fingerprint.template = Some(TemplateConfig { min_pages: 3, ..TemplateConfig::default() });
    let config = config.validate().unwrap();
    let expected: BTreeSet<Vec<String>> = [(1..=5).map(|c| format!("news/copy{c}.html")).collect()].into();
    assert_eq!(clusters(pages, &config), expected);
}
