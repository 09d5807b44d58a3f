//! The paged `report.html` of a large audit: the summary, the sections'
//! static part and each table's first screen in the file, every table's rows
//! in chunk files under `report-data/` beside it, loaded as the reader pages,
//! sorts, filters or compares (format in docs/formats.md).
//!
//! Browsers block `fetch()` of local files, so a chunk is a script that hands
//! its data to `webdupChunk(name, data)`; a `<script src>` loads from disk.
//! Sorting a million rows in the browser at each click would take seconds,
//! so every sortable column's order is written here, in chunks of row
//! numbers. Chunks are written one at a time from the audit's rows, never as
//! one value of the whole report.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Result, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::super::{Audit, AuditCluster, AuditTexts, PageRow, ValueGroup};

/// The folder beside report.html that holds the chunks.
pub const DATA_DIR: &str = "report-data";

/// Rows a table shows at once (the script's `PAGE_SIZE`): the first screen.
const SCREEN: usize = 50;

/// A sort-order chunk holds this many times a data chunk's rows: row numbers
/// are small, and a sorted screen needs one or two of them.
const ORDER_FACTOR: usize = 10;

/// URLs listed in a duplicate title, description or h1 group; pages.csv
/// has every page's.
const GROUP_URLS: usize = 200;

/// The paged report's script: the parts shared with the single file's and
/// its own.
const JS: &str = concat!(
    include_str!("head.js"),
    include_str!("paged-data.js"),
    include_str!("base.js"),
    include_str!("diff.js"),
    include_str!("members.js"),
    include_str!("paged.js"),
);

/// Scripts load only from the files beside the report; still no network.
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline' 'self' file:; img-src data:";

/// The sort key of one cell: the script's order (numbers, then strings,
/// then empty cells).
#[derive(Clone, Copy)]
enum Key<'a> {
    Num(f64),
    Str(&'a str),
    Null,
}

impl Key<'_> {
    fn cmp(self, other: Self) -> Ordering {
        match (self, other) {
            (Key::Null, Key::Null) => Ordering::Equal,
            (Key::Null, _) => Ordering::Greater,
            (_, Key::Null) => Ordering::Less,
            (Key::Num(a), Key::Num(b)) => a.total_cmp(&b),
            (Key::Str(a), Key::Str(b)) => a.cmp(b),
            (Key::Num(_), Key::Str(_)) => Ordering::Less,
            (Key::Str(_), Key::Num(_)) => Ordering::Greater,
        }
    }
}

fn num(x: impl Into<f64>) -> Key<'static> {
    Key::Num(x.into())
}

fn text(s: &str) -> Key<'_> {
    Key::Str(s)
}

fn opt_num<T: Into<f64> + Copy>(x: Option<T>) -> Key<'static> {
    x.map_or(Key::Null, num)
}

fn opt_text(s: &Option<String>) -> Key<'_> {
    s.as_deref().map_or(Key::Null, Key::Str)
}

type RowFn<'a> = Box<dyn Fn(usize, &mut dyn Write) -> Result<()> + 'a>;
type KeyFn<'a> = Box<dyn Fn(usize) -> Key<'a> + 'a>;
/// Writes more fields of the data chunk of a range of rows.
type ExtraFn<'r> = &'r dyn Fn(std::ops::Range<usize>, &mut dyn Write) -> Result<()>;

/// One table's rows, as the script reads them.
struct Table<'a> {
    name: &'static str,
    rows: usize,
    /// Writes row `i` as a JSON array.
    row: RowFn<'a>,
    /// Row `i` as the first screen embeds it, when lighter than `row`.
    light: Option<RowFn<'a>>,
    /// A sort key per column (the headers' `data-sort`), `None` for columns
    /// that do not sort.
    keys: Vec<Option<KeyFn<'a>>>,
    /// The order before any click: this column ascending, or row order.
    default_sort: Option<usize>,
}

/// Writes chunk files into one folder.
struct Chunks {
    dir: PathBuf,
    rows: usize,
}

impl Chunks {
    /// `dir/name.js`: `webdupChunk("name", DATA);` with `body` writing DATA.
    fn write(&self, name: &str, body: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
        let mut w = BufWriter::new(File::create(self.dir.join(format!("{name}.js")))?);
        write!(w, "webdupChunk(\"{name}\",")?;
        body(&mut w)?;
        w.write_all(b");\n")?;
        w.flush()
    }
}

