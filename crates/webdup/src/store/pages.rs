//! What `index add` stores for a loaded run.

use std::collections::HashMap;

use super::Page;
use crate::engine::Corpus;
use crate::fetch::FetchRecord;
use crate::source::DocKey;

/// Pages to store for a loaded run, by key (input order): fetched or read
/// documents, and the failures (a 404 is worth remembering: lost-and-found
/// needs it), each joined by its key to what its fetch recorded. Input
/// order is kept so an audit of the index lists pages as an audit of the
/// same inputs does.
pub fn pages_of(crawl: &str, corpus: Corpus, fetches: &[FetchRecord]) -> Vec<Page> {
    let by_key: HashMap<DocKey, &FetchRecord> = fetches.iter().map(|r| (r.key, r)).collect();
    let url_of = |id: &str, key: DocKey| by_key.get(&key).and_then(|r| r.url.clone()).unwrap_or_else(|| id.to_string());
    let mut pages = Vec::with_capacity(corpus.len());
    for doc in corpus.docs {
        let key = doc.key;
        pages.push((key, Page::new(crawl, url_of(&doc.id, key), doc)));
    }
    for e in corpus.errors {
        let page = Page::failed(crawl, url_of(&e.id, e.key), e.kind.as_str(), e.message);
        pages.push((e.key, page));
    }
    pages.sort_by_key(|(key, _)| *key);
    pages
        .into_iter()
        .map(|(key, page)| match by_key.get(&key) {
            Some(r) => page.with_fetch(*r),
            None => page,
        })
        .collect()
}
