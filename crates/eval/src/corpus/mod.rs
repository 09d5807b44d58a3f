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

mod compose;
mod plan;
mod source;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::extract::{self, EvalError, Sample};
use plan::{drop_near_duplicates, plan};
use source::prepare;

/// Least share of the ground truth's words the content element must hold.
pub const MIN_COVER: f64 = 0.8;
/// Ground truths with fewer words give no content (and no template).
pub const MIN_CONTENT_WORDS: usize = 50;
/// Words that must remain around the content element for a usable template.
pub const MIN_TEMPLATE_WORDS: usize = 20;

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
    /// All pages in one folder (`pages/pNNNNN.html`), with the same truth:
    /// many sites' pages saved together, no folder or URL to tell sites apart.
    pub flat: bool,
    /// Share of the templates (0 to 1) whose content element wraps the text
    /// in furniture-like containers (`…-widget-wrap`, `…-seo-copy`,
    /// `category-popular`, `sidebar-and-content-body`, page builders'
    /// wrappers), chosen by the seed: the class names extractors take for
    /// furniture, around the article.
    pub furniture: f64,
    /// Every page names its own address in a `<link rel=canonical>`
    /// (`https://sNNNN.example/…`, its template's site), as most sites'
    /// pages do; a mirror names its original's, and a syndicated copy, in
    /// another site's template, names its original's on the original's site.
    pub canonicals: bool,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            pages: 2500,
            pages_per_template: 3.0,
            seed: 1,
            sources_per_dataset: None,
            shares: Shares::default(),
            flat: false,
            furniture: 0.0,
            canonicals: false,
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
        let dataset = extract::load(&data.join(set), per_dataset)?;
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
        if !(0.0..=1.0).contains(&config.furniture) {
            return Err(CorpusError::Config("the furniture share must be in [0, 1]".into()));
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
        std::fs::create_dir_all(&pages_dir).map_err(io(&pages_dir))?;
        for t in (0..self.templates.len()).filter(|_| !self.config.flat) {
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
        let mut options = String::new();
        if c.flat {
            options.push_str(" --flat");
        }
        if c.furniture > 0.0 {
            let _ = write!(options, " --furniture {}", c.furniture);
        }
        if c.canonicals {
            options.push_str(" --canonicals");
        }
        let _ = writeln!(
            r,
            "Generated by `cargo run --release --example near_dup_corpus -- --data DATA --out DIR --pages {} \
             --seed {} --pages-per-template {}{options}`{}. Same data and arguments, same bytes.\n",
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
        let _ = writeln!(
            r,
            "{}\n",
            if c.flat {
                "Ids are paths relative to this directory; every site's pages are in the one folder `pages/`."
            } else {
                "Ids are paths relative to this directory; each `pages/sNNNN/` folder is one site."
            }
        );
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

fn count_words(paragraphs: &[String]) -> usize {
    paragraphs.iter().map(|p| p.split_whitespace().count()).sum()
}

/// Lowercased runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use scraper::Html;

    use super::compose::{edit_words, fill, rewrite_phrases};
    use super::plan::halve;
    use super::source::{find_content, prepare};
    use super::*;
    use crate::synth::Rng;

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
    fn a_flat_corpus_has_the_same_pages_in_one_folder_and_furniture_wraps_whole_templates() {
        let config = CorpusConfig { pages: 40, pages_per_template: 4.0, seed: 7, ..CorpusConfig::default() };
        let samples = || (0..30).map(sample).collect::<Vec<_>>();
        let sited = Corpus::from_samples(samples(), &config).unwrap();
        let flat = Corpus::from_samples(samples(), &CorpusConfig { flat: true, ..config.clone() }).unwrap();
        assert!(flat.pages().iter().all(|p| p.id.starts_with("pages/p") && p.id.matches('/').count() == 1));
        let by_number = |c: &Corpus| -> BTreeMap<String, (String, String)> {
            c.pages()
                .iter()
                .map(|p| (p.id.rsplit('/').next().unwrap().to_string(), (p.cluster.clone(), c.render(p))))
                .collect()
        };
        assert_eq!(by_number(&sited), by_number(&flat), "same truth, same bytes");
        let furnished = Corpus::from_samples(samples(), &CorpusConfig { furniture: 1.0, ..config.clone() }).unwrap();
        let again = Corpus::from_samples(samples(), &CorpusConfig { furniture: 1.0, ..config.clone() }).unwrap();
        let mut wrappers: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (p, q) in furnished.pages().iter().zip(again.pages()) {
            let html = furnished.render(p);
            assert_eq!(html, again.render(q));
            let plain = sited.pages().iter().find(|x| x.id == p.id).unwrap();
            assert_eq!(furnished.main_text(p), sited.main_text(plain));
            let found: Vec<&str> = [
                "-widget-wrap\"><section",
                "category-popular",
                "elementor-widget-container",
                "et_pb_text_inner",
                "wpb_text_column",
                "wp-block-group__inner-container",
            ]
            .into_iter()
            .filter(|w| html.contains(w))
            .collect();
            wrappers.entry(p.template).or_default().insert(found.join(","));
        }
        // One set of wrappers per template, on every page of it.
        assert!(wrappers.values().all(|w| w.len() == 1 && !w.iter().next().unwrap().is_empty()), "{wrappers:?}");
        let none = Corpus::from_samples(samples(), &CorpusConfig { furniture: 0.0, ..config }).unwrap();
        assert!(none.pages().iter().zip(sited.pages()).all(|(p, q)| none.render(p) == sited.render(q)));
    }

    #[test]
    fn with_canonicals_a_page_names_its_site_and_a_syndicated_copy_its_original() {
        let config = CorpusConfig { pages: 40, pages_per_template: 4.0, seed: 7, ..CorpusConfig::default() };
        let samples = || (0..30).map(sample).collect::<Vec<_>>();
        let plain = Corpus::from_samples(samples(), &config).unwrap();
        let named = Corpus::from_samples(samples(), &CorpusConfig { canonicals: true, ..config }).unwrap();
        let canonical = |html: &str| {
            let at = html.find("<link rel=\"canonical\" href=\"").expect("a canonical") + 28;
            html[at..at + html[at..].find('"').unwrap()].to_string()
        };
        let site = |address: &str| address.split('/').nth(2).unwrap().to_string();
        let originals: BTreeMap<&str, String> = named
            .pages()
            .iter()
            .filter(|p| p.kind == Kind::Original)
            .map(|p| (p.cluster.as_str(), canonical(&named.render(p))))
            .collect();
        for (p, q) in named.pages().iter().zip(plain.pages()) {
            let html = named.render(p);
            assert_eq!(html.matches("rel=\"canonical\"").count(), 1);
            assert_eq!(
                html.replacen(&format!("<link rel=\"canonical\" href=\"{}\">", canonical(&html)), "", 1),
                plain.render(q)
            );
            let address = canonical(&html);
            let own = format!("s{:04}.example", p.template);
            match p.kind {
                Kind::Mirror | Kind::Syndicated => assert_eq!(address, originals[p.cluster.as_str()]),
                Kind::Original => assert_eq!(site(&address), own),
                _ => assert_eq!(address, format!("https://{own}/{}", p.id.rsplit('/').next().unwrap())),
            }
            if p.kind == Kind::Syndicated {
                assert_ne!(site(&address), own, "a copy in another site's template");
            }
        }
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
