//! Measuring extractors against pages with human ground truth.
//!
//! Two data-set layouts are read, told apart by their files:
//!
//! * **AEB** (Article Extraction Benchmark): `ground-truth.json` mapping ids
//!   to `{articleBody, url}`, and `html/<id>.html.gz`;
//! * **WCXB**: `ground-truth/<id>.json` with `url`,
//!   `_internal.page_type.primary` and `ground_truth.main_content`, and
//!   `html/<id>.html.gz`.
//!
//! The main score is AEB's "F1 over 4-gram shingles" ([`shingle_match`],
//! [`Scores`]); WCXB's bag-of-words F1 ([`bag_of_words_f1`]) is reported
//! beside it. Throughput is pages per second of extraction time on one core.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use webdup_core::progress::Progress;
use webdup_web::extract::words::{bag_f1, tokens};
use webdup_web::extract::{EXTRACT_STACK, ExtractConfig, ExtractorKind, extract_with_url, warm_up};

/// The AEB metric's shingle length.
pub const NGRAM: usize = 4;

/// Counts of every run of `n` consecutive tokens; fewer than `n` tokens
/// give one shorter run (none for no tokens).
fn ngram_counts<'a>(tokens: &'a [&'a str], n: usize) -> HashMap<&'a [&'a str], u32> {
    let mut counts = HashMap::new();
    if tokens.is_empty() {
        return counts;
    }
    if tokens.len() < n {
        counts.insert(tokens, 1);
        return counts;
    }
    for w in tokens.windows(n) {
        *counts.entry(w).or_insert(0) += 1;
    }
    counts
}

/// One page's shingle overlap, as shares of `tp + fp + fn` (all zero when
/// both texts are empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ShingleMatch {
    pub tp: f64,
    pub fp: f64,
    #[serde(rename = "fn")]
    pub fn_: f64,
}

impl ShingleMatch {
    /// 1 when nothing is wrong, 0 when nothing was predicted right.
    pub fn precision(&self) -> f64 {
        if self.fp == 0.0 && self.fn_ == 0.0 {
            1.0
        } else if self.tp == 0.0 && self.fp == 0.0 {
            0.0
        } else {
            self.tp / (self.tp + self.fp)
        }
    }

    /// 1 when nothing is wrong, 0 when nothing true was found.
    pub fn recall(&self) -> f64 {
        if self.fp == 0.0 && self.fn_ == 0.0 {
            1.0
        } else if self.tp == 0.0 && self.fn_ == 0.0 {
            0.0
        } else {
            self.tp / (self.tp + self.fn_)
        }
    }
}

/// AEB's per-page comparison of 4-gram shingle counts.
pub fn shingle_match(truth: &str, predicted: &str) -> ShingleMatch {
    let (t, p) = (tokens(truth), tokens(predicted));
    let (t, p) = (ngram_counts(&t, NGRAM), ngram_counts(&p, NGRAM));
    let (mut tp, mut fp, mut fn_) = (0u64, 0u64, 0u64);
    for (k, &tc) in &t {
        let pc = p.get(k).copied().unwrap_or(0);
        tp += u64::from(tc.min(pc));
        fn_ += u64::from(tc.saturating_sub(pc));
    }
    for (k, &pc) in &p {
        fp += u64::from(pc.saturating_sub(t.get(k).copied().unwrap_or(0)));
    }
    let sum = (tp + fp + fn_) as f64;
    if sum == 0.0 {
        return ShingleMatch::default();
    }
    ShingleMatch { tp: tp as f64 / sum, fp: fp as f64 / sum, fn_: fn_ as f64 / sum }
}

/// WCXB's per-page bag-of-words F1: lowercased word multisets compared
/// (1 when both are empty, 0 when only one is).
pub fn bag_of_words_f1(truth: &str, predicted: &str) -> f64 {
    bag_f1(truth, predicted)
}

/// Scores over a set of pages.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Scores {
    pub pages: usize,
    /// Mean per-page precision over pages with `tp + fp > 0`.
    pub precision: f64,
    /// Mean per-page recall over pages with `tp + fn > 0`.
    pub recall: f64,
    /// `2PR / (P + R)`.
    pub f1: f64,
    /// Mean per-page bag-of-words F1.
    pub bow_f1: f64,
}

