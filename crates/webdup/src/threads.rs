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

#[cfg(test)]
mod tests {
    use super::*;
    use webdup_core::units::InTurn;

    #[test]
    fn threads_give_what_running_in_turn_gives() {
        let f = |i: usize| (0..i as u64).map(|x| x * x).sum::<u64>();
        assert_eq!(Threads.map(1000, f), InTurn.map(1000, f));
    }
}
