//! Which addresses a fetch may reach: the one place every request asks.
//!
//! A page on the web must not be able to make webdup fetch from this
//! machine or its network (server-side request forgery): a redirect to
//! `http://127.0.0.1:8080/admin`, to `169.254.169.254` (a cloud's metadata
//! service) or to a name that resolves to a private address would otherwise
//! put an internal answer into the report and the index.
//!
//! The rule:
//! - A URL the user names directly (an input URL, a sitemap named on the
//!   command line, the entries of a local list or sitemap) may be internal:
//!   the user chose it. From it, only its own origin (scheme, host and port)
//!   may be internal too: `http://127.0.0.1:3000/` may redirect to
//!   `http://127.0.0.1:3000/home`, not to `http://127.0.0.1:6379/` or
//!   `http://localhost:3000/`.
//! - Every other URL (a redirect to another origin, an entry of a remote
//!   sitemap on another origin, a robots.txt reached that way, a link) must
//!   be public: its host must not be, nor resolve to, a loopback, private,
//!   link-local, shared (CGNAT), multicast, unspecified, broadcast,
//!   documentation or otherwise reserved address ([`address_class`]).
//! - `--allow-internal` ([`crate::fetch::FetchConfig::allow_internal`])
//!   turns the rule off.
//!
//! The check is made twice, for two kinds of host. A host written as an IP
//! address (in any spelling the URL standard accepts: `2130706433`,
//! `0x7f000001`, `127.1`, `[::ffff:127.0.0.1]` all parse to an address) is
//! checked by [`FetchPolicy::check`] before any request. A host name is
//! checked when the connection is made, on the addresses it actually
//! resolved to (a resolver that filters them, so a name cannot resolve to a
//! public address when checked and to a private one when connected). A
//! refused URL is an error of its own kind (`internal_address`) for that
//! document only, never retried.
//!
//! When a proxy is configured (`HTTPS_PROXY`...), the proxy resolves names;
//! only hosts written as addresses are checked then.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use super::url::origin_key;

/// Why an address is not public. `None` from [`address_class`] means public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// 0.0.0.0/8, `::`.
    Unspecified,
    /// 127.0.0.0/8, `::1`, `localhost`.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16.
    Private,
    /// 100.64.0.0/10, carrier-grade NAT.
    Shared,
    /// 169.254/16 (with the metadata service 169.254.169.254), fe80::/10.
    LinkLocal,
    /// fc00::/7.
    UniqueLocal,
    /// 224/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18/15.
    Benchmarking,
    /// Anything else not meant to be reached as a public host: 240/4,
    /// 192.0.0/24, IPv4-compatible and site-local IPv6, IPv6 outside
    /// 2000::/3, Teredo and the other 2001::/23 assignments.
    Reserved,
}

