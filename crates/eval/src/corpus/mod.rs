//! Near-duplicate evaluation corpora built from real pages whose main text
//! is known (issue 13).
//!
//! Each page of the extraction benchmarks in `../shared/data` (AEB and the
//! WCXB development split, read from disk, never copied into the repository)
//! gives two things: a *content*, its ground-truth main text, and a
//! *template*, the page without the element that holds that text. The
//! element is the one whose words cover at least [`MIN_COVER`] of the
//! ground truth's words (as a bag) with the best F1, so the smallest element
//! that holds the text; pages without one are skipped and reported.
//!
//! Recombining contents and templates gives pages whose duplicate structure
//! is known, labelled with their content (the true cluster) and their kind:
//!
//! - `original`: a content in its own site's template (or, for contents
//!   without a site of their own, in some site's template);
//! - `mirror`: the original's bytes at another path of the same site;
//! - `syndicated`: the content with up to 5% of its words substituted or
//!   deleted (in runs of 1-3 words) or swapped, a byline or an "originally appeared on" line, its
//!   links unwrapped, inside another site's template;
//! - `revision`: on the same site, a paragraph appended or removed (10 words or
//!   more, at most 12% of the words) or 2-4% of the words changed in phrases of 1-6 words, and a few of the
//!   template's link texts swapped for other ones (related links change);
//! - `template_sibling`: the unchanged content inside another site's
//!   template. It belongs to its content's cluster and must not merge with
//!   the other pages of the template it sits in: a hard negative for them;
//! - `thin`: 10 to 40 words of text found nowhere else in the corpus inside
//!   a template, several per template; each is a cluster of its own.
//!
//! Inserted text becomes `<p>` paragraphs; a page's `<title>` and first `<h1>`
//! outside the content carry its content's title; the source page's
//! description, Open Graph and Twitter metadata, canonical link and JSON-LD
//! are dropped from the template (they name the source page's own article).
//!
//! Everything is drawn from one SplitMix64 stream seeded by
//! [`CorpusConfig::seed`]: the same data and config give byte-identical
//! pages, truth and manifest.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ego_tree::NodeId;
use rayon::prelude::*;
use scraper::{Html, Node};

use crate::extract::eval::{self, EvalError, Sample};
use crate::sketch::minhash::splitmix64;
use crate::synth::Rng;

/// Least share of the ground truth's words the content element must hold.
pub const MIN_COVER: f64 = 0.8;
/// Ground truths with fewer words give no content (and no template).
pub const MIN_CONTENT_WORDS: usize = 50;
/// Words that must remain around the content element for a usable template.
pub const MIN_TEMPLATE_WORDS: usize = 20;
/// When contents must be split to make enough of them, pieces keep at least
/// this many words.
const MIN_PIECE_WORDS: usize = 100;

/// Elements whose text is never page text.
const IGNORED: &[&str] = &["head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object"];
/// Elements that cannot take `<p>` children without the parser moving them
/// (phrasing content, paragraphs, headings, table rows): never the content
/// element.
const NOT_A_CONTAINER: &[&str] = &[
    "html", "body", "p", "span", "a", "b", "i", "u", "s", "em", "strong", "font", "small", "big", "code", "pre", "h1",
    "h2", "h3", "h4", "h5", "h6", "label", "button", "q", "cite", "time", "abbr", "table", "thead", "tbody", "tfoot",
    "tr", "select", "option", "textarea", "title",
];

/// Elements a reader never sees: [`IGNORED`] tags and hidden elements (a
/// `display: none` schema.org copy of the article is not where its text
/// shows, and content put there would leave the template showing the source's
/// own article).
fn is_ignored(e: &scraper::node::Element) -> bool {
    IGNORED.contains(&e.name()) || crate::extract::hidden(e)
}

const MARK_OPEN: char = '\u{FDD0}';
const MARK_CLOSE: char = '\u{FDD1}';

/// What a page is, relative to its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Original,
    Mirror,
    Syndicated,
    Revision,
    TemplateSibling,
    Thin,
}

impl Kind {
    pub const ALL: [Kind; 6] =
        [Kind::Original, Kind::Mirror, Kind::Syndicated, Kind::Revision, Kind::TemplateSibling, Kind::Thin];

    /// The label written in the truth file.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Original => "original",
            Kind::Mirror => "mirror",
            Kind::Syndicated => "syndicated",
            Kind::Revision => "revision",
            Kind::TemplateSibling => "template_sibling",
            Kind::Thin => "thin",
        }
    }
}

/// Shares of the pages by kind; originals take what is left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    pub mirror: f64,
    pub syndicated: f64,
    pub revision: f64,
    pub template_sibling: f64,
    pub thin: f64,
}

impl Default for Shares {
    fn default() -> Self {
        Shares { mirror: 0.08, syndicated: 0.16, revision: 0.14, template_sibling: 0.07, thin: 0.20 }
    }
}

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusConfig {
    /// Pages in the corpus (exactly).
    pub pages: usize,
    /// Pages one template hosts on average: sets how many source pages lend
    /// their template (`pages / pages_per_template`, at most all of them).
    pub pages_per_template: f64,
    pub seed: u64,
    /// Read only the first pages (by id) of each data set; all when `None`.
    pub sources_per_dataset: Option<usize>,
    pub shares: Shares,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            pages: 2500,
            pages_per_template: 3.0,
            seed: 1,
            sources_per_dataset: None,
            shares: Shares::default(),
        }
    }
}

