//! What a check answers: the matches the index held, as Python objects.

use pyo3::prelude::*;

use webdup::crawler::Checked;
use webdup::dedup::{IDENTICAL, NEAR, SAME_TEXT};
use webdup::store::{CheckResult as StoreCheck, Match as StoreMatch};

/// An indexed page like the one checked, with its exact overlap.
#[pyclass(frozen, get_all, skip_from_py_object, module = "webdup")]
#[derive(Clone)]
pub(crate) struct Match {
    /// The page's row in the index: ids grow as pages are stored, so the
    /// smaller of two was stored first.
    pub(crate) id: i64,
    pub(crate) url: String,
    pub(crate) crawl: String,
    pub(crate) final_url: Option<String>,
    pub(crate) title: Option<String>,
    /// Exact Jaccard of the two shingle sets.
    pub(crate) jaccard: f64,
    /// Share of the checked page's shingles found in this page.
    pub(crate) containment: f64,
    /// Share of this page's shingles found in the checked page.
    pub(crate) contained: f64,
}

#[pymethods]
impl Match {
    fn __repr__(&self) -> String {
        format!("Match(url={:?}, crawl={:?}, jaccard={:.6})", self.url, self.crawl, self.jaccard)
    }
}

impl From<&StoreMatch> for Match {
    fn from(m: &StoreMatch) -> Match {
        Match {
            id: m.id,
            url: m.url.clone(),
            crawl: m.crawl.clone(),
            final_url: m.final_url.clone(),
            title: m.title.clone(),
            jaccard: m.jaccard,
            containment: m.containment,
            contained: m.contained,
        }
    }
}

/// What the index held like a page: identical pages (the same decoded
/// page), pages of the same text (same normalized text, other pages) and
/// near ones (exact Jaccard at least the index threshold, most similar
/// first). After an insert, `id` is the page's row.
#[pyclass(frozen, get_all, module = "webdup")]
pub(crate) struct CheckResult {
    pub(crate) url: String,
    pub(crate) identical: Vec<Match>,
    pub(crate) same_text: Vec<Match>,
    pub(crate) near: Vec<Match>,
    /// LSH candidates looked at before exact verification.
    pub(crate) candidates: usize,
    pub(crate) id: Option<i64>,
    pub(crate) crawl: Option<String>,
    /// `"learned"` or `"not yet learned"`: whether the page's site template
    /// was learned when it was checked (until it is, pages of the site are
    /// matched conservatively); None when the index suppresses none.
    pub(crate) template: Option<&'static str>,
    /// The page has no text of its own beyond its site's template as the
    /// index learned it: it is never seen on that text.
    pub(crate) template_only: bool,
    /// The page's HTML was rendered in Chromium before it was checked
    /// (`Index(render=...)`).
    pub(crate) rendered: bool,
}

#[pymethods]
impl CheckResult {
    /// True when the content was seen before, exactly or nearly.
    #[getter]
    fn seen(&self) -> bool {
        self.best().is_some()
    }

    /// True when it was not.
    #[getter(new)]
    pub(crate) fn is_new(&self) -> bool {
        !self.seen()
    }

    /// The closest match: the first identical page, else the first of the
    /// same text, else the nearest page.
    #[getter]
    pub(crate) fn best(&self) -> Option<Match> {
        self.identical.first().or(self.same_text.first()).or(self.near.first()).cloned()
    }

    /// What the closest match is: `identical`, `same-text` or `near`
    /// (`None` when nothing was).
    #[getter]
    fn kind(&self) -> Option<&'static str> {
        [(IDENTICAL, &self.identical), (SAME_TEXT, &self.same_text), (NEAR, &self.near)]
            .into_iter()
            .find_map(|(k, ms)| (!ms.is_empty()).then_some(k))
    }

    fn __bool__(&self) -> bool {
        self.seen()
    }

    fn __repr__(&self) -> String {
        format!(
            "CheckResult(url={:?}, seen={}, identical={}, same_text={}, near={}, id={})",
            self.url,
            if self.seen() { "True" } else { "False" },
            self.identical.len(),
            self.same_text.len(),
            self.near.len(),
            self.id.map_or_else(|| "None".to_string(), |id| id.to_string())
        )
    }
}

impl CheckResult {
    pub(crate) fn of(url: &str, r: &StoreCheck, id: Option<i64>, crawl: Option<String>) -> CheckResult {
        CheckResult {
            url: url.to_string(),
            identical: r.identical.iter().map(Match::from).collect(),
            same_text: r.same_text.iter().map(Match::from).collect(),
            near: r.near.iter().map(Match::from).collect(),
            candidates: r.candidates,
            id,
            crawl,
            template: r.template.map(|t| t.as_str()),
            template_only: r.template_only,
            rendered: false,
        }
    }

    /// The same result, saying whether the page was rendered.
    pub(crate) fn rendered(self, rendered: bool) -> CheckResult {
        CheckResult { rendered, ..self }
    }

    pub(crate) fn checked(url: &str, c: &Checked) -> CheckResult {
        CheckResult::of(url, &c.result, Some(c.id), Some(c.crawl.clone()))
    }
}
