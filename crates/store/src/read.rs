//! What an index answers: checks of a fingerprint against the stored pages
//! (verified on their shingles), the pages and crawls it holds, its
//! statistics and its own consistency check.

use std::collections::{BTreeSet, HashSet};

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use webdup_core::candidates::LshParams;
use webdup_core::candidates::lsh;
use webdup_core::dedup::{IDENTICAL, NEAR, SAME_TEXT};
use webdup_core::fingerprint::Fingerprint;
use webdup_core::page::{Crawl, PageRecord};
use webdup_core::template::Templates;
use webdup_core::verify::{MIN_SHARED_SHINGLES, Overlap};

use crate::codec::{decode_u32s, decode_u64s};
use crate::index::{BatchKeys, lock, pending_candidates};
use crate::page::{PAGE_COLUMN_COUNT, PAGE_COLUMNS, stored_page};
use crate::stored::StoredText;
use crate::{Error, Index, Result, Settings, bands};

/// An indexed page similar to the one checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// The page's row id. Ids grow as pages are stored, so of two matches
    /// the one with the smaller id was stored first.
    pub id: i64,
    pub url: String,
    pub crawl: String,
    pub final_url: Option<String>,
    pub title: Option<String>,
    /// Exact Jaccard of the shingle sets.
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub jaccard: f64,
    /// Share of the checked page's shingles found in this page.
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub containment: f64,
    /// Share of this page's shingles found in the checked page.
    #[serde(serialize_with = "webdup_core::verify::serialize_round6")]
    pub contained: f64,
}

impl Match {
    fn new(
        id: i64,
        url: String,
        crawl: String,
        final_url: Option<String>,
        title: Option<String>,
        o: &Overlap,
    ) -> Match {
        Match {
            id,
            url,
            crawl,
            final_url,
            title,
            jaccard: o.jaccard(),
            containment: o.containment_a_in_b(),
            contained: o.containment_b_in_a(),
        }
    }
}

/// The answer of [`Index::check`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckResult {
    /// Pages that are the same decoded page (same bytes), in insertion order.
    pub identical: Vec<Match>,
    /// Pages with the same normalized text (same MD5) not known to be the
    /// same page, in insertion order; never a page with fewer than
    /// [`MIN_SHARED_SHINGLES`] shingles, which only an identical page
    /// matches.
    pub same_text: Vec<Match>,
    /// Other pages with Jaccard at least the index threshold (its cross-site
    /// threshold for a page of another site), most similar first (ties: the
    /// page stored first).
    pub near: Vec<Match>,
    /// LSH candidates looked at (before exact verification).
    pub candidates: usize,
    /// Whether the checked page's site template was learned when it was
    /// checked; `None` when the index suppresses no templates or the page
    /// has no site. Until it is learned, pages of the site are matched
    /// conservatively (see [`TemplateState::NotYetLearned`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<TemplateState>,
    /// The page has no text of its own beyond its site's template (as the
    /// index learned it): it is never seen on that text, and nothing is
    /// looked up.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub template_only: bool,
}

/// Whether a page's site template was learned when the page was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TemplateState {
    /// Learned: pages of the site are compared without it.
    #[serde(rename = "learned")]
    Learned,
    /// Not yet learned (the site has too few pages in the index): the
    /// text two of its pages share may be the site's template, so a match
    /// between them must hold even if half of what they share were
    /// template ([`cold_jaccard`]). An exact copy (same text) is still one.
    #[serde(rename = "not yet learned")]
    NotYetLearned,
}

impl TemplateState {
    /// The words reports print: `learned`, `not yet learned`.
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateState::Learned => "learned",
            TemplateState::NotYetLearned => "not yet learned",
        }
    }
}