/// Why a corpus cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error(transparent)]
    Data(#[from] EvalError),
    #[error("{0}")]
    Config(String),
    #[error("only {usable} usable source pages: at least 2 are needed")]
    TooFewSources { usable: usize },
    #[error("not enough ground-truth text for {pages} pages: lower --pages")]
    NotEnoughText { pages: usize },
    #[error("{0} already exists: remove it or choose another output directory")]
    OutputExists(PathBuf),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Why a source page gives neither content nor template.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// The data set has no ground-truth text for the page (two WCXB pages).
    NoTruth,
    /// The ground truth has fewer than [`MIN_CONTENT_WORDS`] words.
    ShortTruth { words: usize },
    /// No element holds [`MIN_COVER`] of the ground truth's words.
    NotCovered { best_recall: f64 },
    /// Fewer than [`MIN_TEMPLATE_WORDS`] words remain around the content.
    NoTemplate { words: usize },
    /// Half of its ground truth's word 5-grams (or of the other's) are in an
    /// earlier source's: the data sets hold a few such pairs (product
    /// variants, re-posted articles), which would be unlabelled duplicates.
    NearDuplicate { of: String },
}

impl SkipReason {
    /// A short name for counting.
    pub fn label(&self) -> &'static str {
        match self {
            SkipReason::NoTruth => "no ground-truth text",
            SkipReason::ShortTruth { .. } => "ground truth under 50 words",
            SkipReason::NotCovered { .. } => "no element holds 80% of the ground truth's words",
            SkipReason::NoTemplate { .. } => "under 20 words of template around the content",
            SkipReason::NearDuplicate { .. } => "ground truth a near-duplicate of another source's",
        }
    }
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::NoTruth => write!(f, "no ground-truth text"),
            SkipReason::ShortTruth { words } => write!(f, "ground truth has {words} words"),
            SkipReason::NotCovered { best_recall } => {
                write!(f, "the best element holds {:.0}% of the ground truth's words", best_recall * 100.0)
            }
            SkipReason::NoTemplate { words } => write!(f, "{words} words of template around the content"),
            SkipReason::NearDuplicate { of } => write!(f, "ground truth shares half its word 5-grams with {of}'s"),
        }
    }
}

/// A source page left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub source: String,
    pub reason: SkipReason,
}

/// A page of the corpus.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its path under the output directory (`pages/sNNNN/pNNNNN.html`),
    /// which is also the id `webdup cluster pages` reports when run there.
    pub id: String,
    /// The true cluster: its content's id (`cNNNNN`), or its own (`tNNNNN`)
    /// for a thin page.
    pub cluster: String,
    pub kind: Kind,
    template: usize,
    content: Option<usize>,
    /// A thin page's text, or a revision's appended paragraph.
    text: Option<String>,
    rng: u64,
}

/// A page's template: the serialized page with holes for the content, the
/// title and the texts of its links.
#[derive(Debug, Clone)]
struct Template {
    pieces: Vec<Piece>,
    links: Vec<String>,
}

#[derive(Debug, Clone)]
enum Piece {
    Raw(String),
    Content,
    Title,
    Link(usize),
}

/// A usable source page.
#[derive(Debug, Clone)]
struct Source {
    name: String,
    host: String,
    title: String,
    paragraphs: Vec<String>,
    words: usize,
    template: Template,
    recall: f64,
    precision: f64,
}

/// One content: a source's ground truth, or a piece of it.
#[derive(Debug, Clone)]
struct Content {
    source: usize,
    part: usize,
    parts: usize,
    paragraphs: Vec<String>,
    home: usize,
}

/// A rendered page.
struct Composed {
    html: String,
    text: String,
    note: String,
}

/// A generated corpus: its plan, from which every page renders on demand.
#[derive(Debug)]
pub struct Corpus {
    config: CorpusConfig,
    sources: Vec<Source>,
    skipped: Vec<Skipped>,
    /// Template index to source index.
    templates: Vec<usize>,
    contents: Vec<Content>,
    pages: Vec<Page>,
}

/// Source pages named `aeb/<id>` or `wcxb-dev/<id>`, and the names of the
/// pages that have no ground-truth text.
pub type Samples = (Vec<(String, Sample)>, Vec<String>);

/// Reads the AEB and WCXB dev pages under `data` (`aeb/`, `wcxb-dev/`),
/// named `aeb/<id>` and `wcxb-dev/<id>`, in name order; also the names of
/// pages without a ground-truth text.
pub fn load_samples(data: &Path, per_dataset: Option<usize>) -> Result<Samples, CorpusError> {
    let (mut samples, mut missing) = (Vec::new(), Vec::new());
    for set in ["aeb", "wcxb-dev"] {
        let dataset = eval::load(&data.join(set), per_dataset)?;
        samples.extend(dataset.samples.into_iter().map(|s| (format!("{set}/{}", s.id), s)));
        missing.extend(dataset.skipped.into_iter().map(|id| format!("{set}/{id}")));
    }
    Ok((samples, missing))
}

/// Generates a corpus from the data sets under `data`.
pub fn generate(data: &Path, config: &CorpusConfig) -> Result<Corpus, CorpusError> {
    let (samples, missing) = load_samples(data, config.sources_per_dataset)?;
    let mut corpus = Corpus::from_samples(samples, config)?;
    corpus.skipped.extend(missing.into_iter().map(|source| Skipped { source, reason: SkipReason::NoTruth }));
    corpus.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    Ok(corpus)
}

