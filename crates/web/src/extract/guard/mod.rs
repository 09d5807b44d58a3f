//! The cost guard: what a page would cost the extractors, read off its bytes
//! before any of them builds a tree.
//!
//! Three costs matter. The extractors recurse over the DOM, so a page nested
//! deeper than their stack allows would crash the process; html5ever checks
//! each attribute against the element's earlier ones, so one element with
//! 200,000 attributes costs minutes; and every element costs memory in each of
//! the trees the extractors build (an 8 MB page of a million `<p>` took
//! 2.4 GiB).
//!
//! [`scan`] estimates all three in one pass over the bytes, following the
//! HTML tokenizer (comments, quoted attribute values, raw-text elements) and
//! the parts of tree construction that decide nesting: `<x/>` nests unless
//! `x` is void or foreign, an end tag closes only an element that is open and
//! not shielded by a "special" element, optional end tags close their
//! siblings, tables imply rows. Where the parser nests deeper than that model
//! (active formatting elements reopened after misnested tags) the scan counts
//! the misnesting; when depth plus misnesting comes near the limit,
//! [`check`] parses the page once with html5ever and measures the real tree.

mod names;

use super::ExtractError;
use crate::lex::{comment_end, find, is_space, raw_text_end, tag_end, tag_name_end};
use names::*;

/// What one page may cost the extractors. Real pages stay far below each
/// limit (see `examples/html_cost.rs`, which measures them on a folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageBudget {
    /// Deepest element nesting accepted. Browsers cap the parser's nesting
    /// at 512; html5ever does not.
    pub max_depth: usize,
    /// Most elements (start tags) in one page.
    pub max_elements: usize,
    /// Largest sum over elements of the square of their attribute count:
    /// the work html5ever's duplicate-attribute check does.
    pub max_attribute_work: u64,
    /// Largest sum over elements of their depth: the extractors score each
    /// element from its ancestors or descendants, so a page of many deep
    /// elements costs the product.
    pub max_nesting_work: u64,
}

impl Default for PageBudget {
    fn default() -> Self {
        PageBudget {
            max_depth: 1024,
            max_elements: 100_000,
            max_attribute_work: 4_000_000,
            max_nesting_work: 4_000_000,
        }
    }
}

/// What [`scan`] read off a page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HtmlCost {
    /// Deepest nesting of the tree the parser builds, html and body included,
    /// as the scan models it.
    pub depth: usize,
    /// Start tags.
    pub elements: usize,
    /// Sum over tags of the square of their attribute count.
    pub attribute_work: u64,
    /// Sum over start tags of the depth they open at.
    pub nesting_work: u64,
    /// Formatting elements closed by another element's end tag and
    /// misnesting repairs: each may let the parser nest one level deeper
    /// than the scan's depth.
    pub misnested: usize,
}

/// Refuses a page that would cost more than `budget`, naming what is over.
pub fn check(html: &str, budget: &PageBudget) -> Result<HtmlCost, ExtractError> {
    let cost = scan(html, budget);
    if cost.elements > budget.max_elements {
        return Err(ExtractError::TooCostly(format!(
            "more than {} elements (the page-cost limit)",
            budget.max_elements
        )));
    }
    if cost.attribute_work > budget.max_attribute_work {
        return Err(ExtractError::TooCostly(format!(
            "too many attributes: their duplicate checks would take over {} steps (the page-cost limit)",
            budget.max_attribute_work
        )));
    }
    if cost.depth > budget.max_depth {
        return Err(ExtractError::TooDeep { limit: budget.max_depth });
    }
    if cost.nesting_work > budget.max_nesting_work {
        return Err(ExtractError::TooCostly(format!(
            "too many deeply nested elements: their depths add up to over {} (the page-cost limit)",
            budget.max_nesting_work
        )));
    }
    // The scan can only be short of the parser's depth by the misnesting it
    // counted; near the limit, measure the real tree.
    if cost.depth + cost.misnested > budget.max_depth / 8 && dom_depth(html) > budget.max_depth {
        return Err(ExtractError::TooDeep { limit: budget.max_depth });
    }
    Ok(cost)
}

