//! Micro-benchmarks of the engine's hot stages.
//!
//! `cargo bench --bench engine` prints time per operation; throughput is
//! given in elements (shingles sketched, fingerprints searched) so figures
//! compare across changes.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use webdup::DocKey;
use webdup::candidates::HammingTables;
use webdup::engine::{Config, Fingerprinter};
use webdup::shingle::{ShingleConfig, Shingler, fmix64};
use webdup::sketch::MinHasher;
use webdup::sketch::minhash::splitmix64;
use webdup_eval::synth::{self, SynthConfig};

fn one_core<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool").install(f)
}

fn minhash(c: &mut Criterion) {
    let shingles: Vec<u64> = (0..500u64).map(fmix64).collect();
    let m = MinHasher::new(128, 42);
    let mut g = c.benchmark_group("minhash");
    g.throughput(Throughput::Elements(1));
    g.bench_function("sketch 500 shingles x 128 permutations", |b| b.iter(|| m.sketch(black_box(&shingles))));
    g.finish();
}

fn shingling(c: &mut Criterion) {
    let text = &synth::corpus(&SynthConfig { documents: 1, words_per_document: 500, ..Default::default() })[0];
    let s = Shingler::new(ShingleConfig::default());
    let fp = Fingerprinter::new(&Config::default());
    let mut g = c.benchmark_group("text");
    g.throughput(Throughput::Elements(1));
    g.bench_function("shingle a 500-word text", |b| b.iter(|| s.shingle(black_box(text))));
    g.bench_function("fingerprint a 500-word text (shingle + minhash + simhash)", |b| {
        b.iter(|| fp.fingerprint_text("d".into(), DocKey(0), black_box(text)))
    });
    g.finish();
}

fn simhash_all_pairs(c: &mut Criterion) {
    let mut state = 9;
    let fps: Vec<u64> = (0..1_000_000).map(|_| splitmix64(&mut state)).collect();
    let tables = HammingTables::plan(fps.len(), 3);
    let mut g = c.benchmark_group("simhash");
    g.sample_size(10);
    g.throughput(Throughput::Elements(fps.len() as u64));
    g.bench_function("all pairs within 3 bits, 1M random fingerprints, one core", |b| {
        b.iter(|| one_core(|| tables.pairs_within(black_box(&fps))))
    });
    g.finish();
}

criterion_group!(benches, minhash, shingling, simhash_all_pairs);
criterion_main!(benches);