impl Corpus {
    /// Generates a corpus from source pages with their ground truth.
    pub fn from_samples(samples: Vec<(String, Sample)>, config: &CorpusConfig) -> Result<Corpus, CorpusError> {
        let s = &config.shares;
        let copy_share = s.mirror + s.syndicated + s.revision + s.template_sibling + s.thin;
        if [s.mirror, s.syndicated, s.revision, s.template_sibling, s.thin].iter().any(|x| !(0.0..1.0).contains(x))
            || copy_share >= 0.9
        {
            return Err(CorpusError::Config("kind shares must be in [0, 1) and leave 10% for originals".into()));
        }
        if config.pages < 10 {
            return Err(CorpusError::Config("at least 10 pages".into()));
        }
        if config.pages_per_template.is_nan() || config.pages_per_template < 1.0 {
            return Err(CorpusError::Config("at least 1 page per template".into()));
        }
        let prepared: Vec<Result<Source, SkipReason>> =
            samples.par_iter().map(|(name, sample)| prepare(name, sample)).collect();
        let mut sources = Vec::new();
        let mut skipped = Vec::new();
        for ((name, _), p) in samples.iter().zip(prepared) {
            match p {
                Ok(s) => sources.push(s),
                Err(reason) => skipped.push(Skipped { source: name.clone(), reason }),
            }
        }
        drop(samples);
        let sources = drop_near_duplicates(sources, &mut skipped);
        skipped.sort_by(|a, b| a.source.cmp(&b.source));
        plan(config.clone(), sources, skipped)
    }

    /// The pages, in id order.
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// The source pages left out, in name order.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// How many source pages were usable.
    pub fn usable_sources(&self) -> usize {
        self.sources.len()
    }

    /// How many templates host pages.
    pub fn templates(&self) -> usize {
        self.templates.len()
    }

    /// `id<TAB>cluster<TAB>kind` lines under a header, as `webdup eval
    /// cluster` reads them.
    pub fn truth_tsv(&self) -> String {
        let mut out = String::from("id\tcluster\tkind\n");
        for p in &self.pages {
            let _ = writeln!(out, "{}\t{}\t{}", p.id, p.cluster, p.kind.name());
        }
        out
    }

    /// A page's HTML.
    pub fn render(&self, page: &Page) -> String {
        self.compose(page).html
    }

    /// The main text put into a page (paragraphs separated by blank lines):
    /// what a perfect extractor returns, for oracle runs.
    pub fn main_text(&self, page: &Page) -> String {
        self.compose(page).text
    }

    /// A page's HTML, main text and a note on how it was made.
    fn compose(&self, page: &Page) -> Composed {
        let template = &self.sources[self.templates[page.template]].template;
        let mut rng = Rng(page.rng);
        let mut swaps = BTreeMap::new();
        let mut links = true;
        let (title, paragraphs, note) = match (page.kind, page.content) {
            (Kind::Thin, _) | (_, None) => {
                let text = page.text.clone().unwrap_or_default();
                let title: Vec<&str> = text.split_whitespace().take(6).collect();
                let note = format!("{} words", text.split_whitespace().count());
                (title.join(" "), vec![text], note)
            }
            (Kind::Original | Kind::Mirror | Kind::TemplateSibling, Some(c)) => {
                (self.title(c), self.contents[c].paragraphs.clone(), String::new())
            }
            (Kind::Syndicated, Some(c)) => {
                let content = &self.contents[c];
                let rate = 0.05 * (1.0 - rng.unit());
                let (mut paragraphs, edits) = edit_words(&content.paragraphs, rate, &mut rng);
                let host = &self.sources[content.source].host;
                let byline = rng.below(3);
                if byline != 1 {
                    const FIRST: &[&str] = &["Alex", "Maria", "Jonas", "Priya", "Tom", "Lena", "Omar", "Grace"];
                    const LAST: &[&str] = &["Keller", "Okafor", "Lindqvist", "Moreau", "Nakamura", "Silva", "Novak"];
                    let name = format!("By {} {}", FIRST[rng.below(FIRST.len())], LAST[rng.below(LAST.len())]);
                    paragraphs.insert(0, name);
                }
                if byline != 0 {
                    paragraphs.push(format!("This story originally appeared on {host}."));
                }
                links = false;
                let note =
                    format!("{edits} edits ({:.1}% of the words), byline {byline}, links unwrapped", rate * 100.0);
                (self.title(c), paragraphs, note)
            }
            (Kind::Revision, Some(c)) => {
                let content = &self.contents[c];
                let total = count_words(&content.paragraphs);
                let mut paragraphs = content.paragraphs.clone();
                let mut note = String::new();
                if let Some(extra) = &page.text {
                    paragraphs.push(extra.clone());
                    note = format!("paragraph of {} words appended", extra.split_whitespace().count());
                } else if rng.below(2) == 0 && paragraphs.len() > 1 {
                    let small: Vec<usize> = (0..paragraphs.len())
                        .filter(|&i| {
                            let words = paragraphs[i].split_whitespace().count();
                            words >= 10 && words * 100 <= total * 12
                        })
                        .collect();
                    if !small.is_empty() {
                        let i = small[rng.below(small.len())];
                        let removed = paragraphs.remove(i);
                        note = format!("paragraph {i} of {} words removed", removed.split_whitespace().count());
                    }
                }
                if note.is_empty() {
                    let rate = 0.02 + 0.02 * rng.unit();
                    let (edited, runs) = rewrite_phrases(&paragraphs, rate, &mut rng);
                    paragraphs = edited;
                    note = format!("{runs} phrases rewritten ({:.1}% of the words)", rate * 100.0);
                }
                swaps = self.swap_links(page.template, &mut rng);
                let _ = write!(note, ", {} link texts swapped", swaps.len());
                (self.title(c), paragraphs, note)
            }
        };
        let body = match page.content {
            Some(c) => self.content_html(c, &paragraphs, links),
            None => paragraphs.iter().map(|p| format!("<p>{}</p>\n", escape(p))).collect(),
        };
        Composed { html: fill(template, &title, &body, &swaps), text: paragraphs.join("\n\n"), note }
    }