/// The deepest element nesting of the tree html5ever builds for `html`
/// (html and body count as 1 and 2). Parses the page; iterative, so safe at
/// any depth.
pub fn dom_depth(html: &str) -> usize {
    let doc = scraper::Html::parse_document(html);
    let (mut depth, mut max) = (0usize, 0usize);
    for edge in doc.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(n) if n.value().is_element() => {
                depth += 1;
                max = max.max(depth);
            }
            ego_tree::iter::Edge::Close(n) if n.value().is_element() => depth -= 1,
            _ => {}
        }
    }
    max
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Html,
    Svg,
    Math,
}

/// An open element: its name (borrowed from the page, or a static name for
/// elements the parser implies) and its namespace.
#[derive(Debug, Clone, Copy)]
struct Open<'a> {
    name: &'a [u8],
    ns: Ns,
    /// The tag's attributes as written (formatting elements are alike for
    /// the parser's limit of three when name and attributes match).
    attrs: &'a [u8],
    /// Which element this is (set when it is pushed).
    id: u32,
    /// The name's categories ([`class`]).
    class: u16,
}

impl<'a> Open<'a> {
    fn html(name: &'a [u8]) -> Self {
        Open { name, ns: Ns::Html, attrs: b"", id: 0, class: class(name) }
    }

    fn has(&self, flag: u16) -> bool {
        self.class & flag != 0
    }
}

/// An entry of the parser's list of active formatting elements.
#[derive(Debug, Clone, Copy)]
enum Active<'a> {
    Marker,
    Element(Open<'a>),
}

/// html and body: always in the tree, implied when absent.
const BASE: usize = 2;

struct Scanner<'a> {
    stack: Vec<Open<'a>>,
    /// The list of active formatting elements: the parser reopens those
    /// that a misnested tag closed at the next text or inline tag.
    active: Vec<Active<'a>>,
    /// Some active formatting element may be off the stack.
    reopen: bool,
    next_id: u32,
    cost: HtmlCost,
}

impl<'a> Scanner<'a> {
    fn is(&self, o: &Open, names: &[&[u8]]) -> bool {
        names.iter().any(|x| x.eq_ignore_ascii_case(o.name))
    }

    fn special(&self, o: &Open) -> bool {
        match o.ns {
            Ns::Html => o.has(F_SPECIAL),
            Ns::Svg => o.has(F_INTEGRATION) && self.is(o, &[b"foreignobject", b"desc", b"title"]),
            Ns::Math => o.has(F_INTEGRATION) && !self.is(o, &[b"desc", b"title", b"foreignobject"]),
        }
    }

    /// Foreign content: the current node is SVG or MathML and not a point
    /// where HTML content resumes.
    fn in_foreign(&self) -> bool {
        self.stack.last().is_some_and(|o| o.ns != Ns::Html && !self.special(o))
    }

    fn push(&mut self, mut o: Open<'a>) {
        self.next_id += 1;
        o.id = self.next_id;
        if o.ns == Ns::Html && o.has(F_MARKER) {
            self.active.push(Active::Marker);
        }
        if o.ns == Ns::Html && o.has(F_FORMATTING) {
            self.remember_formatting(o);
        }
        self.stack.push(o);
        self.cost.depth = self.cost.depth.max(BASE + self.stack.len());
    }

    /// Adds a formatting element to the active list; with three alike
    /// already there (since the last marker), the earliest goes.
    fn remember_formatting(&mut self, o: Open<'a>) {
        let (mut alike, mut earliest) = (0, 0);
        for (i, a) in self.active.iter().enumerate().rev() {
            match a {
                Active::Marker => break,
                Active::Element(e) if e.name.eq_ignore_ascii_case(o.name) && e.attrs == o.attrs => {
                    alike += 1;
                    earliest = i;
                }
                Active::Element(_) => {}
            }
        }
        if alike >= 3 {
            self.active.remove(earliest);
        }
        self.active.push(Active::Element(o));
    }

