//! The page-cost guard against the parser it stands in front of: whatever
//! the bytes, the depth html5ever really builds is at most the scan's depth
//! plus the misnesting it counted (the margin `guard::check` relies on), and
//! a page the guard passes at a small limit is never deeper than the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdup::extract::PageBudget;
use webdup::extract::guard::{check, dom_depth, scan};

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let unlimited = PageBudget {
        max_depth: usize::MAX,
        max_elements: usize::MAX,
        max_attribute_work: u64::MAX,
        max_nesting_work: u64::MAX,
    };
    let cost = scan(&html, &unlimited);
    let real = dom_depth(&html);
    assert!(real <= cost.depth + cost.misnested, "html5ever nests {real} deep, the scan says {cost:?}");
    let small = PageBudget { max_depth: 48, ..PageBudget::default() };
    if check(&html, &small).is_ok() {
        assert!(real <= small.max_depth, "passed at limit {} but html5ever nests {real} deep", small.max_depth);
    }
});