    /// A content's title: its source's, numbered when the source was split.
    fn title(&self, c: usize) -> String {
        let content = &self.contents[c];
        let title = &self.sources[content.source].title;
        if content.parts > 1 {
            format!("{title} (part {} of {})", content.part + 1, content.parts)
        } else {
            title.clone()
        }
    }

    /// Paragraphs as `<p>` elements; with `links`, about a third of the
    /// longer paragraphs wrap a few words in a link, at places fixed by the
    /// content and the paragraph's position.
    fn content_html(&self, c: usize, paragraphs: &[String], links: bool) -> String {
        let host = &self.sources[self.contents[c].source].host;
        let mut out = String::new();
        for (i, p) in paragraphs.iter().enumerate() {
            let words: Vec<&str> = p.split_whitespace().collect();
            let mut state = self.config.seed ^ ((c as u64) << 20) ^ i as u64;
            let h = splitmix64(&mut state);
            out.push_str("<p>");
            if links && words.len() >= 12 && h % 10 < 3 {
                let len = 2 + (h >> 8) as usize % 3;
                let at = (h >> 16) as usize % (words.len() - len);
                let slug: String = words[at..at + len]
                    .iter()
                    .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase())
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
                    .join("-");
                let _ = write!(
                    out,
                    "{} <a href=\"https://{}/{}\">{}</a> {}",
                    escape(&words[..at].join(" ")),
                    escape(host),
                    escape(&slug),
                    escape(&words[at..at + len].join(" ")),
                    escape(&words[at + len..].join(" "))
                );
            } else {
                out.push_str(&escape(p));
            }
            out.push_str("</p>\n");
        }
        out
    }

    /// Link texts of the template replaced by link texts of another
    /// template: a revision's changed "related articles".
    fn swap_links(&self, template: usize, rng: &mut Rng) -> BTreeMap<usize, String> {
        let mut swaps = BTreeMap::new();
        let own = &self.sources[self.templates[template]].template.links;
        if own.is_empty() || self.templates.len() < 2 {
            return swaps;
        }
        for _ in 0..8 {
            let d = rng.below(self.templates.len());
            let donor = &self.sources[self.templates[d]].template.links;
            if d == template || donor.is_empty() {
                continue;
            }
            let k = (1 + rng.below(5)).min(own.len());
            let mut at: Vec<usize> = (0..own.len()).collect();
            rng.shuffle(&mut at);
            for &i in &at[..k] {
                swaps.insert(i, donor[rng.below(donor.len())].clone());
            }
            break;
        }
        swaps
    }

    /// Writes `pages/`, `truth.tsv`, `manifest.tsv`, `skipped.tsv` and `README.md` under
    /// `dir`; `dir/pages` must not exist.
    pub fn write(&self, dir: &Path) -> Result<(), CorpusError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CorpusError::Io { path, source }
        };
        let pages_dir = dir.join("pages");
        if pages_dir.exists() {
            return Err(CorpusError::OutputExists(pages_dir));
        }
        for t in 0..self.templates.len() {
            let sub = pages_dir.join(format!("s{t:04}"));
            std::fs::create_dir_all(&sub).map_err(io(&sub))?;
        }
        let notes: Vec<String> = self
            .pages
            .par_iter()
            .map(|p| {
                let composed = self.compose(p);
                let path = dir.join(&p.id);
                std::fs::write(&path, composed.html).map_err(io(&path))?;
                Ok(composed.note)
            })
            .collect::<Result<_, CorpusError>>()?;
        let mut manifest = String::from("id\tcluster\tkind\ttemplate_source\tcontent_source\tnote\n");
        for (p, note) in self.pages.iter().zip(notes) {
            let content = match p.content {
                Some(c) => {
                    let c = &self.contents[c];
                    let name = &self.sources[c.source].name;
                    if c.parts > 1 { format!("{name}#{}", c.part + 1) } else { name.clone() }
                }
                None => "-".into(),
            };
            let template = &self.sources[self.templates[p.template]].name;
            let _ = writeln!(manifest, "{}\t{}\t{}\t{template}\t{content}\t{note}", p.id, p.cluster, p.kind.name());
        }
        let mut skipped = String::from("source\treason\n");
        for s in &self.skipped {
            let _ = writeln!(skipped, "{}\t{}", s.source, s.reason);
        }
        for (name, text) in [
            ("truth.tsv", self.truth_tsv()),
            ("manifest.tsv", manifest),
            ("skipped.tsv", skipped),
            ("README.md", self.readme()),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(io(&path))?;
        }
        Ok(())
    }

    /// Pages per kind, in [`Kind::ALL`] order.
    pub fn kind_counts(&self) -> Vec<(Kind, usize)> {
        Kind::ALL.iter().map(|&k| (k, self.pages.iter().filter(|p| p.kind == k).count())).collect()
    }

    /// Skipped source pages per reason.
    pub fn skip_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for s in &self.skipped {
            *counts.entry(s.reason.label()).or_insert(0) += 1;
        }
        counts
    }

    /// The recipe, the config and the counts, for the corpus's README.
    pub fn readme(&self) -> String {
        let c = &self.config;
        let mut r = String::new();
        let _ = writeln!(r, "# Near-duplicate corpus (webdup, issue 13)\n");
        let _ = writeln!(
            r,
            "Generated by `cargo run --release --example near_dup_corpus -- --data DATA --out DIR --pages {} \
             --seed {} --pages-per-template {}`{}. Same data and arguments, same bytes.\n",
            c.pages,
            c.seed,
            c.pages_per_template,
            c.sources_per_dataset.map_or(String::new(), |n| format!(" (first {n} pages of each data set)"))
        );
        let _ = writeln!(r, "## Score webdup on it\n");
        let _ = writeln!(r, "```");
        let _ = writeln!(r, "cd DIR");
        let _ = writeln!(r, "webdup cluster pages -f json -o out.json");
        let _ = writeln!(r, "webdup eval cluster truth.tsv out.json");
        let _ = writeln!(r, "```\n");
        let _ = writeln!(r, "Ids are paths relative to this directory; each `pages/sNNNN/` folder is one site.\n");
        let _ = writeln!(r, "## Recipe\n");
        let _ = writeln!(
            r,
            "Source pages: AEB and WCXB dev with their ground-truth main text. A page's content element is the \
             element holding at least 80% of the ground truth's words (as a bag) with the best F1; its template is \
             the page without that element's children, without description, Open Graph and Twitter metadata, \
             canonical link and JSON-LD; the `<title>` and first `<h1>` outside the content carry the title of the \
             content put in. Inserted text becomes `<p>` paragraphs.\n"
        );
        let _ = writeln!(
            r,
            "- original: a content in its own source's template (contents whose source lends no template, or \
             pieces of a split content, go to the least loaded of two random templates);\n\
             - mirror: the original's bytes at another path of the same site;\n\
             - syndicated: up to 5% of the words (uniform) substituted or deleted in runs of 1-3 words, or swapped, a byline and/or \"This story \
             originally appeared on HOST.\", links unwrapped, in another site's template;\n\
             - revision: same site; a paragraph appended or removed (10 words or more, at most 12% of the \
             words) or 2-4% of the words changed in phrases of 1-6 words; 1-5 of the template's link texts swapped for another template's;\n\
             - template_sibling: the unchanged content in another site's template, in its content's cluster: a \
             hard negative for that site's other pages;\n\
             - thin: 10-40 words of text used nowhere else, in groups of 2-5 per template; each its own cluster.\n"
        );
        let _ = writeln!(
            r,
            "Files: `truth.tsv` (`id<TAB>cluster<TAB>kind`), `manifest.tsv` (sources and edits per page), \
             `skipped.tsv` (source pages left out, and why), `pages/`.\n"
        );
        let _ = writeln!(r, "## Counts\n");
        let clusters: std::collections::BTreeSet<&str> = self.pages.iter().map(|p| p.cluster.as_str()).collect();
        let _ = writeln!(
            r,
            "{} pages in {} true clusters; {} templates (sites); {} contents from {} usable source pages.\n",
            self.pages.len(),
            clusters.len(),
            self.templates.len(),
            self.contents.len(),
            self.sources.len()
        );
        let _ = writeln!(r, "| kind | pages |\n|---|---|");
        for (k, n) in self.kind_counts() {
            let _ = writeln!(r, "| {} | {n} |", k.name());
        }
        let _ = writeln!(r, "\n{} source pages skipped:\n", self.skipped.len());
        for (reason, n) in self.skip_counts() {
            let _ = writeln!(r, "- {reason}: {n}");
        }
        let mean =
            |f: &dyn Fn(&Source) -> f64| self.sources.iter().map(f).sum::<f64>() / self.sources.len().max(1) as f64;
        let _ = writeln!(
            r,
            "\nContent elements of the usable sources hold on average {:.1}% of the ground truth's words; {:.1}% \
             of their words are ground truth.",
            mean(&|s| s.recall) * 100.0,
            mean(&|s| s.precision) * 100.0
        );
        r
    }
}

