//! `--include-selector` / `--exclude-selector`: narrowing a page before extraction.

use scraper::{Html, Selector};

use super::ExtractError;

/// A CSS selector checked once, when the configuration is built.
#[derive(Debug, Clone)]
pub struct CssSelector {
    source: String,
    selector: Selector,
}

impl CssSelector {
    /// Parses `css`; the error names the selector and says what is wrong.
    pub fn parse(css: &str) -> Result<CssSelector, ExtractError> {
        let selector = Selector::parse(css)
            .map_err(|e| ExtractError::Selector { selector: css.to_string(), message: e.to_string() })?;
        Ok(CssSelector { source: css.to_string(), selector })
    }

    /// The selector as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }
}

impl PartialEq for CssSelector {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// Removes every element matching `exclude`, then, when `include` is given,
/// keeps only the elements matching it (outermost matches, in document order)
/// inside a fresh body. The `<head>` is kept, so titles and metadata survive.
///
/// A page where `include` matches nothing is returned with only the
/// exclusions applied: an empty document would hide the page silently.
pub fn apply(html: &str, include: Option<&CssSelector>, exclude: Option<&CssSelector>) -> String {
    let mut doc = Html::parse_document(html);
    if let Some(ex) = exclude {
        let ids: Vec<_> = doc.select(&ex.selector).map(|e| e.id()).collect();
        for id in ids {
            if let Some(mut node) = doc.tree.get_mut(id) {
                node.detach();
            }
        }
    }
    if let Some(inc) = include {
        let matched: Vec<_> = doc.select(&inc.selector).collect();
        let ids: Vec<_> = matched.iter().map(|e| e.id()).collect();
        // Outermost matches only: a nested match is already inside its ancestor.
        let outer: Vec<String> =
            matched.iter().filter(|e| !e.ancestors().any(|a| ids.contains(&a.id()))).map(|e| e.html()).collect();
        if !outer.is_empty() {
            let head =
                Selector::parse("head").ok().and_then(|h| doc.select(&h).next().map(|h| h.html())).unwrap_or_default();
            return format!("<!DOCTYPE html><html>{head}<body>{}</body></html>", outer.join("\n"));
        }
    }
    doc.html()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclude_removes_and_include_keeps_only_matches() {
        let html = "<html><head><title>T</title></head><body><div class=ad>Buy now</div>\
                    <main><p>Body text</p><p class=ad>Inline ad</p></main><footer>Foot</footer></body></html>";
        let inc = CssSelector::parse("main").unwrap();
        let ex = CssSelector::parse(".ad").unwrap();
        let out = apply(html, Some(&inc), Some(&ex));
        assert!(out.contains("Body text") && out.contains("<title>T</title>"), "{out}");
        assert!(!out.contains("Buy now") && !out.contains("Inline ad") && !out.contains("Foot"), "{out}");
    }

    #[test]
    fn include_matching_nothing_keeps_the_page() {
        let inc = CssSelector::parse("#missing").unwrap();
        assert!(apply("<p>Kept</p>", Some(&inc), None).contains("Kept"));
    }

    #[test]
    fn nested_include_matches_are_not_duplicated() {
        let inc = CssSelector::parse("div").unwrap();
        let out = apply("<div><div>Once</div></div>", Some(&inc), None);
        assert_eq!(out.matches("Once").count(), 1, "{out}");
    }

    #[test]
    fn invalid_selectors_are_typed_errors() {
        assert!(matches!(CssSelector::parse("div[["), Err(ExtractError::Selector { .. })));
    }
}