fn json(w: &mut dyn Write, value: &impl Serialize) -> Result<()> {
    serde_json::to_writer(w, value)?;
    Ok(())
}

/// Writes `table`'s data and order chunks (with `extra` adding fields to
/// each data chunk) and returns its entry of the report's manifest.
fn write_table(t: &Table, out: &Chunks, extra: Option<ExtraFn>) -> Result<String> {
    let per = out.rows;
    for (k, start) in (0..t.rows).step_by(per).enumerate() {
        let range = start..(start + per).min(t.rows);
        out.write(&format!("{}-{k}", t.name), |w| {
            w.write_all(b"{\"rows\":[")?;
            for i in range.clone() {
                if i > start {
                    w.write_all(b",")?;
                }
                (t.row)(i, w)?;
            }
            w.write_all(b"]")?;
            if let Some(extra) = extra {
                extra(range, w)?;
            }
            w.write_all(b"}")
        })?;
    }
    let order_rows = per * ORDER_FACTOR;
    let mut first: Vec<usize> = (0..t.rows.min(SCREEN)).collect();
    let mut sorts = Vec::with_capacity(t.keys.len());
    for (col, key) in t.keys.iter().enumerate() {
        let Some(key) = key else {
            sorts.push("null".to_string());
            continue;
        };
        // Ties keep row order (a stable sort of rows in order); empty cells
        // go last, and stay last when the script reads the order backwards.
        let mut ids: Vec<u32> = (0..t.rows as u32).collect();
        ids.sort_by(|&a, &b| key(a as usize).cmp(key(b as usize)));
        let non_null = ids.iter().take_while(|&&i| !matches!(key(i as usize), Key::Null)).count();
        for (k, ids) in ids.chunks(order_rows).enumerate() {
            out.write(&format!("{}-s{col}-{k}", t.name), |w| json(w, &ids))?;
        }
        if t.default_sort == Some(col) {
            first = ids.iter().take(SCREEN).map(|&i| i as usize).collect();
        }
        sorts.push(non_null.to_string());
    }
    let mut m = format!(
        r#"{{"rows":{},"chunk":{per},"order":{order_rows},"sorts":[{}],"default":{},"first":["#,
        t.rows,
        sorts.join(","),
        t.default_sort.map_or("null".to_string(), |c| c.to_string())
    );
    for (n, &i) in first.iter().enumerate() {
        let mut row = Vec::new();
        (t.light.as_ref().unwrap_or(&t.row))(i, &mut row)?;
        let _ = write!(m, "{}[{i},{}]", if n > 0 { "," } else { "" }, String::from_utf8_lossy(&row));
    }
    m.push_str("]}");
    Ok(m)
}

/// A page's row: the single file's columns, then the closest match's URL
/// (its page row may sit in another chunk).
fn page_row(p: &PageRow, w: &mut dyn Write) -> Result<()> {
    json(
        w,
        &(
            &p.url,
            p.status,
            p.indexability,
            &p.title,
            p.words,
            p.closest_page,
            p.closest_similarity,
            p.near_duplicates,
            p.cluster,
            &p.canonical,
            p.noindex,
            &p.closest_url,
        ),
    )
}

/// A cluster's row, as the single file's; without its members when `light`.
fn cluster_row(c: &AuditCluster, light: bool, w: &mut dyn Write) -> Result<()> {
    let issues: Vec<_> = c.issues.iter().map(|i| (i.code, &i.message, i.pages.len())).collect();
    let members: Vec<_> = match light {
        true => Vec::new(),
        false => c.members.iter().map(|m| (m.page, m.similarity, m.containment, m.kind(), &m.markup)).collect(),
    };
    json(
        w,
        &(
            c.id,
            c.kind,
            c.size,
            c.min_similarity,
            c.status,
            c.handled_by,
            &c.canonical_target,
            issues,
            members,
            c.representative,
            c.severity,
            &c.cause,
            &c.keep.url,
            &c.keep.reason,
        ),
    )
}