/// Plans the corpus: templates, contents, and every page's kind, content,
/// template and random stream.
fn plan(config: CorpusConfig, sources: Vec<Source>, skipped: Vec<Skipped>) -> Result<Corpus, CorpusError> {
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
        p.id = format!("pages/s{:04}/p{number:05}.html", p.template);
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
fn drop_near_duplicates(sources: Vec<Source>, skipped: &mut Vec<Skipped>) -> Vec<Source> {
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

fn count_words(paragraphs: &[String]) -> usize {
    paragraphs.iter().map(|p| p.split_whitespace().count()).sum()
}

/// Two halves of a text: at the paragraph boundary nearest the middle, or
/// a single paragraph cut at its middle word.
fn halve(paragraphs: &[String], words: usize) -> (Vec<String>, Vec<String>) {
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

/// The text with about `rate` of its words edited as a copy editor does:
/// runs of 1-3 words substituted (by other words of the text) or deleted,
/// or two neighbours swapped; at least one word. Returns the paragraphs and
/// the number of edits.
fn edit_words(paragraphs: &[String], rate: f64, rng: &mut Rng) -> (Vec<String>, usize) {
    let mut paras: Vec<Vec<String>> =
        paragraphs.iter().map(|p| p.split_whitespace().map(str::to_string).collect()).collect();
    let vocabulary: Vec<String> = paras.iter().flatten().cloned().collect();
    let total = vocabulary.len();
    if total < 2 {
        return (paragraphs.to_vec(), 0);
    }
    let target = ((total as f64 * rate).round() as usize).max(1);
    let (mut affected, mut edits) = (0, 0);
    while affected < target {
        let current: usize = paras.iter().map(Vec::len).sum();
        let Some((pi, at)) = locate(&paras, rng.below(current)) else {
            break;
        };
        let p = &mut paras[pi];
        let len = (1 + rng.below(3)).min(p.len() - at).min(target - affected);
        match rng.below(3) {
            1 if p.len() > len => {
                p.drain(at..at + len);
                affected += len;
            }
            2 if at + 1 < p.len() => {
                p.swap(at, at + 1);
                affected += 2;
            }
            _ => {
                for w in &mut p[at..at + len] {
                    *w = vocabulary[rng.below(total)].clone();
                }
                affected += len;
            }
        }
        edits += 1;
    }
    (paras.into_iter().filter(|p| !p.is_empty()).map(|p| p.join(" ")).collect(), edits)
}

/// The text with about `rate` of its words changed as a reviser does: runs
/// of 1-6 consecutive words (a phrase, a figure, a name) replaced by as many
/// other words of the text. Returns the paragraphs and the number of runs.
fn rewrite_phrases(paragraphs: &[String], rate: f64, rng: &mut Rng) -> (Vec<String>, usize) {
    let mut paras: Vec<Vec<String>> =
        paragraphs.iter().map(|p| p.split_whitespace().map(str::to_string).collect()).collect();
    let vocabulary: Vec<String> = paras.iter().flatten().cloned().collect();
    let total = vocabulary.len();
    if total < 2 {
        return (paragraphs.to_vec(), 0);
    }
    let target = ((total as f64 * rate).round() as usize).max(1);
    let (mut changed, mut runs) = (0, 0);
    while changed < target {
        let Some((pi, at)) = locate(&paras, rng.below(total)) else {
            break;
        };
        let p = &mut paras[pi];
        let len = (1 + rng.below(6)).min(p.len() - at).min(target - changed);
        for w in &mut p[at..at + len] {
            *w = vocabulary[rng.below(total)].clone();
        }
        changed += len;
        runs += 1;
    }
    (paras.into_iter().map(|p| p.join(" ")).collect(), runs)
}

/// The paragraph holding word `at` of the text's words counted across
/// paragraphs, and the word's place in it.
fn locate(paras: &[Vec<String>], mut at: usize) -> Option<(usize, usize)> {
    for (pi, p) in paras.iter().enumerate() {
        if at < p.len() {
            return Some((pi, at));
        }
        at -= p.len();
    }
    None
}

/// The template with its holes filled; `swaps` replaces some link texts.
fn fill(template: &Template, title: &str, content: &str, swaps: &BTreeMap<usize, String>) -> String {
    let mut out = String::new();
    for piece in &template.pieces {
        match piece {
            Piece::Raw(s) => out.push_str(s),
            Piece::Content => out.push_str(content),
            Piece::Title => out.push_str(&escape(title)),
            Piece::Link(k) => {
                out.push_str(&escape(swaps.get(k).or_else(|| template.links.get(*k)).map_or("", String::as_str)))
            }
        }
    }
    out
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(ch),
        }
    }
    out
}

/// Lowercased runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A source page's content and template, or why it has none.
fn prepare(name: &str, sample: &Sample) -> Result<Source, SkipReason> {
    let paragraphs: Vec<String> = sample.truth.lines().map(collapse).filter(|p| !p.is_empty()).collect();
    let truth_words = words(&sample.truth).count();
    if truth_words < MIN_CONTENT_WORDS {
        return Err(SkipReason::ShortTruth { words: truth_words });
    }
    let markup: String = if sample.html.contains([MARK_OPEN, MARK_CLOSE]) {
        sample.html.replace([MARK_OPEN, MARK_CLOSE], "")
    } else {
        sample.html.clone()
    };
    let mut html = Html::parse_document(&markup);
    let found = find_content(&html, &sample.truth).map_err(|best_recall| SkipReason::NotCovered { best_recall })?;
    let title = page_title(&html).unwrap_or_else(|| paragraphs[0].split(' ').take(10).collect::<Vec<_>>().join(" "));
    let (template, template_words) = cut_template(&mut html, found.node);
    if template_words < MIN_TEMPLATE_WORDS {
        return Err(SkipReason::NoTemplate { words: template_words });
    }
    let host = sample
        .url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "example.com".into());
    Ok(Source {
        name: name.to_string(),
        host,
        title,
        words: count_words(&paragraphs),
        paragraphs,
        template,
        recall: found.recall,
        precision: found.precision,
    })
}