impl AddressClass {
    /// A short name for messages: `loopback`, `private`, ...
    pub fn as_str(&self) -> &'static str {
        match self {
            AddressClass::Unspecified => "unspecified",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::Shared => "shared (CGNAT)",
            AddressClass::LinkLocal => "link-local",
            AddressClass::UniqueLocal => "unique local",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Documentation => "documentation",
            AddressClass::Benchmarking => "benchmarking",
            AddressClass::Reserved => "reserved",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The class of a non-public address, `None` for a public one. IPv6 forms
/// that carry an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64
/// `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`) are judged by that address.
pub fn address_class(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    let class = match (a, b, c) {
        (0, ..) => AddressClass::Unspecified,
        (10, ..) => AddressClass::Private,
        (100, 64..=127, _) => AddressClass::Shared,
        (127, ..) => AddressClass::Loopback,
        (169, 254, _) => AddressClass::LinkLocal,
        (172, 16..=31, _) => AddressClass::Private,
        (192, 0, 0) => AddressClass::Reserved,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddressClass::Documentation,
        (192, 88, 99) => AddressClass::Reserved,
        (192, 168, _) => AddressClass::Private,
        (198, 18..=19, _) => AddressClass::Benchmarking,
        (224..=239, ..) => AddressClass::Multicast,
        _ if ip.is_broadcast() => AddressClass::Broadcast,
        (240..=255, ..) => AddressClass::Reserved,
        _ => return None,
    };
    Some(class)
}

fn v6_class(ip: Ipv6Addr) -> Option<AddressClass> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_class(v4);
    }
    if ip.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if ip.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    // ::a.b.c.d, IPv4-compatible: deprecated, and a way to spell 127.0.0.1.
    if s[..6] == [0; 6] {
        return Some(AddressClass::Reserved);
    }
    // NAT64 (RFC 6052): reaches the IPv4 address it carries.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return v4_class(embedded(s[6], s[7]));
    }
    // 6to4 (RFC 3056): the relay reaches the IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return v4_class(embedded(s[1], s[2]));
    }
    let class = match s[0] {
        0xff00..=0xffff => AddressClass::Multicast,
        0xfe80..=0xfebf => AddressClass::LinkLocal,
        0xfec0..=0xfeff => AddressClass::Reserved,
        0xfc00..=0xfdff => AddressClass::UniqueLocal,
        0x2001 if s[1] == 0x0db8 => AddressClass::Documentation,
        0x3fff if s[1] <= 0x0fff => AddressClass::Documentation,
        // Teredo, ORCHID, benchmarking and the other protocol assignments.
        0x2001 if s[1] < 0x0200 => AddressClass::Reserved,
        // Global unicast is 2000::/3; the rest is unassigned or special.
        0x2000..=0x3fff => return None,
        _ => AddressClass::Reserved,
    };
    Some(class)
}

/// The class of a URL's host when the host itself says it is not public:
/// an IP address in any spelling, or `localhost` and its subdomains (RFC
/// 6761: they resolve to loopback). `None` for any other name, which is
/// checked on its resolved addresses when connecting.
pub fn host_class(url: &Url) -> Option<AddressClass> {
    match url.host()? {
        Host::Ipv4(ip) => v4_class(ip),
        Host::Ipv6(ip) => v6_class(ip),
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") {
                return Some(AddressClass::Loopback);
            }
            // The URL parser turns every address spelling into an address;
            // this only guards against a resolver that reads more spellings.
            let bare = d.trim_start_matches('[').trim_end_matches(']');
            bare.parse::<IpAddr>().ok().and_then(address_class)
        }
    }
}

/// What the URLs reached from a fetched URL may be.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Trust {
    /// Named by the user: this origin (`scheme://host:port`, as
    /// [`origin_key`] writes it) may be internal, and URLs on it reached
    /// from here keep that trust.
    Named(String),
    /// Reached from somewhere the user did not name: public addresses only.
    Public,
}

/// How a URL came to be fetched.
#[derive(Debug, Clone, Copy)]
pub enum Reached<'a> {
    /// The user named it directly.
    Named,
    /// Found while fetching `from` (a redirect's Location, a sitemap's
    /// entry, a link), which was fetched with `trust`.
    From { from: &'a Url, trust: &'a Trust },
}

/// A URL the policy refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The refused URL.
    pub url: String,
    /// Its host and port, as written (`127.0.0.1:8080`, `[::1]:80`, `localhost:3000`).
    pub address: String,
    pub class: AddressClass,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "internal address {} ({}) refused; --allow-internal allows it", self.address, self.class)
    }
}

impl std::error::Error for Refusal {}

/// The fetch policy; see the [module documentation](self).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchPolicy {
    /// Fetch internal addresses from anywhere (`--allow-internal`).
    pub allow_internal: bool,
}

impl FetchPolicy {
    /// Decides whether `url`, reached as `reached`, may be fetched, and with
    /// which trust: the user's own origin keeps [`Trust::Named`], anything
    /// else is [`Trust::Public`] and is refused when its host is written as
    /// a non-public address (names are checked on connect, by
    /// [`FetchPolicy::allows`]).
    pub fn check(&self, url: &Url, reached: Reached<'_>) -> Result<Trust, Refusal> {
        let origin = origin_key(url);
        match reached {
            Reached::Named => return Ok(Trust::Named(origin)),
            Reached::From { trust: Trust::Named(named), .. } if *named == origin => return Ok(Trust::Named(origin)),
            Reached::From { .. } => {}
        }
        self.check_public(url)?;
        Ok(Trust::Public)
    }

