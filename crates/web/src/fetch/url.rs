//! URL normalization, so that one page named two ways is fetched once.
//!
//! The `url` crate already lowercases the scheme and host, removes default
//! ports and resolves dot segments (WHATWG rules); on top of that the
//! fragment is dropped (it never reaches the server) and, unless asked to
//! keep the query as is, parameters that only track the visitor are removed.

use url::Url;

/// Why a string could not become a fetchable URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not a valid URL: {0}")]
    Invalid(String),
    #[error("only http and https URLs are fetched, not {0}:")]
    Scheme(String),
}

/// True for parameters dropped by [`normalize`] unless the query is kept
/// (the core's list: [`webdup_core::params`]).
pub fn is_tracking_param(name: &str) -> bool {
    webdup_core::params::kind(name) == webdup_core::params::ParamKind::Tracking
}

/// Parses and normalizes `input`; `keep_query` leaves the query untouched.
pub fn normalize(input: &str, keep_query: bool) -> Result<Url, UrlError> {
    let url = Url::parse(input.trim()).map_err(|e| UrlError::Invalid(e.to_string()))?;
    normalize_url(url, keep_query)
}

/// Normalizes an already parsed URL (a redirect target, a sitemap entry).
pub fn normalize_url(mut url: Url, keep_query: bool) -> Result<Url, UrlError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(url.scheme().to_string()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::Invalid("no host".into()));
    }
    url.set_fragment(None);
    if !keep_query && url.query().is_some() {
        let kept: Vec<(String, String)> = url
            .query_pairs()
            .filter(|(k, _)| !is_tracking_param(k))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if kept.is_empty() {
            url.set_query(None);
        } else {
            let before = url.query_pairs().count();
            // Re-serializing changes the encoding of untouched parameters, so
            // only do it when something was actually removed.
            if kept.len() != before {
                url.query_pairs_mut().clear().extend_pairs(kept);
            }
        }
    }
    Ok(url)
}

/// The key under which politeness and robots.txt are tracked: scheme, host
/// and port, as RFC 9309 scopes a robots.txt file.
pub fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s, false).unwrap().to_string()
    }

    #[test]
    fn scheme_host_port_and_fragment() {
        assert_eq!(n("HTTP://Example.COM:80/a/../b#frag"), "http://example.com/b");
        assert_eq!(n("https://example.com:443"), "https://example.com/");
        assert_eq!(n("https://example.com:8443/x"), "https://example.com:8443/x");
    }

    #[test]
    fn tracking_params_removed_unless_kept() {
        assert_eq!(n("http://e.com/p?utm_source=x&id=3&UTM_Medium=y&fbclid=z"), "http://e.com/p?id=3");
        assert_eq!(n("http://e.com/p?gclid=1&_ga=2"), "http://e.com/p");
        assert_eq!(n("http://e.com/p?b=%20x&a=1"), "http://e.com/p?b=%20x&a=1");
        let kept = normalize("http://e.com/p?utm_source=x#f", true).unwrap().to_string();
        assert_eq!(kept, "http://e.com/p?utm_source=x");
    }

    #[test]
    fn only_http_and_https() {
        assert_eq!(normalize("ftp://e.com/x", false), Err(UrlError::Scheme("ftp".into())));
        assert!(matches!(normalize("not a url", false), Err(UrlError::Invalid(_))));
        assert!(matches!(normalize("file:///etc/passwd", false), Err(UrlError::Scheme(_))));
    }
}
