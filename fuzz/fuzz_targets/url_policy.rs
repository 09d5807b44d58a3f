//! The URL handling of the fetcher and its policy on internal addresses:
//! the first line of the input is a URL the user names, each further line a
//! redirect's `Location`, resolved and normalized as the fetcher does, then
//! judged as reached from the user's page and as reached from a public one.
//! Invariants: nothing panics; normalization is idempotent; a URL whose host
//! is, in any spelling the URL parser or a resolver reads, a non-public
//! address is never allowed from a public page; the user's trust never
//! leaves the user's origin; `--allow-internal` refuses nothing.
#![no_main]

use std::net::{IpAddr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use webdup::fetch::policy::{FetchPolicy, Reached, Trust, address_class, host_class};
use webdup::fetch::url::{normalize, normalize_url, origin_key};

fn std_ip(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[').trim_end_matches(']').parse().ok()
}

fuzz_target!(|data: &[u8]| {
    // Addresses as raw bytes: the IPv6 forms that carry an IPv4 address are
    // judged as that address.
    if data.len() >= 16 {
        let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(&data[..16]).unwrap());
        let class = address_class(IpAddr::V6(v6));
        if let Some(v4) = v6.to_ipv4_mapped() {
            assert_eq!(class, address_class(IpAddr::V4(v4)), "{v6}");
        }
        let v4 = std::net::Ipv4Addr::new(data[0], data[1], data[2], data[3]);
        assert_eq!(address_class(IpAddr::V4(v4)), address_class(IpAddr::V6(v4.to_ipv6_mapped())));
        if v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified() || v4.is_multicast() {
            assert!(address_class(IpAddr::V4(v4)).is_some(), "{v4}");
        }
        if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
            assert!(class.is_some(), "{v6}");
        }
    }

    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let Some(first) = lines.next() else { return };
    let Ok(start) = normalize(first, false) else { return };
    let again = normalize(start.as_str(), false).expect("a normalized URL normalizes again");
    assert_eq!(again.as_str(), start.as_str(), "normalization is not idempotent for {first:?}");

    let policy = FetchPolicy::default();
    let open = FetchPolicy { allow_internal: true };
    let named = policy.check(&start, Reached::Named).expect("a named URL is always allowed");
    assert_eq!(named, Trust::Named(origin_key(&start)));

    let mut current = start;
    let mut trust = named;
    for location in lines.take(16) {
        let Ok(joined) = current.join(location.trim()) else { return };
        let Ok(next) = normalize_url(joined, false) else { return };
        let again = normalize(next.as_str(), false).expect("a normalized URL normalizes again");
        assert_eq!(again.as_str(), next.as_str(), "normalization is not idempotent for {location:?}");

        let internal_host = host_class(&next).is_some()
            || next.host_str().and_then(std_ip).and_then(address_class).is_some();
        // From a public page: a host that is an internal address is refused.
        let public = policy.check(&next, Reached::From { from: &current, trust: &Trust::Public });
        match &public {
            Ok(t) => {
                assert_eq!(*t, Trust::Public);
                assert!(!internal_host, "{next} allowed from a public page");
                assert!(policy.check_public(&next).is_ok());
            }
            Err(r) => {
                assert!(internal_host, "{next} refused but not internal: {r}");
                assert!(r.to_string().contains("--allow-internal"));
            }
        }
        assert!(open.check(&next, Reached::From { from: &current, trust: &Trust::Public }).is_ok());
        // From the user's chain: the user's trust stays on the user's origin.
        match policy.check(&next, Reached::From { from: &current, trust: &trust }) {
            Ok(Trust::Named(o)) => {
                assert_eq!(o, origin_key(&next));
                assert_eq!(trust, Trust::Named(o.clone()), "trust moved to {o}");
                trust = Trust::Named(o);
            }
            Ok(Trust::Public) => {
                assert!(!internal_host);
                trust = Trust::Public;
            }
            Err(_) => {
                assert!(internal_host);
                return;
            }
        }
        current = next;
    }
});