    /// Refuses `url` when it must be public ([`Trust::Public`]) and its
    /// host is written as a non-public address.
    pub fn check_public(&self, url: &Url) -> Result<(), Refusal> {
        if self.allow_internal {
            return Ok(());
        }
        match host_class(url) {
            None => Ok(()),
            Some(class) => Err(Refusal { url: url.to_string(), address: host_port(url), class }),
        }
    }

    /// True if a URL that must be public may connect to `ip`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.allow_internal || address_class(ip).is_none()
    }
}

/// `host:port` of a URL for messages, the port explicit.
fn host_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// A host name that resolved only to addresses a public URL may not reach.
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub(crate) struct ResolvedInternal {
    pub host: String,
    pub ip: IpAddr,
    pub class: AddressClass,
}

#[cfg(feature = "http")]
impl fmt::Display for ResolvedInternal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolves to internal address {} ({}), refused; --allow-internal allows it",
            self.host, self.ip, self.class
        )
    }
}

#[cfg(feature = "http")]
impl std::error::Error for ResolvedInternal {}

/// The resolver of the client that fetches [`Trust::Public`] URLs: it
/// resolves as the system does, then drops every address the policy does
/// not allow, so the check is on the address connected to, not on a name.
#[cfg(feature = "http")]
pub(crate) struct PublicResolver;

