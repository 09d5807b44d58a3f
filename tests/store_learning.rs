//! Site templates the index learns from pages a crawler gives it one at a
//! time (`webdup::crawler`), on real SQLite files: an article moved
//! into another site's template is found once both sites are learned, pages
//! stored before a site was learned are fingerprinted again, a page
//! fingerprinted with an outdated template is brought up to date, and
//! learning stops at its cap or when an `index add` stores the site's
//! template.

use std::sync::Arc;

use webdup::crawler::{CrawledPage, Crawler};
use webdup::engine::Config;
use webdup::store::{Index, LEARN_UNTIL};
use webdup::template::Templates;
use webdup_eval::synth::{SynthConfig, corpus};

/// The command line's defaults (template suppression on), with one
/// threshold for every pair: the cross-site one (0.5) would find the moved
/// article before any template is learned, and these tests are about what
/// learning changes.
fn config() -> Config {
    let mut config = Config::tool();
    config.matching.cross_site_threshold = None;
    config.validate().unwrap()
}

fn texts(n: usize, words: usize, seed: u64) -> Vec<String> {
    corpus(&SynthConfig { documents: n, words_per_document: words, copy_share: 0.0, seed, ..Default::default() })
}

struct Sites {
    articles: Vec<String>,
    /// What each site repeats on every page (a blurb its extractor keeps).
    blurbs: Vec<String>,
}

impl Sites {
    fn new() -> Sites {
        Sites { articles: texts(300, 200, 11), blurbs: texts(4, 80, 12) }
    }

    /// Article `article` in the template of site `site`.
    fn page(&self, site: usize, path: &str, article: usize) -> CrawledPage {
        CrawledPage::text(
            format!("https://site{site}.test/{path}"),
            format!("{}\n\n{}", self.articles[article], self.blurbs[site]),
        )
    }
}

fn open(dir: &tempfile::TempDir) -> Crawler {
    let config = config();
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    Crawler::new(Arc::new(index), &config, "crawl")
}

fn shingle_count(crawler: &Crawler, url: &str) -> usize {
    crawler.index().get(url).unwrap()[0].shingle_count
}

#[test]
fn an_article_moved_into_another_sites_template_is_found_once_both_sites_are_learned() {
    let dir = tempfile::tempdir().unwrap();
    let crawler = open(&dir);
    let sites = Sites::new();
    // The article arrives on site 1 before either site shows its template:
    // with both blurbs counted, the copy on site 0 is below the threshold.
    let moved = sites.page(1, "moved", 0);
    assert!(!crawler.check_and_insert(&moved).unwrap().result.seen());
    let original = sites.page(0, "original", 0);
    let first = crawler.check_and_insert(&original).unwrap();
    assert!(!first.result.seen(), "{:?}", first.result);
    let (moved_before, original_before) = (shingle_count(&crawler, &moved.url), shingle_count(&crawler, &original.url));

    // Each site's other pages show what it repeats; at its third page the
    // index learns its template and fingerprints its pages again.
    for (site, articles) in [(1, 10..14), (0, 20..24)] {
        for a in articles {
            let page = sites.page(site, &format!("p{a}"), a);
            assert!(!crawler.check_and_insert(&page).unwrap().result.seen(), "{}", page.url);
        }
    }
    for site in [0, 1] {
        let t = crawler.index().site_template(&format!("https://site{site}.test/")).unwrap().unwrap();
        assert_eq!(t.learned_from, Some(4), "site {site} learned at 3 and again at 4 pages");
        assert!(!t.shingles.is_empty());
    }
    assert!(shingle_count(&crawler, &moved.url) < moved_before);
    assert!(shingle_count(&crawler, &original.url) < original_before);

    // Another copy on site 0 now finds both, the one in site 1's template
    // with the Jaccard of the article alone.
    let again = crawler.check(&sites.page(0, "again", 0)).unwrap();
    assert_eq!(
        again.identical.iter().chain(&again.same_text).map(|m| m.url.as_str()).collect::<Vec<_>>(),
        [original.url.as_str()]
    );
    assert_eq!(again.near.len(), 1, "{again:?}");
    assert_eq!(again.near[0].url, moved.url);
    assert!(again.near[0].jaccard > 0.95, "{:?}", again.near[0]);
    // So does a later copy checked and stored in site 1's template.
    let third = crawler.check_and_insert(&sites.page(1, "third", 0)).unwrap();
    assert!(third.result.seen());
    assert!(
        third
            .result
            .identical
            .iter()
            .chain(&third.result.same_text)
            .chain(&third.result.near)
            .any(|m| m.url == original.url),
        "{:?}",
        third.result
    );
    assert_eq!(crawler.index().verify().unwrap(), Vec::<String>::new());
}

