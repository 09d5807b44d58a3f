//! The tag-name categories of HTML tree construction that decide nesting
//! (void, raw text, formatting, special, scopes...), as bits looked up once per tag.

use crate::lex::RAW_TEXT;

/// Elements that put a marker on the list of active formatting elements:
/// formatting opened inside them is not reopened outside.
pub(super) const MARKERS: &[&[u8]] = &[b"td", b"th", b"caption", b"applet", b"marquee", b"object", b"template"];

pub(super) const VOID: &[&[u8]] = &[
    b"area",
    b"base",
    b"basefont",
    b"bgsound",
    b"br",
    b"col",
    b"embed",
    b"frame",
    b"hr",
    b"image",
    b"img",
    b"input",
    b"keygen",
    b"link",
    b"meta",
    b"param",
    b"source",
    b"track",
    b"wbr",
];
pub(super) const FORMATTING: &[&[u8]] =
    &[b"a", b"b", b"big", b"code", b"em", b"font", b"i", b"nobr", b"s", b"small", b"strike", b"strong", b"tt", b"u"];
/// The HTML spec's "special" category: an end tag for another element does
/// not close past one of these.
pub(super) const SPECIAL: &[&[u8]] = &[
    b"address",
    b"applet",
    b"area",
    b"article",
    b"aside",
    b"base",
    b"basefont",
    b"bgsound",
    b"blockquote",
    b"body",
    b"br",
    b"button",
    b"caption",
    b"center",
    b"col",
    b"colgroup",
    b"dd",
    b"details",
    b"dir",
    b"div",
    b"dl",
    b"dt",
    b"embed",
    b"fieldset",
    b"figcaption",
    b"figure",
    b"footer",
    b"form",
    b"frame",
    b"frameset",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"header",
    b"hgroup",
    b"hr",
    b"html",
    b"iframe",
    b"img",
    b"input",
    b"keygen",
    b"li",
    b"link",
    b"listing",
    b"main",
    b"marquee",
    b"menu",
    b"meta",
    b"nav",
    b"noembed",
    b"noframes",
    b"noscript",
    b"object",
    b"ol",
    b"p",
    b"param",
    b"plaintext",
    b"pre",
    b"script",
    b"search",
    b"section",
    b"select",
    b"source",
    b"style",
    b"summary",
    b"table",
    b"tbody",
    b"td",
    b"template",
    b"textarea",
    b"tfoot",
    b"th",
    b"thead",
    b"title",
    b"tr",
    b"track",
    b"ul",
    b"wbr",
    b"xmp",
];
/// Start tags that close an open `<p>` (table is left out: in quirks mode it
/// does not, and keeping the `<p>` open only overestimates).
pub(super) const CLOSES_P: &[&[u8]] = &[
    b"address",
    b"article",
    b"aside",
    b"blockquote",
    b"center",
    b"details",
    b"dialog",
    b"dir",
    b"div",
    b"dl",
    b"fieldset",
    b"figcaption",
    b"figure",
    b"footer",
    b"header",
    b"hgroup",
    b"main",
    b"menu",
    b"nav",
    b"ol",
    b"p",
    b"search",
    b"section",
    b"summary",
    b"ul",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"pre",
    b"listing",
    b"form",
    b"li",
    b"dd",
    b"dt",
];
pub(super) const HEADINGS: &[&[u8]] = &[b"h1", b"h2", b"h3", b"h4", b"h5", b"h6"];
/// Elements the parser closes by "generating implied end tags".
pub(super) const IMPLIED_END: &[&[u8]] =
    &[b"li", b"dd", b"dt", b"p", b"option", b"optgroup", b"rb", b"rp", b"rt", b"rtc"];