#[cfg(feature = "http")]
impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let policy = FetchPolicy { allow_internal: false };
            let resolved: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let (allowed, refused): (Vec<_>, Vec<_>) = resolved.into_iter().partition(|a| policy.allows(a.ip()));
            if allowed.is_empty()
                && let Some(a) = refused.first()
            {
                let class = address_class(a.ip()).unwrap_or(AddressClass::Reserved);
                return Err(Box::new(ResolvedInternal { host, ip: a.ip(), class }) as _);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        address_class(s.parse().unwrap())
    }

    #[test]
    fn address_check_table() {
        use AddressClass::*;
        let table: &[(&str, Option<AddressClass>)] = &[
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("100.63.255.255", None),
            ("100.64.0.1", Some(Shared)),
            ("100.127.255.255", Some(Shared)),
            ("100.128.0.0", None),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.254.0.1", Some(LinkLocal)),
            ("172.15.255.255", None),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.32.0.0", None),
            ("192.0.0.8", Some(Reserved)),
            ("192.0.2.1", Some(Documentation)),
            ("192.88.99.1", Some(Reserved)),
            ("192.168.1.1", Some(Private)),
            ("198.18.0.1", Some(Benchmarking)),
            ("198.51.100.7", Some(Documentation)),
            ("203.0.113.9", Some(Documentation)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            ("93.184.216.34", None),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.0.0.1", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:93.184.216.34", None),
            ("::127.0.0.1", Some(Reserved)),
            ("::93.184.216.34", Some(Reserved)),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("64:ff9b::93.184.216.34", None),
            ("64:ff9b:1::1", Some(Reserved)),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:a00:1::1", Some(Private)),
            ("2002:5db8:d822::1", None),
            ("2001::1", Some(Reserved)),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456::1", Some(UniqueLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(Reserved)),
            ("ff02::1", Some(Multicast)),
            ("100::1", Some(Reserved)),
            ("4000::1", Some(Reserved)),
            ("2606:2800:220:1:248:1893:25c8:1946", None),
            ("2a00:1450:4001:80b::200e", None),
        ];
        for (ip, want) in table {
            assert_eq!(class(ip), *want, "{ip}");
            let policy = FetchPolicy::default();
            assert_eq!(policy.allows(ip.parse().unwrap()), want.is_none(), "{ip}");
            assert!(FetchPolicy { allow_internal: true }.allows(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn every_spelling_of_an_internal_host_is_seen_in_the_url() {
        let spellings = [
            "http://127.0.0.1:9/",
            "http://2130706433:9/",
            "http://0x7f000001:9/",
            "http://0x7f.0.0.1:9/",
            "http://0177.0.0.1:9/",
            "http://017700000001:9/",
            "http://127.1:9/",
            "http://127.0.1:9/",
            "http://[::1]:9/",
            "http://[0:0:0:0:0:0:0:1]:9/",
            "http://[::ffff:127.0.0.1]:9/",
            "http://[::ffff:7f00:1]:9/",
            "http://[::127.0.0.1]:9/",
            "http://[64:ff9b::7f00:1]:9/",
            "http://[2002:7f00:1::]:9/",
            "http://localhost:9/",
            "http://LOCALHOST.:9/",
            "http://app.localhost:9/",
            "http://169.254.169.254/latest/meta-data/",
            "http://2852039166/",
            "http://[::ffff:a9fe:a9fe]/",
            "http://10.0.0.1/",
            "http://012.0.0.1/",
            "http://0/",
            "http://0.0.0.0:9/",
            "http://[fe80::1]/",
            "http://[fc00::1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://100.64.0.1/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
        ];
        for s in spellings {
            let url = Url::parse(s).unwrap();
            assert!(host_class(&url).is_some(), "{s} parsed to host {:?}", url.host());
        }
        for s in
            ["http://93.184.216.34/", "http://example.com/", "http://localhost.example.com/", "http://[2606:4700::1]/"]
        {
            assert_eq!(host_class(&Url::parse(s).unwrap()), None, "{s}");
        }
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_named_origin_may_be_internal_and_only_it() {
        let policy = FetchPolicy::default();
        let named = url("http://127.0.0.1:3000/start");
        let trust = policy.check(&named, Reached::Named).unwrap();
        assert_eq!(trust, Trust::Named("http://127.0.0.1:3000".into()));
        let from = |to: &str| policy.check(&url(to), Reached::From { from: &named, trust: &trust });
        assert_eq!(from("http://127.0.0.1:3000/home"), Ok(trust.clone()));
        for refused in [
            "http://127.0.0.1:6379/",
            "http://localhost:3000/",
            "https://127.0.0.1:3000/",
            "http://[::1]:3000/",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://[::ffff:10.0.0.1]/",
        ] {
            let r = from(refused).unwrap_err();
            assert_eq!(r.url, url(refused).to_string());
            assert!(r.to_string().contains("--allow-internal"), "{r}");
        }
        assert_eq!(from("http://example.com/").unwrap(), Trust::Public);
        let r = from("http://[::1]:3000/").unwrap_err();
        assert_eq!((r.address.as_str(), r.class), ("[::1]:3000", AddressClass::Loopback));
        assert_eq!(from("http://127.0.0.1:6379/").unwrap_err().address, "127.0.0.1:6379");
        assert_eq!(from("http://169.254.169.254/").unwrap_err().address, "169.254.169.254:80");
    }

    #[test]
    fn a_public_page_reaches_public_addresses_only() {
        let policy = FetchPolicy::default();
        let public = url("https://example.com/");
        let trust = policy.check(&public, Reached::Named).unwrap();
        let from = |to: &str| policy.check(&url(to), Reached::From { from: &public, trust: &trust });
        assert_eq!(from("https://example.com/a"), Ok(trust.clone()));
        assert_eq!(from("https://www.example.com/a"), Ok(Trust::Public));
        assert!(from("http://127.0.0.1/").is_err());
        assert!(from("http://0x7f000001/").is_err());
        // Once public, always public: the user's internal origin is not
        // reachable through a page the user did not name.
        let hop = url("https://cdn.example.net/");
        let internal = url("http://127.0.0.1:3000/");
        assert!(policy.check(&internal, Reached::From { from: &hop, trust: &Trust::Public }).is_err());
        let open = FetchPolicy { allow_internal: true };
        assert_eq!(open.check(&internal, Reached::From { from: &hop, trust: &Trust::Public }), Ok(Trust::Public));
    }
}
