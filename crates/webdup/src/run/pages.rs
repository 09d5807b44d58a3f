//! A run's pages as recorded: each fetch joined by key to its page, the
//! page's record made from both (as the page arrives in an audit's run, at
//! the end in the others), and redirects folded so that each final URL is
//! one page.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

use webdup_core::page::{Exchange, PageRecord, PageView};

use super::{Loaded, Redirected};
use crate::audit::Content;
use crate::engine::Config;
use crate::fetch::{FetchFlags, FetchRecord, RenderCounts};
use crate::source::DocKey;
use crate::template::Templates;

/// Where a run's fetch records go as they arrive (a fetched page's, an
/// archive's record's), slimmed with [`Config::slim_fetches`]. An audit's
/// run (`recording`) records each page as soon as it is fingerprinted: its
/// fetch waits by key for it, and the record takes the fetch's strings and
/// the page's view, so no page is held three times (fetch, view, record)
/// until the end.
pub(super) struct Fetches {
    slim: bool,
    pub(super) recording: bool,
    /// Whole: every fetch without `recording`; else those that failed
    /// (their records are made with the run's errors) or redirected (folding
    /// may list the page as a redirect, from its fetch).
    kept: Mutex<Vec<FetchRecord>>,
    /// With `recording`: fetches whose pages are in flight, by key.
    pending: Mutex<HashMap<DocKey, FetchRecord>>,
    /// With `recording`: what is left of the fetches whose records took them.
    answered: Mutex<Vec<FetchFlags>>,
    /// With `recording`: the pages recorded, in the order they came.
    pages: Mutex<Vec<RunPage>>,
}

/// The guarded value, even if a thread panicked while holding it.
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Fetches {
    /// For a run of `total` sources: a recording run's pages are sized for
    /// them at once, and for a few more (the inputs that could not be
    /// expanded, recorded after them). Growing a million records would copy
    /// them, holding them twice; room never used is never touched.
    pub(super) fn new(config: &Config, total: u64) -> Fetches {
        let recording = config.slim_fetches && !config.skip_records;
        let room = total as usize;
        let pages = if recording { Vec::with_capacity(room + room / 64 + 64) } else { Vec::new() };
        Fetches {
            slim: config.slim_fetches,
            recording,
            kept: Mutex::default(),
            pending: Mutex::default(),
            answered: Mutex::default(),
            pages: Mutex::new(pages),
        }
    }

    /// A fetch, as its page goes to fingerprinting.
    pub(super) fn arrived(&self, record: FetchRecord) {
        let record = if self.slim { slimmed(record) } else { record };
        if self.recording {
            locked(&self.pending).insert(record.key, record);
        } else {
            locked(&self.kept).push(record);
        }
    }

    /// The record of the page `f` is, made as it arrives from what its fetch
    /// answered (none for a local file) and what it showed; its content's
    /// sizes are [`Loaded::finish`]'s. The record takes the fetch's strings,
    /// leaving its [`FetchFlags`], unless it redirected: then it copies them.
    pub(super) fn record(&self, f: &crate::engine::Fingerprint, page: PageView) {
        let fetch = locked(&self.pending).remove(&f.key);
        let (id, url, exchange) = match fetch {
            None => (f.id.clone(), f.id.clone(), None),
            Some(mut r) => {
                let take = r.chain.len() <= 1;
                let made = exchange_of(&mut r, take, Some(&f.id));
                if take {
                    locked(&self.answered).push(FetchFlags::from(&r));
                } else {
                    locked(&self.kept).push(r);
                }
                made
            }
        };
        let record = PageRecord::exchanged(url, Some(page), exchange);
        locked(&self.pages).push(RunPage { key: f.key, id, record, content: Content::Doc(f.key) });
    }

    /// The whole fetches and what is left of the others, each by key, and
    /// the pages recorded, by key.
    pub(super) fn into_parts(self) -> (Vec<FetchRecord>, Vec<FetchFlags>, Vec<RunPage>) {
        let mut kept = self.kept.into_inner().unwrap_or_else(PoisonError::into_inner);
        kept.extend(self.pending.into_inner().unwrap_or_else(PoisonError::into_inner).into_values());
        let mut answered = self.answered.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut pages = self.pages.into_inner().unwrap_or_else(PoisonError::into_inner);
        // One of each a key: the unstable sorts order them as the stable
        // ones would, without their buffers of half the items.
        kept.sort_unstable_by_key(|r| r.key);
        answered.sort_unstable_by_key(|r| r.key);
        pages.sort_unstable_by_key(|p| p.key);
        (kept, answered, pages)
    }
}

