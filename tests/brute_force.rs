//! LSH + verification against exact all-pairs Jaccard on a generated corpus
//! with planted near-duplicates.

use std::collections::{HashMap, HashSet};

use webdup::engine::{self, Config, Corpus, Method};
use webdup::source::{DocKey, Format, RawDocument};
use webdup_eval::synth::{self, SynthConfig};

fn build(texts: &[String], config: &Config) -> Corpus {
    let items: Vec<(usize, String)> = texts.iter().cloned().enumerate().collect();
    Corpus::build(
        items,
        |(i, body)| {
            Ok(RawDocument { id: format!("doc{i}"), key: DocKey::at(i), format: Format::Text, body, url: None })
        },
        config,
        &engine::Quiet,
    )
}

/// Every pair with exact Jaccard >= t, via an inverted index over shingles
/// (pairs sharing no shingle have Jaccard 0).
fn exact_pairs(corpus: &Corpus, t: f64) -> HashSet<(u32, u32)> {
    let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
    for d in &corpus.docs {
        for &s in &d.shingles {
            postings.entry(s).or_default().push(d.key.0 as u32);
        }
    }
    let mut shared: HashMap<(u32, u32), u32> = HashMap::new();
    for docs in postings.values() {
        for (x, &a) in docs.iter().enumerate() {
            for &b in &docs[x + 1..] {
                *shared.entry((a, b)).or_default() += 1;
            }
        }
    }
    shared
        .into_iter()
        .filter(|&((a, b), n)| {
            let (la, lb) = (corpus.docs[a as usize].shingles.len(), corpus.docs[b as usize].shingles.len());
            n as f64 / (la + lb - n as usize) as f64 >= t
        })
        .map(|(p, _)| p)
        .collect()
}

fn corpus_config() -> SynthConfig {
    SynthConfig {
        documents: 4000,
        words_per_document: 300,
        copy_share: 0.6,
        max_edit_rate: 0.08,
        seed: 7,
        ..Default::default()
    }
}

/// Returns (recall, number of true pairs) and asserts precision is exact.
fn check(method: Method) -> (f64, usize) {
    let mut config = Config::default();
    config.matching.method = method;
    check_with(config)
}

fn check_with(config: Config) -> (f64, usize) {
    let texts = synth::corpus(&corpus_config());
    let config = config.validate().unwrap();
    let corpus = build(&texts, &config);
    let truth = exact_pairs(&corpus, config.matching.threshold);
    let found = engine::find_duplicates(&corpus, &config).unwrap();
    let at = |k: DocKey| k.0 as u32;
    let reported: HashSet<(u32, u32)> = found.edges.iter().map(|e| (at(e.a), at(e.b))).collect();
    for e in &found.edges {
        assert!(e.jaccard() >= config.matching.threshold, "reported pair below threshold: {e:?}");
        assert!(truth.contains(&(at(e.a), at(e.b))), "reported pair not in the exact set: {e:?}");
    }
    // Exact copies are linked only to the first copy of their text (the
    // others would repeat its pairs), so a true pair is found through the
    // first copies of its two texts.
    let mut first: HashMap<[u8; 16], u32> = HashMap::new();
    let leader: HashMap<u32, u32> =
        corpus.docs.iter().map(|d| (at(d.key), *first.entry(d.digest).or_insert(at(d.key)))).collect();
    let hit = truth
        .iter()
        .filter(|&&(a, b)| {
            let (la, lb) = (leader[&a], leader[&b]);
            la == lb || reported.contains(&(la.min(lb), la.max(lb)))
        })
        .count();
    (hit as f64 / truth.len() as f64, truth.len())
}

#[test]
fn minhash_lsh_finds_the_exact_pairs() {
    let (recall, n) = check(Method::MinHash);
    println!("minhash recall {recall:.4} over {n} true pairs");
    assert!(n > 500, "the corpus must plant many pairs above the threshold, got {n}");
    assert!(recall >= 0.99, "recall {recall}");
}

#[test]
fn both_methods_find_the_exact_pairs() {
    let (recall, n) = check(Method::Both);
    println!("minhash+simhash recall {recall:.4} over {n} true pairs");
    assert!(recall >= 0.99, "recall {recall}");
}

#[test]
fn simhash_alone_recall_is_measured() {
    // SimHash over shingles at distance 3 only catches very close copies:
    // a pair at Jaccard 0.8 is about 10 bits apart on average. Its recall is
    // reported at the default distance and a wider one, and must grow with it.
    let (at3, n) = check(Method::SimHash);
    let mut config = Config::default();
    config.matching.method = Method::SimHash;
    config.matching.max_hamming = 8;
    let (at8, _) = check_with(config);
    println!("simhash recall {at3:.4} at distance 3, {at8:.4} at distance 8, over {n} true pairs");
    assert!(at3 > 0.1, "recall {at3}");
    assert!(at8 > at3 + 0.2, "recall {at3} -> {at8}");
}

#[test]
fn similarity_spread_covers_the_threshold() {
    // The planted pairs must straddle the threshold, or the test above proves little.
    let texts = synth::corpus(&corpus_config());
    let config = Config::default().validate().unwrap();
    let corpus = build(&texts, &config);
    let near = exact_pairs(&corpus, 0.7);
    let above = exact_pairs(&corpus, 0.8);
    let tight = exact_pairs(&corpus, 0.85);
    assert!(near.len() > above.len() && above.len() > tight.len() && tight.len() > 100);
    assert!(above.len() - tight.len() > 50, "pairs in [0.8, 0.85): {}", above.len() - tight.len());
}
