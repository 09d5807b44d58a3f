//! Site templates learned as a crawler's pages arrive, one at a time.
//!
//! `index add` learns each site's template from the whole batch it reads
//! (see [`Templates`]); a crawler hands pages over one by one, so until now
//! its pages were never suppressed at all, and a template the extractor
//! took for content (a rankings blurb, a "related" list, a teaser) pulled
//! the same article on two sites below the threshold.
//!
//! So the index learns too. A page given with its fingerprint as it was
//! before suppression ([`Unsuppressed`], which `webdup::crawler`
//! provides) is kept in the `learning` table, by site, until the site has
//! [`LEARN_UNTIL`] such pages. When a site reaches a learning point
//! ([`TemplateConfig::min_pages`], then every power of two up to
//! [`LEARN_UNTIL`]), its template is learned again from all of them, with
//! the same rule as `index add` ([`template::learn_site`]), stored as the
//! site's newest template (crawl `""`), and every page of the site in
//! `learning` is fingerprinted again with it: shingles, digest, SimHash,
//! MinHash and band keys, as if it had been checked with that template.
//! Pages stored earlier and later are thus compared alike. The work per
//! learning point is the site's pages so far, so a page costs a constant on
//! average; at [`LEARN_UNTIL`] pages the template is kept and the site's
//! learning rows are dropped.
//!
//! Pages of the site the index held before it had any template for it
//! (an `index add` of too few of its pages to learn from, or rows inserted
//! without their unsuppressed fingerprint) join the learning pages then,
//! read from their stored shingles: no template was ever dropped from
//! them. They count for the first learning point and are fingerprinted
//! again with the rest, so what a crawl finds does not depend on which of
//! a site's pages came first. Until the site's template is learned, checks
//! of its pages are conservative ([`TemplateState::NotYetLearned`]).
//!
//! A site whose newest template an `index add` stored is not learned
//! online: the add read more pages at once. A page fingerprinted with a
//! template that another writer has since replaced is fingerprinted again
//! with the newest inside the write transaction, so what is checked and
//! stored always agrees with the site's template.

use std::borrow::Cow;

use rusqlite::{OptionalExtension, Transaction, params};
use webdup_core::fingerprint::Fingerprint;
use webdup_core::template::{self, TemplateConfig, site_of};

use crate::codec::{decode_u32s, decode_u64s, encode_u32s, encode_u64s};
use crate::stored::StoredText;
use crate::{Index, Page, Result, TemplateState, bands};

/// A site's template is learned for the last time when it has this many
/// pages in the index, then kept.
pub const LEARN_UNTIL: usize = 128;

/// The crawl name the index's own templates are stored under (a real
/// crawl's name is never empty).
pub(crate) const ONLINE: &str = "";

/// A page's fingerprint before its site's template was dropped from it:
/// what the index needs to learn the site's template and to fingerprint
/// the page again when the template changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unsuppressed {
    /// All its shingles, sorted and distinct.
    pub shingles: Vec<u64>,
    /// [`Fingerprint::context`] as the fingerprinter made it (all the page
    /// shows outside its chrome; empty when the extractor kept it all).
    pub context: Vec<u64>,
    pub digest: [u8; 16],
    pub simhash: u64,
    /// The id of the template the page was fingerprinted with
    /// ([`SiteTemplate::id`]); `None` when it had none.
    pub template: Option<i64>,
}

impl Unsuppressed {
    /// What `fp` is before any template is dropped from it (take it before
    /// `Fingerprinter::finish_alone`), fingerprinted with `template`.
    pub fn of(fp: &Fingerprint, template: Option<i64>) -> Unsuppressed {
        Unsuppressed {
            shingles: fp.shingles.clone(),
            context: fp.context.clone(),
            digest: fp.digest,
            simhash: fp.simhash,
            template,
        }
    }

    /// The set template learning reads: the context when there is one.
    fn learning_set(&self) -> &[u64] {
        if self.context.is_empty() { &self.shingles } else { &self.context }
    }

    /// Shingles, digest and SimHash without `template` (sorted): what
    /// `Fingerprinter::finish_alone` leaves before sketching.
    fn without(&self, template: &[u64]) -> Fingerprint {
        let mut fp = Fingerprint::from_parts(
            String::new(),
            Default::default(),
            0,
            self.shingles.clone(),
            self.digest,
            Vec::new(),
            self.simhash,
        );
        fp.context = self.context.clone();
        fp.drop_template(template);
        fp
    }
}

