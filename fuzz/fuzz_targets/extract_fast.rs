//! The `fast` extractor alone (Readability, then the cleaning rules over its
//! article HTML), many more inputs per second than `extract_shingle`, which
//! runs every extractor on each.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdup::extract::{ExtractConfig, ExtractorKind, extract_page};

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data).into_owned();
    let worker = std::thread::Builder::new().stack_size(webdup::extract::EXTRACT_STACK).spawn(move || {
        let _ = extract_page(&html, Some("https://example.com/a/b"), &ExtractConfig::new(ExtractorKind::Fast));
    });
    if let Ok(handle) = worker {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
});