impl Scores {
    /// Aggregates per-page results the AEB way.
    pub fn of<'a>(pages: impl IntoIterator<Item = &'a PageResult>) -> Scores {
        let (mut n, mut ps, mut pn, mut rs, mut rn, mut bow) = (0usize, 0.0, 0usize, 0.0, 0usize, 0.0);
        for p in pages {
            n += 1;
            bow += p.bow_f1;
            let m = p.shingles;
            if m.tp + m.fp > 0.0 {
                ps += m.precision();
                pn += 1;
            }
            if m.tp + m.fn_ > 0.0 {
                rs += m.recall();
                rn += 1;
            }
        }
        let mean = |s: f64, n: usize| if n == 0 { 0.0 } else { s / n as f64 };
        let (precision, recall) = (mean(ps, pn), mean(rs, rn));
        let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
        Scores { pages: n, precision, recall, f1, bow_f1: mean(bow, n) }
    }
}

/// Which layout a data set has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetKind {
    Aeb,
    Wcxb,
}

/// One page with its ground truth.
#[derive(Debug, Clone)]
pub struct Sample {
    pub id: String,
    pub url: Option<String>,
    /// The page type, where the data set has one.
    pub page_type: Option<String>,
    pub html: String,
    pub truth: String,
}

/// Why a data set could not be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{0}: neither an AEB (ground-truth.json) nor a WCXB (ground-truth/) data set")]
    UnknownLayout(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    #[error("no extractor to evaluate")]
    NoExtractor,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> EvalError + '_ {
    move |source| EvalError::Io { path: path.to_path_buf(), source }
}

fn read_json(path: &Path) -> Result<serde_json::Value, EvalError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    serde_json::from_slice(&bytes).map_err(|e| EvalError::Format { path: path.to_path_buf(), message: e.to_string() })
}

/// Reads `html/<id>.html.gz` (or an uncompressed `html/<id>.html`).
fn read_html(dir: &Path, id: &str) -> Result<String, EvalError> {
    let gz = dir.join("html").join(format!("{id}.html.gz"));
    let bytes = if gz.exists() {
        let file = std::fs::File::open(&gz).map_err(io_err(&gz))?;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(file).read_to_end(&mut out).map_err(io_err(&gz))?;
        out
    } else {
        let plain = dir.join("html").join(format!("{id}.html"));
        std::fs::read(&plain).map_err(io_err(&plain))?
    };
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Detects a data set's layout.
pub fn detect(dir: &Path) -> Result<DatasetKind, EvalError> {
    if dir.join("ground-truth.json").is_file() {
        Ok(DatasetKind::Aeb)
    } else if dir.join("ground-truth").is_dir() {
        Ok(DatasetKind::Wcxb)
    } else {
        Err(EvalError::UnknownLayout(dir.to_path_buf()))
    }
}

/// A data set read from disk.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub kind: DatasetKind,
    pub samples: Vec<Sample>,
    /// Ids of pages without a ground-truth text (WCXB has a few), left out.
    pub skipped: Vec<String>,
}

/// Loads every page of a data set, in id order; `limit` keeps the first ones.
pub fn load(dir: &Path, limit: Option<usize>) -> Result<Dataset, EvalError> {
    let kind = detect(dir)?;
    let limit = limit.unwrap_or(usize::MAX);
    let str_at = |v: &serde_json::Value, ptr: &str| v.pointer(ptr).and_then(|s| s.as_str()).map(str::to_string);
    let mut samples = Vec::new();
    let mut skipped = Vec::new();
    match kind {
        DatasetKind::Aeb => {
            let path = dir.join("ground-truth.json");
            let gt = read_json(&path)?;
            let entries = gt
                .as_object()
                .ok_or_else(|| EvalError::Format { path: path.clone(), message: "not an object".into() })?;
            let mut ids: Vec<&String> = entries.keys().collect();
            ids.sort();
            for id in ids.into_iter().take(limit) {
                let v = &entries[id];
                let truth = str_at(v, "/articleBody").ok_or_else(|| EvalError::Format {
                    path: path.clone(),
                    message: format!("{id}: no articleBody"),
                })?;
                samples.push(Sample {
                    id: id.clone(),
                    url: str_at(v, "/url"),
                    page_type: None,
                    html: read_html(dir, id)?,
                    truth,
                });
            }
        }
        DatasetKind::Wcxb => {
            let gt_dir = dir.join("ground-truth");
            let mut files: Vec<PathBuf> = std::fs::read_dir(&gt_dir)
                .map_err(io_err(&gt_dir))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            for path in files.into_iter().take(limit) {
                let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let v = read_json(&path)?;
                let Some(truth) = str_at(&v, "/ground_truth/main_content") else {
                    skipped.push(id);
                    continue;
                };
                samples.push(Sample {
                    url: str_at(&v, "/url"),
                    page_type: str_at(&v, "/_internal/page_type/primary"),
                    html: read_html(dir, &id)?,
                    id,
                    truth,
                });
            }
        }
    }
    Ok(Dataset { kind, samples, skipped })
}

