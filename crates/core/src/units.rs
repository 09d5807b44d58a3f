//! Independent units of work, and who runs them.
//!
//! The core never starts threads: a function with independent parts (the
//! bands of an LSH pass, the tables of a Hamming search, the chunks of a
//! verification, the sites of a template) takes a [`Units`] and lets it run
//! them. [`InTurn`] runs them one after another, as a dataflow worker or a
//! Python thread wants; the `webdup` facade runs them on rayon's pool.
//! Results come back in unit order, so the answer never depends on the
//! runner.

/// Runs `n` independent units of work, `f(0)` to `f(n - 1)`, and returns
/// their results in that order.
pub trait Units: Sync {
    fn map<T, F>(&self, n: usize, f: F) -> Vec<T>
    where
        T: Send,
        F: Fn(usize) -> T + Sync + Send;
}

/// Runs units one after another on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct InTurn;

impl Units for InTurn {
    fn map<T, F>(&self, n: usize, f: F) -> Vec<T>
    where
        T: Send,
        F: Fn(usize) -> T + Sync + Send,
    {
        (0..n).map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_run_in_turn_and_come_back_in_order() {
        assert_eq!(InTurn.map(4, |i| i * i), [0, 1, 4, 9]);
        assert!(InTurn.map(0, |i| i).is_empty());
    }
}