    /// The parser's "reconstruct the active formatting elements": before
    /// text or an inline element, formatting elements that a misnested tag
    /// closed are opened again, one inside the other.
    fn reconstruct(&mut self) {
        if !self.reopen {
            return;
        }
        self.reopen = false;
        let on_stack = |id: u32, stack: &[Open]| stack.iter().any(|o| o.id == id);
        let mut first = self.active.len();
        while first > 0 {
            match self.active[first - 1] {
                Active::Element(e) if !on_stack(e.id, &self.stack) => first -= 1,
                _ => break,
            }
        }
        for k in first..self.active.len() {
            let Active::Element(e) = self.active[k] else { continue };
            self.next_id += 1;
            let reopened = Open { id: self.next_id, ..e };
            self.active[k] = Active::Element(reopened);
            self.stack.push(reopened);
            self.cost.elements += 1;
            self.cost.nesting_work += (BASE + self.stack.len()) as u64;
            self.cost.depth = self.cost.depth.max(BASE + self.stack.len());
        }
    }

    fn forget_formatting(&mut self, id: u32) {
        if let Some(k) = self.active.iter().rposition(|a| matches!(a, Active::Element(e) if e.id == id)) {
            self.active.remove(k);
        }
    }

    /// Closes the formatting element at `at` (a misnested end tag, or a
    /// second `<a>` or `<nobr>`). With no special element above it, that is
    /// a plain pop. Otherwise the parser runs the adoption agency: up to
    /// eight rounds, each of which may move a block under a new copy of
    /// the element, one level deeper; the stack keeps its height. The scan
    /// keeps the stack and counts the eight levels as misnesting.
    fn adopt(&mut self, at: usize) {
        if self.stack[at + 1..].iter().any(|o| self.special(o)) {
            self.cost.misnested += 8;
        } else {
            self.pop_to(at);
        }
    }

    /// A leaf at the current position (void and raw-text elements).
    fn leaf(&mut self) {
        self.cost.depth = self.cost.depth.max(BASE + self.stack.len() + 1);
    }

    /// Pops down to and including the element at `at`; formatting elements
    /// popped above it stay active in the parser and may be reopened.
    fn pop_to(&mut self, at: usize) {
        let left_open = self.stack[at + 1..].iter().filter(|o| o.ns == Ns::Html && o.has(F_FORMATTING)).count();
        self.cost.misnested += left_open;
        self.reopen |= left_open > 0;
        let closed_markers = self.stack[at..].iter().filter(|o| o.ns == Ns::Html && o.has(F_MARKER)).count();
        for _ in 0..closed_markers {
            // Closing a cell (or caption, object, ...) clears the list back
            // to its marker.
            while let Some(a) = self.active.pop() {
                if matches!(a, Active::Marker) {
                    break;
                }
            }
        }
        self.stack.truncate(at);
    }

    /// The topmost open HTML element named `name`, if no element of
    /// `boundary` stands above it.
    fn in_scope(&self, names: &[&[u8]], boundary: u16) -> Option<usize> {
        for (i, o) in self.stack.iter().enumerate().rev() {
            if o.ns == Ns::Html && self.is(o, names) {
                return Some(i);
            }
            if (o.ns == Ns::Html && o.has(boundary)) || (o.ns != Ns::Html && self.special(o)) {
                return None;
            }
        }
        None
    }

    fn close_p(&mut self) {
        if let Some(i) = self.in_scope(&[b"p"], F_SCOPE | F_BUTTON) {
            self.pop_to(i);
        }
    }

    fn top_is(&self, names: &[&[u8]]) -> bool {
        self.stack.last().is_some_and(|o| o.ns == Ns::Html && self.is(o, names))
    }

