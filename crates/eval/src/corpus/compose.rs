//! Rendering a planned page: its content edited as its kind asks, in its
//! template.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use webdup_core::sketch::minhash::splitmix64;

use super::{Corpus, Kind, Page, Piece, Template, count_words};
use crate::synth::Rng;

/// A rendered page.
pub(super) struct Composed {
    pub(super) html: String,
    pub(super) text: String,
    pub(super) note: String,
}

impl Corpus {
    /// A page's HTML, main text and a note on how it was made.
    pub(super) fn compose(&self, page: &Page) -> Composed {
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
        let body = self.furniture(page.template, body);
        let mut html = fill(template, &title, &body, &swaps);
        if self.config.canonicals {
            html = with_canonical(html, &self.address(page));
        }
        Composed { html, text: paragraphs.join("\n\n"), note }
    }

    /// The address a page names for itself with `--canonicals`: an original
    /// and its mirrors, and its syndicated copies, the original's on the
    /// content's home site; any other page its own, on its template's site.
    fn address(&self, page: &Page) -> String {
        match (page.kind, page.content) {
            (Kind::Original | Kind::Mirror | Kind::Syndicated, Some(c)) => {
                format!("https://s{:04}.example/articles/c{c:05}.html", self.contents[c].home)
            }
            _ => {
                let file = page.id.rsplit('/').next().unwrap_or(&page.id);
                format!("https://s{:04}.example/{file}", page.template)
            }
        }
    }

    /// The body inside furniture-like wrappers, for the share of templates
    /// [`super::CorpusConfig::furniture`] picks (by the seed and the
    /// template alone, so every page of a template has the same ones):
    /// nested containers whose class names extractors read as widgets, SEO
    /// blocks, category lists or sidebars, or a page builder's.
    fn furniture(&self, template: usize, body: String) -> String {
        let mut state = self.config.seed ^ 0x6675_726e_6974_7572 ^ ((template as u64) << 24);
        let h = splitmix64(&mut state);
        if (h >> 11) as f64 / (1u64 << 53) as f64 >= self.config.furniture {
            return body;
        }
        const PREFIXES: &[&str] = &["td", "jeg", "mvp", "nx", "ast", "kt", "gp", "ns", "tie", "qode"];
        let p = PREFIXES[splitmix64(&mut state) as usize % PREFIXES.len()];
        let n = splitmix64(&mut state) % 90 + 10;
        let (open, close) = match splitmix64(&mut state) % 6 {
            0 => (
                format!(
                    "<div class=\"entry-content\"><div class=\"{p}-widget-wrap\"><section class=\"{p}-seo-copy {p}-block-{n}\">"
                ),
                "</section></div></div>",
            ),
            1 => (
                format!(
                    "<article class=\"post-{n} post type-post status-publish category-popular {p}-post\">\
                     <div class=\"sidebar-and-content-body\">"
                ),
                "</div></article>",
            ),
            2 => (
                format!(
                    "<div class=\"elementor-widget-wrap elementor-element-populated\"><div class=\"elementor-element \
                     elementor-element-{n}{p} elementor-widget elementor-widget-text-editor\">\
                     <div class=\"elementor-widget-container\">"
                ),
                "</div></div></div>",
            ),
            3 => (
                format!(
                    "<div class=\"et_pb_module et_pb_text et_pb_text_{n} {p}-sidebar-text\"><div class=\"et_pb_text_inner\">"
                ),
                "</div></div>",
            ),
            4 => (
                format!(
                    "<div class=\"vc_column-inner\"><div class=\"wpb_wrapper\"><div class=\"wpb_text_column \
                     wpb_content_element {p}-widget\"><div class=\"wpb_wrapper\">"
                ),
                "</div></div></div></div>",
            ),
            _ => (
                format!(
                    "<div class=\"wp-block-group {p}-sidebar-widget is-layout-flow\">\
                     <div class=\"wp-block-group__inner-container\">"
                ),
                "</div></div>",
            ),
        };
        format!("{open}\n{body}{close}\n")
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
}

/// The text with about `rate` of its words edited as a copy editor does:
/// runs of 1-3 words substituted (by other words of the text) or deleted,
/// or two neighbours swapped; at least one word. Returns the paragraphs and
/// the number of edits.
pub(super) fn edit_words(paragraphs: &[String], rate: f64, rng: &mut Rng) -> (Vec<String>, usize) {
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
pub(super) fn rewrite_phrases(paragraphs: &[String], rate: f64, rng: &mut Rng) -> (Vec<String>, usize) {
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
pub(super) fn fill(template: &Template, title: &str, content: &str, swaps: &BTreeMap<usize, String>) -> String {
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

/// `html` with `<link rel=canonical href=address>` put before its `</head>`
/// (or first, when it has none).
fn with_canonical(mut html: String, address: &str) -> String {
    let link = format!("<link rel=\"canonical\" href=\"{address}\">");
    match html.to_ascii_lowercase().find("</head") {
        Some(at) => html.insert_str(at, &link),
        None => html.insert_str(0, &link),
    }
    html
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