/// Start tags that leave SVG or MathML content for HTML.
pub(super) const BREAKOUT: &[&[u8]] = &[
    b"b",
    b"big",
    b"blockquote",
    b"body",
    b"br",
    b"center",
    b"code",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"embed",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"hr",
    b"i",
    b"img",
    b"li",
    b"listing",
    b"menu",
    b"meta",
    b"nobr",
    b"ol",
    b"p",
    b"pre",
    b"ruby",
    b"s",
    b"small",
    b"span",
    b"strong",
    b"strike",
    b"sub",
    b"sup",
    b"table",
    b"tt",
    b"u",
    b"ul",
    b"var",
];
/// Scope boundaries ("has an element in scope").
pub(super) const SCOPE: &[&[u8]] =
    &[b"applet", b"caption", b"html", b"table", b"td", b"th", b"marquee", b"object", b"template"];
pub(super) const TABLE_SCOPE: &[&[u8]] = &[b"html", b"table", b"template"];

pub(super) const F_VOID: u16 = 1;
pub(super) const F_RAW_TEXT: u16 = 1 << 1;
pub(super) const F_FORMATTING: u16 = 1 << 2;
pub(super) const F_SPECIAL: u16 = 1 << 3;
pub(super) const F_CLOSES_P: u16 = 1 << 4;
pub(super) const F_HEADING: u16 = 1 << 5;
pub(super) const F_BREAKOUT: u16 = 1 << 6;
pub(super) const F_SCOPE: u16 = 1 << 7;
pub(super) const F_TABLE_SCOPE: u16 = 1 << 8;
pub(super) const F_MARKER: u16 = 1 << 9;
/// SVG and MathML elements whose content is HTML again.
pub(super) const F_INTEGRATION: u16 = 1 << 10;
pub(super) const F_BUTTON: u16 = 1 << 11;
pub(super) const F_TABLE_PART: u16 = 1 << 12;
pub(super) const F_LIST: u16 = 1 << 13;

/// The categories a tag name belongs to (any case), looked up once per tag
/// so the scan compares bits, not names.
pub(super) fn class(name: &[u8]) -> u16 {
    // hashbrown's default hasher (foldhash): with std's SipHash this lookup was 3.1% of
    // `cluster`'s instructions on the near-duplicate corpus (callgrind), with foldhash 1.4%.
    static TABLE: std::sync::OnceLock<hashbrown::HashMap<Vec<u8>, u16>> = std::sync::OnceLock::new();
    const LONGEST: usize = 14; // annotation-xml
    if name.len() > LONGEST {
        return 0;
    }
    let mut lower = [0u8; LONGEST];
    for (l, c) in lower.iter_mut().zip(name) {
        *l = c.to_ascii_lowercase();
    }
    let table = TABLE.get_or_init(|| {
        let mut t = hashbrown::HashMap::new();
        let lists: [(&[&[u8]], u16); 14] = [
            (VOID, F_VOID),
            (RAW_TEXT, F_RAW_TEXT),
            (FORMATTING, F_FORMATTING),
            (SPECIAL, F_SPECIAL),
            (CLOSES_P, F_CLOSES_P),
            (HEADINGS, F_HEADING),
            (BREAKOUT, F_BREAKOUT),
            (SCOPE, F_SCOPE),
            (TABLE_SCOPE, F_TABLE_SCOPE),
            (MARKERS, F_MARKER),
            (
                &[b"foreignobject", b"desc", b"title", b"mi", b"mo", b"mn", b"ms", b"mtext", b"annotation-xml"],
                F_INTEGRATION,
            ),
            (&[b"button"], F_BUTTON),
            (&[b"ol", b"ul"], F_LIST),
            (&[b"table", b"td", b"th", b"tr", b"tbody", b"thead", b"tfoot", b"caption", b"colgroup"], F_TABLE_PART),
        ];
        for (names, flag) in lists {
            for n in names {
                *t.entry(n.to_vec()).or_insert(0) |= flag;
            }
        }
        t
    });
    table.get(&lower[..name.len()]).copied().unwrap_or(0)
}
