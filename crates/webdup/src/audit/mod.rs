//! The SEO duplicate-content audit: what `webdup audit` reports.
//!
//! The model, its builder and its writers are webdup-seo's
//! ([`webdup_seo::audit`], re-exported here). This module feeds them: a
//! fresh run ([`run`]: a [`Loaded`](crate::run::Loaded) run made with
//! [`Config::keep_pages`], one page per final URL) and a crawl kept in an
//! index ([`from_index`], with the `store` feature) both become
//! [`AuditPage`]s, the one page model the audit reads, so the same page
//! audits the same whichever way it came.
//!
//! ```
//! use webdup::audit::{self, AuditConfig};
//! use webdup::engine::{Config, Quiet};
//! use webdup::run::{Run, RunConfig};
//! use webdup::template::Templates;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let body = "<p>The river path was restored this spring by volunteers from the village.</p>".repeat(20);
//! for name in ["a.html", "b.html"] {
//!     let html = format!("<html><head><title>Path</title></head><body>{body}</body></html>");
//!     std::fs::write(dir.path().join(name), html).unwrap();
//! }
//! let config = Config { keep_pages: true, ..Config::default() }.validate().unwrap();
//! let inputs = [dir.path().display().to_string()];
//! let loaded = Run::new(RunConfig::default())
//!     .load_all(&inputs, &mut std::io::empty(), &config, &Templates::default(), &Quiet)
//!     .unwrap();
//! let audited = audit::run(loaded, &config, &AuditConfig::default()).unwrap();
//! let audit = &audited.audit;
//! assert_eq!(audit.summary.identical_groups, 1);
//! assert_eq!(audit.clusters[0].status, "problem");
//! assert_eq!(audit.duplicate_titles[0].pages, vec![0, 1]);
//! ```

#[cfg(feature = "http")]
pub mod markup;
#[cfg(feature = "store")]
mod stored;

#[cfg(feature = "http")]
use webdup_core::DocKey;
#[cfg(feature = "http")]
use webdup_core::page::PageRecord;

use crate::engine::{Clustering, Config, Corpus};
use crate::threads::Threads;

#[cfg(feature = "store")]
pub use stored::{from_index, since};
pub use webdup_seo::audit::*;

/// An audit and what it was made from.
#[derive(Debug)]
pub struct Audited {
    /// The analysed documents (one per final URL) and the failed ones.
    pub corpus: Corpus,
    pub clustering: Clustering,
    pub audit: Audit,
    /// The texts of every cluster's members, for the report's diff view.
    pub texts: AuditTexts,
}