    fn start_tag(&mut self, n: &'a [u8], attrs: &'a [u8], self_closing: bool) {
        let eq = |x: &[u8]| x.eq_ignore_ascii_case(n);
        let any = |xs: &[&[u8]]| xs.iter().any(|x| x.eq_ignore_ascii_case(n));
        let c = class(n);
        let is = |flag: u16| c & flag != 0;
        if self.in_foreign() {
            if is(F_BREAKOUT) {
                while self.in_foreign() {
                    self.stack.pop();
                }
            } else {
                let ns = if eq(b"svg") {
                    Ns::Svg
                } else if eq(b"math") {
                    Ns::Math
                } else {
                    self.stack.last().map_or(Ns::Html, |o| o.ns)
                };
                if self_closing {
                    self.leaf();
                } else {
                    self.push(Open { ns, ..Open::html(n) });
                }
                return;
            }
        }
        if any(&[b"html", b"body", b"head"]) {
            return;
        }
        if !is(F_CLOSES_P) && !is(F_TABLE_PART) {
            self.reconstruct();
        }
        if eq(b"a")
            && let Some(k) = self.active.iter().rposition(|a| {
                matches!(a, Active::Element(e) if e.name.eq_ignore_ascii_case(b"a")) || matches!(a, Active::Marker)
            })
            && let Active::Element(e) = self.active[k]
        {
            // A second `<a>` closes the first (the adoption agency).
            if let Some(at) = self.stack.iter().rposition(|o| o.id == e.id) {
                self.adopt(at);
            }
            self.active.remove(k);
        }
        if eq(b"svg") || eq(b"math") {
            let ns = if eq(b"svg") { Ns::Svg } else { Ns::Math };
            if self_closing {
                self.leaf()
            } else {
                self.push(Open { ns, ..Open::html(n) })
            }
            return;
        }
        if is(F_VOID) {
            if eq(b"hr") {
                self.close_p();
            }
            self.leaf();
            return;
        }
        if is(F_CLOSES_P) {
            self.close_p();
        }
        if is(F_HEADING) && self.stack.last().is_some_and(|o| o.ns == Ns::Html && o.has(F_HEADING)) {
            self.stack.pop();
        }
        if is(F_TABLE_PART) && !eq(b"table") && self.in_scope(&[b"table"], F_TABLE_SCOPE).is_none() {
            // Outside a table the parser ignores table parts.
            return;
        }
        if eq(b"li") || eq(b"dd") || eq(b"dt") {
            let siblings: &[&[u8]] = if eq(b"li") { &[b"li"] } else { &[b"dd", b"dt"] };
            for i in (0..self.stack.len()).rev() {
                let o = self.stack[i];
                if o.ns == Ns::Html && self.is(&o, siblings) {
                    self.pop_to(i);
                    break;
                }
                if self.special(&o) && !self.is(&o, &[b"address", b"div", b"p"]) {
                    break;
                }
            }
        } else if eq(b"td") || eq(b"th") {
            if let Some(i) = self.in_scope(&[b"td", b"th"], F_TABLE_SCOPE) {
                self.pop_to(i);
            }
            if !self.top_is(&[b"tr"]) {
                self.implied(b"tbody");
                self.push(Open::html(b"tr"));
            }
        } else if eq(b"tr") {
            if let Some(i) = self.in_scope(&[b"tr"], F_TABLE_SCOPE) {
                self.pop_to(i);
            }
            self.implied(b"tbody");
        } else if any(&[b"tbody", b"thead", b"tfoot"]) {
            if let Some(i) = self.in_scope(&[b"tbody", b"thead", b"tfoot"], F_TABLE_SCOPE) {
                self.pop_to(i);
            }
        } else if eq(b"option") || eq(b"optgroup") {
            if self.top_is(&[b"option"]) {
                self.stack.pop();
            }
            if eq(b"optgroup") && self.top_is(&[b"optgroup"]) {
                self.stack.pop();
            }
        } else if any(&[b"rb", b"rt", b"rp", b"rtc"]) && self.in_scope(&[b"ruby"], F_SCOPE).is_some() {
            // Only inside a ruby do they close each other.
            while self.top_is(&[b"rb", b"rt", b"rp"]) {
                self.stack.pop();
            }
        } else if eq(b"button") {
            if let Some(i) = self.in_scope(&[n], F_SCOPE) {
                self.pop_to(i);
            }
        } else if eq(b"nobr")
            && let Some(i) = self.in_scope(&[n], F_SCOPE)
        {
            self.adopt(i);
        }
        if eq(b"plaintext") {
            // Everything after it is text.
            self.leaf();
            return;
        }
        if is(F_RAW_TEXT) {
            self.leaf();
            return;
        }
        self.push(Open { attrs, ..Open::html(n) });
    }

