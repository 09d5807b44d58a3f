//! Page metadata that later stages (SEO audits, canonical checks) need.

use scraper::{ElementRef, Html, Selector};

pub use webdup_core::page::{Hreflang, PageMeta, forbids_indexing};

fn sel(css: &str) -> Selector {
    // The selectors below are constants; a failure is a bug caught by the tests.
    Selector::parse(css).unwrap_or_else(|_| unreachable!("constant selector {css}"))
}

fn folded(s: &str) -> Option<String> {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(s).filter(|s| !s.is_empty())
}

fn text_of(e: ElementRef) -> Option<String> {
    folded(&e.text().collect::<String>())
}

fn resolve(base: Option<&url::Url>, href: &str) -> String {
    let href = href.trim();
    match base.and_then(|b| b.join(href).ok()) {
        Some(u) => u.to_string(),
        None => href.to_string(),
    }
}

/// Reads the metadata of a parsed page; `url` resolves relative links.
pub fn page_meta(doc: &Html, url: Option<&str>) -> PageMeta {
    let base = url.and_then(|u| url::Url::parse(u).ok());
    let base = base.as_ref();
    let mut meta = PageMeta {
        title: doc.select(&sel("title")).next().and_then(text_of),
        h1: doc.select(&sel("h1")).find_map(text_of),
        language: doc.root_element().attr("lang").and_then(folded),
        ..PageMeta::default()
    };
    for m in doc.select(&sel("meta")) {
        let e = m.value();
        let content = e.attr("content").unwrap_or_default();
        let name = e.attr("name").unwrap_or_default().trim().to_ascii_lowercase();
        match name.as_str() {
            "description" if meta.description.is_none() => meta.description = folded(content),
            "robots" | "googlebot" => {
                let directives = content.to_ascii_lowercase();
                if directives.split(',').any(|d| matches!(d.trim(), "noindex" | "none")) {
                    meta.noindex = true;
                }
                if meta.robots.is_none() || name == "robots" {
                    meta.robots = folded(content);
                }
            }
            _ => {}
        }
        if meta.language.is_none()
            && e.attr("http-equiv").is_some_and(|h| h.trim().eq_ignore_ascii_case("content-language"))
        {
            meta.language = folded(content);
        }
    }
    for l in doc.select(&sel("link[rel][href]")) {
        let e = l.value();
        let rels = e.attr("rel").unwrap_or_default().to_ascii_lowercase();
        let href = e.attr("href").unwrap_or_default();
        let rels: Vec<&str> = rels.split_whitespace().collect();
        if rels.contains(&"canonical") && meta.canonical.is_none() && !href.trim().is_empty() {
            meta.canonical = Some(resolve(base, href));
        }
        if rels.contains(&"alternate")
            && let Some(lang) = e.attr("hreflang").and_then(folded)
        {
            meta.hreflang.push(Hreflang { lang, href: resolve(base, href) });
        }
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_seo_fields() {
        let html = r#"<html lang="en-GB"><head><title> A  page </title>
            <meta name="description" content="About things">
            <meta name="ROBOTS" content="NOINDEX, follow">
            <link rel="canonical" href="/a?x=1">
            <link rel="alternate" hreflang="de" href="https://example.de/a">
            <link rel="alternate" href="/feed.xml"></head>
            <body><h1></h1><h1>First <b>heading</b></h1></body></html>"#;
        let m = page_meta(&Html::parse_document(html), Some("https://example.com/b/c"));
        assert_eq!(m.title.as_deref(), Some("A page"));
        assert_eq!(m.description.as_deref(), Some("About things"));
        assert_eq!(m.h1.as_deref(), Some("First heading"));
        assert_eq!(m.canonical.as_deref(), Some("https://example.com/a?x=1"));
        assert!(m.noindex);
        assert_eq!(m.robots.as_deref(), Some("NOINDEX, follow"));
        assert_eq!(m.hreflang, vec![Hreflang { lang: "de".into(), href: "https://example.de/a".into() }]);
        assert_eq!(m.language.as_deref(), Some("en-GB"));
    }

    #[test]
    fn missing_fields_stay_empty() {
        let m = page_meta(&Html::parse_document("<p>x</p>"), None);
        assert_eq!(m, PageMeta::default());
        let m = page_meta(&Html::parse_document(r#"<meta name=robots content="index, follow">"#), None);
        assert!(!m.noindex);
    }
}
