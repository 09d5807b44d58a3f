//! Planning a corpus: which sources lend templates and contents, and every
//! page's kind, content, template and random stream.

use std::collections::{BTreeMap, HashMap};

use super::{Content, Corpus, CorpusConfig, CorpusError, Kind, Page, SkipReason, Skipped, Source, count_words, words};
use crate::synth::Rng;

/// When contents must be split to make enough of them, pieces keep at least
/// this many words.
const MIN_PIECE_WORDS: usize = 100;

/// Plans the corpus: templates, contents, and every page's kind, content,
/// template and random stream.
pub(super) fn plan(config: CorpusConfig, sources: Vec<Source>, skipped: Vec<Skipped>) -> Result<Corpus, CorpusError> {
    let u = sources.len();
    if u < 2 {
        return Err(CorpusError::TooFewSources { usable: u });
    }
    let n = config.pages;
    let mut rng = Rng(config.seed);
    let mut order: Vec<usize> = (0..u).collect();
    rng.shuffle(&mut order);
    let t = ((n as f64 / config.pages_per_template).round() as usize).clamp(2, u);
    let templates: Vec<usize> = order[..t].to_vec();
    let share = |s: f64| (s * n as f64).round() as usize;
    let s = config.shares;
    let (mirrors, syndicated, revisions, siblings, thin) =
        (share(s.mirror), share(s.syndicated), share(s.revision), share(s.template_sibling), share(s.thin));
    let originals = n - (mirrors + syndicated + revisions + siblings + thin);

    // Text for thin pages and appended paragraphs comes from sources whose
    // text is no content, so it is found nowhere else in the corpus.
    let pool_need = thin * 40 + revisions * 80;
    let words_of = |ids: &[usize]| ids.iter().map(|&i| sources[i].words).sum::<usize>();
    let (content_ids, pool_ids): (Vec<usize>, Vec<usize>) =
        if originals <= u && words_of(&order[originals..]) >= pool_need {
            (order[..originals].to_vec(), order[originals..].to_vec())
        } else {
            let mut rest = order.clone();
            let mut pool = Vec::new();
            while words_of(&pool) < pool_need {
                pool.push(rest.pop().ok_or(CorpusError::NotEnoughText { pages: n })?);
            }
            pool.reverse();
            (rest, pool)
        };
    let mut pool = Pool::new(pool_ids.iter().flat_map(|&i| sources[i].paragraphs.iter()));
    let pieces = split_contents(&sources, &content_ids, originals);
    if pieces.len() < originals {
        return Err(CorpusError::NotEnoughText { pages: n });
    }

    let mut load = vec![0usize; t];
    let own_template: HashMap<usize, usize> = templates.iter().enumerate().map(|(ti, &si)| (si, ti)).collect();
    let mut contents = Vec::with_capacity(originals);
    let mut pages = Vec::with_capacity(n);
    for (source, part, parts, paragraphs) in pieces {
        let home = match own_template.get(&source) {
            Some(&ti) if part == 0 => ti,
            _ => lighter(&load, None, &mut rng),
        };
        load[home] += 1;
        let c = contents.len();
        contents.push(Content { source, part, parts, paragraphs, home });
        pages.push(Page {
            id: String::new(),
            cluster: format!("c{c:05}"),
            kind: Kind::Original,
            template: home,
            content: Some(c),
            text: None,
            rng: rng.next(),
        });
    }
    for (kind, count) in [
        (Kind::Mirror, mirrors),
        (Kind::Revision, revisions),
        (Kind::Syndicated, syndicated),
        (Kind::TemplateSibling, siblings),
    ] {
        for _ in 0..count {
            let c = rng.below(contents.len());
            let home = contents[c].home;
            let template = match kind {
                Kind::Mirror | Kind::Revision => home,
                _ => lighter(&load, Some(home), &mut rng),
            };
            load[template] += 1;
            // A third of the revisions append a paragraph of new text.
            let text = if kind == Kind::Revision && rng.below(3) == 0 {
                let words: usize = contents[c].paragraphs.iter().map(|p| p.split_whitespace().count()).sum();
                let len = ((words as f64 * (0.04 + 0.08 * rng.unit())).round() as usize).clamp(8, 80);
                Some(pool.take(len).ok_or(CorpusError::NotEnoughText { pages: n })?)
            } else {
                None
            };
            pages.push(Page {
                id: String::new(),
                cluster: format!("c{c:05}"),
                kind,
                template,
                content: Some(c),
                text,
                rng: rng.next(),
            });
        }
    }
    // Thin pages come in groups of 2-5 per template, templates in turn.
    let mut cycle: Vec<usize> = (0..t).collect();
    rng.shuffle(&mut cycle);
    let (mut left, mut next, mut k) = (thin, 0, 0);
    while left > 0 {
        let template = cycle[next % t];
        next += 1;
        let group = (2 + rng.below(4)).min(left);
        for _ in 0..group {
            let len = 10 + rng.below(31);
            let text = pool.take(len).ok_or(CorpusError::NotEnoughText { pages: n })?;
            pages.push(Page {
                id: String::new(),
                cluster: format!("t{k:05}"),
                kind: Kind::Thin,
                template,
                content: None,
                text: Some(text),
                rng: rng.next(),
            });
            k += 1;
        }
        left -= group;
    }
    // Ids in a shuffled order, so neither a page's number nor its place in
    // a folder tells its kind.
    let mut numbers: Vec<usize> = (0..pages.len()).collect();
    rng.shuffle(&mut numbers);
    for (p, number) in pages.iter_mut().zip(numbers) {
        p.id = match config.flat {
            true => format!("pages/p{number:05}.html"),
            false => format!("pages/s{:04}/p{number:05}.html", p.template),
        };
    }
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Corpus { config, sources, skipped, templates, contents, pages })
}

