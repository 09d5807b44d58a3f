//! An index on a read-only file system: it can be read (stats, query,
//! audit) and every write is refused with a reason, never "unable to open
//! database file". The read-only mount is a tmpfs remounted read-only in a
//! private mount namespace (`unshare -rm`), so the test needs no root on the
//! host and leaves nothing mounted.

use std::process::Command;

#[test]
fn an_index_on_a_read_only_file_system_is_read_and_writes_are_refused_with_a_reason() {
    if std::env::var_os("WEBDUP_SKIP_UNSHARE").is_some() {
        eprintln!("skipped: WEBDUP_SKIP_UNSHARE is set");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_webdup");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("site.db");
    let o = Command::new(bin)
        .args(["index", "add", "--crawl", "c1", "--quiet", "--index"])
        .arg(&db)
        .arg("fixtures/example")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mnt = dir.path().join("ro");
    std::fs::create_dir(&mnt).unwrap();
    // Each command's exit code and output, separated by a marker line.
    let script = r#"
        set -u
        mount -t tmpfs none "$MNT" || exit 90
        cp "$DB" "$MNT/site.db" || exit 91
        mount -o remount,ro "$MNT" || exit 92
        touch "$MNT/probe" 2>/dev/null && exit 93
        run() { "$@" 2>&1; echo "@@exit $?"; }
        run "$BIN" index stats --index "$MNT/site.db"
        run "$BIN" index query --index "$MNT/site.db" fixtures/example/river-path-updated.html
        run "$BIN" audit --index "$MNT/site.db" --quiet --out "$OUT"
        run "$BIN" index add --crawl c2 --quiet --index "$MNT/site.db" fixtures/example
        run "$BIN" index remove --index "$MNT/site.db" fixtures/example/contact.html
        run "$BIN" index add --crawl c1 --quiet --index "$MNT/new.db" fixtures/example
    "#;
    let o = Command::new("unshare")
        .args(["-rm", "sh", "-c", script])
        .env("MNT", &mnt)
        .env("DB", &db)
        .env("BIN", bin)
        .env("OUT", dir.path().join("audit"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run unshare (util-linux); set WEBDUP_SKIP_UNSHARE=1 to skip this test explicitly");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "could not mount a read-only tmpfs in a user namespace ({:?}): {}{} \
         (set WEBDUP_SKIP_UNSHARE=1 to skip this test explicitly)",
        o.status.code(),
        out,
        String::from_utf8_lossy(&o.stderr)
    );
    // (exit code, output) of each command, in order.
    let mut runs: Vec<(String, String)> = Vec::new();
    let mut text = String::new();
    for line in out.lines() {
        match line.strip_prefix("@@exit ") {
            Some(code) => runs.push((code.to_string(), std::mem::take(&mut text))),
            None => text.extend([line, "\n"]),
        }
    }
    assert_eq!(runs.len(), 6, "{out}");
    let codes: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(codes, ["0", "0", "0", "2", "2", "2"], "{out}");
    let stats: serde_json::Value = serde_json::from_str(&runs[0].1).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(stats["pages"], 7, "{stats}");
    assert!(runs[1].1.contains("\"jaccard\": 1.0"), "{out}");
    assert!(dir.path().join("audit/report.json").exists());
    for (_, refused) in &runs[3..] {
        assert!(refused.contains("read-only file system"), "{out}");
        assert!(refused.contains("site.db") || refused.contains("new.db"), "{out}");
        assert!(!refused.contains("unable to open database file"), "{out}");
    }
}