/// What a page's record and the folding of redirects read of a fetch
/// ([`Config::slim_fetches`]): the headers only the run's report lists go,
/// and a fetch that did not redirect keeps no chain (its one hop is its URL
/// and status, which the record has).
fn slimmed(record: FetchRecord) -> FetchRecord {
    let chain = if record.chain.len() > 1 { record.chain } else { Vec::new() };
    FetchRecord { chain, content_type: None, last_modified: None, etag: None, duplicates: Vec::new(), ..record }
}

/// A fetched page's input (`id` when it is a document's, else the fetch's
/// own), the URL its record names (the one asked for, else the input) and
/// what its fetch saw: copied, or with `take` taken from the fetch, which
/// keeps its key, status, error and render flags.
fn exchange_of(r: &mut FetchRecord, take: bool, id: Option<&str>) -> (String, String, Option<Exchange>) {
    let id = match id {
        Some(id) if !take || id != r.id => id.to_string(),
        _ if take => std::mem::take(&mut r.id),
        _ => r.id.clone(),
    };
    if !take {
        let url = r.url.clone().unwrap_or_else(|| id.clone());
        return (id, url, Some(Exchange::from(&*r)));
    }
    let url = r.url.take().unwrap_or_else(|| id.clone());
    (id, url, Some(r.take_exchange()))
}

/// One page of a run: the input, its record, and what became of its content.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPage {
    pub key: DocKey,
    /// The input as given (the document's id).
    pub id: String,
    /// The URL asked for (normalized when it was fetched), what the fetch
    /// answered (final URL, status, redirects, its error, else the
    /// document's), what the page's markup and headers said, merged by the
    /// one rule, and its content's sizes and digest.
    pub record: PageRecord,
    /// Fingerprinted (`Doc`), failed, or folded into another input's page
    /// (`Redirect`, see [`Loaded::fold_redirects`]).
    pub content: Content,
}