    /// A row straight in a table is put in an implied `<tbody>`.
    fn implied(&mut self, name: &'static [u8]) {
        if self.top_is(&[b"table"]) {
            self.push(Open::html(name));
        }
    }

    fn end_tag(&mut self, n: &[u8]) {
        let any = |xs: &[&[u8]]| xs.iter().any(|x| x.eq_ignore_ascii_case(n));
        if any(&[b"p", b"br"]) {
            // `</p>` and `</br>` leave SVG and MathML content, as breakout
            // start tags do.
            while self.in_foreign() {
                self.stack.pop();
            }
        }
        if any(&[b"html", b"body", b"head"]) {
            return;
        }
        if b"br".eq_ignore_ascii_case(n) {
            // Taken as `<br>`.
            self.leaf();
            return;
        }
        if b"p".eq_ignore_ascii_case(n) {
            // With no `<p>` open, the parser inserts an empty one.
            self.leaf();
            self.close_p();
            return;
        }
        let c = class(n);
        let formatting = c & F_FORMATTING != 0;
        for i in (0..self.stack.len()).rev() {
            let o = self.stack[i];
            // A formatting element's end tag closes an HTML element only
            // (the parser's list of active formatting elements holds no
            // SVG or MathML ones).
            if o.name.eq_ignore_ascii_case(n) && (o.ns == Ns::Html || !formatting) {
                if formatting {
                    self.adopt(i);
                    self.forget_formatting(o.id);
                } else {
                    self.pop_to(i);
                }
                return;
            }
            // A block's end tag closes elements whose end tag is implied
            // (li, dd, dt, p, option, ...) on the way: the parser generates
            // their end tags. Any other end tag stops at a special element;
            // a formatting element's only at SVG and MathML integration
            // points (the adoption agency works through the others).
            let block = c & F_SPECIAL != 0;
            let stops = if formatting { o.ns != Ns::Html } else { !(block && self.is(&o, IMPLIED_END)) };
            if self.special(&o) && stops {
                return;
            }
        }
        if formatting {
            // Closed earlier by a misnested tag: its end tag only takes it
            // off the list.
            let last = self.active.iter().rposition(|a| {
                matches!(a, Active::Element(e) if e.name.eq_ignore_ascii_case(n)) || matches!(a, Active::Marker)
            });
            if let Some(k) = last
                && matches!(self.active[k], Active::Element(_))
            {
                self.active.remove(k);
            }
        }
    }
}

