//! The engine's units of work on rayon's thread pool.
//!
//! Core functions never start threads (see [`webdup_core::units`]); the
//! facade hands them [`Threads`], which runs their units on the current
//! rayon pool: the global one, or the pool a caller installed.

use rayon::prelude::*;
use webdup_core::units::Units;

/// Runs units on rayon's current pool, results in unit order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Threads;

impl Units for Threads {
    fn map<T, F>(&self, n: usize, f: F) -> Vec<T>
    where
        T: Send,
        F: Fn(usize) -> T + Sync + Send,
    {
        (0..n).into_par_iter().map(f).collect()
    }
}

/// Most worker threads [`start`] takes.
pub const MAX_THREADS: usize = 256;

/// Why the worker threads could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ThreadsError {
    #[error("{0} worker threads: give 1 to {MAX_THREADS}")]
    OutOfRange(usize),
    #[error("cannot start {0} worker threads: {1}")]
    Pool(usize, String),
}

/// Starts rayon's global pool with `n` worker threads (without a call: one
/// per core). Call it once, before any work: the pool is started with the
/// first parallel stage. Results never depend on `n` (see [`Threads`]).
pub fn start(n: usize) -> Result<(), ThreadsError> {
    if !(1..=MAX_THREADS).contains(&n) {
        return Err(ThreadsError::OutOfRange(n));
    }
    rayon::ThreadPoolBuilder::new().num_threads(n).build_global().map_err(|e| ThreadsError::Pool(n, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use webdup_core::units::InTurn;

    #[test]
    fn threads_give_what_running_in_turn_gives() {
        let f = |i: usize| (0..i as u64).map(|x| x * x).sum::<u64>();
        assert_eq!(Threads.map(1000, f), InTurn.map(1000, f));
    }

    #[test]
    fn thread_counts_out_of_range_are_refused() {
        assert!(matches!(start(0), Err(ThreadsError::OutOfRange(0))));
        assert!(matches!(start(MAX_THREADS + 1), Err(ThreadsError::OutOfRange(257))));
    }
}
