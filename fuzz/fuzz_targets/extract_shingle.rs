//! Any bytes, decoded as a page, must extract with every extractor and
//! shingle without panicking; libFuzzer's `-timeout` bounds the time per page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdup::extract::{ExtractConfig, ExtractorKind, extract_page};
use webdup::shingle::{ShingleConfig, Shingler};

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    // The engine and the CLI run extraction on threads with this stack; so does the fuzzer.
    let html = html.into_owned();
    let worker = std::thread::Builder::new().stack_size(webdup::extract::EXTRACT_STACK).spawn(move || {
        let shingler = Shingler::new(ShingleConfig::default());
        for kind in ExtractorKind::ALL {
            let config = ExtractConfig::new(kind);
            if let Ok(page) = extract_page(&html, Some("https://example.com/a/b"), &config) {
                // A page never comes out empty unless its input had no words at all.
                let _ = shingler.shingle(&page.text);
            }
        }
    });
    if let Ok(handle) = worker {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
});