/// One page scored for one extractor.
#[derive(Debug, Clone, Serialize)]
pub struct PageResult {
    pub id: String,
    pub page_type: Option<String>,
    /// The extractor whose output was used, after any fallback; `error` when
    /// extraction refused the page (scored as empty).
    pub used: &'static str,
    pub shingles: ShingleMatch,
    pub precision: f64,
    pub recall: f64,
    pub bow_f1: f64,
    /// CPU seconds spent extracting (wall seconds where CPU time is unknown).
    pub seconds: f64,
}

/// The results of one extractor over a data set.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractorReport {
    pub extractor: ExtractorKind,
    pub overall: Scores,
    /// Per page type (WCXB), by name.
    pub by_type: BTreeMap<String, Scores>,
    /// Pages per second of extraction CPU time on one core.
    pub pages_per_second: f64,
    /// How often each extractor's output was used (fallbacks show here).
    pub used: BTreeMap<&'static str, usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<PageResult>,
}

/// The answer of [`evaluate`].
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub dataset: DatasetKind,
    pub dir: PathBuf,
    pub pages: usize,
    /// Pages left out for lack of ground truth.
    pub skipped: Vec<String>,
    pub extractors: Vec<ExtractorReport>,
}

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Evaluated in this order; the first is the default extractor.
    pub extractors: Vec<ExtractorKind>,
    /// Only the first pages of the data set (in id order).
    pub limit: Option<usize>,
    /// Keep every page's result in the report.
    pub per_page: bool,
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions { extractors: ExtractorKind::ALL.to_vec(), limit: None, per_page: false, threads: None }
    }
}

/// Scores each extractor on the data set in `dir` (layout auto-detected).
pub fn evaluate(dir: &Path, options: &EvalOptions, progress: &dyn Progress) -> Result<EvalReport, EvalError> {
    if options.extractors.is_empty() {
        return Err(EvalError::NoExtractor);
    }
    let Dataset { kind: dataset, samples, skipped } = load(dir, options.limit)?;
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(EXTRACT_STACK);
    if let Some(n) = options.threads {
        pool = pool.num_threads(n.max(1));
    }
    let pool = pool.build().map_err(|e| EvalError::Io { path: dir.to_path_buf(), source: std::io::Error::other(e) })?;
    // One-time set-up is not per-page work: keep it out of pages/s.
    warm_up();
    let mut reports = Vec::new();
    for &kind in &options.extractors {
        let config = ExtractConfig::new(kind);
        progress.start(kind.as_str(), samples.len() as u64);
        let pages: Vec<PageResult> = pool.install(|| {
            samples
                .par_iter()
                .map(|s| {
                    let r = score_page(s, &config);
                    progress.advance(1);
                    r
                })
                .collect()
        });
        progress.finish();
        reports.push(report_for(kind, pages, options.per_page));
    }
    Ok(EvalReport { dataset, dir: dir.to_path_buf(), pages: samples.len(), skipped, extractors: reports })
}

/// Extracts one page and scores it.
pub fn score_page(s: &Sample, config: &ExtractConfig) -> PageResult {
    let (start, cpu_start) = (Instant::now(), thread_cpu_seconds());
    let extracted = extract_with_url(&s.html, s.url.as_deref(), config);
    let seconds = match (cpu_start, thread_cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    let (text, used) = match &extracted {
        Ok(e) => (e.text.as_str(), e.extractor),
        Err(_) => ("", "error"),
    };
    let shingles = shingle_match(&s.truth, text);
    PageResult {
        id: s.id.clone(),
        page_type: s.page_type.clone(),
        used,
        shingles,
        precision: shingles.precision(),
        recall: shingles.recall(),
        bow_f1: bag_of_words_f1(&s.truth, text),
        seconds,
    }
}

/// CPU seconds used so far by the calling thread, where the platform tells:
/// throughput is then measured per core even on a busy machine.
fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9);
        }
    }
    None
}