/// The share of what two pages of one site share that a check assumes may
/// be the site's template until the template is learned.
///
/// A template is what recurs on the site's pages, so with one or two other
/// pages stored nothing tells a shared article from a shared blurb; the
/// learner itself (`template::learn_site`) needs three copy groups. The
/// pair is therefore held to its threshold with that much of the shared
/// text set aside. At the same-site threshold 0.8, two thin pages sharing a
/// blurb are then told apart unless the blurb is over eight times the text
/// they do not share (Jaccard 0.8 needed it four times), while a light
/// revision of an article (a few edits in hundreds of words) is still
/// found. Once the template is learned the site's pages are fingerprinted
/// again without it (the `learn` module) and compared as usual.
pub const COLD_TEMPLATE_SHARE: f64 = 0.5;

/// Jaccard of two pages with [`COLD_TEMPLATE_SHARE`] of their shared
/// shingles set aside: `(1 - share)·s / ((1 - share)·s + d)` for `s`
/// shared and `d` differing shingles.
pub fn cold_jaccard(o: &Overlap) -> f64 {
    let kept = (1.0 - COLD_TEMPLATE_SHARE) * o.shared as f64;
    let differing = (o.len_a + o.len_b - 2 * o.shared) as f64;
    if kept + differing == 0.0 { 1.0 } else { kept / (kept + differing) }
}

impl CheckResult {
    /// True when the content has been seen before, exactly or nearly.
    pub fn seen(&self) -> bool {
        self.best().is_some()
    }

    /// The closest match: the first identical page, else the first of the
    /// same text, else the nearest page.
    pub fn best(&self) -> Option<&Match> {
        self.identical.first().or(self.same_text.first()).or(self.near.first())
    }

    /// Every match with its kind (`identical`, `same-text`, `near`), in
    /// that order.
    pub fn matches(&self) -> impl Iterator<Item = (&'static str, &Match)> {
        let kind = |k: &'static str| move |m| (k, m);
        self.identical
            .iter()
            .map(kind(IDENTICAL))
            .chain(self.same_text.iter().map(kind(SAME_TEXT)))
            .chain(self.near.iter().map(kind(NEAR)))
    }
}

/// Pages of one crawl.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrawlStats {
    pub crawl: String,
    pub pages: u64,
    pub with_content: u64,
    /// Seconds since the Unix epoch; ISO 8601 (UTC) in JSON.
    #[serde(serialize_with = "webdup_core::page::serialize_iso8601")]
    pub first_fetched_at: i64,
    #[serde(serialize_with = "webdup_core::page::serialize_iso8601")]
    pub last_fetched_at: i64,
}

/// The answer of [`Index::stats`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub path: String,
    pub schema_version: i64,
    pub settings: Settings,
    pub pages: u64,
    pub with_content: u64,
    pub distinct_urls: u64,
    /// LSH band keys stored (bands per page with content): rows of the
    /// band table plus the keys of pages pending a merge into it.
    pub band_rows: u64,
    /// Pages whose band keys wait to be merged into the band table (see
    /// [`Index::insert_batch`]).
    pub pending_pages: u64,
    /// The database file's size (its pages; not a WAL file beside it).
    pub file_bytes: u64,
    /// `file_bytes` divided by `pages`, rounded down (0 for an empty index).
    pub bytes_per_page: u64,
    pub crawls: Vec<CrawlStats>,
}

