//! What a response, a cache entry or a reqwest error becomes: a page's body
//! and content type, the fetch record's fields, a cache entry, a wait, an
//! error kind (which decides whether a fetch is retried).

use std::time::{Duration, SystemTime};

use ::url::Url;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};

use super::cache::{CACHE_VERSION, Entry};
use super::client::Response;
use super::policy::ResolvedInternal;
use super::{FetchError, FetchErrorKind, FetchRecord};

pub(super) fn too_large(limit: u64) -> FetchError {
    FetchError::new(FetchErrorKind::TooLarge, format!("body larger than the {limit} byte limit"))
}

pub(super) fn status_error(status: StatusCode) -> FetchError {
    FetchError::new(FetchErrorKind::HttpStatus, format!("HTTP {status}"))
}

/// Turns the final response of a page into its body and content type.
pub(super) fn page_body(resp: Response) -> Result<(Vec<u8>, Option<String>), FetchError> {
    if !resp.status.is_success() {
        let mut e = status_error(resp.status);
        if let Some(ra) = resp.headers.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()) {
            e.message.push_str(&format!(" (Retry-After: {ra})"));
        }
        return Err(e);
    }
    let ct = resp.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
    Ok((resp.body.unwrap_or_default(), ct))
}

pub(super) fn entry_result(entry: &Entry, body: Vec<u8>) -> Result<(Vec<u8>, Option<String>), FetchError> {
    let status = entry.chain.last().map_or(0, |h| h.status);
    match StatusCode::from_u16(status) {
        Ok(s) if s.is_success() => Ok((body, entry.content_type.clone())),
        Ok(s) => Err(status_error(s)),
        Err(_) => Err(FetchError::new(FetchErrorKind::Internal, format!("cache entry with status {status}"))),
    }
}

pub(super) fn header_string(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<&str> = headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
    (!values.is_empty()).then(|| values.join(", "))
}

pub(super) fn fill_from_headers(record: &mut FetchRecord, headers: &HeaderMap, base: &Url) {
    record.fill_headers(|name| header_string(headers, name), Some(base));
}

pub(super) fn fill_from_entry(record: &mut FetchRecord, e: &Entry) {
    record.chain = e.chain.clone();
    record.final_url = e.chain.last().map(|h| h.url.clone());
    record.status = e.chain.last().map(|h| h.status);
    record.content_type = e.content_type.clone();
    record.last_modified = e.last_modified.clone();
    record.etag = e.etag.clone();
    record.canonical = e.canonical.clone();
    record.x_robots_tag = e.x_robots_tag.clone();
}

pub(super) fn entry_of(record: &FetchRecord, url: &str, body_len: u64) -> Entry {
    Entry {
        version: CACHE_VERSION,
        url: url.to_string(),
        chain: record.chain.clone(),
        content_type: record.content_type.clone(),
        last_modified: record.last_modified.clone(),
        etag: record.etag.clone(),
        canonical: record.canonical.clone(),
        x_robots_tag: record.x_robots_tag.clone(),
        body_len,
    }
}

/// `Retry-After` as a wait: delta-seconds or an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// Sorts a reqwest error into a kind. reqwest does not expose DNS or TLS
/// failures as types, so the error chain is inspected: a `rustls::Error`
/// inside is TLS; hyper-util's resolver failures read "dns error".
pub(super) fn classify(e: &reqwest::Error) -> FetchError {
    let mut chain = Vec::new();
    let mut tls = false;
    let mut protocol = false;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(refused) = err.downcast_ref::<ResolvedInternal>() {
            return FetchError::new(FetchErrorKind::InternalAddress, refused.to_string());
        }
        chain.push(err.to_string());
        tls |= is_rustls(err);
        // A response hyper could not parse: the server speaks something
        // else than HTTP, and will again on a retry.
        protocol |= err.downcast_ref::<hyper::Error>().is_some_and(|h| h.is_parse() || h.is_parse_status());
        cur = err.source();
    }
    chain.dedup();
    let text = chain.join(": ");
    let lower = text.to_ascii_lowercase();
    let kind = if e.is_timeout() {
        FetchErrorKind::Timeout
    } else if tls || lower.contains("certificate") || lower.contains("tls handshake") {
        FetchErrorKind::Tls
    } else if protocol {
        FetchErrorKind::Protocol
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        FetchErrorKind::Dns
    } else if e.is_connect() {
        FetchErrorKind::Connect
    } else if e.is_decode() {
        FetchErrorKind::Decode
    } else if e.is_body() {
        FetchErrorKind::Body
    } else {
        FetchErrorKind::Connect
    };
    FetchError::new(kind, text)
}

/// True if `err` is a rustls error, possibly wrapped in (nested) `io::Error`s,
/// whose `source()` skips the wrapped error.
pub(super) fn is_rustls(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = err;
    for _ in 0..8 {
        if cur.is::<rustls::Error>() {
            return true;
        }
        match cur.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => cur = inner,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert(header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
