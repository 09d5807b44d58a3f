//! Flags, as clap sees them, and their conversion to a validated config.

use std::path::PathBuf;

use anyhow::bail;
use clap::{Args, Parser, Subcommand, ValueEnum};

use webdup::Config;
use webdup::engine::Method;
use webdup::extract::{ExtractConfig, ExtractorKind};
use webdup::report::Format;
use webdup::shingle::{Language, LanguageChoice, ShingleConfig};
use webdup::sketch::SimHashWeighting;

/// Find duplicate and near-duplicate web pages.
#[derive(Debug, Parser)]
#[command(name = "webdup", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Group documents into clusters of exact and near duplicates.
    ///
    /// INPUT is an HTML or text file (.html, .htm, .txt, also .gz), a
    /// directory (walked recursively), a list file (one path or URL a line),
    /// or - for a list on standard input.
    Cluster {
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        output: OutputArgs,
        /// Print the LSH banding chosen for the threshold and its S-curve (to stderr).
        #[arg(long)]
        explain: bool,
    },
    /// Compare two documents: exact Jaccard, sketch estimates, containment.
    Compare {
        #[arg(value_name = "A")]
        a: String,
        #[arg(value_name = "B")]
        b: String,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// List each document's most similar documents.
    Neighbors {
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        output: OutputArgs,
        /// How many neighbours to list per document.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        top: u32,
        /// Least Jaccard for a neighbour [default: the --threshold].
        #[arg(long, value_name = "J")]
        min_similarity: Option<f64>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MethodArg {
    Minhash,
    Simhash,
    Both,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WeightArg {
    Tf,
    Tfidf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExtractorArg {
    Trafilatura,
    None,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Csv,
    Tsv,
}

/// Settings shared by every subcommand.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Least exact Jaccard similarity for two documents to be duplicates.
    #[arg(long, short = 't', default_value_t = 0.8)]
    pub threshold: f64,
    /// Words per shingle.
    #[arg(long, default_value_t = 5)]
    pub shingle_size: usize,
    /// MinHash permutations.
    #[arg(long, default_value_t = 128)]
    pub permutations: usize,
    /// Seed for the MinHash permutations.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Candidate generation: MinHash LSH, SimHash tables, or both (union).
    #[arg(long, value_enum, default_value = "minhash")]
    pub method: MethodArg,
    /// Largest SimHash Hamming distance for a candidate pair.
    #[arg(long, default_value_t = 3)]
    pub max_hamming: u32,
    /// SimHash word weights.
    #[arg(long, value_enum, default_value = "tf")]
    pub simhash_weight: WeightArg,
    /// Main-content extractor for HTML.
    #[arg(long, value_enum, default_value = "trafilatura")]
    pub extractor: ExtractorArg,
    /// Remove stopwords before shingling.
    #[arg(long)]
    pub stopwords: bool,
    /// Stem words before shingling.
    #[arg(long)]
    pub stem: bool,
    /// Language for --stopwords and --stem: an ISO 639-1 code, or auto.
    #[arg(long, default_value = "auto")]
    pub language: String,
    /// Smallest cluster to report.
    #[arg(long, default_value_t = 2)]
    pub min_cluster_size: usize,
    /// Largest document accepted, in bytes (after decompression).
    #[arg(long, default_value_t = 10 << 20)]
    pub max_bytes: u64,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    pub fn format(&self, terminal: bool) -> Format {
        match self.format {
            Some(FormatArg::Table) => Format::Table,
            Some(FormatArg::Json) => Format::Json,
            Some(FormatArg::Csv) => Format::Csv,
            Some(FormatArg::Tsv) => Format::Tsv,
            None if terminal => Format::Table,
            None => Format::Json,
        }
    }
}

impl CommonArgs {
    /// The library config these flags describe, validated.
    pub fn to_config(&self) -> anyhow::Result<Config> {
        let language = if self.language.eq_ignore_ascii_case("auto") {
            LanguageChoice::Auto
        } else {
            match Language::from_code(&self.language) {
                Some(l) => LanguageChoice::Fixed(l),
                None => bail!(
                    "unknown --language '{}': use auto or one of {}",
                    self.language,
                    Language::codes().collect::<Vec<_>>().join(", ")
                ),
            }
        };
        let config = Config {
            extract: ExtractConfig {
                extractor: match self.extractor {
                    ExtractorArg::Trafilatura => ExtractorKind::Trafilatura,
                    ExtractorArg::None => ExtractorKind::None,
                },
                ..ExtractConfig::default()
            },
            shingle: ShingleConfig { size: self.shingle_size, stopwords: self.stopwords, stem: self.stem, language },
            shingle_size: self.shingle_size,
            permutations: self.permutations,
            seed: self.seed,
            threshold: self.threshold,
            method: match self.method {
                MethodArg::Minhash => Method::MinHash,
                MethodArg::Simhash => Method::SimHash,
                MethodArg::Both => Method::Both,
            },
            max_hamming: self.max_hamming,
            simhash_weighting: match self.simhash_weight {
                WeightArg::Tf => SimHashWeighting::Tf,
                WeightArg::Tfidf => SimHashWeighting::TfIdf,
            },
            min_cluster_size: self.min_cluster_size,
        };
        Ok(config.validate()?)
    }
}