/// Hashed lowercased word 5-grams of a text, sorted and distinct.
fn shingles(text: &str) -> Vec<u64> {
    let w: Vec<String> = words(text).collect();
    let mut out: Vec<u64> =
        w.windows(5.min(w.len()).max(1)).map(|g| xxhash_rust::xxh3::xxh3_64(g.join(" ").as_bytes())).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// For each text in order, the earlier kept text it shares half of either's
/// word 5-grams with (then it is not kept), or `None`.
fn near_duplicates_of<'a>(texts: impl Iterator<Item = &'a [String]>) -> Vec<Option<usize>> {
    let mut owner: HashMap<u64, usize> = HashMap::new();
    let mut sizes: HashMap<usize, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, text) in texts.enumerate() {
        let own = shingles(&text.join("\n"));
        let mut shared: BTreeMap<usize, usize> = BTreeMap::new();
        for h in &own {
            if let Some(&k) = owner.get(h) {
                *shared.entry(k).or_insert(0) += 1;
            }
        }
        let dup = shared.iter().find(|&(k, &n)| 2 * n >= own.len().min(sizes[k])).map(|(&k, _)| k);
        if dup.is_none() {
            for h in &own {
                owner.entry(*h).or_insert(i);
            }
            sizes.insert(i, own.len());
        }
        out.push(dup);
    }
    out
}

/// Keeps the first of sources whose ground truths share half of either's
/// word 5-grams; the others are skipped.
pub(super) fn drop_near_duplicates(sources: Vec<Source>, skipped: &mut Vec<Skipped>) -> Vec<Source> {
    let dups = near_duplicates_of(sources.iter().map(|s| s.paragraphs.as_slice()));
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let mut kept = Vec::new();
    for (source, dup) in sources.into_iter().zip(dups) {
        match dup {
            Some(k) => skipped
                .push(Skipped { source: source.name, reason: SkipReason::NearDuplicate { of: names[k].clone() } }),
            None => kept.push(source),
        }
    }
    kept
}

/// The less loaded of two random templates other than `except`.
fn lighter(load: &[usize], except: Option<usize>, rng: &mut Rng) -> usize {
    let mut draw = || loop {
        let t = rng.below(load.len());
        if Some(t) != except || load.len() < 2 {
            return t;
        }
    };
    let (a, b) = (draw(), draw());
    if load[b] < load[a] { b } else { a }
}

