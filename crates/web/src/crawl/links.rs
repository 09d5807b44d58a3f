//! The links a crawl follows from one page, read off its parsed HTML.
//!
//! SEO crawlers follow what a search engine would: `<a href>`, `<area href>`,
//! `<link rel=next|prev|alternate>` and the page's canonical target. Links
//! resolve against the page's `<base href>` when it is an http(s) URL, else
//! against the page's own URL, so a hostile base (`javascript:`, `data:`)
//! changes nothing. Only http and https targets are kept; fragments are
//! dropped, and a page's links are bounded in number and length, so a page
//! of a million links costs what [`MAX_LINKS`] do.

use scraper::{Html, Selector};
use url::Url;

/// Links kept per page; the rest are counted in [`PageLinks::dropped`].
pub const MAX_LINKS: usize = 10_000;

/// Longer URLs are not followed (counted in [`PageLinks::dropped`]): no
/// server answers them, and a trap can grow them without bound.
pub const MAX_URL_BYTES: usize = 2048;

/// How a page names a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// `<a href>` or `<area href>`.
    Anchor,
    /// `<link rel=next|prev|previous>`: pagination.
    Pagination,
    /// `<link rel=alternate>` (language versions, AMP, mobile).
    Alternate,
    /// `<link rel=canonical>`.
    Canonical,
}

impl LinkKind {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Anchor => "anchor",
            LinkKind::Pagination => "pagination",
            LinkKind::Alternate => "alternate",
            LinkKind::Canonical => "canonical",
        }
    }
}

/// One link: its absolute target (no fragment), how it was named, and
/// whether it said `rel=nofollow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub url: Url,
    pub kind: LinkKind,
    pub nofollow: bool,
}

/// What a page links to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// In document order; a target named twice is kept once (with the
    /// first kind, and `nofollow` only if every mention said so).
    pub links: Vec<Link>,
    /// The page asks robots not to follow its links (`<meta name=robots
    /// content=nofollow>` or `none`).
    pub nofollow: bool,
    /// Links not kept: past [`MAX_LINKS`], longer than [`MAX_URL_BYTES`],
    /// or not resolvable to an http(s) URL (`mailto:`, `javascript:`...).
    pub dropped: usize,
}

fn sel(css: &str) -> Selector {
    // Constant selectors; a failure is a bug the tests catch.
    Selector::parse(css).unwrap_or_else(|_| unreachable!("constant selector {css}"))
}

/// True when a robots directive list (a meta tag's content or an
/// `X-Robots-Tag` header) says not to follow links.
pub fn forbids_following(directives: &str) -> bool {
    directives.split([',', ' ']).any(|d| matches!(d.trim().to_ascii_lowercase().as_str(), "nofollow" | "none"))
}

fn has_token(list: Option<&str>, token: &str) -> bool {
    list.is_some_and(|l| l.split_ascii_whitespace().any(|t| t.eq_ignore_ascii_case(token)))
}

