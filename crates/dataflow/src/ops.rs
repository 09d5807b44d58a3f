//! The one timely operator the job is built from: gather a stage's records
//! where `route` sends them, and once every worker has sent all of them
//! (the input frontier is empty), hand them to `logic` in one call.
//!
//! Each stage runs one epoch over a finite input, so "the frontier passed"
//! means "the input is complete": a bulk-synchronous step per operator,
//! with timely doing the exchange and the progress tracking.

use timely::container::CapacityContainerBuilder;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;

/// Records routed by `route` (a hash; the worker is it modulo the peers),
/// all given to `logic` once complete; its output goes on downstream.
/// `logic` runs exactly once per worker, with nothing when no record came.
pub fn gather<'s, D, O, R, L, I>(stream: StreamVec<'s, u64, D>, name: &str, route: R, logic: L) -> StreamVec<'s, u64, O>
where
    D: timely::ExchangeData + Clone,
    O: Clone + 'static,
    R: FnMut(&D) -> u64 + 'static,
    L: FnOnce(Vec<D>) -> I + 'static,
    I: IntoIterator<Item = O>,
{
    gather_into(stream, name, route, Vec::new(), |stash: &mut Vec<D>, d: &mut Vec<D>| stash.append(d), logic)
}

/// [`gather`], with the records put into `state` by `add` as they arrive
/// (a batch at a time) instead of into one list, and `logic` given the
/// state once every record is in: a stage can keep its records as it will
/// use them (grouped, in smaller pieces to sort). `logic`'s output is
/// handed on as it yields it, never collected first.
pub fn gather_into<'s, D, O, S, R, A, L, I>(
    stream: StreamVec<'s, u64, D>,
    name: &str,
    route: R,
    state: S,
    mut add: A,
    logic: L,
) -> StreamVec<'s, u64, O>
where
    D: timely::ExchangeData + Clone,
    O: Clone + 'static,
    S: 'static,
    R: FnMut(&D) -> u64 + 'static,
    A: FnMut(&mut S, &mut Vec<D>) + 'static,
    L: FnOnce(S) -> I + 'static,
    I: IntoIterator<Item = O>,
{
    stream.unary_frontier(Exchange::new(route), name, move |capability, _info| {
        let mut capability = Some(capability);
        let mut logic = Some(logic);
        let mut state = Some(state);
        move |(input, frontier), output| {
            input.for_each_stamp(|_time, data| {
                if let Some(s) = state.as_mut() {
                    for d in data {
                        add(s, d);
                    }
                }
            });
            if frontier.is_empty()
                && let (Some(cap), Some(logic), Some(state)) = (capability.take(), logic.take(), state.take())
            {
                // One record at a time: `give_iterator` would hold every
                // container built until the iterator ends.
                let mut session = output.session(&cap);
                for o in logic(state) {
                    session.give(o);
                }
            }
        }
    })
}

/// Records routed by `route`, each handed to `each` as it arrives (nothing
/// is held back); the output carries no records, only the completion: an
/// operator fed from it runs after every record has been handed over.
pub fn consume<'s, D, O, R, E>(
    stream: StreamVec<'s, u64, D>,
    name: &str,
    route: R,
    mut each: E,
) -> StreamVec<'s, u64, O>
where
    D: timely::ExchangeData + Clone,
    O: Clone + 'static,
    R: FnMut(&D) -> u64 + 'static,
    E: FnMut(D) + 'static,
{
    stream.unary_frontier::<CapacityContainerBuilder<Vec<O>>, _, _, _>(
        Exchange::new(route),
        name,
        move |_cap, _info| {
            move |(input, _frontier), _output| {
                input.for_each_stamp(|_time, data| {
                    for d in data {
                        d.drain(..).for_each(&mut each);
                    }
                });
            }
        },
    )
}

/// A well-spread hash of a key: the owner of a page is `owner(key) %
/// workers`, whatever the keys' spacing.
pub fn owner(key: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes())
}

/// A hash of a string (a site, a digest) for routing.
pub fn route_bytes(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