impl Index {
    /// The newest template of every site (see [`Index::store_templates`]).
    pub fn templates(&self) -> Result<Templates> {
        self.with_reader(|conn| {
            let mut out = Templates::default();
            let mut stmt = conn.prepare("SELECT rowid, site, shingles FROM templates ORDER BY rowid")?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let blob: Vec<u8> = row.get(2)?;
                out.insert(row.get::<_, String>(1)?, decode_u64s(&blob, row.get(0)?)?);
            }
            Ok(out)
        })
    }

    /// The template a page at `id` (a URL or a path) is fingerprinted with
    /// when it comes alone: the newest one learned for its site, if any, and
    /// none when the index was built without template suppression. Apply it
    /// with `webdup::engine::Fingerprinter::finish_alone`.
    pub fn template_for(&self, id: &str) -> Result<Option<Vec<u64>>> {
        Ok(self.site_template(id)?.map(|t| t.shingles))
    }

    /// Every crawl's page for `url`, oldest row first.
    pub fn get(&self, url: &str) -> Result<Vec<PageRecord>> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {PAGE_COLUMNS} FROM pages WHERE url = ?1 ORDER BY id"))?;
            let rows = stmt.query_map([url], stored_page)?.collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Pages with content similar to `fp`: the same text (MD5), or Jaccard
    /// at least the index threshold ([`Settings::threshold_between`]: its
    /// cross-site threshold when `fp.id` and the page are of different
    /// sites). Candidates come from the LSH band table; each is verified on
    /// the stored shingles.
    pub fn check(&self, fp: &Fingerprint) -> Result<CheckResult> {
        self.fits(fp)?;
        self.with_reader(|conn| {
            // One snapshot for the pending keys and the band table: a merge
            // committed between the two reads would hide its pages from both.
            let conn = &*conn.unchecked_transaction()?;
            let keys: Vec<u32> = self.band_keys(&fp.minhash).collect();
            let pending = {
                let mut shared = lock(&self.pending);
                let own = shared.refresh(conn, self.params.bands)?;
                pending_candidates(&keys, own.as_ref().unwrap_or(&shared), &BatchKeys::default())
            };
            self.lookup(conn, fp, &keys, pending)
        })
    }

    /// The check itself, on `conn`'s view: exact copies by digest, then the
    /// LSH candidates (`candidates`, from the pending keys, and the band
    /// table's for `keys`, `fp`'s band keys), each verified on its stored
    /// shingles.
    pub(crate) fn lookup(
        &self,
        conn: &Connection,
        fp: &Fingerprint,
        keys: &[u32],
        mut candidates: BTreeSet<i64>,
    ) -> Result<CheckResult> {
        let template = self.template_state(conn, &fp.id)?;
        if fp.template_only {
            return Ok(CheckResult { template_only: true, template, ..CheckResult::default() });
        }
        let mut result = CheckResult { template, ..CheckResult::default() };
        let exact_ids = exact_matches(conn, fp, &mut result)?;
        for (band, &key) in keys.iter().enumerate() {
            candidates.extend(bands::stored_pages(conn, band, key)?);
        }
        result.candidates = candidates.len();
        let candidates = candidates.into_iter().filter(|id| !exact_ids.contains(id));
        let settings = &self.settings;
        // Until the site's template is learned, a pair of its pages is held
        // to its threshold with part of what they share set aside.
        let cold_site = match result.template {
            Some(TemplateState::NotYetLearned) => self.site_of(&fp.id).map(|(site, _)| site),
            _ => None,
        };
        let keep = |url: &str, o: &Overlap| {
            let threshold = settings.threshold_between(&fp.id, url) - 1e-12;
            let cold = cold_site.as_ref().is_some_and(|site| self.site_of(url).is_some_and(|(s, _)| &s == site));
            o.enough_text() && o.jaccard() >= threshold && (!cold || cold_jaccard(o) >= threshold)
        };
        result.near = self.verify_candidates(conn, fp, candidates, keep, |m| m.jaccard)?;
        Ok(result)
    }

    /// Pages that mostly contain `fp`'s text or are mostly contained in it:
    /// the same text (MD5), or at least `threshold` of the smaller page's
    /// shingles found in the larger (an excerpt, a trimmed copy, the page
    /// with comments added), most contained first.
    ///
    /// The band table is made for the index's Jaccard threshold, which a
    /// 150-word excerpt of a 1,000-word article (Jaccard 0.15) never
    /// reaches; so this reads every stored signature and bands each pair
    /// for its sizes, as LSH Ensemble does ([`lsh::containment_banding`]),
    /// then verifies candidates on the stored shingles. It costs a scan of
    /// the signatures (about 0.5 KB a page), not an index lookup.
    pub fn check_containment(&self, fp: &Fingerprint, threshold: f64) -> Result<CheckResult> {
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(Error::Fingerprint {
                id: fp.id.clone(),
                reason: format!("containment threshold must be in (0, 1], not {threshold}"),
            });
        }
        if fp.template_only {
            return Ok(CheckResult { template_only: true, ..CheckResult::default() });
        }
        self.with_reader(|conn| {
            let conn = &*conn.unchecked_transaction()?;
            let mut result = CheckResult { template: self.template_state(conn, &fp.id)?, ..CheckResult::default() };
            let exact_ids = exact_matches(conn, fp, &mut result)?;
            let permutations = fp.minhash.len();
            let mut bandings: std::collections::HashMap<usize, Option<LshParams>> = Default::default();
            let mut candidates = Vec::new();
            {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, shingle_count, minhash FROM pages WHERE minhash IS NOT NULL ORDER BY id",
                )?;
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    let (id, count, blob): (i64, i64, Vec<u8>) = (r.get(0)?, r.get(1)?, r.get(2)?);
                    if exact_ids.contains(&id) {
                        continue;
                    }
                    let class = lsh::size_class(usize::try_from(count).unwrap_or(0));
                    let banding = *bandings
                        .entry(class)
                        .or_insert_with(|| lsh::containment_banding(fp.shingles.len(), class, threshold, permutations));
                    let Some(banding) = banding else { continue };
                    if lsh::share_a_band(&fp.minhash, &decode_u32s(&blob, id)?, banding) {
                        candidates.push(id);
                    }
                }
            }
            result.candidates = candidates.len();
            result.near = self.verify_candidates(
                conn,
                fp,
                candidates,
                |_, o| o.enough_text() && o.containment_of_smaller() >= threshold,
                |m| m.containment.max(m.contained),
            )?;
            Ok(result)
        })
    }

    /// Counts, per crawl and in total.
    pub fn stats(&self) -> Result<Stats> {
        self.with_reader(|conn| {
            let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64);
            let pages = count("SELECT count(*) FROM pages")?;
            let with_content = count("SELECT count(*) FROM pages WHERE digest IS NOT NULL")?;
            let distinct_urls = count("SELECT count(DISTINCT url) FROM pages")?;
            let pending_pages = count("SELECT count(*) FROM bands_pending")?;
            // Every page with content has its keys in `bands` or pending
            // (`verify` checks it): counting the buckets' entries would read
            // the whole table.
            let band_rows = count("SELECT count(*) FROM pages WHERE minhash IS NOT NULL")? * self.params.bands as u64;
            let page_size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
            let page_count: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
            let schema_version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            let mut stmt = conn.prepare(
                "SELECT crawl, count(*), count(digest), min(fetched_at), max(fetched_at)
                 FROM pages GROUP BY crawl ORDER BY min(id)",
            )?;
            let crawls = stmt
                .query_map([], |r| {
                    Ok(CrawlStats {
                        crawl: r.get(0)?,
                        pages: r.get::<_, i64>(1)? as u64,
                        with_content: r.get::<_, i64>(2)? as u64,
                        first_fetched_at: r.get(3)?,
                        last_fetched_at: r.get(4)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Stats {
                path: self.path.display().to_string(),
                schema_version,
                settings: self.settings.clone(),
                pages,
                with_content,
                distinct_urls,
                band_rows,
                pending_pages,
                file_bytes: (page_size * page_count) as u64,
                bytes_per_page: ((page_size * page_count) as u64).checked_div(pages).unwrap_or(0),
                crawls,
            })
        })
    }

    /// The crawl `name` read back whole, for whole-crawl analyses such as
    /// lost-and-found (webdup-seo): [`Index::crawl_pages`] under its name.
    pub fn crawl(&self, name: &str) -> Result<Crawl> {
        Ok(Crawl { name: name.into(), pages: self.crawl_pages(name)? })
    }

    /// Every page of `crawl` with its shingles (empty without content), in
    /// insertion order.
    pub fn crawl_pages(&self, crawl: &str) -> Result<Vec<(PageRecord, Vec<u64>)>> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare(&format!(
                    "SELECT {PAGE_COLUMNS}, shingles, shingles_check, text, text_deflate FROM pages WHERE crawl = ?1 ORDER BY id"
                ))?;
            let mut rows = stmt.query([crawl])?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let page = stored_page(row)?;
                let blob: Option<Vec<u8>> = row.get(PAGE_COLUMN_COUNT)?;
                let shingles = match blob {
                    Some(b) => self.shingles.decode(page.id, &b, row.get(PAGE_COLUMN_COUNT + 1)?, || {
                        StoredText::of(row, PAGE_COLUMN_COUNT + 2)?.text(page.id)
                    })?,
                    None => Vec::new(),
                };
                out.push((page, shingles));
            }
            Ok(out)
        })
    }

    /// `name` when the index has a crawl of that name; without a name, the
    /// newest crawl: the one whose pages were fetched last (of crawls fetched
    /// in the same second, the one written last).
    pub fn choose_crawl(&self, name: Option<&str>) -> Result<String> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare("SELECT crawl FROM pages GROUP BY crawl ORDER BY max(fetched_at) DESC, max(id) DESC")?;
            let crawls = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?;
            let path = self.path.display().to_string();
            match (name, crawls.first()) {
                (_, None) => Err(Error::Empty { path }),
                (None, Some(newest)) => Ok(newest.clone()),
                (Some(n), Some(_)) if crawls.iter().any(|c| c == n) => Ok(n.to_string()),
                (Some(n), Some(_)) => Err(Error::UnknownCrawl { path, crawl: n.to_string(), known: crawls }),
            }
        })
    }

    /// Every page of `crawl` in insertion order, each with its fingerprint
    /// rebuilt from the stored parts (`None` for pages without content): the
    /// shingles, MD5, MinHash, SimHash and word count as stored; the record
    /// holds the main text when it was stored (schema version 3 on). Nothing
    /// is fetched or extracted again. Fingerprint ids are the pages' URLs
    /// and keys their positions in the crawl. The first row that cannot be
    /// decoded fails the whole; [`Index::crawl_rows`] reads past it.
    pub fn crawl_fingerprints(&self, crawl: &str) -> Result<Vec<(PageRecord, Option<Fingerprint>)>> {
        self.crawl_rows(crawl)?.into_iter().map(|r| Ok((r.page, r.fingerprint?))).collect()
    }

    /// Runs SQLite's integrity check and webdup's own: every page with
    /// content has a shingle blob of the recorded length and its band keys
    /// in exactly one place, all its rows in the band table or one pending
    /// row with the keys of its signature; no band row or pending row points
    /// at a missing page. Returns the problems found (empty when consistent).
    pub fn verify(&self) -> Result<Vec<String>> {
        self.with_reader(|conn| {
            let conn = &*conn.unchecked_transaction()?;
            let mut problems = Vec::new();
            let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
            if ok != "ok" {
                problems.push(format!("integrity_check: {ok}"));
            }
            let mut pending = std::collections::HashMap::new();
            {
                let mut stmt = conn.prepare("SELECT page_id, keys FROM bands_pending")?;
                let mut rows = stmt.query([])?;
                while let Some(row) = rows.next()? {
                    let (id, keys): (i64, Vec<u8>) = (row.get(0)?, row.get(1)?);
                    if pending.insert(id, keys).is_some() {
                        problems.push(format!("page {id}: pending band keys twice"));
                    }
                }
            }
            let mut expected_rows = 0u64;
            let mut stmt = conn.prepare(
                "SELECT id, minhash, shingle_count, shingles, shingles_check, text, text_deflate FROM pages",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let id: i64 = row.get(0)?;
                let minhash: Option<Vec<u8>> = row.get(1)?;
                let count: i64 = row.get(2)?;
                let Some(blob) = minhash else { continue };
                let shingles: Option<Vec<u8>> = row.get(3)?;
                let set = shingles
                    .ok_or(Error::Corrupt { page_id: id, reason: "no shingles".into() })
                    .and_then(|b| self.shingles.decode(id, &b, row.get(4)?, || StoredText::of(row, 5)?.text(id)));
                match set {
                    Ok(set) if set.len() as i64 == count => {}
                    Ok(set) => problems.push(format!("page {id}: {} shingles stored for {count}", set.len())),
                    Err(e) => problems.push(format!("page {id}: {e}")),
                }
                let sig = decode_u32s(&blob, id)?;
                let keys: Vec<u32> = self.band_keys(&sig).collect();
                if let Some(stored) = pending.remove(&id) {
                    if stored != bands::encode_keys(keys.iter().copied()) {
                        problems.push(format!("page {id}: pending band keys are not its signature's"));
                    }
                    continue;
                }
                for (band, &key) in keys.iter().enumerate() {
                    if !bands::stored_pages(conn, band, key)?.contains(&id) {
                        problems.push(format!("page {id}: band {band} row missing"));
                    }
                    expected_rows += 1;
                }
            }
            let mut orphans: Vec<i64> = pending.into_keys().collect();
            orphans.sort_unstable();
            problems
                .extend(orphans.into_iter().map(|id| format!("pending band keys for page {id}, which has no content")));
            let band_rows = bands::stored_count(conn)?;
            if band_rows != expected_rows {
                problems.push(format!("{band_rows} band rows, {expected_rows} expected (orphans)"));
            }
            Ok(problems)
        })
    }
}

