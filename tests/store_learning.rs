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
use webdup::store::{CheckResult, Index, LEARN_UNTIL, TemplateState, cold_jaccard};
use webdup::template::Templates;
use webdup::verify::Overlap;
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

/// Issue 37: the 2nd and 3rd pages of a site were dropped as copies of its
/// first for the blurb they share, before the index had learned that the
/// blurb is the site's template. Until it is learned a check is
/// conservative and says so; a light revision is still found.
#[test]
fn thin_pages_of_a_site_are_not_copies_of_each_other_before_its_template_is_learned() {
    let dir = tempfile::tempdir().unwrap();
    let crawler = open(&dir);
    let blurb = texts(1, 160, 21).remove(0);
    let own = texts(6, 10, 22);
    let thin = |n: usize| CrawledPage::text(format!("https://thin.test/t{n}"), format!("{}\n\n{blurb}", own[n]));
    let state = |r: &CheckResult| r.template.map(TemplateState::as_str);

    let first = crawler.check_and_insert(&thin(0)).unwrap().result;
    assert!(!first.seen());
    assert_eq!(state(&first), Some("not yet learned"));
    for n in 1..3 {
        // What the blurb alone would have made of them: Jaccard above the
        // same-site threshold.
        let o = overlap(&thin(0), &thin(n));
        let (whole, jaccard) = (o.jaccard(), cold_jaccard(&o));
        assert!(whole >= 0.8 && jaccard < 0.8, "the fixture: Jaccard {whole}, set aside {jaccard}");
        let r = crawler.check_and_insert(&thin(n)).unwrap().result;
        assert!(!r.seen(), "thin page {n} dropped for the blurb its site repeats: {r:?}");
        assert_eq!(state(&r), Some("not yet learned"));
    }
    // Three thin pages show no template (the learner needs a page with more
    // text of its own than common text); an article with the blurb does.
    let t = crawler.index().site_template("https://thin.test/").unwrap().unwrap();
    assert!(!t.is_learned() && t.shingles.is_empty(), "{t:?}");
    let sites = Sites::new();
    let article = CrawledPage::text("https://thin.test/article", format!("{}\n\n{blurb}", sites.articles[7]));
    let r = crawler.check_and_insert(&article).unwrap().result;
    assert!(!r.seen() && state(&r) == Some("not yet learned"), "{r:?}");
    let t = crawler.index().site_template("https://thin.test/").unwrap().unwrap();
    assert!(t.is_learned() && !t.shingles.is_empty(), "{t:?}");
    // The next thin page is compared without the blurb, and the state says so.
    let r = crawler.check_and_insert(&thin(3)).unwrap().result;
    assert!(!r.seen(), "{r:?}");
    assert_eq!(state(&r), Some("learned"));

    // On a site not yet learned, an article's light revision is still a
    // copy of it, and a verbatim copy an exact one.
    let article = sites.page(2, "a", 5);
    let mut revised = sites.page(2, "b", 5);
    let text = revised.text.take().unwrap();
    let mut words: Vec<&str> = text.split(' ').collect();
    words[60] = "rewritten";
    revised.text = Some(words.join(" "));
    assert!(!crawler.check_and_insert(&article).unwrap().result.seen());
    let r = crawler.check_and_insert(&revised).unwrap().result;
    assert_eq!(state(&r), Some("not yet learned"));
    assert_eq!(r.near.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(), [article.url.as_str()], "{r:?}");
    let r = crawler.check(&sites.page(2, "c", 5)).unwrap();
    assert_eq!(r.identical.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(), [article.url.as_str()], "{r:?}");
    // An index without template suppression has no such state.
    let plain = tempfile::tempdir().unwrap();
    let config = Config::default().validate().unwrap();
    let index = Index::open(plain.path().join("i.db"), &config).unwrap();
    let r = Crawler::new(Arc::new(index), &config, "crawl").check(&thin(0)).unwrap();
    assert_eq!(r.template, None);
}

/// The exact overlap of two pages as the index would fingerprint them with
/// no template.
fn overlap(a: &CrawledPage, b: &CrawledPage) -> Overlap {
    let dir = tempfile::tempdir().unwrap();
    let fresh = open(&dir);
    let (a, b) = (fresh.fingerprint(a).unwrap(), fresh.fingerprint(b).unwrap());
    Overlap::of(&a.shingles, &b.shingles)
}

/// Issue 37: pages a site had in the index before the index learned its
/// template (stored by `index add` or `Index::insert`, with no learning
/// row) kept the template text: a revision checked after the template was
/// learned, compared without it, fell below the threshold against them,
/// so what was found depended on which pages came first. They are now
/// fingerprinted again from their stored shingles when the site is first
/// learned, and counted for learning it.
#[test]
fn pages_stored_before_a_site_was_learned_are_fingerprinted_again_from_their_stored_shingles() {
    let dir = tempfile::tempdir().unwrap();
    let crawler = open(&dir);
    let sites = Sites::new();
    // Stored as `index add` stores a site with too few pages to learn
    // from: no learning row, the blurb in its shingles.
    let stored: Vec<CrawledPage> = (0..2).map(|a| sites.page(0, &format!("stored{a}"), a)).collect();
    for page in &stored {
        let row = crawler.record(page).unwrap();
        assert!(row.unsuppressed.is_none());
        crawler.index().insert(&row).unwrap();
    }
    let before = shingle_count(&crawler, &stored[0].url);
    // One page given by a crawler makes the site's third: its template is
    // learned, and the stored pages lose the blurb.
    assert!(!crawler.check_and_insert(&sites.page(0, "crawled", 10)).unwrap().result.seen());
    let t = crawler.index().site_template(&stored[0].url).unwrap().expect("learned at the site's third page");
    assert_eq!(t.learned_from, Some(3));
    assert!(shingle_count(&crawler, &stored[0].url) < before, "the stored page is fingerprinted again");
    assert_eq!(crawler.index().verify().unwrap(), Vec::<String>::new());

    // A light revision of a stored page, checked now without the blurb,
    // finds it.
    let mut revised = sites.page(0, "revised", 0);
    let text = revised.text.take().unwrap();
    let mut words: Vec<&str> = text.split(' ').collect();
    words[40] = "rewritten";
    revised.text = Some(words.join(" "));
    let r = crawler.check_and_insert(&revised).unwrap().result;
    assert_eq!(r.template, Some(TemplateState::Learned));
    assert_eq!(r.near.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(), [stored[0].url.as_str()], "{r:?}");
}
