//! The audit's page rows: each page's record becomes its row (the records
//! are taken, and their memory holds the rows), then each row's closest
//! page and count of near duplicates are filled from the clustering.

use webdup_core::dedup::{self, Clustering};
use webdup_core::fingerprint::{Fingerprint, position_of};
use webdup_core::sets::{Sets, Sketches};
use webdup_core::units::Units;

use super::canonical::{self, Answers, StatusIndex};
use super::{AuditPage, AuditSettings, Content, ErrorRow, NEAR_MISS_FLOOR, PageRow, PageSource, round};

/// The page rows of an audit, before matches and clusters are filled in.
pub(super) struct Rows {
    pub pages: Vec<PageRow>,
    pub errors: Vec<ErrorRow>,
    /// The page row of each of the corpus's documents.
    pub page_of_doc: Vec<usize>,
    /// What the report reads of each page after the build.
    pub sources: Vec<PageSource>,
    /// The status of every URL the pages and their redirects answered.
    pub statuses: StatusIndex,
}

/// A page row with only its URL, input and status known.
pub(crate) fn blank_row(page: usize, url: String, input: Option<String>, status: Option<u16>) -> PageRow {
    PageRow {
        page,
        url,
        input,
        status,
        indexability: "indexable",
        title: None,
        description: None,
        h1: None,
        canonical: None,
        canonical_source: None,
        noindex: false,
        noindex_source: None,
        words: None,
        thin: false,
        thin_reason: None,
        closest_page: None,
        closest_url: None,
        closest_similarity: None,
        near_duplicates: 0,
        cluster: None,
        inlinks: None,
        in_sitemap: None,
        error: None,
        rendered: false,
    }
}

/// The row of an input that redirected to a page the run has under another
/// input: its own URL and the redirect's status, not analysed, never a
/// duplicate of its target.
fn redirect_row(page: usize, url: String, status: Option<u16>) -> PageRow {
    PageRow { indexability: "redirect", ..blank_row(page, url, None, status) }
}

/// Marks the row as failed and returns its entry for `errors`.
fn error_row(row: &mut PageRow, kind: &str, message: &str) -> ErrorRow {
    row.error = Some(format!("{kind}: {message}"));
    ErrorRow { page: row.page, url: row.url.clone(), status: row.status, kind: kind.into(), message: message.into() }
}

/// The row's `indexability`, from its error, status, robots and canonical.
fn indexability(row: &PageRow) -> &'static str {
    if row.error.is_some() {
        if row.status.is_some_and(|s| s != 200) { "non_200" } else { "error" }
    } else if row.noindex {
        "noindex"
    } else if row.canonical.as_deref().is_some_and(|c| !canonical::same_url(c, &row.url)) {
        "canonicalised"
    } else {
        "indexable"
    }
}

/// The page rows, in the order of `pages`, each made of its page's record
/// (see [`super::Audit::build`]). What is read after the build (the
/// fingerprint's key, a local file's path, the text) and the redirects' statuses are
/// taken first; then each record becomes its row in the records' own
/// memory (a row is smaller), so a million pages never hold both.
pub(super) fn rows_of(mut pages: Vec<AuditPage>, docs: &[Fingerprint], thin_words: usize) -> Rows {
    let mut statuses = Answers::default();
    let sources: Vec<PageSource> = pages
        .iter_mut()
        .map(|p| {
            for hop in &p.record.redirects {
                statuses.answered(&hop.url, Some(hop.status));
            }
            let r = &mut p.record;
            let file = (!webdup_core::doc::is_url(&r.url)).then(|| r.url.clone());
            let doc = match p.content {
                Content::Doc(key) => Some(key),
                _ => None,
            };
            PageSource { doc, file, text: r.text.take() }
        })
        .collect();
    let mut page_of_doc = vec![0usize; docs.len()];
    let mut errors = Vec::new();
    let rows: Vec<PageRow> = pages
        .into_iter()
        .enumerate()
        .map(|(n, p)| row_of(n, p, docs, thin_words, &mut page_of_doc, &mut errors))
        .collect();
    // A page's final answer, unless a redirect said otherwise of its URL.
    for row in &rows {
        statuses.first_answer(&row.url, row.status);
    }
    Rows { pages: rows, errors, page_of_doc, sources, statuses: statuses.index() }
}

