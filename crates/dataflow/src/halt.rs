//! Stopping every worker of every process on a job's first error.
//!
//! timely cannot stop a computation. A worker that returns early leaves
//! the others waiting for its progress messages for ever (`dcluster -w 2`
//! hung at 0% CPU on a broken part), and a process that dies makes
//! timely's network threads in the others panic ("timely communication
//! error"), their workers then panic on the poisoned queues, and dropping
//! timely's guard panicked the main thread (exit 101). So:
//!
//! - each worker runs under `catch_unwind`; its error or panic stops the
//!   process's [`Halt`], and the worker then parks for good instead of
//!   returning: a returning worker would let timely shut its connections
//!   down cleanly, which the other processes cannot tell from the end of
//!   the job, while a process that exits with them open is seen by every
//!   peer as a lost connection;
//! - workers wait for their dataflows through [`run_to_end`], which returns
//!   [`Error::Stopped`] once the halt is stopped;
//! - a panic hook, installed once, turns the network threads' panic into a
//!   lost connection recorded in every live halt, and prints nothing for
//!   it (nor for the workers' panics that follow from it);
//! - the main thread, once the job is stopped, gives the workers a few
//!   seconds to see it and returns the first cause, leaving timely's
//!   threads to end with the process rather than joining them;
//! - a process that stops writes its error to `WORK/stopped-process-P`
//!   before it exits, so a process that loses its connection to it can say
//!   why.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, Once, PoisonError, Weak};
use std::time::{Duration, Instant};

use timely::dataflow::ProbeHandle;
use timely::worker::Worker;

use crate::Error;
use crate::net;

/// How long an idle worker parks before it looks at the halt again.
const PARK: Duration = Duration::from_millis(100);

/// How long the main thread waits for the workers once the job is stopped.
const GRACE: Duration = Duration::from_secs(5);

/// What stopped a job first.
enum Cause {
    /// A worker of this process failed.
    Failed(Error),
    /// The connection to process `peer` broke.
    Lost { peer: usize, detail: String },
}

/// Whether a process's job has stopped, and why; shared by its workers,
/// its main thread and the panic hook.
#[derive(Default)]
pub(crate) struct Halt {
    stopped: AtomicBool,
    cause: Mutex<Option<Cause>>,
}

impl Halt {
    /// A halt the panic hook reports lost connections to while it lives.
    pub(crate) fn new() -> Arc<Halt> {
        install_hook();
        let halt = Arc::new(Halt::default());
        let mut live = lock(&LIVE);
        live.retain(|h| h.strong_count() > 0);
        live.push(Arc::downgrade(&halt));
        halt
    }

    fn stop(&self, cause: Cause) {
        let mut first = lock(&self.cause);
        if first.is_none() {
            *first = Some(cause);
        }
        self.stopped.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// [`Error::Stopped`] once the job is stopped.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.is_stopped() { Err(Error::Stopped) } else { Ok(()) }
    }

    /// The first cause as the error the job ends with: process `me` of
    /// `processes`, whose peers write their errors in `work`.
    fn error(&self, work: &Path, me: usize, processes: usize) -> Error {
        match lock(&self.cause).take() {
            Some(Cause::Failed(e)) => e,
            Some(Cause::Lost { peer, detail }) => {
                let why = match std::fs::read_to_string(stopped_path(work, peer)) {
                    Ok(text) => format!("; process {peer} stopped: {}", text.trim()),
                    Err(_) => "; it was killed or its host is unreachable: see its own output".into(),
                };
                Error::Lost { process: me, processes, peer, detail, why }
            }
            None => Error::Worker("the workers stopped without an error".into()),
        }
    }
}

/// Where process `p` writes the error it stopped with.
fn stopped_path(work: &Path, p: usize) -> PathBuf {
    work.join(format!("stopped-process-{p}"))
}

/// Removes this process's error of an earlier run: a peer that loses its
/// connection in this run must not read it.
pub(crate) fn forget_stopped(work: &Path, me: usize) {
    let _ = std::fs::remove_file(stopped_path(work, me));
}

/// Records the error process `me` of `processes` stops with, for its
/// peers (best effort: the error is also this process's own message).
pub(crate) fn record_stopped(work: &Path, me: usize, processes: usize, e: &Error) {
    if processes > 1 {
        let _ = std::fs::write(stopped_path(work, me), e.to_string());
    }
}

/// The halts of the jobs running in this process.
static LIVE: Mutex<Vec<Weak<Halt>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Whether a panic is timely's way of reporting a broken connection, or a
/// consequence of one (timely_communication's `tcp.rs`,
/// `bytes_exchange.rs`, `initialize.rs`).
fn is_lost_connection(text: &str) -> bool {
    text.starts_with("timely communication error")
        || text.starts_with("MergeQueue")
        || text.starts_with("Clean shutdown followed by data")
        || text.starts_with("Send thread panic")
        || text.starts_with("Recv thread panic")
}

/// The process a network thread talks to: timely names them
/// `timely:send-P` and `timely:recv-P`.
fn peer_of_thread(name: &str) -> Option<usize> {
    name.strip_prefix("timely:recv-").or_else(|| name.strip_prefix("timely:send-"))?.parse().ok()
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let text = panic_text(info.payload());
            if !is_lost_connection(&text) {
                return previous(info);
            }
            if let Some(peer) = std::thread::current().name().and_then(peer_of_thread) {
                let detail = text.trim_start_matches("timely communication error: ").to_string();
                for halt in lock(&LIVE).iter().filter_map(Weak::upgrade) {
                    halt.stop(Cause::Lost { peer, detail: detail.clone() });
                }
            }
        }));
    });
}

