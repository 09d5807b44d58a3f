//! The evaluation reads both data-set layouts and scores what it extracts.

use std::io::Write;
use std::path::Path;

use webdup::engine::Quiet;
use webdup::extract::ExtractorKind;
use webdup_eval::extract::{DatasetKind, EvalError, EvalOptions, evaluate};

const BODY: &str = "The river rose slowly through the night and by morning the lower fields were under water, \
                    so the farmers moved their animals to the hill pastures before the bridge was closed.";

fn page(body: &str) -> String {
    format!(
        "<html><head><title>Flood</title></head><body><nav><a href=/>Home</a> <a href=/news>News desk</a></nav>\
         <main><p>{body}</p></main><footer>Copyright 2026 The Valley Paper, all rights reserved</footer></body></html>"
    )
}

fn write_gz(path: &Path, text: &str) {
    let file = std::fs::File::create(path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

fn options(extractors: Vec<ExtractorKind>) -> EvalOptions {
    EvalOptions { extractors, per_page: true, threads: Some(1), ..EvalOptions::default() }
}

#[test]
fn aeb_layout_is_detected_and_scored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("html")).unwrap();
    let mut truth = serde_json::Map::new();
    for (id, body) in [("a1", BODY.to_string()), ("a2", BODY.replace("river", "stream"))] {
        write_gz(&dir.path().join(format!("html/{id}.html.gz")), &page(&body));
        truth.insert(id.into(), serde_json::json!({ "articleBody": body, "url": format!("https://example.com/{id}") }));
    }
    std::fs::write(dir.path().join("ground-truth.json"), serde_json::to_string(&truth).unwrap()).unwrap();

    let report = evaluate(dir.path(), &options(vec![ExtractorKind::None]), &Quiet).unwrap();
    assert_eq!(report.dataset, DatasetKind::Aeb);
    assert_eq!(report.pages, 2);
    let none = &report.extractors[0];
    // The `none` extractor drops nav and footer, so it finds exactly the body.
    assert!((none.overall.f1 - 1.0).abs() < 1e-9, "{report}");
    assert!(none.by_type.is_empty());
    assert!(none.pages_per_second > 0.0);
    assert!(report.to_string().contains("none"));
}

#[test]
fn wcxb_layout_reports_page_types_and_skips_pages_without_truth() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("html")).unwrap();
    std::fs::create_dir(dir.path().join("ground-truth")).unwrap();
    let entries = [
        ("0001", "article", Some(BODY)),
        ("0002", "product", Some("Blue kettle, two litres, in stock")),
        ("0003", "forum", None),
    ];
    for (id, kind, truth) in entries {
        write_gz(&dir.path().join(format!("html/{id}.html.gz")), &page(truth.unwrap_or("nothing")));
        let json = serde_json::json!({
            "url": format!("https://shop.example/{id}"),
            "_internal": { "page_type": { "primary": kind } },
            "ground_truth": { "main_content": truth },
        });
        std::fs::write(dir.path().join(format!("ground-truth/{id}.json")), json.to_string()).unwrap();
    }
    let report = evaluate(dir.path(), &options(ExtractorKind::ALL.to_vec()), &Quiet).unwrap();
    assert_eq!(report.dataset, DatasetKind::Wcxb);
    assert_eq!(report.pages, 2);
    assert_eq!(report.skipped, vec!["0003".to_string()]);
    for r in &report.extractors {
        assert_eq!(r.by_type.keys().cloned().collect::<Vec<_>>(), vec!["article".to_string(), "product".to_string()]);
        assert_eq!(r.pages.len(), 2);
    }
}

#[test]
fn unknown_directories_and_empty_extractor_lists_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(evaluate(dir.path(), &EvalOptions::default(), &Quiet), Err(EvalError::UnknownLayout(_))));
    assert!(matches!(evaluate(dir.path(), &options(Vec::new()), &Quiet), Err(EvalError::NoExtractor)));
}