impl Index {
    /// The candidate pages whose overlap with `fp`, on their stored shingles,
    /// passes `keep`; highest `score` first, then the page stored first. A candidate without
    /// its page row (a band row cannot outlive its page, but a check must not
    /// fail on one) or without shingles is skipped.
    fn verify_candidates(
        &self,
        conn: &Connection,
        fp: &Fingerprint,
        candidates: impl IntoIterator<Item = i64>,
        keep: impl Fn(&str, &Overlap) -> bool,
        score: impl Fn(&Match) -> f64,
    ) -> Result<Vec<Match>> {
        let mut stmt = conn.prepare_cached(
            "SELECT url, crawl, final_url, title, shingles, shingles_check, text, text_deflate FROM pages WHERE id = ?1",
        )?;
        let mut near = Vec::new();
        for id in candidates {
            let row = stmt
                .query_row([id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, Option<Vec<u8>>>(4)?,
                        r.get::<_, Option<i64>>(5)?,
                        StoredText::of(r, 6)?,
                    ))
                })
                .optional()?;
            let Some((url, crawl, final_url, title, Some(blob), check, text)) = row else { continue };
            let shingles = self.shingles.decode(id, &blob, check, || text.text(id))?;
            let o = Overlap::of(&fp.shingles, &shingles);
            if keep(&url, &o) {
                near.push(Match::new(id, url, crawl, final_url, title, &o));
            }
        }
        near.sort_by(|a, b| score(b).total_cmp(&score(a)).then_with(|| a.id.cmp(&b.id)));
        Ok(near)
    }
}