/// Audits a loaded run (made with [`Config::keep_pages`] for its metadata
/// and texts): one page per final URL ([`crate::run::Loaded::fold_redirects`]:
/// an old URL that redirects to a page of the run gets a redirect row, not a
/// second copy of the page), duplicates found, the model built with the
/// pages in input order, fetched, failed or folded. A run that followed
/// links adds what the crawl saw ([`crawl_facts`]).
#[cfg(feature = "http")]
pub fn run(mut loaded: crate::run::Loaded, config: &Config, audit: &AuditConfig) -> crate::Result<Audited> {
    loaded.fold_redirects();
    // What the fetches said of rendering (`--render`): pages rendered, and
    // shells left as they came.
    let rendered: std::collections::HashSet<DocKey> =
        loaded.fetch_flags().filter(|r| r.rendered).map(|r| r.key).collect();
    let shells = loaded.render_counts().unread_shells;
    // The pages' records hold what their fetches answered: the fetch
    // records themselves are done with.
    (loaded.fetches, loaded.answered) = (Vec::new(), Vec::new());
    let rendered_rows: Vec<usize> = loaded
        .pages
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.content, Content::Doc(_)) && rendered.contains(&p.key))
        .map(|(n, _)| n)
        .collect();
    let facts = loaded.crawl.take().map(|c| crawl_facts(&c, &loaded.pages));
    let clustering = crate::engine::find_duplicates(&loaded.corpus, config)?;
    // The audit lists an analysed or failed page under its input as given;
    // a folded one under the URL its fetch asked for.
    let pages: Vec<AuditPage> = loaded
        .pages
        .into_iter()
        .map(|p| {
            let record = match p.content {
                Content::Redirect => p.record,
                _ => PageRecord { url: p.id, ..p.record },
            };
            AuditPage { record, content: p.content }
        })
        .collect();
    let (mut built, pages) = build(&loaded.corpus, pages, &clustering, facts.as_ref(), config, audit)?;
    for &n in &rendered_rows {
        built.pages[n].rendered = true;
    }
    (built.summary.rendered_pages, built.summary.client_rendered_pages) = (rendered_rows.len(), shells);
    let texts = match &loaded.corpus.spill {
        None => AuditTexts::build(&Threads, &pages, &clustering, &built),
        // The texts of the pages held before the run began to spill are in
        // their records; a text that cannot be read back shows as missing.
        Some(spill) => {
            let held = AuditTexts::held(&pages);
            AuditTexts::build_with(&Threads, &clustering, &built, &|key| match held.get(&key) {
                Some(text) => Some(std::borrow::Cow::Borrowed(*text)),
                None => spill.text_of(key).and_then(Result::ok).map(std::borrow::Cow::Owned),
            })
        }
    };
    let found = markup::Markup { spill: &loaded.markup, pages: &pages, docs: &loaded.corpus.docs };
    webdup_seo::audit::markup::fill(&Threads, &mut built, &|page| found.of(page));
    Ok(Audited { corpus: loaded.corpus, clustering, audit: built, texts })
}

/// Builds the audit model of `pages` (in the order listed), whose analysed
/// documents are `corpus`'s, clustered as `clustering`, found by `crawl`
/// when links were followed; with what the report reads of the pages after
/// ([`Audit::build`]). An error only when sets kept on disk cannot be read
/// back.
pub fn build(
    corpus: &Corpus,
    pages: Vec<AuditPage>,
    clustering: &Clustering,
    crawl: Option<&CrawlFacts>,
    config: &Config,
    audit: &AuditConfig,
) -> crate::Result<(Audit, Vec<PageSource>)> {
    let settings = AuditSettings::new(&config.fingerprint, &config.matching, audit);
    match &corpus.spill {
        None => Ok(Audit::build(&Threads, pages, &corpus.docs, clustering, crawl, settings)),
        Some(spill) => {
            let sets = spill.sets(&corpus.docs);
            Audit::build_in(&Threads, pages, &corpus.docs, &sets, clustering, crawl, settings)
                .map_err(|e| crate::Error::Scratch(e.to_string()))
        }
    }
}

/// The crawl as the audit reads it: each link's source named by the URL
/// its page was served from (the crawl names it by key), every count and
/// trap as the crawl reported it.
#[cfg(feature = "http")]
pub fn crawl_facts(crawl: &crate::crawl::CrawlSummary, pages: &[crate::run::RunPage]) -> CrawlFacts {
    let url_of: std::collections::HashMap<DocKey, &str> =
        pages.iter().map(|p| (p.key, p.record.effective_url())).collect();
    CrawlFacts {
        pages: crawl.pages,
        depth: crawl.depth,
        links: crawl
            .edges
            .iter()
            .filter_map(|(from, to)| Some((url_of.get(from)?.to_string(), to.to_string())))
            .collect(),
        listed: crawl.listed.as_ref().map(|l| l.iter().map(|u| u.to_string()).collect()),
        folded: crawl.folded.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
        folded_beyond: crawl.folded_beyond,
        canonicals_beyond: crawl.canonicals_beyond,
        traps: crawl.traps.clone(),
        not_followed: crawl.not_followed.clone(),
        moved_starts: crawl
            .moved_starts
            .iter()
            .map(|(from, to)| MovedStart { from: from.clone(), to: to.clone() })
            .collect(),
    }
}
