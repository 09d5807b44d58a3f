//! `webdup lost-and-found`: a redirect map from an old crawl to a new one.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};

use webdup::store::lost_and_found::{self, Options, Redirect, RedirectMap};

use super::index::IndexFile;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MapFormat {
    /// The whole map: redirects, unmatched and already redirected URLs.
    Json,
    /// One row per old URL, with its kind, reason and evidence.
    Csv,
    /// An nginx `map` from `$host$request_uri` to the new URL.
    Nginx,
    /// Apache mod_rewrite rules (a VirtualHost or .htaccess).
    Apache,
    /// `source,target,status` rows as CDNs' bulk-redirect imports take them
    /// (Cloudflare Bulk Redirects: source without scheme, no query string).
    BulkCsv,
}

#[derive(Debug, Args)]
pub struct LostAndFoundArgs {
    #[command(flatten)]
    pub index: IndexFile,
    /// The crawl before the change.
    #[arg(long)]
    pub old: String,
    /// The crawl after the change.
    #[arg(long)]
    pub new: String,
    /// Output: the map as data (json, csv), or as server configuration
    /// (nginx, apache, bulk-csv); old URLs a format cannot express are named
    /// on stderr.
    #[arg(long, value_enum, default_value = "json")]
    pub format: MapFormat,
    /// Write the map to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Least Jaccard for a match on content alone.
    #[arg(long, default_value_t = 0.5)]
    pub min_jaccard: f64,
    /// Least share of the old page's text found in a new page (merged pages).
    #[arg(long, default_value_t = 0.8)]
    pub min_containment: f64,
}