/// A site's newest template, as [`Index::site_template`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteTemplate {
    /// Its row id: a new one each time the site's template is learned.
    pub id: i64,
    /// Sorted template shingles.
    pub shingles: Vec<u64>,
    /// Learned by the index from pages given one at a time, from this many
    /// pages; `None` when an `index add` learned it.
    pub learned_from: Option<usize>,
}

/// An empty template learned online from fewer pages than this may only
/// say that the site's first pages are copies of each other (the learner
/// needs three copy groups): until then the site is not taken as learned
/// (see [`SiteTemplate::is_learned`]). 8 is the third learning point.
const EMPTY_TEMPLATE_SURE_FROM: usize = 8;

impl SiteTemplate {
    /// Whether the site's pages are compared as learned: a template an
    /// `index add` stored, one with shingles, or an empty one learned from
    /// enough pages to say the site has none.
    pub fn is_learned(&self) -> bool {
        self.learned_from.is_none_or(|n| !self.shingles.is_empty() || n >= EMPTY_TEMPLATE_SURE_FROM)
    }
}

/// Is `n` pages a point at which a site's template is learned again?
fn learning_point(n: usize, config: &TemplateConfig) -> bool {
    n <= LEARN_UNTIL && (n == config.min_pages || (n > config.min_pages && n.is_power_of_two()))
}

/// The context is stored without the shingles it repeats.
fn beyond(context: &[u64], shingles: &[u64]) -> Vec<u64> {
    context.iter().copied().filter(|s| shingles.binary_search(s).is_err()).collect()
}

fn union(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out.sort_unstable();
    out.dedup();
    out
}

