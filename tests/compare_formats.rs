//! `webdup compare -f csv|tsv` writes one header row and one data row with
//! the JSON's fields, not the terminal table.

use std::process::Command;

#[test]
fn compare_writes_csv_and_tsv_not_the_table() {
    let run = |format: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_webdup"))
            .args(["compare", "fixtures/example/river-path-print.html", "fixtures/example/river-path-updated.html"])
            .args(["-f", format])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    for (format, delimiter) in [("csv", b','), ("tsv", b'\t')] {
        let text = run(format);
        let mut r = csv::ReaderBuilder::new().delimiter(delimiter).from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1, "{format}: {text}");
        let field = |name: &str| rows[0][header.iter().position(|h| h == name).unwrap()].to_string();
        assert_eq!(field("a"), "fixtures/example/river-path-print.html");
        let jaccard: f64 = field("jaccard").parse().unwrap();
        assert!((jaccard - json["jaccard"].as_f64().unwrap()).abs() < 1e-6, "{format}: {text}");
        assert_eq!(field("duplicate"), json["duplicate"].to_string());
        assert_eq!(field("only_in_b"), json["only_in_b"].to_string());
    }
}
