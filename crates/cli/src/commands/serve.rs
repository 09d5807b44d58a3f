//! `webdup serve`: the index as a JSON API over HTTP.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use webdup::serve::{self, ServeConfig};
use webdup::store::Index;

use super::args::SettingsArgs;
use super::index::IndexFile;

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

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = super::index::with_index_defaults(&args.index.path, &args.settings, args.settings.to_config()?);
    let serve_config = ServeConfig {
        bind: args.bind,
        token: args.token.clone().or_else(|| std::env::var("WEBDUP_TOKEN").ok()),
        max_body_bytes: args.max_body,
        default_crawl: args.crawl.clone(),
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
        max_connections: args.max_connections,
        shutdown_grace: args.shutdown_grace,
        workers: args.workers,
        max_connections_per_ip: args.max_connections_per_ip,
        allowed_hosts: args.allow_host.clone(),
        cors_origins: args.cors.clone(),
        ..ServeConfig::default()
    }
    .validate()?;
    let index = Arc::new(Index::open(&args.index.path, &config)?);
    let index_path: PathBuf = args.index.path.clone();
    // The first request should not pay the extractors' one-time set-up.
    webdup::extract::warm_up();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(serve_config.bind)
            .await
            .with_context(|| format!("cannot listen on {}", serve_config.bind))?;
        let local = listener.local_addr()?;
        // Tests and scripts read the port from this line when binding port 0.
        eprintln!("webdup: serving {} on http://{local}", index_path.display());
        let router = serve::router(index, &config, &serve_config).context("cannot start the worker threads")?;
        serve::serve(listener, router, &serve_config, stop_signal()).await.context("server failed")?;
        anyhow::Ok(())
    });
    // Nothing spawned on the runtime outlives `serve`'s grace period: do not
    // wait for it. (A worker thread still extracting a page whose client was
    // dropped dies with the process; it has written nothing.)
    runtime.shutdown_timeout(Duration::from_millis(100));
    served?;
    // Not eprintln!: stderr may be a closed pipe by now, and that must not turn a clean stop into a panic.
    let _ = writeln!(std::io::stderr(), "webdup: stopped");
    Ok(ExitCode::SUCCESS)
}

fn seconds(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!("{s:?}: expected a number of seconds greater than 0 (at most 86400)")),
    }
}

/// Ctrl-C or SIGTERM (what `kill` and service managers send).
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