/// The links of a parsed page served from `page_url`.
pub fn page_links(doc: &Html, page_url: &Url) -> PageLinks {
    let base = doc
        .select(&sel("base[href]"))
        .next()
        .and_then(|b| page_url.join(b.value().attr("href")?.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .unwrap_or_else(|| page_url.clone());
    let mut out = PageLinks::default();
    for m in doc.select(&sel("meta[name][content]")) {
        let e = m.value();
        let name = e.attr("name").unwrap_or_default().trim();
        if (name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case("googlebot"))
            && forbids_following(e.attr("content").unwrap_or_default())
        {
            out.nofollow = true;
        }
    }
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for e in doc.select(&sel("a[href], area[href], link[href][rel]")) {
        let v = e.value();
        let rel = v.attr("rel");
        let kind = match v.name() {
            "link" if has_token(rel, "canonical") => LinkKind::Canonical,
            "link" if has_token(rel, "next") || has_token(rel, "prev") || has_token(rel, "previous") => {
                LinkKind::Pagination
            }
            "link" if has_token(rel, "alternate") => LinkKind::Alternate,
            "link" => continue,
            _ => LinkKind::Anchor,
        };
        let href = v.attr("href").unwrap_or_default().trim();
        let Some(mut url) = base.join(href).ok().filter(|u| matches!(u.scheme(), "http" | "https")) else {
            out.dropped += 1;
            continue;
        };
        url.set_fragment(None);
        if url.as_str().len() > MAX_URL_BYTES || url.host_str().is_none_or(str::is_empty) {
            out.dropped += 1;
            continue;
        }
        let nofollow = has_token(rel, "nofollow");
        if let Some(&i) = index.get(url.as_str()) {
            out.links[i].nofollow &= nofollow;
            continue;
        }
        if out.links.len() >= MAX_LINKS {
            out.dropped += 1;
            continue;
        }
        index.insert(url.as_str().to_string(), out.links.len());
        out.links.push(Link { url, kind, nofollow });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(html: &str) -> PageLinks {
        page_links(&Html::parse_document(html), &Url::parse("https://example.com/a/b.html").unwrap())
    }

    fn urls(l: &PageLinks) -> Vec<&str> {
        l.links.iter().map(|l| l.url.as_str()).collect()
    }

    #[test]
    fn follows_anchors_areas_pagination_alternates_and_the_canonical() {
        let l = links(
            r##"<head><link rel=canonical href="/c"><link rel="next" href="?page=2"><link rel=alternate hreflang=de href="/de/b">
            <link rel=stylesheet href="/s.css"></head><body><a href="x.html#top">x</a><map><area href="/map"></map>
            <a href="#only-a-fragment">same page</a></body>"##,
        );
        assert_eq!(
            urls(&l),
            [
                "https://example.com/c",
                "https://example.com/a/b.html?page=2",
                "https://example.com/de/b",
                "https://example.com/a/x.html",
                "https://example.com/map",
                "https://example.com/a/b.html",
            ]
        );
        let kinds: Vec<LinkKind> = l.links.iter().map(|l| l.kind).collect();
        assert_eq!(kinds[..3], [LinkKind::Canonical, LinkKind::Pagination, LinkKind::Alternate]);
        assert!(!l.nofollow);
    }

    #[test]
    fn other_schemes_are_dropped_and_counted() {
        let l = links(
            r#"<a href="mailto:a@b.c">m</a><a href="javascript:alert(1)">j</a><a href="data:text/html,x">d</a>
            <a href="file:///etc/passwd">f</a><a href="ftp://example.com/x">f</a><a href="/ok">ok</a>"#,
        );
        assert_eq!(urls(&l), ["https://example.com/ok"]);
        assert_eq!(l.dropped, 5);
    }

    #[test]
    fn a_hostile_base_is_ignored_and_a_good_one_used() {
        let l = links(r#"<base href="javascript:alert(1)//"><a href="x">x</a>"#);
        assert_eq!(urls(&l), ["https://example.com/a/x"]);
        let l = links(r#"<base href="https://cdn.example.org/root/"><a href="x">x</a>"#);
        assert_eq!(urls(&l), ["https://cdn.example.org/root/x"]);
    }

    #[test]
    fn nofollow_links_and_pages_are_marked() {
        let l = links(r#"<meta name="ROBOTS" content="index, nofollow"><a rel="external nofollow" href="/n">n</a>"#);
        assert!(l.nofollow);
        assert!(l.links[0].nofollow);
        // Named twice, once followable: followable.
        let l = links(r#"<a rel=nofollow href="/n">n</a><a href="/n">n</a>"#);
        assert_eq!(l.links.len(), 1);
        assert!(!l.links[0].nofollow);
        assert!(links(r#"<meta name=robots content=none>"#).nofollow);
        assert!(!links(r#"<meta name=robots content="noindex">"#).nofollow);
    }

    #[test]
    fn a_page_of_a_million_links_keeps_a_bounded_number() {
        let mut html = String::from("<body>");
        for i in 0..MAX_LINKS + 500 {
            html.push_str(&format!("<a href=\"/p{i}\">p</a>"));
        }
        html.push_str(&format!("<a href=\"/{}\">long</a>", "x".repeat(MAX_URL_BYTES)));
        let l = links(&html);
        assert_eq!(l.links.len(), MAX_LINKS);
        assert_eq!(l.dropped, 501);
    }
}
