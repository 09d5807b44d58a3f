//! Requests a browser can be made to send: the checks that keep a web page
//! from writing to (CSRF) or reading (DNS rebinding) a server on this
//! machine that has no token.
//!
//! - `Host` must name the address the connection came in on (on loopback
//!   also `localhost` and the other loopback spellings, with the same port),
//!   or a name given with [`ServeConfig::allowed_hosts`]: a page whose DNS
//!   name was re-pointed at 127.0.0.1 sends its own name, and is refused 421.
//! - `Origin`, when a browser sends one, must be the server's own origin or
//!   one of [`ServeConfig::cors_origins`] (which also get CORS answers, and
//!   their preflights); any other is refused 403.
//! - A `POST` must be `Content-Type: application/json` (any parameters): a
//!   form or a `text/plain` body, which a browser sends cross-origin without
//!   asking first, is refused 415. A `DELETE` carries no body and is never
//!   sent cross-origin without a preflight, which the origin rule refuses,
//!   so it needs no content type; one it does carry must be JSON.
//!
//! `/health` is exempt (a probe names the server however its network does):
//! it answers `{"status":"ok"}` and nothing else.

#![allow(clippy::result_large_err)]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::{ServeConfig, failure};

/// The address a connection was accepted on: [`super::serve`] puts it in
/// every request's extensions, for the `Host` check (the configured bind
/// address may be port 0 or a wildcard).
#[derive(Debug, Clone, Copy)]
pub(super) struct LocalAddr(pub SocketAddr);

/// The checks, made once from the configuration.
pub(super) struct Guard {
    bind: SocketAddr,
    hosts: Vec<Authority>,
    cors: Vec<String>,
}

/// A host name (lower case, IPv6 without brackets) and maybe a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Authority {
    name: String,
    port: Option<u16>,
}

impl Authority {
    /// `name`, `name:port`, `1.2.3.4:port`, `[::1]:port`; `None` for
    /// anything else (an empty name, a bad port, an unbracketed IPv6).
    pub(super) fn parse(s: &str) -> Option<Authority> {
        let s = s.trim();
        let (name, port) = if let Some(rest) = s.strip_prefix('[') {
            let (ip, after) = rest.split_once(']')?;
            ip.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':')?.parse::<u16>().ok()?),
            };
            (ip, port)
        } else {
            match s.rsplit_once(':') {
                Some((name, port)) => (name, Some(port.parse::<u16>().ok()?)),
                None => (s, None),
            }
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        let valid = !name.is_empty()
            && (!name.contains(':') || name.parse::<IpAddr>().is_ok())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
        valid.then_some(Authority { name, port })
    }
}

/// Checks a `--allow-host` value.
pub(super) fn allowed_host(s: &str) -> Result<Authority, String> {
    Authority::parse(s)
        .ok_or_else(|| format!("--allow-host {s:?}: expected a host name or address, with an optional :PORT"))
}

/// Checks a `--cors` value and gives it as browsers send it in `Origin`:
/// `scheme://host[:port]`, lower case, no path.
pub(super) fn cors_origin(s: &str) -> Result<String, String> {
    let bad = || format!("--cors {s:?}: expected an origin such as https://app.example.com or http://localhost:3000");
    let lower = s.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = lower.split_once("://").ok_or_else(bad)?;
    if !matches!(scheme, "http" | "https") || authority.contains('/') || Authority::parse(authority).is_none() {
        return Err(bad());
    }
    Ok(lower)
}

impl Guard {
    pub(super) fn new(config: &ServeConfig) -> Guard {
        Guard {
            bind: config.bind,
            // Validated by `ServeConfig::validate`; a library caller that
            // skipped it loses only the entries that cannot be read.
            hosts: config.allowed_hosts.iter().filter_map(|h| Authority::parse(h)).collect(),
            cors: config.cors_origins.iter().filter_map(|o| cors_origin(o).ok()).collect(),
        }
    }

    /// Whether `host` (a `Host` header) names this server, reached on
    /// `local`.
    pub(super) fn host_allowed(&self, host: &str, local: SocketAddr) -> bool {
        let Some(h) = Authority::parse(host) else { return false };
        let port = h.port.unwrap_or(80);
        if self.hosts.iter().any(|a| a.name == h.name && a.port.is_none_or(|p| p == port)) {
            return true;
        }
        if port != local.port() {
            return false;
        }
        let here = local.ip().to_canonical();
        match h.name.parse::<IpAddr>() {
            Ok(ip) => {
                let ip = ip.to_canonical();
                ip == here || (ip.is_loopback() && here.is_loopback()) || here.is_unspecified()
            }
            Err(_) => h.name == "localhost" && here.is_loopback(),
        }
    }

    /// Whether `origin` is listed with `--cors`.
    fn cors_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.cors.contains(&origin)
    }
}

/// Whether `origin` (an `Origin` header) is the origin of a page served
/// from `host` (the request's `Host`, already checked): same host and port,
/// the port defaulting by scheme on both sides.
fn same_origin(origin: &str, host: &str) -> bool {
    let origin = origin.to_ascii_lowercase();
    let Some((scheme, authority)) = origin.split_once("://") else { return false };
    let default = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    match (Authority::parse(authority), Authority::parse(host)) {
        (Some(o), Some(h)) => o.name == h.name && o.port.unwrap_or(default) == h.port.unwrap_or(default),
        _ => false,
    }
}

