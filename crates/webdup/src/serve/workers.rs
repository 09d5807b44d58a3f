//! The threads that extract, fingerprint and query the index, behind a
//! bounded queue.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{failure, internal};
use crate::extract::EXTRACT_STACK;

type Job = Box<dyn FnOnce() + Send>;

/// The threads that run extraction and SQLite work, off the async workers
/// and with stacks deep enough for extraction, whoever runs the router.
pub(super) struct Workers {
    queue: SyncSender<Job>,
}

impl Workers {
    pub(super) fn start(threads: usize, queue: usize) -> std::io::Result<Workers> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("webdup-serve-{i}"))
                .stack_size(EXTRACT_STACK)
                .spawn(move || work(&rx))?;
        }
        Ok(Workers { queue: tx })
    }

    /// Runs `f` on a worker. `f` is told whether the client is still there
    /// (false once the request was dropped); the job is skipped altogether
    /// when the client went away while it waited.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Fn() -> bool) -> T + Send + 'static,
    ) -> Result<T, Response> {
        self.submit(f)?.await.map_err(lost)
    }

    /// Queues `f` (see [`Workers::run`]) and returns where its result will
    /// come, so that several jobs can be queued before any is awaited.
    /// Dropping the receiver cancels the job if it has not started.
    pub(super) fn submit<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn Fn() -> bool) -> T + Send + 'static,
    ) -> Result<tokio::sync::oneshot::Receiver<T>, Response> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            if tx.is_closed() {
                return;
            }
            let out = f(&|| !tx.is_closed());
            let _ = tx.send(out);
        });
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let mut r = failure(StatusCode::SERVICE_UNAVAILABLE, "the server is busy; retry shortly");
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return Err(r);
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err(failure(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"));
            }
        }
        Ok(rx)
    }
}

/// A job that ended without an answer: it panicked.
pub(super) fn lost(_: tokio::sync::oneshot::error::RecvError) -> Response {
    internal("the request failed unexpectedly; see the server's log")
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            // The router is gone.
            Err(_) => return,
        };
        // A panic fails that request (its sender is dropped), not the worker.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}
