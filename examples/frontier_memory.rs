//! The crawl frontier's memory with a million URLs queued: 100 start pages
//! each linking to 10,000 distinct in-scope URLs (a realistic length, ~70
//! bytes), observed and then cut into the next level, as `Fetcher::crawl`
//! does. Driven by `scripts/bench-crawl.sh`, which reads the peak RSS from
//! `/usr/bin/time -v`.
//!
//! Usage: `frontier_memory [URLS]` (default 1,000,000).

use url::Url;
use webdup::DocKey;
use webdup::crawl::{Frontier, Limits, Link, LinkKind, PageLinks, Scope, ScopeKind};

fn main() {
    let total: usize = std::env::args().nth(1).map_or(1_000_000, |n| n.parse().expect("URLS must be a number"));
    let per_page = 10_000;
    let start = Url::parse("https://www.example.com/").expect("constant URL");
    let mut frontier = Frontier::new(Scope::new(ScopeKind::Host), Limits::default());
    frontier.add_start(&start);
    frontier.started(1);
    let pages = total.div_ceil(per_page);
    for p in 0..pages {
        let links: Vec<Link> = (0..per_page.min(total - p * per_page))
            .map(|i| {
                let n = p * per_page + i;
                let url = format!("https://www.example.com/catalogue/section-{}/item-{n:07}-blue-widget.html", n % 97);
                Link { url: Url::parse(&url).expect("generated URL"), kind: LinkKind::Anchor, nofollow: false }
            })
            .collect();
        let links = PageLinks { links, nofollow: false, dropped: 0 };
        frontier.observe(DocKey(p as u64), &start, None, Some(&links), None, None);
    }
    let queued = frontier.queued();
    let next = frontier.next_level();
    println!("queued {queued} URLs; next level {} URLs", next.len());
}