#[test]
fn a_page_fingerprinted_before_its_site_was_learned_is_stored_with_the_template_learned_since() {
    let dir = tempfile::tempdir().unwrap();
    let crawler = open(&dir);
    let sites = Sites::new();
    for a in 1..3 {
        crawler.insert(&sites.page(0, &format!("p{a}"), a)).unwrap();
    }
    // Fingerprinted now, with no template; stored after another writer's
    // page made the site's third, and its template was learned.
    let late = sites.page(0, "late", 0);
    let row = crawler.row(&late).unwrap();
    assert_eq!(row.unsuppressed.as_ref().unwrap().template, None);
    crawler.insert(&sites.page(0, "p3", 3)).unwrap();
    let template = crawler.index().site_template(&late.url).unwrap().unwrap();
    assert_eq!(template.learned_from, Some(3));
    crawler.index().insert(&row).unwrap();
    let now = crawler.fingerprint(&late).unwrap();
    assert!(now.shingles.len() < row.fingerprint.as_ref().unwrap().shingles.len());
    assert_eq!(shingle_count(&crawler, &late.url), now.shingles.len());
    // Its fourth page relearns the site with it, and nothing is left
    // inconsistent: every page's band keys are its signature's.
    assert_eq!(crawler.index().site_template(&late.url).unwrap().unwrap().learned_from, Some(4));
    assert_eq!(crawler.index().verify().unwrap(), Vec::<String>::new());
}

#[test]
fn learning_stops_at_its_cap_and_where_an_add_stored_the_sites_template() {
    let dir = tempfile::tempdir().unwrap();
    let crawler = open(&dir);
    let sites = Sites::new();
    let pages: Vec<CrawledPage> = (0..LEARN_UNTIL + 2).map(|a| sites.page(2, &format!("p{a}"), a)).collect();
    // In batches, so learning points fall inside them.
    for chunk in pages[..LEARN_UNTIL + 1].chunks(7) {
        crawler.check_and_insert_batch(chunk).unwrap();
    }
    let url = "https://site2.test/";
    let capped = crawler.index().site_template(url).unwrap().unwrap();
    assert_eq!(capped.learned_from, Some(LEARN_UNTIL));
    let learning: i64 = rusqlite::Connection::open(dir.path().join("i.db"))
        .unwrap()
        .query_row("SELECT count(*) FROM learning", [], |r| r.get(0))
        .unwrap();
    assert_eq!(learning, 0, "a capped site's pages are no longer kept for learning");
    crawler.insert(&pages[LEARN_UNTIL + 1]).unwrap();
    assert_eq!(crawler.index().site_template(url).unwrap().unwrap(), capped, "the capped template is kept");

    // An add's template replaces what was learned online, and stops learning.
    let mut added = Templates::default();
    added.insert("site3.test", capped.shingles.clone());
    for a in 0..2 {
        crawler.insert(&sites.page(3, &format!("p{a}"), a)).unwrap();
    }
    crawler.index().store_templates("add", &added).unwrap();
    let before = crawler.index().site_template("https://site3.test/").unwrap().unwrap();
    assert_eq!(before.learned_from, None);
    for a in 2..6 {
        crawler.insert(&sites.page(3, &format!("p{a}"), a)).unwrap();
    }
    assert_eq!(crawler.index().site_template("https://site3.test/").unwrap().unwrap(), before);
    assert_eq!(crawler.index().verify().unwrap(), Vec::<String>::new());
}

#[test]
fn an_index_without_template_suppression_learns_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::default().validate().unwrap();
    assert!(config.fingerprint.template.is_none());
    let index = Index::open(dir.path().join("i.db"), &config).unwrap();
    let crawler = Crawler::new(Arc::new(index), &config, "crawl");
    let sites = Sites::new();
    for a in 0..5 {
        let row = crawler.row(&sites.page(0, &format!("p{a}"), a)).unwrap();
        assert!(row.unsuppressed.is_none());
        crawler.index().insert(&row).unwrap();
    }
    assert_eq!(crawler.index().site_template("https://site0.test/").unwrap(), None);
}