/// Page `n`'s row, made of its record: its final URL, metadata and what
/// its content gave (its fingerprint's position in `page_of_doc`, or its
/// failure in `errors`).
fn row_of(
    n: usize,
    page: AuditPage,
    docs: &[Fingerprint],
    thin_words: usize,
    page_of_doc: &mut [usize],
    errors: &mut Vec<ErrorRow>,
) -> PageRow {
    let AuditPage { record: r, content } = page;
    let analysed = match content {
        Content::Redirect => return redirect_row(n, r.url, r.redirects.first().map(|h| h.status)),
        Content::Doc(key) => {
            position_of(docs, key).ok_or_else(|| ("internal".to_string(), format!("no fingerprint with key {key}")))
        }
        Content::Failed { kind, message } => Err((kind, message)),
    };
    let url = r.final_url.unwrap_or_else(|| r.url.clone());
    let input = (url != r.url).then_some(r.url);
    let mut row = blank_row(n, url, input, r.status);
    let meta = r.meta;
    row.title = meta.title;
    row.description = meta.description;
    row.h1 = meta.h1;
    row.canonical = meta.canonical.filter(|c| canonical::usable_canonical(c));
    row.canonical_source = row.canonical.as_ref().and(meta.canonical_source);
    row.noindex = meta.noindex == Some(true);
    row.noindex_source = meta.noindex_source;
    match analysed {
        Ok(i) => {
            page_of_doc[i] = n;
            row.words = Some(docs[i].word_count);
            row.thin = docs[i].word_count < thin_words || docs[i].template_only;
            row.thin_reason = docs[i].template_only.then_some("template only");
        }
        Err((kind, message)) => errors.push(error_row(&mut row, &kind, &message)),
    }
    row.indexability = indexability(&row);
    row
}

/// Fills each page's closest match and near-duplicate count from the
/// confirmed pairs. Exact copies only link to the first copy of their text
/// and only first copies take part in the near search, so counts go through
/// the groups of copies: a page is near every other copy of its text, and
/// near every copy of each text its text is near.
pub(super) fn fill_matches<S: Sketches + ?Sized>(
    units: &impl Units,
    pages: &mut [PageRow],
    docs: &[Fingerprint],
    sets: &S,
    clustering: &Clustering,
    page_of_doc: &[usize],
    settings: &AuditSettings,
) -> std::result::Result<(), S::Error> {
    // Copies as the clustering groups them: the same text when there is
    // enough of it, else the same page. Every list below is a flat table
    // of `u32`s (a million pages' lists of lists were a quarter of the
    // audit's peak).
    let group = first_copies(docs, sets);
    let copies = Lists::of(docs.len(), || group.iter().enumerate().map(|(i, &g)| (g, i as u32)));
    let mut halves = Vec::with_capacity(clustering.edges.len() * 2);
    for e in &clustering.edges {
        let (Some(a), Some(b)) = (position_of(docs, e.a), position_of(docs, e.b)) else {
            continue;
        };
        let (a, b) = (group[a], group[b]);
        if a != b {
            let j = e.overlap.jaccard();
            halves.push((a, (b, j)));
            halves.push((b, (a, j)));
        }
    }
    let near = Lists::of(docs.len(), || halves.iter().copied());
    drop(halves);
    let mut closest: Vec<Option<(u32, f64)>> = Vec::with_capacity(docs.len());
    for i in 0..docs.len() {
        let g = group[i];
        let members = copies.get(g);
        let others = members.len() - 1;
        let count = others + near.get(g).iter().map(|&(h, _)| copies.get(h).len()).sum::<usize>();
        pages[page_of_doc[i]].near_duplicates = count;
        closest.push(if others > 0 {
            members.iter().find(|&&c| c as usize != i).map(|&c| (c, 1.0))
        } else {
            near.get(g).iter().copied().max_by(|x, y| x.1.total_cmp(&y.1).then(y.0.cmp(&x.0)))
        });
    }
    // A page with no duplicate still shows its nearest page from
    // NEAR_MISS_FLOOR up: a copy with a paragraph trimmed (Jaccard 0.79) is
    // worth a look. Only those pages' candidate pairs are verified.
    let wanted: Vec<bool> = closest.iter().map(Option::is_none).collect();
    if wanted.contains(&true) {
        let floor = NEAR_MISS_FLOOR.min(settings.matching.threshold);
        let found = dedup::nearest_in(units, docs, sets, &settings.matching, &settings.fingerprint, floor, &wanted)?;
        for (c, n) in closest.iter_mut().zip(found) {
            if c.is_none() {
                *c = n.and_then(|n| Some((position_of(docs, n.key)? as u32, n.jaccard)));
            }
        }
    }
    for (i, c) in closest.into_iter().enumerate() {
        if let Some((c, j)) = c {
            let p = &mut pages[page_of_doc[i]];
            p.closest_page = Some(page_of_doc[c as usize]);
            p.closest_similarity = Some(round(j));
        }
    }
    for i in 0..pages.len() {
        if let Some(c) = pages[i].closest_page {
            pages[i].closest_url = Some(pages[c].url.clone());
        }
    }
    Ok(())
}

