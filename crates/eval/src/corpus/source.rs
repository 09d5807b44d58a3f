//! Cutting a source page into its content (the ground truth's element) and
//! its template (the page around it).

use std::collections::HashMap;

use ego_tree::NodeId;
use scraper::{Html, Node};

use super::{
    MIN_CONTENT_WORDS, MIN_COVER, MIN_TEMPLATE_WORDS, Piece, SkipReason, Source, Template, count_words, words,
};
use crate::extract::Sample;

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
    IGNORED.contains(&e.name()) || webdup_web::extract::hidden(e)
}

const MARK_OPEN: char = '\u{FDD0}';
const MARK_CLOSE: char = '\u{FDD1}';

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A source page's content and template, or why it has none.
pub(super) fn prepare(name: &str, sample: &Sample) -> Result<Source, SkipReason> {
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

/// The content element, and how its words match the ground truth's.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    pub(super) node: NodeId,
    pub(super) recall: f64,
    pub(super) precision: f64,
}

/// The element whose words hold at least [`MIN_COVER`] of the truth's words
/// (as bags) with the best F1; ties go to the deeper element. `Err` carries
/// the best recall seen when none does.
pub(super) fn find_content(html: &Html, truth: &str) -> Result<Found, f64> {
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
