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
/// Sets, signatures and texts a large run kept on disk ([`crate::spill`])
/// are read back into the pages (the texts only with `texts`); an error
/// only when they cannot be.
pub fn pages_of(crawl: &str, loaded: Loaded, texts: bool) -> crate::Result<Vec<Page>> {
    let spill = loaded.corpus.spill;
    let mut docs = loaded.corpus.docs.into_iter().peekable();
    let mut pages = Vec::with_capacity(loaded.pages.len());
    for mut p in loaded.pages {
        let mut fingerprint = match p.content {
            Content::Doc(key) => docs.next_if(|d| d.key == key),
            Content::Failed { .. } => None,
            Content::Redirect => continue,
        };
        if let (Some(spill), Some(f)) = (&spill, &mut fingerprint)
            && let Some(places) = spill.places(f.key)
        {
            let read = |e: crate::spill::SpillError| crate::Error::Scratch(e.to_string());
            f.shingles = spill.read(places.shingles).map_err(read)?;
            if let Some(minhash) = places.minhash {
                spill.get_signature(minhash, &mut f.minhash).map_err(read)?;
            }
            if let Some(text) = places.text.filter(|_| texts) {
                p.record.text = Some(spill.text(text).map_err(read)?);
            }
        }
        pages.push(Page::of_record(crawl, p.record, fingerprint));
    }
    Ok(pages)
}