/// Estimates a page's cost with one pass over its bytes; stops early once
/// any figure passes `budget`.
pub fn scan(html: &str, budget: &PageBudget) -> HtmlCost {
    let b = html.as_bytes();
    let mut s = Scanner {
        stack: Vec::new(),
        active: Vec::new(),
        reopen: false,
        next_id: 0,
        cost: HtmlCost { depth: BASE, ..HtmlCost::default() },
    };
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        if s.reopen && b[i..i + off].iter().any(|&c| !is_space(c)) {
            // Text: the parser reopens formatting elements here.
            s.reconstruct();
        }
        if s.cost.depth > budget.max_depth
            || s.cost.elements > budget.max_elements
            || s.cost.attribute_work > budget.max_attribute_work
            || s.cost.nesting_work > budget.max_nesting_work
        {
            break;
        }
        i += off + 1;
        match b.get(i) {
            Some(b'!') => {
                i = if b[i..].starts_with(b"!--") {
                    comment_end(b, i + 3)
                } else if s.in_foreign() && b.len() >= i + 8 && b[i..i + 8].eq_ignore_ascii_case(b"![cdata[") {
                    find(b, i, b"]]>")
                } else {
                    find(b, i, b">")
                };
            }
            Some(b'?') => i = find(b, i, b">"),
            Some(b'/') => match b.get(i + 1) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let name_end = tag_name_end(b, i + 1);
                    let (end, attrs, _) = tag_end(b, name_end);
                    s.cost.attribute_work += attrs * attrs;
                    if end > b.len() {
                        break; // EOF inside the tag: the parser drops it
                    }
                    s.end_tag(&b[i + 1..name_end]);
                    i = end;
                }
                Some(b'>') => i += 2,
                Some(_) => i = find(b, i, b">"),
                None => break,
            },
            Some(c) if c.is_ascii_alphabetic() => {
                let name_end = tag_name_end(b, i);
                let (end, attrs, self_closing) = tag_end(b, name_end);
                s.cost.attribute_work += attrs * attrs;
                if end > b.len() {
                    break;
                }
                s.cost.elements += 1;
                s.cost.nesting_work += (BASE + s.stack.len()) as u64;
                let n = &b[i..name_end];
                let foreign = s.in_foreign();
                s.start_tag(n, &b[name_end..end.min(b.len())], self_closing);
                i = end;
                if !foreign && n.eq_ignore_ascii_case(b"plaintext") {
                    break;
                }
                if !foreign && class(n) & F_RAW_TEXT != 0 {
                    i = raw_text_end(b, i, n);
                }
            }
            _ => {}
        }
    }
    s.cost
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unlimited() -> PageBudget {
        PageBudget {
            max_depth: usize::MAX,
            max_elements: usize::MAX,
            max_attribute_work: u64::MAX,
            max_nesting_work: u64::MAX,
        }
    }

    fn depth(html: &str) -> usize {
        scan(html, &unlimited()).depth
    }

    #[test]
    fn scan_matches_the_parser_on_ordinary_markup() {
        for html in [
            "<html><body><div><p>a<p>b<br><img src=x></div></body></html>",
            "<div><script>if (a<b) { '<div>' }</script></div>",
            "<ul><li>a<li>b<ul><li>c</ul></ul>",
            "<table><tr><td>a<td>b<tr><td>c</table>",
            "<table><td>x</table>",
            "<p><b>bold</b> text<p>more",
            "<svg><g><path d='M0'/><path/></g></svg><p>after",
            "<dl><dt>a<dd>b<dt>c</dl>",
            "<select><option>a<option>b</select>",
            "<div title='a > b'><span>x</span></div>",
            "<!-- <div><div> --><p>x",
            "<h1>a<h2>b</h2></h1>",
        ] {
            let (scanned, real) = (depth(html), dom_depth(html));
            assert!(scanned >= real, "{html}: scan {scanned} < parser {real}");
            assert!(scanned <= real + 2, "{html}: scan {scanned}, parser {real}");
        }
    }

    #[test]
    fn self_closing_html_elements_nest_as_the_parser_nests_them() {
        // The crash of issue 16: `<span/>` is an open `<span>` to the parser.
        let html = format!("<html><body>{}</body></html>", "<span/>".repeat(3000));
        assert_eq!(dom_depth(&html), 3002);
        assert!(depth(&html) >= 3002);
        // Self-closing is honoured in SVG.
        let svg = format!("<svg>{}</svg>", "<path/>".repeat(3000));
        assert!(depth(&svg) < 10 && dom_depth(&svg) < 10);
    }

    #[test]
    fn markup_that_hides_tags_from_a_naive_scan_is_still_seen() {
        let spans = "<span>".repeat(2000);
        for html in [
            // Stray end tags do not close anything.
            "<span><div></span>".repeat(1000),
            // `>` inside a quoted attribute value does not end the tag.
            format!("<div title='<script>'>{spans}"),
            // An upper-case end tag closes a script.
            format!("<script>x</SCRIPT>{spans}"),
            // `--!>` closes a comment.
            format!("<!-- a --!>{spans}"),
            // A tag name runs to white space: `</div"x>` closes nothing.
            "<div><div\"x></div\"x>".repeat(1000),
            // Tables imply rows: each level is table, tbody, tr, td.
            "<table><td>".repeat(500),
            format!("<svg><style>{spans}"),
        ] {
            let real = dom_depth(&html);
            let cost = scan(&html, &unlimited());
            assert!(cost.depth + cost.misnested >= real, "{}: scan {cost:?}, parser {real}", &html[..60]);
        }
    }

    /// Inputs the `guard` fuzz target found where the scan was short of the
    /// parser, minimized.
    #[test]
    fn fuzz_findings_stay_fixed() {
        for html in [
            "l</p>",
            "<td><m><h></td><t><m><h>",
            "<rp>te<rp>x</option><option>y",
            "<div><li></div><d><d><li><d><h>",
            "<sp><p></sp><t>",
            "<a><g><p><a></a></p><pa><pg></g><e><p><g>",
            "<svg></p><pa><p><a>",
            "<svg><a><title><g></a><g>",
        ] {
            let cost = scan(html, &unlimited());
            assert!(cost.depth + cost.misnested >= dom_depth(html), "{html}: {cost:?} vs {}", dom_depth(html));
        }
    }

    #[test]
    fn misnested_formatting_is_counted_and_measured_for_real() {
        // `</p>` closes the `<b>` left open in it; the parser reopens every
        // such `<b>` (distinct attributes defeat its limit of three alike) in
        // each later paragraph, one level deeper each time, while the scan's
        // stack stays shallow: it counts the misnesting instead.
        let html: String = (0..400).map(|i| format!("<p><b id={i}>x</p>")).collect();
        let cost = scan(&html, &unlimited());
        let real = dom_depth(&html);
        assert!(real > 300, "{real}");
        assert!(cost.depth >= real, "{cost:?} vs {real}");
        // Each paragraph reopens every earlier `<b>`: 80,000 elements from
        // 7 KB, which the budget must see (the extractors took minutes).
        assert!(cost.elements > 75_000, "{cost:?}");
        assert!(matches!(check(&html, &PageBudget::default()), Err(ExtractError::TooCostly(_))));
        // Alike formatting elements are reopened three at most.
        let alike = "<p><b>x</p>".repeat(400);
        assert!(scan(&alike, &unlimited()).depth <= dom_depth(&alike) + 2);
        let tight = PageBudget { max_depth: 100, ..PageBudget::default() };
        assert_eq!(check(&html, &tight), Err(ExtractError::TooDeep { limit: 100 }));
        let shallow: String = (0..20).map(|i| format!("<p><b id={i}>x</p>")).collect();
        assert!(check(&shallow, &tight).is_ok());
    }

    #[test]
    fn budgets_name_what_is_over() {
        let budget = PageBudget::default();
        let deep = "<div/>".repeat(20_000);
        assert_eq!(check(&deep, &budget), Err(ExtractError::TooDeep { limit: budget.max_depth }));
        let attrs: String = (0..3000).map(|i| format!(" a{i}=1")).collect();
        let wide = format!("<div{attrs}>x</div>");
        assert!(matches!(check(&wide, &budget), Err(ExtractError::TooCostly(m)) if m.contains("attributes")));
        let many = "<p>x</p>".repeat(budget.max_elements + 1);
        assert!(matches!(check(&many, &budget), Err(ExtractError::TooCostly(m)) if m.contains("elements")));
        let fine = "<p>x</p>".repeat(1000);
        assert!(check(&fine, &budget).is_ok());
    }
}