pub fn run(args: LostAndFoundArgs) -> anyhow::Result<ExitCode> {
    for (name, v) in [("min-jaccard", args.min_jaccard), ("min-containment", args.min_containment)] {
        if !(v > 0.0 && v <= 1.0) {
            anyhow::bail!("--{name} must be in (0, 1], not {v}");
        }
    }
    // The index's own settings decide everything compared here.
    let index = webdup::store::Index::open_existing(&args.index.path)?;
    let options =
        Options { min_jaccard: args.min_jaccard, min_containment: args.min_containment, ..Options::default() };
    let map = lost_and_found::lost_and_found(&index, &args.old, &args.new, &options)?;
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = io::BufWriter::new(file);
            write(&map, args.format, &mut w).with_context(|| format!("cannot write {}", path.display()))?;
            w.flush()?;
        }
        None => {
            let mut w = io::BufWriter::new(io::stdout().lock());
            write(&map, args.format, &mut w)?;
            w.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// JSON: the whole map. CSV: one row per old URL, `kind` saying whether it
/// is a redirect to add, unmatched, or already redirected.
fn write(map: &RedirectMap, format: MapFormat, out: &mut dyn Write) -> anyhow::Result<()> {
    match format {
        MapFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, map)?;
            writeln!(out)?;
        }
        MapFormat::Csv => {
            let mut w = webdup::report::SafeCsvWriter::new(b',', out);
            w.write_record([
                "kind",
                "old_url",
                "new_url",
                "reason",
                "jaccard",
                "containment",
                "confidence",
                "evidence",
            ])?;
            for r in &map.redirects {
                w.write_record([
                    "redirect",
                    &r.old_url,
                    &r.new_url,
                    &r.reason,
                    &format!("{:.6}", r.jaccard),
                    &format!("{:.6}", r.containment),
                    r.confidence.as_str(),
                    &r.evidence,
                ])?;
            }
            for u in &map.unmatched {
                let best = u
                    .best_url
                    .as_deref()
                    .map_or(String::new(), |b| format!("closest {b} (jaccard {:.6})", u.best_jaccard));
                w.write_record(["unmatched", &u.old_url, "", &u.reason, "", "", "", &best])?;
            }
            for a in &map.already_redirected {
                w.write_record([
                    "already_redirected",
                    &a.old_url,
                    &a.final_url,
                    "redirects",
                    &format!("{:.6}", a.jaccard),
                    &format!("{:.6}", a.containment),
                    "",
                    "",
                ])?;
            }
            w.flush()?;
        }
        MapFormat::Nginx => write_nginx(map, out)?,
        MapFormat::Apache => write_apache(map, out)?,
        MapFormat::BulkCsv => {
            let mut w = webdup::report::SafeCsvWriter::new(b',', out);
            for (r, src) in http_redirects(map) {
                match src.query {
                    None => w.write_record([format!("{}{}", src.host, src.path).as_str(), &r.new_url, "301"])?,
                    Some(_) => skipped(&r.old_url, "bulk redirects match no query string"),
                }
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// The parts of an old URL a server matches on.
struct Source {
    host: String,
    path: String,
    query: Option<String>,
}

impl Source {
    fn of(url: &str) -> Option<Source> {
        let u = url::Url::parse(url).ok()?;
        if !matches!(u.scheme(), "http" | "https") {
            return None;
        }
        Some(Source {
            host: u.host_str()?.to_ascii_lowercase(),
            path: u.path().to_string(),
            query: u.query().map(str::to_string),
        })
    }
}

/// The redirects whose old URL is http(s), with its parts; the others are
/// named on stderr.
fn http_redirects(map: &RedirectMap) -> impl Iterator<Item = (&Redirect, Source)> {
    map.redirects.iter().filter_map(|r| {
        let src = Source::of(&r.old_url);
        if src.is_none() {
            skipped(&r.old_url, "not an http(s) URL");
        }
        src.map(|src| (r, src))
    })
}

/// An old URL a format cannot express: named on stderr, not dropped silently.
fn skipped(url: &str, why: &str) {
    eprintln!("webdup: left {} out of the map: {why}", webdup::report::terminal_safe(url));
}

fn header(map: &RedirectMap, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# webdup lost-and-found: crawl {:?} -> {:?}, {} redirects (301).",
        map.old_crawl,
        map.new_crawl,
        map.redirects.len()
    )
}

/// `map $host$request_uri $webdup_redirect { ... }`; the server block then
/// needs `if ($webdup_redirect) { return 301 $webdup_redirect; }`.
fn write_nginx(map: &RedirectMap, out: &mut dyn Write) -> io::Result<()> {
    header(map, out)?;
    writeln!(out, "# In the http block; in each server block:")?;
    writeln!(out, "#     if ($webdup_redirect) {{ return 301 $webdup_redirect; }}")?;
    writeln!(out, "map $host$request_uri $webdup_redirect {{")?;
    writeln!(out, "    default \"\";")?;
    for (r, src) in http_redirects(map) {
        let key = match &src.query {
            Some(q) => format!("{}{}?{}", src.host, src.path, q),
            None => format!("{}{}", src.host, src.path),
        };
        // `$` would start a variable in either string, and nginx has no escape for it.
        if [key.as_str(), r.new_url.as_str()].iter().any(|s| s.contains('$') || s.chars().any(char::is_control)) {
            skipped(&r.old_url, "nginx cannot quote a '$' or a control character");
            continue;
        }
        writeln!(out, "    {} {};", nginx_quote(&key), nginx_quote(&r.new_url))?;
    }
    writeln!(out, "}}")
}

fn nginx_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// mod_rewrite rules, one host at a time; an old URL's query string must
/// match exactly, and is dropped from the target (`QSD`).
fn write_apache(map: &RedirectMap, out: &mut dyn Write) -> io::Result<()> {
    header(map, out)?;
    writeln!(out, "# mod_rewrite, in the site's VirtualHost or its .htaccess (Apache 2.4).")?;
    writeln!(out, "RewriteEngine On")?;
    for (r, src) in http_redirects(map) {
        if r.new_url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            skipped(&r.old_url, "its new URL has a space or control character");
            continue;
        }
        // mod_rewrite matches the path percent-decoded.
        let decoded = percent_encoding::percent_decode_str(&src.path).decode_utf8_lossy();
        let path = decoded.strip_prefix('/').unwrap_or(&decoded);
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            skipped(&r.old_url, "its path has a space or control character");
            continue;
        }
        // Conditions only once the rule is sure to follow: they bind to the
        // next RewriteRule, whichever it is.
        writeln!(out, "RewriteCond %{{HTTP_HOST}} ^{}$ [NC]", regex::escape(&src.host))?;
        if let Some(q) = &src.query {
            writeln!(out, "RewriteCond %{{QUERY_STRING}} ^{}$", regex::escape(q))?;
        }
        // In the substitution, `$N` and `%N` are back-references; NE keeps
        // the new URL's own percent-escapes as they are.
        let target = r.new_url.replace('\\', "\\\\").replace('$', "\\$").replace('%', "\\%");
        writeln!(out, "RewriteRule ^/?{}$ {} [R=301,L,QSD,NE]", regex::escape(path), target)?;
    }
    Ok(())
}
