//! Which URLs a crawl may follow: the start pages' hosts, their registrable
//! domains, or the folders below them.

use url::Url;

/// How far a crawl reaches from its start pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ScopeKind {
    /// The start page's host (and port), with or without a leading `www.`,
    /// over http and https: the `www` and scheme twins SEO audits look for
    /// are in scope.
    #[default]
    Host,
    /// Every host of the start page's registrable domain (`blog.example.co.uk`
    /// from `www.example.co.uk`), as the Public Suffix List defines it.
    Domain,
    /// The start page's host, below the start page's folder (`/docs/` for
    /// `/docs/intro.html`).
    Prefix,
}

impl std::str::FromStr for ScopeKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "host" => Ok(ScopeKind::Host),
            "domain" => Ok(ScopeKind::Domain),
            "prefix" => Ok(ScopeKind::Prefix),
            other => Err(format!("unknown scope {other:?}: host, domain or prefix")),
        }
    }
}

impl std::fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScopeKind::Host => "host",
            ScopeKind::Domain => "domain",
            ScopeKind::Prefix => "prefix",
        })
    }
}

/// One start page's reach.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    /// The host without a leading `www.`, lowercase.
    host: String,
    port: Option<u16>,
    /// The registrable domain ([`ScopeKind::Domain`]); the host itself for
    /// IP addresses and names the list does not know.
    domain: String,
    /// The folder below which [`ScopeKind::Prefix`] stays.
    prefix: String,
}

/// The union of the reaches of a crawl's start pages.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    kind: ScopeKind,
    roots: Vec<Root>,
}

fn bare_host(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(host.strip_prefix("www.").map(str::to_string).unwrap_or(host))
}

fn registrable(host: &str) -> String {
    if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return host.to_string();
    }
    psl::domain_str(host).unwrap_or(host).to_string()
}

fn port(url: &Url) -> Option<u16> {
    // http://h and https://h are one site: compare explicit ports only.
    url.port()
}

impl Scope {
    /// An empty scope of `kind`: nothing is in it until [`Scope::add`].
    pub fn new(kind: ScopeKind) -> Scope {
        Scope { kind, roots: Vec::new() }
    }

    pub fn kind(&self) -> ScopeKind {
        self.kind
    }

    /// Adds a start page's reach. False (and nothing added) for a URL
    /// without a host.
    pub fn add(&mut self, start: &Url) -> bool {
        let Some(host) = bare_host(start) else {
            return false;
        };
        let path = start.path();
        let prefix = path[..path.rfind('/').map_or(0, |i| i + 1)].to_string();
        let root = Root { domain: registrable(&host), host, port: port(start), prefix };
        if !self.roots.contains(&root) {
            self.roots.push(root);
        }
        true
    }

    /// Whether a crawl may follow `url`.
    pub fn contains(&self, url: &Url) -> bool {
        if !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        let Some(host) = bare_host(url) else {
            return false;
        };
        self.roots.iter().any(|r| match self.kind {
            ScopeKind::Host => r.host == host && r.port == port(url),
            ScopeKind::Domain => r.domain == registrable(&host),
            ScopeKind::Prefix => r.host == host && r.port == port(url) && url.path().starts_with(&r.prefix),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(kind: ScopeKind, start: &str) -> Scope {
        let mut s = Scope::new(kind);
        assert!(s.add(&Url::parse(start).unwrap()));
        s
    }

    fn has(s: &Scope, url: &str) -> bool {
        s.contains(&Url::parse(url).unwrap())
    }

    #[test]
    fn host_scope_takes_www_and_scheme_twins_but_no_other_host_or_port() {
        let s = scope(ScopeKind::Host, "https://www.example.com/");
        assert!(has(&s, "http://example.com/a"));
        assert!(has(&s, "https://www.EXAMPLE.com/b?x=1"));
        assert!(!has(&s, "https://blog.example.com/"));
        assert!(!has(&s, "https://example.com:8443/"));
        assert!(!has(&s, "https://example.org/"));
        let s = scope(ScopeKind::Host, "http://127.0.0.1:8080/");
        assert!(has(&s, "http://127.0.0.1:8080/x"));
        assert!(!has(&s, "http://127.0.0.1:8081/x"));
    }

    #[test]
    fn domain_scope_uses_the_public_suffix_list() {
        let s = scope(ScopeKind::Domain, "https://www.example.co.uk/");
        assert!(has(&s, "https://blog.example.co.uk/x"));
        assert!(!has(&s, "https://other.co.uk/"));
        // github.io is a public suffix: two users' sites are two domains.
        let s = scope(ScopeKind::Domain, "https://alice.github.io/");
        assert!(!has(&s, "https://bob.github.io/"));
    }

    #[test]
    fn prefix_scope_stays_below_the_start_folder() {
        let s = scope(ScopeKind::Prefix, "https://example.com/docs/intro.html");
        assert!(has(&s, "https://example.com/docs/a/b"));
        assert!(!has(&s, "https://example.com/blog/"));
        assert!(!has(&s, "https://example.com/docsx"));
    }

    #[test]
    fn scope_names_parse_and_print() {
        for k in [ScopeKind::Host, ScopeKind::Domain, ScopeKind::Prefix] {
            assert_eq!(k.to_string().parse::<ScopeKind>(), Ok(k));
        }
        assert!("site".parse::<ScopeKind>().is_err());
    }
}
