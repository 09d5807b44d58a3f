//! `webdup serve`: the index as a JSON API over HTTP.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use webdup::serve::{self, ServeConfig};
use webdup::store::Index;

use crate::args::ServeArgs;
use crate::commands::index;

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = index::with_index_defaults(&args.index.path, &args.settings, args.settings.to_config()?);
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