/// Each document's group of copies: the first document of its text (or,
/// too thin to judge by text, of its page), itself when it has none or is
/// only its site's template (no one's copy). Found by sorting what copies
/// share rather than hashing it: at a million pages a hash table of it is
/// twice its size.
fn first_copies<S: Sets + ?Sized>(docs: &[Fingerprint], sets: &S) -> Vec<u32> {
    let mut shared: Vec<(dedup::CopyOf, u32)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.template_only)
        .filter_map(|(i, d)| {
            let i = i as u32;
            dedup::CopyOf::new(d.digest, sets.len(i), d.page_digest).map(|c| (c, i))
        })
        .collect();
    // By what is shared, then by document: each run starts with its first.
    shared.sort_unstable();
    let mut group: Vec<u32> = (0..docs.len() as u32).collect();
    for run in shared.chunk_by(|a, b| a.0 == b.0) {
        for &(_, i) in run {
            group[i as usize] = run[0].1;
        }
    }
    group
}

/// Lists of values by owner `0..owners`, in one table (compressed rows):
/// each owner's values in the order given.
struct Lists<T> {
    /// Owner `o`'s values are `values[starts[o]..starts[o + 1]]`.
    starts: Vec<u32>,
    values: Vec<T>,
}

impl<T: Copy + Default> Lists<T> {
    /// The lists of `owners` owners from the (owner, value) pairs that
    /// `pairs` gives (twice: once to count, once to place).
    fn of<I: Iterator<Item = (u32, T)>>(owners: usize, pairs: impl Fn() -> I) -> Lists<T> {
        let mut starts = vec![0u32; owners + 1];
        for (o, _) in pairs() {
            starts[o as usize + 1] += 1;
        }
        for o in 0..owners {
            starts[o + 1] += starts[o];
        }
        let mut next = starts.clone();
        let mut values = vec![T::default(); starts[owners] as usize];
        for (o, v) in pairs() {
            values[next[o as usize] as usize] = v;
            next[o as usize] += 1;
        }
        Lists { starts, values }
    }

    /// Owner `o`'s values.
    fn get(&self, o: u32) -> &[T] {
        &self.values[self.starts[o as usize] as usize..self.starts[o as usize + 1] as usize]
    }
}
