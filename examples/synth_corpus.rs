//! Writes a synthetic corpus (Zipf words, planted near-duplicates) as text
//! files, for benchmarks: `cargo run --release --example synth_corpus -- DIR DOCS WORDS [SEED]`
//! (another seed, other documents: chunks of one large corpus).

use std::io::Write;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, docs, words, seed) = match args.as_slice() {
        [dir, docs, words] => (dir, docs, words, "1"),
        [dir, docs, words, seed] => (dir, docs, words, seed.as_str()),
        _ => {
            eprintln!("usage: synth_corpus DIR DOCS WORDS [SEED]");
            std::process::exit(2);
        }
    };
    let parse = |s: &str| s.parse::<usize>().unwrap_or_else(|_| panic!("not a number: {s}"));
    let config = webdup_eval::synth::SynthConfig {
        documents: parse(docs),
        words_per_document: parse(words),
        seed: parse(seed) as u64,
        ..Default::default()
    };
    std::fs::create_dir_all(dir)?;
    for (i, text) in webdup_eval::synth::corpus(&config).iter().enumerate() {
        // 1,000 files a folder, as a crawl store would lay them out.
        let sub = std::path::Path::new(dir).join(format!("{:03}", i / 1000));
        std::fs::create_dir_all(&sub)?;
        std::fs::File::create(sub.join(format!("{i:06}.txt")))?.write_all(text.as_bytes())?;
    }
    Ok(())
}
