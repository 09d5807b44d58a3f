//! robots.txt rules for one origin, as RFC 9309 asks a crawler to read them.
//!
//! Parsing and matching are left to `texting_robots` (longest match wins,
//! `Allow` wins ties, `*` and `$` wildcards); this module decides what an
//! absent or failing robots.txt means.

use std::time::Duration;

/// The longest `Crawl-delay` honoured: a larger value would stall a run for
/// hours on one site, so the page is still fetched, just this slowly.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);

/// What robots.txt allows for our agent on one origin.
#[derive(Debug)]
pub enum Rules {
    /// No usable robots.txt (404, unreachable host): everything is allowed.
    AllowAll,
    /// robots.txt answered 5xx: RFC 9309 §2.3.1.3 asks to assume complete
    /// disallow; the reason is kept for the error message.
    DisallowAll(String),
    /// A parsed robots.txt.
    Parsed(Box<texting_robots::Robot>),
}

impl Rules {
    /// Parses a robots.txt body for `agent` (the product token, e.g. `webdup`).
    /// A file that cannot be parsed allows everything, as RFC 9309 says for
    /// unparseable lines.
    pub fn parse(agent: &str, body: &[u8]) -> Rules {
        match texting_robots::Robot::new(agent, body) {
            Ok(r) => Rules::Parsed(Box::new(r)),
            Err(_) => Rules::AllowAll,
        }
    }

    /// `Ok` when `url` may be fetched, else why not.
    pub fn check(&self, url: &str) -> Result<(), String> {
        match self {
            Rules::AllowAll => Ok(()),
            Rules::DisallowAll(why) => Err(why.clone()),
            Rules::Parsed(r) if r.allowed(url) => Ok(()),
            Rules::Parsed(_) => Err("disallowed by robots.txt".to_string()),
        }
    }

    /// The `Crawl-delay` asked for, capped at [`MAX_CRAWL_DELAY`].
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Rules::Parsed(r) => r
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f32(d.min(MAX_CRAWL_DELAY.as_secs_f32()))),
            _ => None,
        }
    }
}

/// The product token that robots.txt groups are matched against: the user
/// agent up to the first `/` or space (`webdup/0.1 (...)` → `webdup`).
pub fn product_token(user_agent: &str) -> &str {
    let end = user_agent.find(['/', ' ']).unwrap_or(user_agent.len());
    &user_agent[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_group_wins_over_star() {
        let txt = b"User-agent: *\nDisallow: /\n\nUser-agent: webdup\nDisallow: /private\nCrawl-delay: 2\n";
        let r = Rules::parse("webdup", txt);
        assert!(r.check("http://h/public").is_ok());
        assert!(r.check("http://h/private/x").is_err());
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(2)));
        let other = Rules::parse("otherbot", txt);
        assert!(other.check("http://h/public").is_err());
    }

    #[test]
    fn huge_crawl_delay_is_capped_and_garbage_allows() {
        let r = Rules::parse("webdup", b"User-agent: *\nCrawl-delay: 99999\n");
        assert_eq!(r.crawl_delay(), Some(MAX_CRAWL_DELAY));
        assert!(Rules::parse("webdup", b"\xff\xfe garbage \x00\x01").check("http://h/").is_ok());
    }

    #[test]
    fn product_token_of_user_agent() {
        assert_eq!(product_token("webdup/0.1.0 (duplicate finder)"), "webdup");
        assert_eq!(product_token("mybot"), "mybot");
    }
}
