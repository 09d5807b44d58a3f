//! Flags, as clap sees them, and their conversion to a validated config.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use webdup::Config;
use webdup::audit::html::ReportLayout;
use webdup::engine::{FingerprintSettings, MatchSettings, Measure, Method};
use webdup::extract::{CssSelector, ExtractConfig, ExtractorKind};
use webdup::fetch::FetchConfig;
use webdup::render::{RenderConfig, RenderMode};
use webdup::report::{Format, RedirectFormat};
use webdup::shingle::LanguageChoice;
use webdup::sketch::SimHashWeighting;
use webdup::template::{TemplateConfig, TemplateScope};
use webdup_dataflow::Task;

/// Find duplicate and near-duplicate web pages.
#[derive(Debug, Parser)]
#[command(name = "webdup", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Group documents into clusters of identical pages, same-text pages and near duplicates.
    ///
    /// INPUT is an http(s) URL, a sitemap (a sitemap.xml URL or file, a
    /// sitemap index followed), an HTML or text file (.html, .htm, .txt, also
    /// .gz), a web archive (.warc, .warc.gz), a directory (walked
    /// recursively), a list file (one path or URL a line), or - for a list
    /// on standard input.
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
        /// Also check every document against this index (see `webdup index`).
        #[arg(long, value_name = "FILE")]
        index: Option<PathBuf>,
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
    /// Print a page's main text (`--format json` adds its metadata).
    ///
    /// PAGE is an HTML file or an http(s) URL.
    Extract {
        #[arg(required = true, value_name = "PAGE")]
        pages: Vec<String>,
        #[command(flatten)]
        extract: ExtractArgs,
        /// The page's URL, for resolving links in a single local file.
        #[arg(long)]
        url: Option<String>,
        /// Output: the text, or JSON with the metadata.
        #[arg(long, short = 'f', value_enum, default_value = "text")]
        format: TextFormat,
        #[command(flatten)]
        fetch: FetchArgs,
    },
    /// Measure extraction or clustering against ground truth.
    Eval {
        #[command(subcommand)]
        what: EvalCommand,
    },
    /// Write an SEO duplicate-content report (report.html, pages.csv,
    /// clusters.csv, report.json) for a site's pages.
    ///
    /// INPUT is a URL, a sitemap, an HTML file, a directory or a list file.
    /// With --index instead, a crawl kept in an index is audited from what
    /// the index stored: nothing is fetched or extracted again.
    Audit {
        #[arg(required_unless_present = "index", conflicts_with = "index", value_name = "INPUT")]
        inputs: Vec<String>,
        /// Audit a crawl of this index (see `webdup index add`), with the
        /// settings the index was built with (threshold, shingling, extractor).
        #[arg(long, value_name = "FILE")]
        index: Option<PathBuf>,
        /// With --index: the crawl to audit [default: the newest, the one
        /// fetched last].
        #[arg(long, value_name = "NAME")]
        crawl: Option<String>,
        /// With --index: also report what changed since this older crawl
        /// of the index (clusters new, grown, shrunk, fixed, gone...; pages
        /// moved), in report.json's `since`, changes.csv and report.html.
        #[arg(long, value_name = "OLD")]
        since: Option<String>,
        #[command(flatten)]
        common: CommonArgs,
        /// Directory for the report files (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Pages with fewer main-text words are reported as thin.
        #[arg(long, default_value_t = 200, value_name = "WORDS")]
        thin_words: usize,
        /// Start pages.csv and clusters.csv with a UTF-8 byte-order mark, so
        /// that Excel reads non-Latin titles and URLs right.
        #[arg(long)]
        csv_bom: bool,
        #[command(flatten)]
        report: ReportArgs,
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
    /// Keep fingerprints across crawls in an index file (SQLite).
    Index {
        #[command(subcommand)]
        command: IndexCommand,
    },
    /// Serve an index as a JSON API over HTTP.
    Serve(ServeArgs),
    /// Read and shingle one share of the inputs into a work directory, for
    /// `webdup dcluster` (run N tasks with --task 0/N ... N-1/N).
    Ingest(IngestArgs),
    /// Cluster an ingested work directory across threads, processes and
    /// hosts (timely dataflow): the report of `webdup cluster`.
    Dcluster(DclusterArgs),
    /// Map an old crawl's gone URLs to where their content is in a new crawl.
    LostAndFound(LostAndFoundArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// For bash: `webdup completions bash > ~/.local/share/bash-completion/completions/webdup`;
    /// for zsh: `webdup completions zsh > ~/.zfunc/_webdup` (with `~/.zfunc` in
    /// `fpath`); for fish: `webdup completions fish > ~/.config/fish/completions/webdup.fish`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), for `man`: `webdup man > webdup.1`, or
    /// into a directory on MANPATH, e.g. ~/.local/share/man/man1/webdup.1.
    Man,
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// F1, precision and recall of each extractor on DIR (an AEB or WCXB
    /// layout, detected), per page type where the data has types, and pages/s.
    Extract {
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Extractors to evaluate (repeatable) [default: all].
        #[arg(long, value_enum)]
        extractor: Vec<ExtractorArg>,
        /// Only the first N pages.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Worker threads [default: one per core].
        #[arg(long)]
        threads: Option<usize>,
        /// Include every page's scores (JSON).
        #[arg(long)]
        per_page: bool,
        #[arg(long, short = 'f', value_enum, default_value = "table")]
        format: EvalFormat,
    },
    /// Pairwise precision, recall, F1 and adjusted Rand index of a
    /// clustering against labelled truth, per page kind when the truth
    /// names kinds, with false-merge counts.
    ///
    /// TRUTH has `id<TAB>cluster[<TAB>kind]` lines. CLUSTERING is the JSON of
    /// `webdup cluster --format json`, or `id<TAB>cluster` lines from any
    /// tool; pages it does not name count as clusters of their own.
    Cluster {
        #[arg(value_name = "TRUTH")]
        truth: PathBuf,
        #[arg(value_name = "CLUSTERING")]
        clustering: PathBuf,
        #[arg(long, short = 'f', value_enum, default_value = "table")]
        format: EvalFormat,
    },
}

/// The index file every index command takes.
#[derive(Debug, Args)]
pub struct IndexFile {
    /// The index file (SQLite). `index add` and `serve` create it if
    /// missing; the other commands need it to exist.
    #[arg(long = "index", value_name = "FILE", default_value = "webdup.db")]
    pub path: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Fetch or read pages and add them to the index under a crawl name.
    ///
    /// Every page is read or fetched first, so that each site's template is
    /// learned over the whole add (and kept for pages checked later); then
    /// pages are written in batches, each in one transaction: an interrupted
    /// run leaves whole pages only, and running it again replaces the
    /// crawl's pages rather than duplicating them.
    Add {
        /// Name of this crawl (a date, "v2", ...). A URL is kept once per crawl.
        #[arg(long)]
        crawl: String,
        #[arg(required = true, value_name = "INPUT")]
        inputs: Vec<String>,
        /// Documents per transaction.
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        batch: u32,
        /// Do not store the pages' main texts (kept by default for the diff
        /// view of `webdup audit --index`).
        #[arg(long)]
        no_text: bool,
        #[command(flatten)]
        index: IndexFile,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Check a URL's or a file's content against the index (JSON).
    Query {
        #[arg(value_name = "URL|FILE")]
        target: String,
        #[command(flatten)]
        index: IndexFile,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Counts per crawl, settings and size of the index (JSON).
    Stats {
        #[command(flatten)]
        index: IndexFile,
    },
    /// Remove every crawl's page for a URL.
    Remove {
        #[arg(value_name = "URL")]
        url: String,
        #[command(flatten)]
        index: IndexFile,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub index: IndexFile,
    /// Address to listen on. Anything but loopback requires --token.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub bind: SocketAddr,
    /// Bearer token required on every endpoint but /health [env: WEBDUP_TOKEN].
    #[arg(long)]
    pub token: Option<String>,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_body: usize,
    /// Crawl name for pages inserted without one.
    #[arg(long, default_value = "api")]
    pub crawl: String,
    /// Seconds a client may take to send a request's headers (idle
    /// keep-alive connections are closed after as long).
    #[arg(long, default_value = "5", value_parser = seconds, value_name = "SECS")]
    pub header_timeout: Duration,
    /// Seconds a client may take to send a request's body (then 408).
    #[arg(long, default_value = "10", value_parser = seconds, value_name = "SECS")]
    pub body_timeout: Duration,
    /// Most connections open at once. When full, the connection that has
    /// waited longest for a request is closed to make room; only when all
    /// are busy does a new one get a 503 (/health is still answered).
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub max_connections: usize,
    /// Most connections open at once from one client address; beyond it,
    /// that address's connection that has waited longest for a request is
    /// closed.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_connections_per_ip: usize,
    /// Also accept requests whose Host header is NAME (any port) or
    /// NAME:PORT: this machine's DNS name, or a reverse proxy's. By default
    /// only the address the server is reached on is accepted (and
    /// localhost on loopback), which defeats DNS rebinding. Repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Let web pages of ORIGIN (https://app.example.com) call the API from
    /// a browser, with CORS headers; requests from any other origin are
    /// refused (403). Repeatable.
    #[arg(long = "cors", value_name = "ORIGIN")]
    pub cors: Vec<String>,
    /// Seconds requests in flight may take after Ctrl-C or SIGTERM.
    #[arg(long, default_value = "5", value_parser = seconds, value_name = "SECS")]
    pub shutdown_grace: Duration,
    /// Threads that extract and query the index (0: one per core; at most
    /// 1024).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub workers: usize,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// A `serve` timeout: seconds, more than 0 and at most a day.
fn seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{s:?}: expected a number of seconds greater than 0 (at most 86400)")),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MapFormat {
    /// The whole map: redirects, unmatched and already redirected URLs.
    Json,
    /// One row per old URL, with its kind, reason and evidence.
    Csv,
    /// An nginx `map` from `$host$request_uri` to the new URL.
    Nginx,
    /// Apache mod_rewrite rules (a VirtualHost or .htaccess).
    Apache,
    /// `source,target,status` rows as CDNs' bulk-redirect imports take them
    /// (Cloudflare Bulk Redirects: source without scheme, no query string).
    BulkCsv,
}

impl MapFormat {
    pub fn format(self) -> RedirectFormat {
        match self {
            MapFormat::Json => RedirectFormat::Json,
            MapFormat::Csv => RedirectFormat::Csv,
            MapFormat::Nginx => RedirectFormat::Nginx,
            MapFormat::Apache => RedirectFormat::Apache,
            MapFormat::BulkCsv => RedirectFormat::BulkCsv,
        }
    }
}

#[derive(Debug, Args)]
pub struct LostAndFoundArgs {
    #[command(flatten)]
    pub index: IndexFile,
    /// The crawl before the change.
    #[arg(long)]
    pub old: String,
    /// The crawl after the change.
    #[arg(long)]
    pub new: String,
    /// Output: the map as data (json, csv), or as server configuration
    /// (nginx, apache, bulk-csv); old URLs a format cannot express are named
    /// on stderr.
    #[arg(long, value_enum, default_value = "json")]
    pub format: MapFormat,
    /// Write the map to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Least Jaccard for a match on content alone.
    #[arg(long, default_value_t = 0.5)]
    pub min_jaccard: f64,
    /// Least share of the old page's text found in a new page (merged pages).
    #[arg(long, default_value_t = 0.8)]
    pub min_containment: f64,
}

/// Reads, fetches, extracts and shingles one share of the inputs into a
/// work directory, for `webdup dcluster`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// What `webdup cluster` takes: files, directories, lists, URLs,
    /// sitemaps, WARC archives. Every task is given the same inputs.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// The work directory shared by the tasks and the clustering job.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// This task's share, I/N: the Ith of N runs of consecutive inputs
    /// (0-based). A finished task (its marker is there) is not run again.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    pub task: Task,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Clusters an ingested work directory on timely dataflow workers, in one
/// process or several: the report of `webdup cluster` on the same inputs.
///
/// Every process is started with the same flags and its own -p; each
/// finished stage is kept in the work directory, so a run that failed
/// resumes at the stage it hit.
#[derive(Debug, Args)]
pub struct DclusterArgs {
    /// The work directory of `webdup ingest`.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// Worker threads per process (at most 256).
    #[arg(short = 'w', long = "workers", default_value_t = 1, value_name = "N")]
    pub workers: usize,
    /// Number of processes (at most 1024).
    #[arg(short = 'n', long = "processes", default_value_t = 1, value_name = "N")]
    pub processes: usize,
    /// This process's index (0-based); process 0 writes the report.
    #[arg(short = 'p', long = "process", default_value_t = 0, value_name = "I")]
    pub process: usize,
    /// One host:port a line, one line per process, in process order
    /// [default: 127.0.0.1 from port 2101].
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalFormat {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TemplateScopeArg {
    /// URLs by host, local files by their folder.
    HostOrDir,
    /// URLs by host only.
    Host,
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
    /// trafilatura and rs-trafilatura, refereed by readability and the visible text.
    Auto,
    /// trafilatura with fallbacks, checked against page chrome.
    Trafilatura,
    /// rs-trafilatura: page-type classification, then per-type rules.
    RsTrafilatura,
    /// Mozilla Readability (dom_smoothie).
    Readability,
    /// Readability cleaned with trafilatura's discard rules: articles, fast.
    Fast,
    /// Block classification: link density, furniture rules, runs of words.
    Blocks,
    /// All visible text except nav, header, footer and aside.
    None,
}

impl ExtractorArg {
    pub fn kind(self) -> ExtractorKind {
        match self {
            ExtractorArg::Auto => ExtractorKind::Auto,
            ExtractorArg::Trafilatura => ExtractorKind::Trafilatura,
            ExtractorArg::RsTrafilatura => ExtractorKind::RsTrafilatura,
            ExtractorArg::Readability => ExtractorKind::Readability,
            ExtractorArg::Fast => ExtractorKind::Fast,
            ExtractorArg::Blocks => ExtractorKind::Blocks,
            ExtractorArg::None => ExtractorKind::None,
        }
    }
}

/// How main content is found.
#[derive(Debug, Args)]
#[command(next_help_heading = "Extraction")]
pub struct ExtractArgs {
    /// Main-content extractor for HTML [default: blocks; auto for
    /// `extract` and `eval extract`].
    ///
    /// `blocks` is the duplicate finder's: it never takes a site's
    /// furniture for a thin page's content, and is fast. `auto` is the most
    /// faithful to a page's whole main text, and several times slower.
    #[arg(long, value_enum)]
    pub extractor: Option<ExtractorArg>,
    /// Extract only from elements matching this CSS selector.
    #[arg(long, value_name = "CSS")]
    pub include_selector: Option<String>,
    /// Remove elements matching this CSS selector before extraction.
    #[arg(long, value_name = "CSS")]
    pub exclude_selector: Option<String>,
}

impl ExtractArgs {
    /// The extraction settings, with `default` when no extractor is named.
    pub fn to_config(&self, default: ExtractorKind) -> anyhow::Result<ExtractConfig> {
        Ok(ExtractConfig::new(self.extractor.map_or(default, ExtractorArg::kind))
            .with_selectors(self.include_selector.as_deref(), self.exclude_selector.as_deref())?)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MeasureArg {
    Jaccard,
    Containment,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Json,
    Csv,
    Tsv,
}

/// Settings shared by the commands that read or fetch inputs: how pages
/// are fingerprinted and compared, and how URLs are fetched. Its
/// [`SettingsArgs`] fields read as its own.
#[derive(Debug, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// Follow symbolic links out of a directory walked (by default a link is
    /// followed only when its target is inside the directory; others are
    /// errors naming them). /proc, /sys and /dev are never walked.
    #[arg(help_heading = "Input", long)]
    pub follow_symlinks: bool,
    #[command(flatten)]
    pub follow: crate::follow::FollowArgs,
    /// Worker threads for fingerprinting and matching (1 to 256); reports
    /// are the same whatever the number [default: one per core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Memory the run may use (2G, 512M, ...). Past it, pages' shingle sets
    /// wait in a temporary file (in TMPDIR) instead of memory, with the
    /// same results; a run that would not fit even so stops before it
    /// starts [default: half the machine's memory].
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_size)]
    pub memory: Option<u64>,
}

impl CommonArgs {
    /// The validated config of the flags, with the run's memory budget.
    pub fn to_config(&self) -> anyhow::Result<Config> {
        let memory = self.memory.or_else(crate::memory::machine_share);
        Ok(Config { memory, ..self.settings.to_config()? })
    }

    /// How the inputs are expanded.
    pub fn input_options(&self) -> webdup::source::InputOptions {
        webdup::source::InputOptions { follow_symlinks: self.follow_symlinks }
    }
}

impl std::ops::Deref for CommonArgs {
    type Target = SettingsArgs;
    fn deref(&self) -> &SettingsArgs {
        &self.settings
    }
}

/// How pages are fingerprinted and compared: what `serve` takes (it never
/// fetches), and every reading command with [`FetchArgs`].
#[derive(Debug, Args)]
#[command(next_help_heading = "Similarity")]
pub struct SettingsArgs {
    /// Least exact Jaccard similarity for two documents to be duplicates
    /// (two pages of one site: one host, or one folder of local files)
    /// [default: 0.8; `audit --index`: the index's own unless given].
    #[arg(long, short = 't', value_name = "T")]
    pub threshold: Option<f64>,
    /// Least exact Jaccard for two pages of different sites. Different
    /// sites share no template, so what two of their pages share is
    /// content: a syndicated copy in another site's template. Give the
    /// --threshold value for one rule for every pair [default: 0.5; an
    /// existing index: its own].
    #[arg(long, value_name = "J")]
    pub cross_site_threshold: Option<f64>,
    /// What the thresholds measure: `jaccard` (the two pages are mostly the
    /// same text) or `containment` (the smaller page's text is mostly found
    /// in the larger: an excerpt, a trimmed copy, an article with comments
    /// added).
    #[arg(long, value_enum, default_value = "jaccard")]
    pub measure: MeasureArg,
    /// Words per shingle.
    #[arg(long, default_value_t = Config::tool().fingerprint.shingle_size)]
    pub shingle_size: usize,
    /// MinHash permutations.
    #[arg(long, default_value_t = Config::tool().fingerprint.permutations)]
    pub permutations: usize,
    /// Seed for the MinHash permutations.
    #[arg(long, default_value_t = Config::tool().fingerprint.seed)]
    pub seed: u64,
    /// Candidate generation: MinHash LSH, SimHash tables, or both (union).
    #[arg(long, value_enum, default_value = "minhash")]
    pub method: MethodArg,
    /// Largest SimHash Hamming distance for a candidate pair.
    #[arg(long, default_value_t = Config::tool().matching.max_hamming)]
    pub max_hamming: u32,
    /// SimHash word weights.
    #[arg(long, value_enum, default_value = "tf")]
    pub simhash_weight: WeightArg,
    #[command(flatten)]
    pub extract: ExtractArgs,
    /// Keep text a site repeats on many of its pages (site-template
    /// suppression is on by default).
    #[arg(help_heading = "Template suppression", long)]
    pub no_template: bool,
    /// A shingle is template text when more than this share of a site's
    /// pages (groups of copies counted once) contain it.
    #[arg(help_heading = "Template suppression", long, default_value_t = TemplateConfig::default().share, value_name = "SHARE")]
    pub template_share: f64,
    /// Sites with fewer distinct pages are left alone (below 5, one page
    /// must have more text of its own than template text).
    #[arg(help_heading = "Template suppression", long, default_value_t = TemplateConfig::default().min_pages, value_name = "N")]
    pub template_min_pages: usize,
    /// What counts as one site.
    #[arg(help_heading = "Template suppression", long, value_enum, default_value = "host-or-dir")]
    pub template_scope: TemplateScopeArg,
    /// Remove stopwords before shingling.
    #[arg(help_heading = "Similarity", long)]
    pub stopwords: bool,
    /// Stem words before shingling.
    #[arg(help_heading = "Similarity", long)]
    pub stem: bool,
    /// Language for --stopwords and --stem: an ISO 639-1 code, or auto.
    #[arg(help_heading = "Similarity", long, default_value = "auto")]
    pub language: String,
    /// Smallest cluster to report.
    #[arg(help_heading = "Similarity", long, default_value_t = Config::tool().matching.min_cluster_size)]
    pub min_cluster_size: usize,
    /// Largest document accepted, in bytes (after decompression).
    #[arg(help_heading = "Input", long, default_value_t = 10 << 20)]
    pub max_bytes: u64,
    /// No progress bar.
    #[arg(help_heading = "Input", long, short = 'q')]
    pub quiet: bool,
}

/// How URLs are fetched.
#[derive(Debug, Args)]
#[command(next_help_heading = "Fetching")]
pub struct FetchArgs {
    /// Requests in flight at once, over all sites.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Requests in flight at once to one site.
    #[arg(long, default_value_t = 2)]
    pub per_host: usize,
    /// Seconds between the starts of two requests to one site.
    #[arg(long, default_value_t = 0.25, value_name = "SECONDS")]
    pub delay: f64,
    /// User-Agent header; its first word is the robots.txt agent.
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Seconds allowed for a whole request.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Seconds allowed to connect.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub connect_timeout: f64,
    /// Extra attempts after a connection error, a 5xx or a 429.
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Redirects followed before giving up.
    #[arg(long, default_value_t = 10)]
    pub max_redirects: usize,
    /// Fetch pages even where robots.txt disallows it. Use only on sites you
    /// run or have permission to crawl this way.
    #[arg(long)]
    pub ignore_robots: bool,
    /// Keep tracking parameters (utm_*, gclid, fbclid, ...) in URLs.
    #[arg(long)]
    pub keep_query: bool,
    /// Keep fetched pages in DIR, so a re-run does not fetch them again.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Fetch internal addresses (loopback, private, link-local such as
    /// 169.254.169.254...) reached from anywhere. Without it, only an
    /// internal URL you name, and its own origin, are fetched: a redirect or
    /// a sitemap entry leading to another internal address is refused.
    #[arg(long)]
    pub allow_internal: bool,
    /// Settings for a site you run: no delay between requests and 8 at once
    /// per site (robots.txt is still read and obeyed).
    #[arg(long, conflicts_with_all = ["delay", "per_host"])]
    pub own_site: bool,
    /// Run pages' scripts in a headless Chromium and read the DOM they
    /// leave: on (every page), auto (only pages that look like an empty
    /// client-rendered shell) or off. See docs/render.md.
    #[arg(help_heading = "Rendering", long, value_enum, default_value = "off", value_name = "WHEN")]
    pub render: RenderArg,
    /// Seconds a page may take to render, from opening its tab to reading its DOM.
    #[arg(help_heading = "Rendering", long, default_value_t = 10.0, value_name = "SECONDS")]
    pub render_timeout: f64,
    /// Pages rendered at once (tabs of one browser) [default: one per core].
    #[arg(help_heading = "Rendering", long, value_name = "N")]
    pub render_tabs: Option<usize>,
    /// The Chromium or Chrome executable [default: chromium, chromium-browser,
    /// google-chrome or google-chrome-stable on PATH].
    #[arg(help_heading = "Rendering", long, env = "WEBDUP_CHROMIUM", value_name = "PATH")]
    pub chromium: Option<PathBuf>,
}

/// `--render`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RenderArg {
    Off,
    On,
    Auto,
}

/// Requests in flight per site with `--own-site`.
pub const OWN_SITE_PER_HOST: usize = 8;

impl SettingsArgs {
    /// `--threshold`, or the tool's.
    pub fn threshold(&self) -> f64 {
        self.threshold.unwrap_or(Config::tool().matching.threshold)
    }

    /// `--cross-site-threshold`, or the tool's (an index keeps its own).
    pub fn cross_site_threshold(&self) -> f64 {
        let tool = Config::tool().matching;
        self.cross_site_threshold.unwrap_or(tool.cross_site_threshold.unwrap_or(tool.threshold))
    }
}

impl FetchArgs {
    /// The fetcher config these flags describe, validated; `max_bytes` is
    /// shared with local files.
    pub fn to_config(&self, max_bytes: u64) -> anyhow::Result<FetchConfig> {
        let seconds = |name: &str, v: f64| -> anyhow::Result<Duration> {
            if !(0.0..=86_400.0).contains(&v) {
                bail!("--{name} must be a number of seconds from 0 to 86400, not {v}");
            }
            Ok(Duration::from_secs_f64(v))
        };
        let (per_host, delay) = if self.own_site { (OWN_SITE_PER_HOST, 0.0) } else { (self.per_host, self.delay) };
        let config = FetchConfig {
            concurrency: self.concurrency,
            per_host,
            delay: seconds("delay", delay)?,
            user_agent: self.user_agent.clone().unwrap_or_else(webdup::fetch::default_user_agent),
            connect_timeout: seconds("connect-timeout", self.connect_timeout)?,
            timeout: seconds("timeout", self.timeout)?,
            retries: self.retries,
            max_redirects: self.max_redirects,
            ignore_robots: self.ignore_robots,
            allow_internal: self.allow_internal,
            keep_query: self.keep_query,
            cache_dir: self.cache.clone(),
            max_bytes,
            render: RenderConfig {
                mode: match self.render {
                    RenderArg::Off => RenderMode::Off,
                    RenderArg::On => RenderMode::On,
                    RenderArg::Auto => RenderMode::Auto,
                },
                chromium: self.chromium.clone(),
                timeout: seconds("render-timeout", self.render_timeout)?,
                tabs: self.render_tabs.unwrap_or(0),
            },
            ..FetchConfig::default()
        };
        Ok(config.validate()?)
    }
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Start CSV and TSV output with a UTF-8 byte-order mark, so that Excel
    /// reads non-Latin titles and URLs right.
    #[arg(long)]
    pub csv_bom: bool,
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

impl SettingsArgs {
    /// The library config these flags describe, validated.
    pub fn to_config(&self) -> anyhow::Result<Config> {
        let language: LanguageChoice = self.language.parse().map_err(|e| anyhow!("--language: {e}"))?;
        let extract = self.extract.to_config(ExtractorKind::Blocks)?;
        let selector = |s: &Option<CssSelector>| s.as_ref().map(|c| c.as_str().to_string());
        let tool = Config::tool();
        let fingerprint = FingerprintSettings {
            extractor: extract.extractor.to_string(),
            include_selector: selector(&extract.include),
            exclude_selector: selector(&extract.exclude),
            template: (!self.no_template).then_some(TemplateConfig {
                share: self.template_share,
                min_pages: self.template_min_pages,
                scope: match self.template_scope {
                    TemplateScopeArg::HostOrDir => TemplateScope::HostOrDirectory,
                    TemplateScopeArg::Host => TemplateScope::Host,
                },
            }),
            shingle_size: self.shingle_size,
            stopwords: self.stopwords,
            stem: self.stem,
            language,
            permutations: self.permutations,
            seed: self.seed,
            simhash_weighting: match self.simhash_weight {
                WeightArg::Tf => SimHashWeighting::Tf,
                WeightArg::Tfidf => SimHashWeighting::TfIdf,
            },
            ..tool.fingerprint
        };
        let matching = MatchSettings {
            threshold: self.threshold(),
            cross_site_threshold: Some(self.cross_site_threshold()).filter(|&c| c != self.threshold()),
            measure: match self.measure {
                MeasureArg::Jaccard => Measure::Jaccard,
                MeasureArg::Containment => Measure::Containment,
            },
            method: match self.method {
                MethodArg::Minhash => Method::MinHash,
                MethodArg::Simhash => Method::SimHash,
                MethodArg::Both => Method::Both,
            },
            max_hamming: self.max_hamming,
            min_cluster_size: self.min_cluster_size,
        };
        let config = Config { fingerprint, matching, budget: extract.budget, ..tool };
        Ok(config.validate()?)
    }
}

/// How `audit` lays out report.html: hidden, for tests and benchmarks.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write the paged report.html (tables in chunks under report-data/)
    /// for audits of more pages than this [default: 5,000]; 0 pages every
    /// report.
    #[arg(long, value_name = "PAGES", hide = true)]
    pub report_paged_above: Option<usize>,
    /// Rows a chunk of the paged report [default: 500].
    #[arg(long, value_name = "ROWS", hide = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub report_chunk_rows: Option<u32>,
}

impl ReportArgs {
    /// The layout these flags ask for, the default's where not given.
    pub fn layout(&self) -> ReportLayout {
        let d = ReportLayout::default();
        ReportLayout {
            paged_above: self.report_paged_above.unwrap_or(d.paged_above),
            chunk_rows: self.report_chunk_rows.map_or(d.chunk_rows, |r| r as usize),
        }
    }
}