/// The page's headline: its first `<h1>`, else its `<title>`.
fn page_title(html: &Html) -> Option<String> {
    let text_of = |name: &str| {
        html.tree.root().descendants().find_map(|n| match n.value() {
            Node::Element(e) if e.name() == name => {
                let text = collapse(&scraper::ElementRef::wrap(n)?.text().collect::<String>());
                let short: Vec<&str> = text.split(' ').take(20).collect();
                Some(short.join(" ")).filter(|t| !t.is_empty())
            }
            _ => None,
        })
    };
    text_of("h1").or_else(|| text_of("title"))
}

#[derive(Debug, Clone, Copy)]
struct Found {
    node: NodeId,
    recall: f64,
    precision: f64,
}

/// The element whose words hold at least [`MIN_COVER`] of the truth's words
/// (as bags) with the best F1; ties go to the deeper element. `Err` carries
/// the best recall seen when none does.
fn find_content(html: &Html, truth: &str) -> Result<Found, f64> {
    let mut vocabulary: HashMap<String, usize> = HashMap::new();
    let mut want: Vec<u32> = Vec::new();
    for w in words(truth) {
        let next = vocabulary.len();
        let id = *vocabulary.entry(w).or_insert(next);
        if id == want.len() {
            want.push(0);
        }
        want[id] += 1;
    }
    let truth_total: u32 = want.iter().sum();
    if truth_total == 0 {
        return Err(0.0);
    }
    // Pre-order: a node's descendants follow it, `size[i]` nodes in all.
    let nodes: Vec<ego_tree::NodeRef<'_, Node>> = html.tree.root().descendants().collect();
    let index: HashMap<NodeId, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let parent: Vec<Option<usize>> =
        nodes.iter().map(|n| n.parent().and_then(|p| index.get(&p.id()).copied())).collect();
    let mut ignored = vec![false; nodes.len()];
    let mut ids: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
    let mut total = vec![0u32; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        ignored[i] = parent[i].is_some_and(|p| ignored[p]) || matches!(node.value(), Node::Element(e) if is_ignored(e));
        if let (false, Node::Text(t)) = (ignored[i], node.value()) {
            for w in words(t) {
                total[i] += 1;
                if let Some(&id) = vocabulary.get(&w) {
                    ids[i].push(id as u32);
                }
            }
        }
    }
    let mut size = vec![1usize; nodes.len()];
    for i in (0..nodes.len()).rev() {
        if let Some(p) = parent[i] {
            total[p] += total[i];
            size[p] += size[i];
        }
    }
    let need = (MIN_COVER * f64::from(truth_total)).ceil() as u32;
    let mut counts = vec![0u32; want.len()];
    let mut best: Option<(f64, Found)> = None;
    let mut best_recall = 0.0f64;
    for (i, node) in nodes.iter().enumerate() {
        let Node::Element(e) = node.value() else { continue };
        if ignored[i] || total[i] < need || NOT_A_CONTAINER.contains(&e.name()) {
            continue;
        }
        counts.fill(0);
        let mut matched = 0u32;
        for word_ids in &ids[i..i + size[i]] {
            for &w in word_ids {
                let w = w as usize;
                if counts[w] < want[w] {
                    matched += 1;
                }
                counts[w] += 1;
            }
        }
        let recall = f64::from(matched) / f64::from(truth_total);
        let precision = f64::from(matched) / f64::from(total[i]);
        best_recall = best_recall.max(recall);
        if recall >= MIN_COVER {
            let f1 = 2.0 * precision * recall / (precision + recall);
            if best.is_none_or(|(b, _)| f1 >= b) {
                best = Some((f1, Found { node: node.id(), recall, precision }));
            }
        }
    }
    best.map(|(_, f)| f).ok_or(best_recall)
}