pub(crate) fn newest(conn: &rusqlite::Connection, site: &str) -> Result<Option<SiteTemplate>> {
    let row: Option<(i64, Vec<u8>, Option<i64>)> = conn
        .prepare_cached(
            "SELECT rowid, shingles, learned_from FROM templates WHERE site = ?1 ORDER BY rowid DESC LIMIT 1",
        )?
        .query_row([site], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    row.map(|(id, blob, learned_from)| {
        Ok(SiteTemplate { id, shingles: decode_u64s(&blob, id)?, learned_from: learned_from.map(|n| n as usize) })
    })
    .transpose()
}

/// Pages of the batch fingerprinted again, with their new band keys.
pub(crate) type Refingerprinted = Vec<(i64, Vec<u32>)>;

impl Index {
    /// The site of a page at `id` (a URL or a path), when the index
    /// suppresses templates.
    pub(crate) fn site_of(&self, id: &str) -> Option<(String, &TemplateConfig)> {
        let config = self.settings.fingerprint.template.as_ref()?;
        Some((site_of(id, config.scope)?, config))
    }

    /// The newest template of the site of a page at `id`: the one that
    /// page is fingerprinted with. `None` when the site has none, or the
    /// index suppresses no templates.
    pub fn site_template(&self, id: &str) -> Result<Option<SiteTemplate>> {
        let Some((site, _)) = self.site_of(id) else { return Ok(None) };
        self.with_reader(|conn| newest(conn, &site))
    }

    /// Whether the site of a page at `id` has its template learned, on
    /// `conn`'s view; `None` when the index suppresses no templates or the
    /// page has no site.
    pub(crate) fn template_state(&self, conn: &rusqlite::Connection, id: &str) -> Result<Option<TemplateState>> {
        let Some((site, _)) = self.site_of(id) else { return Ok(None) };
        let learned = newest(conn, &site)?.is_some_and(|t| t.is_learned());
        Ok(Some(if learned { TemplateState::Learned } else { TemplateState::NotYetLearned }))
    }

    /// `page` as it must be stored now: fingerprinted again when its site's
    /// template changed since it was fingerprinted.
    pub(crate) fn current<'a>(&self, tx: &Transaction, page: &'a Page) -> Result<Cow<'a, Page>> {
        let (Some(before), Some(fp)) = (&page.unsuppressed, &page.fingerprint) else { return Ok(Cow::Borrowed(page)) };
        let Some((site, _)) = self.site_of(&page.record.url) else { return Ok(Cow::Borrowed(page)) };
        let now = newest(tx, &site)?;
        if now.as_ref().map(|t| t.id) == before.template {
            return Ok(Cow::Borrowed(page));
        }
        let redone = before.without(now.as_ref().map_or(&[][..], |t| &t.shingles));
        let mut page = page.clone();
        let mut fp = fp.clone();
        (fp.shingles, fp.digest, fp.simhash) = (redone.shingles, redone.digest, redone.simhash);
        fp.minhash = self.minhasher.sketch(&fp.shingles);
        page.fingerprint = Some(fp);
        if let Some(u) = &mut page.unsuppressed {
            u.template = now.map(|t| t.id);
        }
        Ok(Cow::Owned(page))
    }

    /// Keeps `page` (stored as `id`) for learning its site's template and,
    /// at a learning point, learns it again and fingerprints the site's
    /// pages again with it (see the module documentation). Returns the
    /// pages fingerprinted again, with their new band keys; band rows to
    /// drop go to `deletions`.
    pub(crate) fn learn_in(
        &self,
        tx: &Transaction,
        page: &Page,
        id: i64,
        deletions: &mut bands::Deletions,
    ) -> Result<Refingerprinted> {
        let Some(before) = &page.unsuppressed else { return Ok(Vec::new()) };
        if page.fingerprint.is_none() {
            return Ok(Vec::new());
        }
        let Some((site, config)) = self.site_of(&page.record.url) else { return Ok(Vec::new()) };
        let now = newest(tx, &site)?;
        match now.as_ref().map(|t| t.learned_from) {
            Some(None) => return Ok(Vec::new()),
            Some(Some(n)) if n >= LEARN_UNTIL => return Ok(Vec::new()),
            _ => {}
        }
        tx.prepare_cached(
            "INSERT OR REPLACE INTO learning (page_id, site, shingles, context, digest, simhash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            id,
            site,
            encode_u64s(&before.shingles),
            encode_u64s(&beyond(&before.context, &before.shingles)),
            before.digest.to_vec(),
            before.simhash as i64,
        ])?;
        if now.is_none() {
            self.adopt_stored(tx, &site, config)?;
        }
        let n: i64 =
            tx.prepare_cached("SELECT count(*) FROM learning WHERE site = ?1")?.query_row([&site], |r| r.get(0))?;
        let n = n as usize;
        // Pages adopted may take the count past the first learning point.
        if !(learning_point(n, config) || (now.is_none() && n >= config.min_pages)) {
            return Ok(Vec::new());
        }
        let pages = learning_pages(tx, &site)?;
        let sets: Vec<&[u64]> = pages.iter().map(|(_, u)| u.learning_set()).collect();
        let learned = template::learn_site(&sets, config);
        tx.prepare_cached("DELETE FROM templates WHERE crawl = ?1 AND site = ?2")?.execute(params![ONLINE, site])?;
        tx.prepare_cached(
            "INSERT INTO templates (crawl, site, learned_at, shingles, learned_from) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![ONLINE, site, crate::now(), encode_u64s(&learned), n as i64])?;
        let mut redone = Vec::new();
        if now.as_ref().map_or(&[][..], |t| &t.shingles) != learned.as_slice() {
            for (page_id, u) in &pages {
                redone.push((*page_id, self.refingerprint(tx, *page_id, u, &learned, deletions)?));
            }
        }
        if n >= LEARN_UNTIL {
            tx.prepare_cached("DELETE FROM learning WHERE site = ?1")?.execute([&site])?;
        }
        Ok(redone)
    }

    /// Stores page `page_id` fingerprinted with `template`; returns its new band keys.
    fn refingerprint(
        &self,
        tx: &Transaction,
        page_id: i64,
        before: &Unsuppressed,
        template: &[u64],
        deletions: &mut bands::Deletions,
    ) -> Result<Vec<u32>> {
        let fp = before.without(template);
        let minhash = self.minhasher.sketch(&fp.shingles);
        let (old, text): (Option<Vec<u8>>, StoredText) = tx
            .prepare_cached("SELECT minhash, text, text_deflate FROM pages WHERE id = ?1")?
            .query_row([page_id], |r| Ok((r.get(0)?, StoredText::of(r, 1)?)))?;
        if let Some(blob) = old
            && !bands::remove_pending(tx, page_id)?
        {
            deletions.push(page_id, self.band_keys(&decode_u32s(&blob, page_id)?));
        }
        let stored = self.shingles.encode(&fp.shingles, text.text(page_id)?.as_deref());
        tx.prepare_cached(
            "UPDATE pages SET shingles = ?2, shingle_count = ?3, digest = ?4, simhash = ?5, minhash = ?6,
                 shingles_check = ?7 WHERE id = ?1",
        )?
        .execute(params![
            page_id,
            stored.blob,
            fp.shingles.len() as i64,
            fp.digest.to_vec(),
            fp.simhash as i64,
            encode_u32s(&minhash),
            stored.check,
        ])?;
        let keys: Vec<u32> = self.band_keys(&minhash).collect();
        bands::add_pending(tx, page_id, &bands::encode_keys(keys.iter().copied()))?;
        Ok(keys)
    }
}

