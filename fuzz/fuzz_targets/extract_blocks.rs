//! The `blocks` extractor alone (the strip pass, the survey and the block
//! walk), many more inputs per second than `extract_shingle`, which runs
//! every extractor on each. libfuzzer's panic hook aborts even on panics
//! that `extract` would catch and count as "found nothing".
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdup::extract::{ExtractConfig, ExtractorKind, extract_page};

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data).into_owned();
    let worker = std::thread::Builder::new().stack_size(webdup::extract::EXTRACT_STACK).spawn(move || {
        let _ = extract_page(&html, Some("https://example.com/a/b"), &ExtractConfig::new(ExtractorKind::Blocks));
    });
    if let Ok(handle) = worker {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
});