/// Words handed out once each, for thin pages and appended paragraphs; a
/// window that repeats a 5-gram already handed out (texts repeat passages)
/// is passed over.
struct Pool {
    words: Vec<String>,
    next: usize,
    seen: std::collections::HashSet<u64>,
}

impl Pool {
    fn new<'a>(paragraphs: impl Iterator<Item = &'a String>) -> Pool {
        let words = paragraphs
            .flat_map(|p| p.split_whitespace())
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .map(str::to_string)
            .collect();
        Pool { words, next: 0, seen: Default::default() }
    }

    fn take(&mut self, n: usize) -> Option<String> {
        loop {
            let text = self.words.get(self.next..self.next + n)?.join(" ");
            self.next += n;
            let own = shingles(&text);
            if own.iter().all(|h| !self.seen.contains(h)) {
                self.seen.extend(own);
                return Some(text);
            }
        }
    }
}

/// `(source, part, parts, paragraphs)` for `want` contents: the sources'
/// texts whole while there are enough, else the longest pieces halved at a
/// paragraph boundary until there are (and 5% more, as pieces that repeat
/// an earlier piece are dropped).
fn split_contents(sources: &[Source], ids: &[usize], want: usize) -> Vec<(usize, usize, usize, Vec<String>)> {
    if ids.len() >= want {
        return ids[..want].iter().map(|&i| (i, 0, 1, sources[i].paragraphs.clone())).collect();
    }
    let mut pieces: Vec<(usize, Vec<String>, usize)> =
        ids.iter().map(|&i| (i, sources[i].paragraphs.clone(), sources[i].words)).collect();
    // A few spare pieces: pieces of one text that repeat each other (pages
    // that repeat a block) are dropped below.
    let spare = want + want / 20;
    while pieces.len() < spare {
        let Some((i, _)) = pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.2 >= 2 * MIN_PIECE_WORDS)
            .max_by(|a, b| a.1.2.cmp(&b.1.2).then(b.0.cmp(&a.0)))
        else {
            break;
        };
        let (source, paragraphs, words) = pieces[i].clone();
        let (a, b) = halve(&paragraphs, words);
        let (wa, wb) = (count_words(&a), count_words(&b));
        if wa < MIN_PIECE_WORDS || wb < MIN_PIECE_WORDS {
            // Unsplittable at a good place: keep it whole, out of the way.
            pieces[i].2 = 0;
            continue;
        }
        pieces[i] = (source, a, wa);
        pieces.insert(i + 1, (source, b, wb));
    }
    let dups = near_duplicates_of(pieces.iter().map(|p| p.1.as_slice()));
    let mut pieces: Vec<_> = pieces.into_iter().zip(dups).filter(|(_, d)| d.is_none()).map(|(p, _)| p).collect();
    pieces.truncate(want);
    let mut parts: HashMap<usize, usize> = HashMap::new();
    for p in &pieces {
        *parts.entry(p.0).or_insert(0) += 1;
    }
    let mut seen: HashMap<usize, usize> = HashMap::new();
    pieces
        .into_iter()
        .map(|(s, p, _)| {
            let part = seen.entry(s).or_insert(0);
            *part += 1;
            (s, *part - 1, parts[&s], p)
        })
        .collect()
}

/// Two halves of a text: at the paragraph boundary nearest the middle, or
/// a single paragraph cut at its middle word.
pub(super) fn halve(paragraphs: &[String], words: usize) -> (Vec<String>, Vec<String>) {
    if paragraphs.len() < 2 {
        let w: Vec<&str> = paragraphs.first().map(|p| p.split_whitespace().collect()).unwrap_or_default();
        let mid = w.len() / 2;
        return (vec![w[..mid].join(" ")], vec![w[mid..].join(" ")]);
    }
    let (mut best, mut best_gap, mut run) = (1, usize::MAX, 0);
    for (i, p) in paragraphs.iter().enumerate().take(paragraphs.len() - 1) {
        run += p.split_whitespace().count();
        let gap = run.abs_diff(words / 2);
        if gap < best_gap {
            (best, best_gap) = (i + 1, gap);
        }
    }
    (paragraphs[..best].to_vec(), paragraphs[best..].to_vec())
}