fn report_for(extractor: ExtractorKind, pages: Vec<PageResult>, keep: bool) -> ExtractorReport {
    let mut types: BTreeMap<String, Vec<&PageResult>> = BTreeMap::new();
    let mut used = BTreeMap::new();
    for p in &pages {
        if let Some(t) = &p.page_type {
            types.entry(t.clone()).or_default().push(p);
        }
        *used.entry(p.used).or_insert(0) += 1;
    }
    let by_type = types.into_iter().map(|(t, ps)| (t, Scores::of(ps))).collect();
    let seconds: f64 = pages.iter().map(|p| p.seconds).sum();
    let pages_per_second = if seconds > 0.0 { pages.len() as f64 / seconds } else { 0.0 };
    ExtractorReport {
        extractor,
        overall: Scores::of(&pages),
        by_type,
        pages_per_second,
        used,
        pages: if keep { pages } else { Vec::new() },
    }
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.dataset {
            DatasetKind::Aeb => "AEB",
            DatasetKind::Wcxb => "WCXB",
        };
        writeln!(
            f,
            "{name} data set {} ({} pages), 4-gram shingle F1 and bag-of-words F1",
            self.dir.display(),
            self.pages
        )?;
        if !self.skipped.is_empty() {
            writeln!(f, "left out for lack of ground truth: {}", self.skipped.join(", "))?;
        }
        writeln!(
            f,
            "{:<12} {:<14} {:>6} {:>7} {:>7} {:>7} {:>7} {:>9}",
            "extractor", "pages", "n", "P", "R", "F1", "BoW-F1", "pages/s"
        )?;
        for r in &self.extractors {
            let row = |f: &mut fmt::Formatter<'_>, label: &str, s: &Scores, rate: String| {
                writeln!(
                    f,
                    "{:<12} {:<14} {:>6} {:>7.4} {:>7.4} {:>7.4} {:>7.4} {:>9}",
                    r.extractor.as_str(),
                    label,
                    s.pages,
                    s.precision,
                    s.recall,
                    s.f1,
                    s.bow_f1,
                    rate
                )
            };
            row(f, "all", &r.overall, format!("{:.1}", r.pages_per_second))?;
            for (t, s) in &r.by_type {
                row(f, t, s, String::new())?;
            }
            let used: Vec<String> = r.used.iter().map(|(k, n)| format!("{k} {n}")).collect();
            writeln!(f, "{:<12} output used: {}", "", used.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_and_empty_predictions() {
        let m = shingle_match("one two three four five", "one two three four five");
        assert_eq!((m.precision(), m.recall()), (1.0, 1.0));
        let m = shingle_match("one two three four five", "");
        assert_eq!((m.tp, m.fp, m.precision(), m.recall()), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(shingle_match("", ""), ShingleMatch::default());
    }

    #[test]
    fn counts_repeated_shingles_and_keeps_case() {
        // truth: 2 shingles (a b c d, b c d e); prediction repeats the first and adds one.
        let m = shingle_match("a b c d e", "a b c d. a b c d");
        // pred shingles: abcd, bcda, cdab, dabc, abcd → tp 1 (abcd), fp 4, fn 1 (bcde)
        assert!(
            (m.tp - 1.0 / 6.0).abs() < 1e-12 && (m.fp - 4.0 / 6.0).abs() < 1e-12 && (m.fn_ - 1.0 / 6.0).abs() < 1e-12
        );
        assert!((m.precision() - 0.2).abs() < 1e-12 && (m.recall() - 0.5).abs() < 1e-12);
        let m = shingle_match("The Cat sat down", "the cat sat down");
        assert_eq!(m.tp, 0.0, "case is kept");
    }

    #[test]
    fn short_texts_give_one_shorter_run() {
        let m = shingle_match("hello world", "hello, world!");
        assert_eq!((m.precision(), m.recall()), (1.0, 1.0));
        assert_eq!(shingle_match("hello world", "hello there").tp, 0.0);
    }

    #[test]
    fn aggregate_skips_pages_without_predictions_for_precision() {
        let page = |truth: &str, pred: &str| {
            let m = shingle_match(truth, pred);
            PageResult {
                id: String::new(),
                page_type: None,
                used: "x",
                shingles: m,
                precision: m.precision(),
                recall: m.recall(),
                bow_f1: bag_of_words_f1(truth, pred),
                seconds: 0.0,
            }
        };
        let pages = [page("a b c d e", "a b c d e"), page("a b c d e", "")];
        let s = Scores::of(&pages);
        assert_eq!((s.precision, s.recall), (1.0, 0.5));
        assert!((s.f1 - 2.0 / 3.0).abs() < 1e-12 && (s.bow_f1 - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bag_of_words_ignores_order_and_case() {
        assert_eq!(bag_of_words_f1("b a", "A B"), 1.0);
        assert!((bag_of_words_f1("a b c d", "a b") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(bag_of_words_f1("", ""), 1.0);
        assert_eq!(bag_of_words_f1("a", ""), 0.0);
    }

    #[test]
    fn unknown_layouts_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(load(dir.path(), None), Err(EvalError::UnknownLayout(_))));
    }
}
