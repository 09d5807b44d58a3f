//! What `index add` stores for a loaded run.

use super::Page;
use crate::audit::Content;
use crate::run::Loaded;

/// Pages to store for a finished run ([`Loaded::finish`]), in input order:
/// each page's record as the run made it (what its fetch answered, what its
/// markup said, its main text when kept) with its fingerprint, or none for a
/// failure (a 404 is worth remembering: lost-and-found needs it). Input
/// order is kept so an audit of the index lists pages as an audit of the
/// same inputs does. A page the run folded into another is not stored.
pub fn pages_of(crawl: &str, loaded: Loaded) -> Vec<Page> {
    let mut docs = loaded.corpus.docs.into_iter().peekable();
    loaded
        .pages
        .into_iter()
        .filter_map(|p| {
            let fingerprint = match p.content {
                Content::Doc(key) => docs.next_if(|d| d.key == key),
                Content::Failed { .. } => None,
                Content::Redirect => return None,
            };
            Some(Page::of_record(crawl, p.record, fingerprint))
        })
        .collect()
}