fn group_table<'a>(name: &'static str, audit: &'a Audit, groups: &'a [ValueGroup]) -> Table<'a> {
    Table {
        name,
        rows: groups.len(),
        row: Box::new(move |i, w| {
            let g = &groups[i];
            let urls: Vec<&str> = g.pages.iter().take(GROUP_URLS).map(|&p| audit.pages[p].url.as_str()).collect();
            json(w, &(&g.value, g.pages.len(), urls))
        }),
        light: None,
        keys: Vec::new(),
        default_sort: None,
    }
}

/// A table of rows the script shows cell by cell, sortable by any column.
fn row_table<'a, T, R: Serialize>(
    name: &'static str,
    rows: &'a [T],
    cells: impl Fn(&'a T) -> R + 'a,
    keys: Vec<KeyFn<'a>>,
) -> Table<'a> {
    Table {
        name,
        rows: rows.len(),
        row: Box::new(move |i, w| json(w, &cells(&rows[i]))),
        light: None,
        keys: keys.into_iter().map(Some).collect(),
        default_sort: None,
    }
}

/// Writes `dir/report.html` and `dir/report-data/` for `audit`, `rows`
/// rows a data chunk.
pub fn write(audit: &Audit, texts: &AuditTexts, dir: &Path, rows: usize) -> Result<()> {
    let data = dir.join(DATA_DIR);
    if data.exists() {
        std::fs::remove_dir_all(&data)?;
    }
    std::fs::create_dir_all(&data)?;
    let out = Chunks { dir: data, rows: rows.max(1) };
    let mut tables: Vec<String> = Vec::new();
    let mut add = |t: Table, extra: Option<ExtraFn>| {
        let entry = write_table(&t, &out, extra)?;
        tables.push(format!(r#""{}":{entry}"#, t.name));
        Result::Ok(())
    };

    // Clusters in the audit's order (position = id - 1 when ids run from
    // 1, else the manifest maps them); the default view is by severity.
    let cl = &audit.clusters;
    let contiguous = cl.iter().enumerate().all(|(i, c)| c.id == i + 1);
    let members = |range: std::ops::Range<usize>, w: &mut dyn Write| -> Result<()> {
        w.write_all(b",\"P\":{")?;
        let mut first = true;
        for c in &cl[range] {
            for m in &c.members {
                write!(w, "{}\"{}\":", if first { "" } else { "," }, m.page)?;
                first = false;
                page_row(&audit.pages[m.page], w)?;
            }
        }
        w.write_all(b"}")
    };
    add(
        Table {
            name: "clusters",
            rows: cl.len(),
            row: Box::new(|i, w| cluster_row(&cl[i], false, w)),
            light: Some(Box::new(|i, w| cluster_row(&cl[i], true, w))),
            keys: vec![
                Some(Box::new(|i| num(cl[i].severity as f64))),
                Some(Box::new(|i| num(cl[i].id as f64))),
                Some(Box::new(|i| text(cl[i].kind))),
                Some(Box::new(|i| num(cl[i].size as f64))),
                Some(Box::new(|i| num(cl[i].min_similarity))),
                Some(Box::new(|i| text(cl[i].status))),
                Some(Box::new(|i| num(cl[i].issues.len() as f64))),
                Some(Box::new(|i| text(&cl[i].cause))),
                Some(Box::new(|i| text(&cl[i].keep.url))),
            ],
            default_sort: Some(0),
        },
        Some(&members),
    )?;
    write_texts(audit, texts, &out, contiguous)?;

    let pg = &audit.pages;
    add(
        Table {
            name: "pages",
            rows: pg.len(),
            row: Box::new(|i, w| page_row(&pg[i], w)),
            light: None,
            keys: vec![
                Some(Box::new(|i| text(&pg[i].url))),
                Some(Box::new(|i| opt_num(pg[i].status))),
                Some(Box::new(|i| text(pg[i].indexability))),
                Some(Box::new(|i| opt_text(&pg[i].title))),
                Some(Box::new(|i| opt_num(pg[i].words.map(|w| w as f64)))),
                Some(Box::new(|i| opt_text(&pg[i].closest_url))),
                Some(Box::new(|i| opt_num(pg[i].closest_similarity))),
                Some(Box::new(|i| num(pg[i].near_duplicates as f64))),
                Some(Box::new(|i| opt_num(pg[i].cluster.map(|c| c as f64)))),
            ],
            default_sort: None,
        },
        None,
    )?;

    let r = &audit.cause_rollup;
    add(
        row_table(
            "rollup",
            r,
            |x| (x.clusters, x.pages, &x.cause, &x.example_keep),
            vec![
                Box::new(|i| num(r[i].clusters as f64)),
                Box::new(|i| num(r[i].pages as f64)),
                Box::new(|i| text(&r[i].cause)),
                Box::new(|i| text(&r[i].example_keep)),
            ],
        ),
        None,
    )?;
    let p = &audit.parameters;
    add(
        row_table(
            "parameters",
            p,
            |x| (&x.name, x.kind, x.duplicate_urls, x.clusters, x.advice),
            vec![
                Box::new(|i| text(&p[i].name)),
                Box::new(|i| text(p[i].kind)),
                Box::new(|i| num(p[i].duplicate_urls as f64)),
                Box::new(|i| num(p[i].clusters as f64)),
                Box::new(|i| text(p[i].advice)),
            ],
        ),
        None,
    )?;
    let l = &audit.links_to_fix;
    add(
        row_table(
            "links",
            l,
            |x| (&x.from, &x.link, &x.to),
            vec![Box::new(|i| text(&l[i].from)), Box::new(|i| text(&l[i].link)), Box::new(|i| text(&l[i].to))],
        ),
        None,
    )?;
    let f = &audit.folded;
    add(
        row_table(
            "folded",
            f,
            |x| (&x.link, &x.folded_into, &x.cause),
            vec![
                Box::new(|i| text(&f[i].link)),
                Box::new(|i| text(&f[i].folded_into)),
                Box::new(|i| text(&f[i].cause)),
            ],
        ),
        None,
    )?;
    let sitemap = sitemap_rows(audit);
    let s = &sitemap;
    add(row_table("sitemap", s, |x| *x, vec![Box::new(|i| text(s[i].0)), Box::new(|i| text(s[i].1))]), None)?;
    add(group_table("titles", audit, &audit.duplicate_titles), None)?;
    add(group_table("descriptions", audit, &audit.duplicate_descriptions), None)?;
    add(group_table("h1s", audit, &audit.duplicate_h1s), None)?;
    let thin = &audit.thin_pages;
    add(
        Table {
            name: "thin",
            rows: thin.len(),
            row: Box::new(|i, w| {
                let p = &pg[thin[i]];
                json(w, &(&p.url, p.words, &p.title))
            }),
            light: None,
            keys: Vec::new(),
            default_sort: None,
        },
        None,
    )?;
    let e = &audit.errors;
    add(
        Table {
            name: "errors",
            rows: e.len(),
            row: Box::new(|i, w| json(w, &(&pg[e[i].page].url, pg[e[i].page].status, &e[i].kind, &e[i].message))),
            light: None,
            keys: Vec::new(),
            default_sort: None,
        },
        None,
    )?;

    let mut manifest = format!(
        r#"{{"dir":"{DATA_DIR}","threshold":{},"tables":{{{}}}"#,
        serde_json::to_string(&audit.settings.threshold)?,
        tables.join(",")
    );
    if !contiguous {
        let ids: HashMap<String, usize> = cl.iter().enumerate().map(|(i, c)| (c.id.to_string(), i)).collect();
        manifest.push_str(&format!(r#","clusterPos":{}"#, serde_json::to_string(&ids)?));
    }
    manifest.push('}');

    let mut w = BufWriter::new(File::create(dir.join("report.html"))?);
    w.write_all(super::page(audit, CSP).as_bytes())?;
    w.write_all(b"<script type=\"application/json\" id=\"audit-data\">")?;
    // As in the single file: no page text can close the script element.
    w.write_all(manifest.replace('<', "\\u003c").as_bytes())?;
    w.write_all(b"</script>\n<script>")?;
    w.write_all(JS.as_bytes())?;
    w.write_all(b"</script></body></html>\n")?;
    w.flush()
}

/// Orphan pages, then unlisted pages, as `(url, what)` rows.
fn sitemap_rows(audit: &Audit) -> Vec<(&str, &'static str)> {
    let orphans =
        audit.orphan_pages.iter().flatten().map(|u| (u.as_str(), "orphan: in the sitemap, linked from no page"));
    let unlisted = audit.unlisted_pages.iter().flatten().map(|u| (u.as_str(), "unlisted: linked, not in the sitemap"));
    orphans.chain(unlisted).collect()
}

/// `clusters-tK.js`: the texts of the clusters of data chunk K, by cluster
/// position: `B` its base text, `T` its members' edit scripts, `M` its
/// members without a stored text. Loaded only to compare two pages.
fn write_texts(audit: &Audit, texts: &AuditTexts, out: &Chunks, contiguous: bool) -> Result<()> {
    let n = audit.clusters.len();
    let pos_of: HashMap<usize, usize> = match contiguous {
        true => HashMap::new(),
        false => audit.clusters.iter().enumerate().map(|(i, c)| (c.id, i)).collect(),
    };
    let position = |id: usize| if contiguous { id.checked_sub(1) } else { pos_of.get(&id).copied() };
    // Scripts and missing pages grouped by cluster position, in one pass.
    let mut scripts: Vec<u32> = (0..texts.pages.len() as u32).collect();
    scripts.sort_by_key(|&i| texts.pages[i as usize].base);
    let mut missing: Vec<(usize, usize)> =
        texts.missing.iter().filter_map(|&p| Some((position(audit.pages.get(p)?.cluster?)?, p))).collect();
    missing.sort_unstable();
    let (mut s, mut m) = (0, 0);
    for (k, start) in (0..n).step_by(out.rows).enumerate() {
        let end = (start + out.rows).min(n);
        out.write(&format!("clusters-t{k}"), |w| {
            w.write_all(b"{\"B\":{")?;
            for pos in start..end {
                write!(w, "{}\"{pos}\":", if pos > start { "," } else { "" })?;
                json(w, &texts.bases.get(pos).map(String::as_str).unwrap_or_default())?;
            }
            w.write_all(b"},\"T\":{")?;
            let mut first = true;
            while s < scripts.len() && texts.pages[scripts[s] as usize].base < end {
                let t = &texts.pages[scripts[s] as usize];
                s += 1;
                if t.base < start {
                    continue;
                }
                write!(w, "{}\"{}\":", if first { "" } else { "," }, t.page)?;
                first = false;
                json(w, &(t.page, t.base, &t.ops))?;
            }
            w.write_all(b"},\"M\":[")?;
            let mut first = true;
            while m < missing.len() && missing[m].0 < end {
                write!(w, "{}{}", if first { "" } else { "," }, missing[m].1)?;
                first = false;
                m += 1;
            }
            w.write_all(b"]}")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_keys_order_numbers_then_text_then_empty_cells() {
        let mut keys = [Key::Null, text("b"), num(2.0), text("a"), num(-1.0), Key::Null];
        keys.sort_by(|a, b| a.cmp(*b));
        let shown: Vec<String> = keys
            .iter()
            .map(|k| match k {
                Key::Num(x) => x.to_string(),
                Key::Str(s) => s.to_string(),
                Key::Null => "-".into(),
            })
            .collect();
        assert_eq!(shown, ["-1", "2", "a", "b", "-", "-"]);
    }

    #[test]
    fn a_table_writes_its_chunks_orders_and_first_screen() {
        let dir = std::env::temp_dir().join(format!("webdup-paged-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Chunks { dir: dir.clone(), rows: 2 };
        let words = ["pear", "apple", "fig"];
        let t = Table {
            name: "t",
            rows: 3,
            row: Box::new(|i, w| json(w, &(words[i],))),
            light: None,
            keys: vec![
                Some(Box::new(|i| text(words[i]))),
                Some(Box::new(|i| if i == 1 { Key::Null } else { num(i as f64) })),
            ],
            default_sort: Some(0),
        };
        let entry = write_table(&t, &out, None).unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.join(format!("{name}.js"))).unwrap();
        assert_eq!(read("t-0"), "webdupChunk(\"t-0\",{\"rows\":[[\"pear\"],[\"apple\"]]});\n");
        assert_eq!(read("t-1"), "webdupChunk(\"t-1\",{\"rows\":[[\"fig\"]]});\n");
        assert_eq!(read("t-s0-0"), "webdupChunk(\"t-s0-0\",[1,2,0]);\n");
        assert_eq!(read("t-s1-0"), "webdupChunk(\"t-s1-0\",[0,2,1]);\n");
        assert_eq!(
            entry,
            r#"{"rows":3,"chunk":2,"order":20,"sorts":[3,2],"default":0,"first":[[1,["apple"]],[2,["fig"]],[0,["pear"]]]}"#
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