fn header(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// A refusal made before the body is read: the connection cannot be reused.
fn refuse(status: StatusCode, message: String) -> Response {
    let mut r = failure(status, message);
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The middleware: see the module documentation.
pub(super) async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if request.uri().path() == "/health" && matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let local = request.extensions().get::<LocalAddr>().map_or(g.bind, |l| l.0);
    let headers = request.headers();
    // HTTP/1.1 requires `Host`; an absolute-form request line carries it.
    let host =
        header(headers, header::HOST).map(str::to_owned).or_else(|| request.uri().authority().map(|a| a.to_string()));
    let Some(host) = host else {
        return refuse(StatusCode::BAD_REQUEST, "the request has no Host header".into());
    };
    if !g.host_allowed(&host, local) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "Host {host:?} is not this server's address ({local}): refused, as a page whose DNS name was \
                 pointed at this machine would be; if clients reach the server by that name, start it with \
                 --allow-host NAME"
            ),
        );
    }
    let origin = header(headers, header::ORIGIN).map(str::to_owned);
    let cors = origin.as_deref().filter(|o| g.cors_allowed(o)).map(str::to_owned);
    if let Some(o) = &origin
        && cors.is_none()
        && !same_origin(o, &host)
    {
        return refuse(
            StatusCode::FORBIDDEN,
            format!(
                "cross-origin request from {o:?} refused: a web page may use this server only when it is \
                 started with --cors ORIGIN"
            ),
        );
    }
    if let Some(o) = &cors
        && request.method() == Method::OPTIONS
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        return preflight(o);
    }
    let content_type = header(headers, header::CONTENT_TYPE);
    let json =
        content_type.is_some_and(|t| t.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"));
    let needs_json = match *request.method() {
        Method::GET | Method::HEAD | Method::OPTIONS => false,
        Method::DELETE => content_type.is_some(),
        _ => true,
    };
    if needs_json && !json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{} needs Content-Type: application/json (got {}); a web page's form cannot send that, so \
                 none can write to this server",
                request.method(),
                content_type.map_or("none".to_owned(), |t| format!("{t:?}"))
            ),
        );
    }
    let mut response = next.run(request).await;
    if let Some(o) = cors {
        allow_origin(response.headers_mut(), &o);
    }
    response
}

fn allow_origin(headers: &mut HeaderMap, origin: &str) {
    if let Ok(v) = HeaderValue::from_str(origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
    }
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
}

/// The answer to a CORS preflight from an origin given with `--cors`.
fn preflight(origin: &str) -> Response {
    let mut r = Response::new(axum::body::Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    allow_origin(h, origin);
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("authorization, content-type"));
    h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(hosts: &[&str], bind: &str) -> Guard {
        let config = ServeConfig {
            bind: bind.parse().unwrap(),
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            token: Some("t".into()),
            ..ServeConfig::default()
        };
        Guard::new(&config)
    }

    #[test]
    fn host_check_takes_the_bound_address_and_loopback_names_and_refuses_rebound_names() {
        let g = guard(&[], "127.0.0.1:8080");
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for ok in
            ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080", "127.0.0.2:8080", "localhost.:8080"]
        {
            assert!(g.host_allowed(ok, local), "{ok}");
        }
        for refused in [
            "evil.test:8080",
            "evil.test",
            "localhost:9090",
            "localhost",
            "127.0.0.1",
            "10.0.0.1:8080",
            "",
            "[::1",
            "a b:8080",
        ] {
            assert!(!g.host_allowed(refused, local), "{refused}");
        }
        // Off loopback: the address the connection came in on, not localhost.
        let g = guard(&["crawl.example.com", "proxy.test:443"], "0.0.0.0:8080");
        let local: SocketAddr = "192.0.2.7:8080".parse().unwrap();
        assert!(g.host_allowed("192.0.2.7:8080", local));
        assert!(!g.host_allowed("localhost:8080", local));
        assert!(g.host_allowed("crawl.example.com", local));
        assert!(g.host_allowed("crawl.example.com:9999", local));
        assert!(g.host_allowed("proxy.test:443", local));
        assert!(!g.host_allowed("proxy.test", local));
    }

    #[test]
    fn same_origin_defaults_ports_by_scheme() {
        assert!(same_origin("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(same_origin("http://localhost", "localhost:80"));
        assert!(same_origin("https://api.test", "api.test:443"));
        assert!(!same_origin("http://localhost:3000", "localhost:8080"));
        assert!(!same_origin("null", "localhost:8080"));
        assert!(!same_origin("http://evil.test:8080", "127.0.0.1:8080"));
    }

    #[test]
    fn cors_and_allow_host_values_are_checked() {
        assert_eq!(cors_origin("HTTP://LocalHost:3000/").unwrap(), "http://localhost:3000");
        for bad in ["localhost:3000", "ftp://x", "http://x/path", "*", "http://"] {
            assert!(cors_origin(bad).is_err(), "{bad}");
        }
        assert!(allowed_host("a.example").is_ok());
        assert!(allowed_host("a.example:x").is_err());
        assert!(allowed_host("http://a").is_err());
    }
}