/// Steps `worker` until `probe` has seen everything, or the job stops.
pub(crate) fn run_to_end(worker: &mut Worker, halt: &Halt, probe: &ProbeHandle<u64>) -> Result<(), Error> {
    while !probe.done() {
        halt.check()?;
        worker.step_or_park(Some(PARK));
    }
    Ok(())
}

/// Workers started by [`start`].
pub(crate) struct Running<T> {
    guards: timely::communication::WorkerGuards<()>,
    values: mpsc::Receiver<(usize, Option<T>)>,
    threads: usize,
    me: usize,
    processes: usize,
    work: PathBuf,
    halt: Arc<Halt>,
}

/// Starts `func` on `threads` workers in process `me` of those at
/// `addresses` (see [`net::execute`]); [`Running::wait`] gives their values.
pub(crate) fn start<T, F>(
    addresses: &[String],
    me: usize,
    threads: usize,
    work: &Path,
    halt: &Arc<Halt>,
    func: F,
) -> Result<Running<T>, Error>
where
    T: Send + 'static,
    F: Fn(&mut Worker) -> Result<T, Error> + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::channel::<(usize, Option<T>)>();
    let tx = Mutex::new(tx);
    let stop = Arc::clone(halt);
    let guards = net::execute(addresses, me, threads, move |worker| {
        let index = worker.index();
        let value = match panic::catch_unwind(AssertUnwindSafe(|| func(worker))) {
            Ok(Ok(value)) => Some(value),
            Ok(Err(e)) => {
                stop.stop(Cause::Failed(e));
                None
            }
            // After a lost connection (recorded first, by the network
            // thread's panic) this cause is not the one reported.
            Err(payload) => {
                let text = panic_text(payload.as_ref());
                stop.stop(Cause::Failed(Error::Worker(format!("worker {index} panicked: {text}"))));
                None
            }
        };
        let failed = value.is_none();
        let _ = lock(&tx).send((index, value));
        // See the module: a stopped worker must not close its connections
        // cleanly.
        if failed {
            loop {
                std::thread::park();
            }
        }
    })?;
    Ok(Running {
        guards,
        values: rx,
        threads,
        me,
        processes: addresses.len().max(1),
        work: work.to_path_buf(),
        halt: Arc::clone(halt),
    })
}

impl<T> Running<T> {
    /// Each worker's value, in worker order; or, once any worker of any
    /// process fails or a connection is lost, the first cause, promptly
    /// (see the module).
    pub(crate) fn wait(self) -> Result<Vec<T>, Error> {
        let Running { guards, values: rx, threads, me, processes, work, halt } = self;
        let work = work.as_path();
        let mut values: Vec<Option<T>> = (0..threads).map(|_| None).collect();
        let mut reported = 0;
        let mut until: Option<Instant> = None;
        while reported < threads {
            match rx.recv_timeout(PARK) {
                Ok((index, value)) => {
                    values[index % threads] = value;
                    reported += 1;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if halt.is_stopped() && Instant::now() >= *until.get_or_insert_with(|| Instant::now() + GRACE) {
                break;
            }
        }
        if halt.is_stopped() || values.iter().any(Option::is_none) {
            // Joining would wait for threads that never end: parked workers,
            // network threads reading from a peer that is gone.
            std::mem::forget(guards);
            return Err(halt.error(work, me, processes));
        }
        // The network threads end once every peer has shut its connections
        // down; one that lost its peer meanwhile makes the join panic.
        match panic::catch_unwind(AssertUnwindSafe(|| guards.join())) {
            Ok(_) if !halt.is_stopped() => Ok(values.into_iter().flatten().collect()),
            _ => Err(halt.error(work, me, processes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_threads_name_their_peer_and_timely_panics_are_recognized() {
        assert_eq!(peer_of_thread("timely:recv-3"), Some(3));
        assert_eq!(peer_of_thread("timely:send-0"), Some(0));
        assert_eq!(peer_of_thread("timely:work-0"), None);
        assert!(is_lost_connection("timely communication error: reading data: socket closed"));
        assert!(is_lost_connection("MergeQueue poisoned."));
        assert!(!is_lost_connection("index out of bounds"));
    }

    #[test]
    fn a_failing_worker_stops_the_others_instead_of_leaving_them_waiting() {
        let work = tempfile::tempdir().unwrap();
        let halt = Halt::new();
        let h = Arc::clone(&halt);
        let started = Instant::now();
        let running = start(&[], 0, 2, work.path(), &halt, move |worker| {
            // Worker 1 fails at once; worker 0 waits on a dataflow worker 1
            // never joins, as a worker in the next stage would.
            if worker.index() == 1 {
                return Err(Error::Format("part-00001: not a Parquet file".into()));
            }
            use timely::dataflow::operators::vec::{Input, Map};
            use timely::dataflow::operators::{Exchange, Probe};
            let mut input = timely::dataflow::InputHandleVec::<u64, u64>::new();
            let probe = ProbeHandle::new();
            worker.dataflow::<u64, _, _>(|scope| {
                scope.input_from(&mut input).exchange(|x| *x).map(|x| x).probe_with(&probe);
            });
            input.send(0);
            drop(input);
            run_to_end(worker, &h, &probe)
        });
        let err = running.unwrap().wait().unwrap_err().to_string();
        assert!(err.contains("part-00001: not a Parquet file"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    }
}