impl Index {
    /// Keeps for learning the pages of `site` stored without a learning row
    /// (by `index add`, which learned no template for so few of the site's
    /// pages, or by [`Index::insert`] of a row made without its unsuppressed
    /// fingerprint), at most [`LEARN_UNTIL`] of them. Called while the site has
    /// no template at all: no template was ever dropped from them, so their
    /// stored shingles are what they were before suppression, and they are
    /// fingerprinted again, like the crawler's pages, when the site is learned.
    /// Their context was not stored: learning reads their shingles.
    fn adopt_stored(&self, tx: &Transaction, site: &str, config: &TemplateConfig) -> Result<()> {
        // The pages table is indexed by URL: the site's URLs (or paths) are a
        // few ranges of it, then checked one by one.
        let prefixes: Vec<String> = match site.strip_prefix("dir:") {
            Some(dir) => vec![format!("{dir}/")],
            None => ["http", "https"]
                .iter()
                .flat_map(|scheme| ["/", ":", "?", "#"].map(|end| format!("{scheme}://{site}{end}")))
                .collect(),
        };
        let mut stmt = tx.prepare_cached(
            "SELECT p.id, p.url, p.shingles, p.digest, p.simhash, p.shingles_check, p.text, p.text_deflate FROM pages p
             WHERE p.url >= ?1 AND p.url < ?2 AND p.shingles IS NOT NULL AND p.digest IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM learning l WHERE l.page_id = p.id)
             ORDER BY p.id LIMIT ?3",
        )?;
        let mut adopted: Vec<(i64, Vec<u64>, Vec<u8>, i64)> = Vec::new();
        for prefix in &prefixes {
            let mut end = prefix.clone();
            let last = end.pop().expect("a prefix ends with a separator");
            end.push(char::from(last as u8 + 1));
            let mut rows = stmt.query(params![prefix, end, LEARN_UNTIL as i64])?;
            while let Some(row) = rows.next()? {
                let url: String = row.get(1)?;
                if site_of(&url, config.scope).as_deref() == Some(site) {
                    let id: i64 = row.get(0)?;
                    let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
                    let shingles = self.shingles.decode(id, blob, row.get(5)?, || StoredText::of(row, 6)?.text(id))?;
                    adopted.push((id, shingles, row.get(3)?, row.get(4)?));
                }
            }
        }
        adopted.sort_unstable_by_key(|a| a.0);
        adopted.truncate(LEARN_UNTIL);
        let mut insert = tx.prepare_cached(
            "INSERT OR REPLACE INTO learning (page_id, site, shingles, context, digest, simhash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (id, shingles, digest, simhash) in adopted {
            insert.execute(params![id, site, encode_u64s(&shingles), encode_u64s(&[]), digest, simhash])?;
        }
        Ok(())
    }
}

/// The pages of `site` kept for learning, by id.
fn learning_pages(tx: &Transaction, site: &str) -> Result<Vec<(i64, Unsuppressed)>> {
    let mut stmt = tx.prepare_cached(
        "SELECT page_id, shingles, context, digest, simhash FROM learning WHERE site = ?1 ORDER BY page_id",
    )?;
    let mut rows = stmt.query([site])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let shingles = decode_u64s(row.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?, id)?;
        let extra = decode_u64s(row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?, id)?;
        let digest: Vec<u8> = row.get(3)?;
        let digest: [u8; 16] = digest
            .try_into()
            .map_err(|_| crate::Error::Corrupt { page_id: id, reason: "learning digest is not 16 bytes".into() })?;
        let context = if extra.is_empty() { Vec::new() } else { union(&shingles, &extra) };
        out.push((
            id,
            Unsuppressed { shingles, context, digest, simhash: row.get::<_, i64>(4)? as u64, template: None },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_learned_at_the_minimum_then_at_powers_of_two_until_the_cap() {
        let config = TemplateConfig::default();
        let points: Vec<usize> = (1..=1000).filter(|&n| learning_point(n, &config)).collect();
        assert_eq!(points, [3, 4, 8, 16, 32, 64, 128]);
        let five = TemplateConfig { min_pages: 5, ..TemplateConfig::default() };
        assert_eq!((1..=20).filter(|&n| learning_point(n, &five)).collect::<Vec<_>>(), [5, 8, 16]);
    }

    #[test]
    fn the_context_is_stored_without_the_shingles_and_read_back_whole() {
        let (shingles, context) = (vec![2, 5, 9], vec![1, 2, 5, 7, 9]);
        let extra = beyond(&context, &shingles);
        assert_eq!(extra, [1, 7]);
        assert_eq!(union(&shingles, &extra), context);
    }
}