impl Loaded {
    /// What every fetch of the run says of rendering and failure, whole
    /// (`fetches`) or not (`answered`), in no particular order.
    pub fn fetch_flags(&self) -> impl Iterator<Item = FetchFlags> + '_ {
        self.fetches.iter().map(FetchFlags::from).chain(self.answered.iter().copied())
    }

    /// How many of the run's pages were rendered, looked client-rendered, or
    /// could not be rendered.
    pub fn render_counts(&self) -> RenderCounts {
        RenderCounts::of(self.fetch_flags())
    }

    /// The corpus-wide stages ([`Corpus::finish`], with `known` templates
    /// for sites too small in this run to learn their own), then every
    /// page's record; with [`Config::slim_fetches`] the run's redirects are
    /// folded first ([`Loaded::fold_redirects`], which then does nothing
    /// when called again). Returns the templates learned here.
    pub fn finish(&mut self, config: &Config, known: &Templates) -> Templates {
        let learned = self.corpus.finish(config, known);
        if !config.skip_records {
            if config.slim_fetches {
                // The audit's order: one page per final URL first (a page
                // recorded as it arrived and folded since becomes a
                // redirect), so that each record made here can take its
                // fetch's strings rather than copy them (nothing reads them
                // after).
                self.fold_redirects();
            }
            self.record_pages(config.slim_fetches);
        }
        learned
    }

    /// The run's pages from its documents (with what their pages showed,
    /// taken from [`Corpus::pages`]), failures and fetch records, each joined
    /// by key to what its fetch recorded: the one place a page and its
    /// exchange meet. A fetch that redirected and has no document of its own
    /// is a `Redirect`. With `take` ([`Config::slim_fetches`]) each record
    /// takes its fetch's id, URLs, redirects and headers, and the fetch keeps
    /// its key, status, error and render flags.
    ///
    /// The pages an audit's run recorded as they arrived (sorted by key) get
    /// their content's sizes here. Such a page that became an error since
    /// (its shingle set could not be kept on disk) keeps what it showed, and
    /// is failed as its error says.
    fn record_pages(&mut self, take: bool) {
        let mut shown = std::mem::take(&mut self.corpus.pages);
        let corpus = &self.corpus;
        let mut pages = std::mem::take(&mut self.pages);
        let arrived = pages.len();
        pages.reserve(corpus.len().saturating_sub(arrived));
        {
            let mut by_key: HashMap<DocKey, &mut FetchRecord> = self.fetches.iter_mut().map(|r| (r.key, r)).collect();
            // The page's input, the URL its record names and what its fetch
            // saw, for a page of input `id`.
            let mut fetched = |id: &str, key: DocKey| match by_key.get_mut(&key) {
                None => (id.to_string(), id.to_string(), None),
                Some(r) => exchange_of(r, take, Some(id)),
            };
            for d in &corpus.docs {
                let content = (d.word_count, &d.digest, d.simhash, corpus.shingle_count(d));
                if let Ok(n) = pages[..arrived].binary_search_by_key(&d.key, |p| p.key) {
                    pages[n].record.set_content(content.0, content.1, content.2, content.3);
                    continue;
                }
                let (id, url, exchange) = fetched(&d.id, d.key);
                let record = PageRecord::exchanged(url, shown.remove(&d.key), exchange).with_content(
                    d.word_count,
                    &d.digest,
                    d.simhash,
                    corpus.shingle_count(d),
                );
                pages.push(RunPage { key: d.key, id, record, content: Content::Doc(d.key) });
            }
            for e in &corpus.errors {
                let failed = || Content::Failed { kind: e.kind.as_str().into(), message: e.message.clone() };
                let fail = |record: &mut PageRecord| {
                    if record.error_kind.is_none() {
                        (record.error_kind, record.error) = (Some(e.kind.as_str().into()), Some(e.message.clone()));
                    }
                };
                if let Ok(n) = pages[..arrived].binary_search_by_key(&e.key, |p| p.key) {
                    fail(&mut pages[n].record);
                    pages[n].record.text = None;
                    pages[n].content = failed();
                    continue;
                }
                let (id, url, exchange) = fetched(&e.id, e.key);
                let mut record = PageRecord::exchanged(url, None, exchange);
                fail(&mut record);
                pages.push(RunPage { key: e.key, id, record, content: failed() });
            }
        }
        // Keys are unique (documents, failures and bare redirects are
        // disjoint): the unstable sorts order them the same, without the
        // stable sort's buffer of half the pages.
        pages.sort_unstable_by_key(|p| p.key);
        let known = pages.len();
        for r in self.fetches.iter_mut().filter(|r| r.chain.len() > 1) {
            if pages[..known].binary_search_by_key(&r.key, |p| p.key).is_ok() {
                continue;
            }
            let (id, url, exchange) = exchange_of(r, take, None);
            pages.push(RunPage {
                key: r.key,
                id,
                record: PageRecord::exchanged(url, None, exchange),
                content: Content::Redirect,
            });
        }
        pages.sort_unstable_by_key(|p| p.key);
        self.pages = pages;
    }

    /// One page per final URL: an input that redirected to the page another
    /// input also reached (the migration workflow: old URLs beside the new
    /// sitemap) leaves the corpus, its page becomes a `Redirect` and it is
    /// listed in [`Loaded::redirected`], so it is never reported as a
    /// duplicate of its own target. The input kept for a page is the one
    /// that asked for it directly, else the first to reach it. Fetch
    /// records stay as they are. What `webdup cluster` and `webdup audit`
    /// read; `index add` keeps every page. Runs once ([`Loaded::folded`]).
    pub fn fold_redirects(&mut self) {
        if std::mem::replace(&mut self.folded, true) {
            return;
        }
        let by_key: HashMap<DocKey, &FetchRecord> = self.fetches.iter().map(|r| (r.key, r)).collect();
        let corpus = &mut self.corpus;
        let record = |d: &crate::engine::Fingerprint| by_key.get(&d.key).copied();
        // Where each page ended: its fetch says, or, once its record took
        // the fetch (an audit's run), its record.
        let pages = &self.pages;
        let end = |d: &crate::engine::Fingerprint| match record(d) {
            Some(r) => (r.final_url.as_deref(), r.chain.len() > 1),
            None => pages.binary_search_by_key(&d.key, |p| p.key).map_or((None, false), |n| {
                (pages[n].record.final_url.as_deref(), !pages[n].record.redirects.is_empty())
            }),
        };
        let ends: Vec<(Option<&str>, bool)> = corpus.docs.iter().map(end).collect();
        let into = webdup_core::page::fold_redirects(&ends);
        for (d, k) in corpus.docs.iter().zip(&into) {
            if let (Some(k), Some(r)) = (k, record(d)) {
                self.redirected.push(Redirected {
                    id: d.id.clone(),
                    final_url: r.final_url.clone().unwrap_or_default(),
                    chain: r.chain.clone(),
                    same_as: corpus.docs[*k].id.clone(),
                });
            }
        }
        let folded: HashSet<DocKey> =
            corpus.docs.iter().zip(&into).filter(|(_, k)| k.is_some()).map(|(d, _)| d.key).collect();
        let mut keep = into.iter().map(Option::is_none);
        corpus.docs.retain(|_| keep.next().unwrap_or(true));
        // A folded page is listed as its fetch recorded it: the URL asked
        // for, where it ended, through which redirects.
        for p in self.pages.iter_mut().filter(|p| folded.contains(&p.key)) {
            if let Some(r) = by_key.get(&p.key) {
                let url = r.url.clone().unwrap_or_else(|| r.id.clone());
                p.record = PageRecord::observed(url, None, Some(&Exchange::from(*r)));
                p.content = Content::Redirect;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webdup_core::page::Exchange;

    fn record(chain: &[(&str, u16)]) -> FetchRecord {
        let hops: Vec<serde_json::Value> =
            chain.iter().map(|(url, status)| serde_json::json!({"url": url, "status": status})).collect();
        let last = chain.last().map(|h| h.0);
        serde_json::from_value(serde_json::json!({
            "id": chain[0].0, "order": 3, "url": chain[0].0, "final_url": last, "status": 200,
            "chain": hops, "content_type": "text/html", "last_modified": "Sat, 28 Nov 2026 10:00:00 GMT",
            "etag": "\"e1\"", "canonical": "https://a.test/c", "x_robots_tag": "noindex",
            "bytes": 512, "elapsed": 12, "from_cache": false, "duplicates": ["https://a.test/p?x"],
            "error": null
        }))
        .unwrap()
    }

    #[test]
    fn a_slimmed_fetch_gives_its_page_the_same_record() {
        for chain in [&[("https://a.test/p", 200)][..], &[("https://a.test/old", 301), ("https://a.test/p", 200)]] {
            let whole = record(chain);
            let slim = slimmed(whole.clone());
            assert_eq!(Exchange::from(&slim), Exchange::from(&whole));
            assert_eq!(
                (&slim.id, slim.key, &slim.url, &slim.final_url),
                (&whole.id, whole.key, &whole.url, &whole.final_url)
            );
            // What folding redirects reads: whether it redirected, and through what.
            assert_eq!(slim.chain.len() > 1, whole.chain.len() > 1);
            if whole.chain.len() > 1 {
                assert_eq!(slim.chain, whole.chain);
            }
            assert_eq!((slim.content_type, slim.etag, slim.duplicates.len()), (None, None, 0));
        }
    }

    #[test]
    fn a_record_that_takes_its_fetch_is_the_record_that_copies_it() {
        let failed: FetchRecord = serde_json::from_value(serde_json::json!({
            "id": "https://a.test/gone", "order": 4, "url": "https://a.test/gone", "final_url": "https://a.test/gone",
            "status": 404, "chain": [{"url": "https://a.test/gone", "status": 404}], "bytes": 0, "elapsed": 3,
            "from_cache": false, "duplicates": [], "shell": true,
            "error": {"kind": "http_status", "message": "HTTP 404", "doc_kind": "fetch"}
        }))
        .unwrap();
        let plain = record(&[("https://a.test/p", 200)]);
        let moved = record(&[("https://a.test/old", 301), ("https://a.test/p", 200)]);
        for (whole, id) in [(plain, Some("https://a.test/p")), (moved, None), (failed, Some("./gone.html"))] {
            let (mut copied, mut taken) = (slimmed(whole.clone()), slimmed(whole.clone()));
            let copy = exchange_of(&mut copied, false, id);
            assert_eq!(exchange_of(&mut taken, true, id), copy);
            let json = |r: &FetchRecord| serde_json::to_value(r).unwrap();
            assert_eq!(json(&copied), json(&slimmed(whole.clone())), "copying leaves the fetch as it was");
            // What is read of a fetch once its page is recorded: render
            // counts and flags, and whether it failed.
            assert_eq!(
                (taken.key, taken.status, &taken.error, taken.rendered, taken.shell),
                (whole.key, whole.status, &whole.error, whole.rendered, whole.shell)
            );
            assert_eq!((taken.url, taken.final_url, taken.chain.len()), (None, None, 0), "its strings moved");
            // The record's URL: the one asked for, else the input.
            assert_eq!(copy.1, whole.url.clone().unwrap());
        }
    }
}
