//! `webdup lost-and-found`: the redirect map as data (JSON, CSV) or as
//! server configuration (nginx, Apache, a CDN's bulk-redirect CSV).

use std::io::{self, Write};

use webdup_seo::lost_and_found::{Redirect, RedirectMap};

use super::{SafeCsvWriter, write_json};
use crate::error::Result;

/// How a [`RedirectMap`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectFormat {
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

/// An old URL the format cannot express, left out of what was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The old URL.
    pub url: String,
    /// Why the format cannot express it.
    pub why: &'static str,
}

/// Writes `map` in `format`. The redirects the format cannot express are
/// left out and returned, so that the caller names them rather than drop
/// them silently.
///
/// JSON: the whole map. CSV: one row per old URL, `kind` saying whether it
/// is a redirect to add, unmatched, or already redirected.
pub fn write_redirects(map: &RedirectMap, format: RedirectFormat, out: &mut dyn Write) -> Result<Vec<Skipped>> {
    let mut skipped = Vec::new();
    match format {
        RedirectFormat::Json => write_json(map, out)?,
        RedirectFormat::Csv => write_csv(map, out)?,
        RedirectFormat::Nginx => write_nginx(map, out, &mut skipped)?,
        RedirectFormat::Apache => write_apache(map, out, &mut skipped)?,
        RedirectFormat::BulkCsv => {
            let mut w = SafeCsvWriter::new(b',', out);
            for r in &map.redirects {
                let Some(src) = http_source(r, &mut skipped) else { continue };
                match src.query {
                    None => w.write_record([format!("{}{}", src.host, src.path).as_str(), &r.new_url, "301"])?,
                    Some(_) => skip(&mut skipped, r, "bulk redirects match no query string"),
                }
            }
            w.flush()?;
        }
    }
    Ok(skipped)
}

fn write_csv(map: &RedirectMap, out: &mut dyn Write) -> Result<()> {
    let mut w = SafeCsvWriter::new(b',', out);
    w.write_record(["kind", "old_url", "new_url", "reason", "jaccard", "containment", "confidence", "evidence"])?;
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
        let best =
            u.best_url.as_deref().map_or(String::new(), |b| format!("closest {b} (jaccard {:.6})", u.best_jaccard));
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

/// The parts of `r`'s old URL when it is http(s); otherwise `r` is skipped.
fn http_source(r: &Redirect, skipped: &mut Vec<Skipped>) -> Option<Source> {
    let src = Source::of(&r.old_url);
    if src.is_none() {
        skip(skipped, r, "not an http(s) URL");
    }
    src
}

fn skip(skipped: &mut Vec<Skipped>, r: &Redirect, why: &'static str) {
    skipped.push(Skipped { url: r.old_url.clone(), why });
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
fn write_nginx(map: &RedirectMap, out: &mut dyn Write, skipped: &mut Vec<Skipped>) -> io::Result<()> {
    header(map, out)?;
    writeln!(out, "# In the http block; in each server block:")?;
    writeln!(out, "#     if ($webdup_redirect) {{ return 301 $webdup_redirect; }}")?;
    writeln!(out, "map $host$request_uri $webdup_redirect {{")?;
    writeln!(out, "    default \"\";")?;
    for r in &map.redirects {
        let Some(src) = http_source(r, skipped) else { continue };
        let key = match &src.query {
            Some(q) => format!("{}{}?{}", src.host, src.path, q),
            None => format!("{}{}", src.host, src.path),
        };
        // `$` would start a variable in either string, and nginx has no escape for it.
        if [key.as_str(), r.new_url.as_str()].iter().any(|s| s.contains('$') || s.chars().any(char::is_control)) {
            skip(skipped, r, "nginx cannot quote a '$' or a control character");
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
fn write_apache(map: &RedirectMap, out: &mut dyn Write, skipped: &mut Vec<Skipped>) -> io::Result<()> {
    header(map, out)?;
    writeln!(out, "# mod_rewrite, in the site's VirtualHost or its .htaccess (Apache 2.4).")?;
    writeln!(out, "RewriteEngine On")?;
    for r in &map.redirects {
        let Some(src) = http_source(r, skipped) else { continue };
        if r.new_url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            skip(skipped, r, "its new URL has a space or control character");
            continue;
        }
        // mod_rewrite matches the path percent-decoded.
        let decoded = percent_encoding::percent_decode_str(&src.path).decode_utf8_lossy();
        let path = decoded.strip_prefix('/').unwrap_or(&decoded);
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            skip(skipped, r, "its path has a space or control character");
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

#[cfg(test)]
mod tests {
    use super::*;
    use webdup_seo::lost_and_found::Confidence;

    fn redirect(old_url: &str, new_url: &str) -> Redirect {
        Redirect {
            old_url: old_url.into(),
            new_url: new_url.into(),
            reason: "gone".into(),
            jaccard: 1.0,
            containment: 1.0,
            title_match: true,
            confidence: Confidence::High,
            evidence: String::new(),
        }
    }

    fn map(redirects: Vec<Redirect>) -> RedirectMap {
        RedirectMap {
            old_crawl: "v1".into(),
            new_crawl: "v2".into(),
            old_pages: redirects.len(),
            unchanged: 0,
            redirects,
            unmatched: Vec::new(),
            already_redirected: Vec::new(),
        }
    }

    #[test]
    fn what_a_format_cannot_express_is_returned_in_map_order() {
        let map = map(vec![
            redirect("https://a.test/$x", "https://a.test/y"),
            redirect("file:///old.html", "https://a.test/new"),
            redirect("https://a.test/kept", "https://a.test/new"),
        ]);
        let mut out = Vec::new();
        let skipped = write_redirects(&map, RedirectFormat::Nginx, &mut out).unwrap();
        let why: Vec<(&str, &str)> = skipped.iter().map(|s| (s.url.as_str(), s.why)).collect();
        assert_eq!(
            why,
            [
                ("https://a.test/$x", "nginx cannot quote a '$' or a control character"),
                ("file:///old.html", "not an http(s) URL"),
            ]
        );
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("    \"a.test/kept\" \"https://a.test/new\";\n"), "{out}");
        assert!(!out.contains("old.html") && !out.contains("$x"), "{out}");
    }
}