/// Cuts the content element's children and the page's own metadata out of
/// the page; returns the template and the words left in its body.
fn cut_template(html: &mut Html, content: NodeId) -> (Template, usize) {
    let inside = |n: &ego_tree::NodeRef<'_, Node>, id: NodeId| n.id() == id || n.ancestors().any(|a| a.id() == id);
    let is_ignored =
        |n: &ego_tree::NodeRef<'_, Node>| n.ancestors().any(|a| matches!(a.value(), Node::Element(e) if is_ignored(e)));
    let root = html.tree.root();
    let h1 = root
        .descendants()
        .find(|n| matches!(n.value(), Node::Element(e) if e.name() == "h1") && !inside(n, content) && !is_ignored(n))
        .map(|n| n.id());
    let mut drop = Vec::new();
    let mut titles = Vec::new();
    let mut links = Vec::new();
    let mut template_words = 0;
    for n in root.descendants() {
        if inside(&n, content) || h1.is_some_and(|h| inside(&n, h)) {
            continue;
        }
        match n.value() {
            Node::Text(t) if !is_ignored(&n) => template_words += words(t).count(),
            Node::Element(e) => {
                let attr = |a: &str| e.attr(a).unwrap_or_default().to_ascii_lowercase();
                let page_specific = match e.name() {
                    "meta" => {
                        let (name, property) = (attr("name"), attr("property"));
                        name == "description"
                            || name.starts_with("twitter:")
                            || name.starts_with("og:")
                            || property.starts_with("og:")
                            || property.starts_with("article:")
                            || property.starts_with("twitter:")
                    }
                    "link" => attr("rel").split_whitespace().any(|r| r == "canonical"),
                    "script" => attr("type").contains("ld+json"),
                    _ => false,
                };
                if page_specific {
                    drop.push(n.id());
                } else if e.name() == "title"
                    && titles.is_empty()
                    && n.parent().is_some_and(|p| matches!(p.value(), Node::Element(h) if h.name() == "head"))
                {
                    titles.push(n.id());
                } else if e.name() == "a" && !is_ignored(&n) {
                    let mut children = n.children();
                    if let (Some(only), None) = (children.next(), children.next())
                        && let Node::Text(t) = only.value()
                        && words(t).count() >= 2
                    {
                        links.push((only.id(), collapse(t)));
                    }
                }
            }
            _ => {}
        }
    }
    for id in drop {
        if let Some(mut n) = html.tree.get_mut(id) {
            n.detach();
        }
    }
    let mark = |tag: &str| format!("{MARK_OPEN}{tag}{MARK_CLOSE}");
    replace_children(html, content, &mark("C"));
    for id in titles.into_iter().chain(h1) {
        replace_children(html, id, &mark("T"));
    }
    for (k, (id, _)) in links.iter().enumerate() {
        if let Some(mut n) = html.tree.get_mut(*id)
            && let Node::Text(t) = n.value()
        {
            t.text = mark(&format!("L{k}")).as_str().into();
        }
    }
    let serialized = html.html();
    let mut pieces = Vec::new();
    let mut rest = serialized.as_str();
    while let Some(start) = rest.find(MARK_OPEN) {
        pieces.push(Piece::Raw(rest[..start].to_string()));
        let after = &rest[start + MARK_OPEN.len_utf8()..];
        let end = after.find(MARK_CLOSE).unwrap_or(after.len());
        let tag = &after[..end];
        pieces.push(match tag {
            "C" => Piece::Content,
            "T" => Piece::Title,
            _ => Piece::Link(tag[1..].parse().unwrap_or(usize::MAX)),
        });
        rest = after.get(end + MARK_CLOSE.len_utf8()..).unwrap_or("");
    }
    pieces.push(Piece::Raw(rest.to_string()));
    let links = links.into_iter().map(|(_, text)| text).collect();
    (Template { pieces, links }, template_words)
}