/// Pages stored with `fp`'s text, into `result.identical` when they are
/// the same decoded page, else into `result.same_text` when `fp` has enough
/// text to judge ([`MIN_SHARED_SHINGLES`]); returns their ids.
fn exact_matches(conn: &Connection, fp: &Fingerprint, result: &mut CheckResult) -> Result<HashSet<i64>> {
    let mut exact_ids = HashSet::new();
    let mut stmt = conn.prepare_cached(
        "SELECT id, url, crawl, final_url, title, page_digest FROM pages WHERE digest = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([fp.digest.to_vec()], |r| {
        let page: Option<Vec<u8>> = r.get(5)?;
        Ok((
            r.get::<_, i64>(0)?,
            fp.page_digest.is_some_and(|d| page.as_deref() == Some(d.as_slice())),
            Match {
                id: r.get(0)?,
                url: r.get(1)?,
                crawl: r.get(2)?,
                final_url: r.get(3)?,
                title: r.get(4)?,
                jaccard: 1.0,
                containment: 1.0,
                contained: 1.0,
            },
        ))
    })?;
    let enough_text = fp.shingles.len() >= MIN_SHARED_SHINGLES;
    for row in rows {
        let (id, identical, m) = row?;
        if identical {
            result.identical.push(m);
        } else if enough_text {
            result.same_text.push(m);
        } else {
            continue;
        }
        exact_ids.insert(id);
    }
    Ok(exact_ids)
}
