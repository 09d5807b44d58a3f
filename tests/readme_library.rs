//! The README's library example, compiled and run here; the second test
//! checks that the README still shows exactly this code.

#[test]
fn the_readme_library_example_runs() -> Result<(), Box<dyn std::error::Error>> {
    // README example
    use webdup::engine::{self, Config, Corpus, Quiet};
    use webdup::extract::ExtractorKind;
    use webdup::source::{DocKey, Format, RawDocument};

    // Config::default() extracts with `blocks`, the duplicate finder's extractor;
    // `auto` is the most faithful to a page's whole text, and slower.
    let mut config = Config::default();
    config.fingerprint.extractor = ExtractorKind::Auto.to_string();
    let config = config.validate()?;
    let pages = vec![("https://example.com/a", "<html>...</html>"), ("https://example.com/b", "<html>...</html>")];
    let corpus = Corpus::build(
        pages.into_iter().enumerate().collect(),
        |(n, (url, html))| {
            // Every result names its documents by key: here, input positions.
            let key = DocKey::at(n);
            Ok(RawDocument { id: url.into(), key, format: Format::Html, body: html.into(), url: Some(url.into()) })
        },
        &config,
        &Quiet,
    );
    let clusters = engine::find_duplicates(&corpus, &config)?.clusters;
    // end of README example
    assert_eq!(corpus.len(), 2);
    assert!(clusters.is_empty());
    Ok(())
}

#[test]
fn the_readme_shows_this_example() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let library = &readme[readme.find("## Library").expect("a Library section")..];
    let block = library.split("```rust\n").nth(1).and_then(|b| b.split("```").next()).expect("a rust block");
    let this = include_str!("readme_library.rs");
    let start = this.find("// README example\n").unwrap() + "// README example\n".len();
    let end = this.find("    // end of README example").unwrap();
    let code: String = this[start..end].lines().map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l))).collect();
    assert_eq!(block, code);
}