fn replace_children(html: &mut Html, id: NodeId, text: &str) {
    let children: Vec<NodeId> = html.tree.get(id).map(|n| n.children().map(|c| c.id()).collect()).unwrap_or_default();
    for c in children {
        if let Some(mut c) = html.tree.get_mut(c) {
            c.detach();
        }
    }
    if let Some(mut n) = html.tree.get_mut(id) {
        n.append(Node::Text(scraper::node::Text { text: text.into() }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: usize) -> (String, Sample) {
        let words: Vec<String> = (0..120).map(|w| format!("w{i}x{w}")).collect();
        let truth = format!("{}\n{}\n{}", words[..40].join(" "), words[40..80].join(" "), words[80..].join(" "));
        let article: String = truth.lines().map(|l| format!("<p>{l}</p>")).collect();
        let html = format!(
            "<!DOCTYPE html><html><head><title>Site {i} | story</title>\
             <meta name=\"description\" content=\"about {i}\"></head><body>\
             <nav><a href=\"/a\">home page of site {i}</a> <a href=\"/b\">latest news today</a></nav>\
             <h1>Headline number {i}</h1><div class=\"main\"><article>{article}<div class=\"share\">share this</div>\
             </article></div><aside><ul><li><a href=\"/r1\">related story one {i}</a></li>\
             <li><a href=\"/r2\">related story two {i}</a></li></ul></aside>\
             <footer>copyright site {i} all rights reserved contact us privacy policy terms</footer></body></html>"
        );
        let s = Sample {
            id: format!("{i:04}"),
            url: Some(format!("https://site{i}.example/a")),
            page_type: None,
            html,
            truth,
        };
        (format!("test/{i:04}"), s)
    }

    #[test]
    fn the_content_element_is_the_smallest_that_holds_the_text() {
        let (_, s) = sample(3);
        let html = Html::parse_document(&s.html);
        let found = find_content(&html, &s.truth).unwrap();
        let el = scraper::ElementRef::wrap(html.tree.get(found.node).unwrap()).unwrap();
        assert_eq!(el.value().name(), "article");
        assert_eq!(found.recall, 1.0);
        let source = prepare("x", &s).unwrap();
        assert_eq!(source.title, "Headline number 3");
        assert_eq!(source.template.links.len(), 4);
        let page = fill(&source.template, "New & title", "<p>NEW</p>", &BTreeMap::new());
        assert!(page.contains("<title>New &amp; title</title>") && page.contains("<h1>New &amp; title</h1>"));
        assert!(page.contains("<article><p>NEW</p></article>") && page.contains("related story two 3"));
        assert!(!page.contains("w3x5") && !page.contains("description"));
        // Text elsewhere on the page is not the content.
        let (_, mut short) = sample(4);
        short.truth = "nowhere ".repeat(60);
        assert!(matches!(prepare("y", &short), Err(SkipReason::NotCovered { .. })));
    }

    #[test]
    fn a_hidden_copy_of_the_text_is_not_the_content_element() {
        let (_, mut s) = sample(5);
        // A schema.org copy: the text alone, no share line, so its F1 beats
        // the article's; but nobody sees it.
        let copy = format!("<div style=\"display:none\"><div itemprop=\"articleBody\">{}</div></div>", s.truth);
        s.html = s.html.replace("<footer>", &format!("{copy}<footer>"));
        let html = Html::parse_document(&s.html);
        let found = find_content(&html, &s.truth).unwrap();
        let el = scraper::ElementRef::wrap(html.tree.get(found.node).unwrap()).unwrap();
        assert_eq!(el.value().name(), "article");
    }

    #[test]
    fn plans_are_deterministic_and_labelled() {
        let config = CorpusConfig { pages: 40, pages_per_template: 4.0, seed: 7, ..CorpusConfig::default() };
        let samples = || (0..30).map(sample).collect::<Vec<_>>();
        let a = Corpus::from_samples(samples(), &config).unwrap();
        let b = Corpus::from_samples(samples(), &config).unwrap();
        assert_eq!(a.truth_tsv(), b.truth_tsv());
        assert_eq!(a.pages().len(), 40);
        for (p, q) in a.pages().iter().zip(b.pages()) {
            assert_eq!(a.render(p), b.render(q));
        }
        let counts: HashMap<Kind, usize> = a.kind_counts().into_iter().collect();
        assert_eq!(counts[&Kind::Thin], 8);
        assert!(Kind::ALL.iter().all(|k| counts[k] > 0), "{counts:?}");
        let other = Corpus::from_samples(samples(), &CorpusConfig { seed: 8, ..config }).unwrap();
        assert_ne!(a.truth_tsv(), other.truth_tsv());
    }

    #[test]
    fn edits_stay_near_their_rate() {
        let text: Vec<String> =
            (0..10).map(|p| (0..50).map(|w| format!("p{p}w{w}")).collect::<Vec<_>>().join(" ")).collect();
        let (edited, n) = edit_words(&text, 0.05, &mut Rng(3));
        assert!((9..=25).contains(&n), "{n}");
        assert!(count_words(&edited) >= 475);
        let changed = edited.iter().zip(&text).filter(|(a, b)| a != b).count();
        assert!(changed >= 5, "{changed}");
        let (revised, runs) = rewrite_phrases(&text, 0.04, &mut Rng(4));
        assert_eq!(count_words(&revised), 500);
        assert!((4..=20).contains(&runs), "{runs}");
        let (a, b) = halve(&text, 500);
        assert_eq!((a.len(), b.len()), (5, 5));
    }
}
