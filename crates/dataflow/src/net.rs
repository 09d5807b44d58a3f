//! Connecting the processes of a job and starting timely's workers on the
//! connections.
//!
//! The handshake is timely's own: every process listens on its address,
//! connects to each lower-numbered process and sends it its index (8
//! big-endian bytes), and accepts one connection from each higher-numbered
//! process. timely's version polls for a connection once a second on both
//! sides, so processes started together lose up to a second; here a
//! listener is polled every few milliseconds and a refused connection is
//! retried as often. A connection that does not announce a process index
//! in range (a port scanner, a stray client) is closed and the wait goes on.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Hooks, WorkerGuards};
use timely::worker::Worker;

use crate::Error;

/// How often a listener is polled, and a refused connection retried.
const POLL: Duration = Duration::from_millis(5);

/// How long an accepted connection has to announce its process index.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// How often a process still waiting for another says so on standard error.
const NOTE_EVERY: Duration = Duration::from_secs(10);

/// Runs `func` on `threads` workers in this process, connected to the
/// other processes at `addresses` (this one at `addresses[me]`); one
/// process needs no network.
pub fn execute<T, F>(addresses: &[String], me: usize, threads: usize, func: F) -> Result<WorkerGuards<T>, Error>
where
    T: Send + 'static,
    F: Fn(&mut Worker) -> T + Send + Sync + 'static,
{
    if addresses.len() <= 1 {
        let config = if threads == 1 { timely::Config::thread() } else { timely::Config::process(threads) };
        return timely::execute(config, func).map_err(|e| Error::Worker(format!("cannot start the workers: {e}")));
    }
    let sockets = connect(addresses, me)?;
    let hooks = Hooks::default();
    let local = ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) = initialize_networking_from_sockets(local, sockets, me, threads, hooks)
        .map_err(|e| Error::Worker(format!("cannot start the network threads: {e}")))?;
    let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
    timely::execute::execute_from(builders, Box::new(guard), timely::WorkerConfig::default(), func)
        .map_err(|e| Error::Worker(format!("cannot start the workers: {e}")))
}

/// One connection to every other process, in process order (`None` at
/// `me`).
pub fn connect(addresses: &[String], me: usize) -> Result<Vec<Option<TcpStream>>, Error> {
    let n = addresses.len();
    let listener = if me + 1 < n {
        let l = TcpListener::bind(&addresses[me])
            .map_err(|e| Error::Worker(format!("process {me} cannot listen on {}: {e}", addresses[me])))?;
        l.set_nonblocking(true).map_err(|e| Error::Worker(format!("listening on {}: {e}", addresses[me])))?;
        Some(l)
    } else {
        None
    };
    let lower: Vec<String> = addresses[..me].to_vec();
    let dialer = thread::spawn(move || {
        lower.iter().enumerate().map(|(j, address)| dial(address, me, j)).collect::<Result<Vec<TcpStream>, Error>>()
    });
    let mut higher: Vec<Option<TcpStream>> = (me + 1..n).map(|_| None).collect();
    if let Some(listener) = listener {
        let mut noted = Instant::now();
        while let Some(missing) = higher.iter().position(Option::is_none) {
            match listener.accept() {
                Ok((stream, _)) => {
                    if let Some((id, stream)) = announced(stream, me, n)
                        && higher[id - me - 1].is_none()
                    {
                        higher[id - me - 1] = Some(stream);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                    if noted.elapsed() >= NOTE_EVERY {
                        eprintln!(
                            "process {me}: waiting for process {} to connect to {}",
                            me + 1 + missing,
                            addresses[me]
                        );
                        noted = Instant::now();
                    }
                    thread::sleep(POLL);
                }
                Err(e) => return Err(Error::Worker(format!("process {me} accepting on {}: {e}", addresses[me]))),
            }
        }
    }
    let lower = dialer.join().map_err(|_| Error::Worker("the connecting thread failed".into()))??;
    let mut sockets: Vec<Option<TcpStream>> = lower.into_iter().map(Some).collect();
    sockets.push(None);
    sockets.extend(higher);
    Ok(sockets)
}

/// Connects to process `to` at `address`, retrying while it is not yet
/// listening, and announces this process's index.
fn dial(address: &str, me: usize, to: usize) -> Result<TcpStream, Error> {
    let mut noted = Instant::now();
    loop {
        match TcpStream::connect(address) {
            Ok(mut stream) => {
                let sent = stream.set_nodelay(true).and_then(|()| stream.write_all(&(me as u64).to_be_bytes()));
                return sent
                    .map(|()| stream)
                    .map_err(|e| Error::Worker(format!("process {me} connecting to process {to} at {address}: {e}")));
            }
            Err(e) => {
                if noted.elapsed() >= NOTE_EVERY {
                    eprintln!("process {me}: waiting for process {to} at {address} ({e})");
                    noted = Instant::now();
                }
                thread::sleep(POLL);
            }
        }
    }
}

/// The process index an accepted connection announces, when it is one of
/// the processes this one waits for.
fn announced(mut stream: TcpStream, me: usize, n: usize) -> Option<(usize, TcpStream)> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(HANDSHAKE)).ok()?;
    let mut index = [0u8; 8];
    stream.read_exact(&mut index).ok()?;
    let id = usize::try_from(u64::from_be_bytes(index)).ok()?;
    if id <= me || id >= n {
        return None;
    }
    stream.set_read_timeout(None).ok()?;
    stream.set_nodelay(true).ok()?;
    Some((id, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_addresses(n: usize) -> Vec<String> {
        let listeners: Vec<TcpListener> = (0..n).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
        listeners.iter().map(|l| l.local_addr().unwrap().to_string()).collect()
    }

    #[test]
    fn three_processes_connect_in_any_start_order_and_ignore_a_stray_client() {
        let addresses = free_addresses(3);
        // A stray client that announces nothing, then one with an index out
        // of range, reach process 0 before the real processes do.
        let a0 = addresses.clone();
        let p0 = thread::spawn(move || connect(&a0, 0));
        let stray_at = addresses[0].clone();
        let stray = thread::spawn(move || {
            let start = Instant::now();
            let mut s = loop {
                match TcpStream::connect(&stray_at) {
                    Ok(s) => break s,
                    Err(_) if start.elapsed() < Duration::from_secs(10) => thread::sleep(POLL),
                    Err(e) => panic!("{e}"),
                }
            };
            s.write_all(&7u64.to_be_bytes()).unwrap();
            s
        });
        let _stray = stray.join().unwrap();
        let (a2, a1) = (addresses.clone(), addresses.clone());
        let p2 = thread::spawn(move || connect(&a2, 2));
        thread::sleep(Duration::from_millis(50));
        let p1 = thread::spawn(move || connect(&a1, 1));
        let s0 = p0.join().unwrap().unwrap();
        let s1 = p1.join().unwrap().unwrap();
        let s2 = p2.join().unwrap().unwrap();
        let shape = |s: &[Option<TcpStream>]| s.iter().map(Option::is_some).collect::<Vec<_>>();
        assert_eq!(shape(&s0), [false, true, true]);
        assert_eq!(shape(&s1), [true, false, true]);
        assert_eq!(shape(&s2), [true, true, false]);
        // Each pair of processes holds the two ends of one connection.
        let ends = |s: &Option<TcpStream>| {
            let s = s.as_ref().unwrap();
            (s.local_addr().unwrap(), s.peer_addr().unwrap())
        };
        assert_eq!(ends(&s0[1]), (ends(&s1[0]).1, ends(&s1[0]).0));
        assert_eq!(ends(&s0[2]), (ends(&s2[0]).1, ends(&s2[0]).0));
        assert_eq!(ends(&s1[2]), (ends(&s2[1]).1, ends(&s2[1]).0));
    }

    #[test]
    fn an_address_in_use_is_named() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addresses = vec![taken.local_addr().unwrap().to_string(), "127.0.0.1:1".to_string()];
        let err = connect(&addresses, 0).unwrap_err().to_string();
        assert!(err.contains(&addresses[0]) && err.contains("cannot listen"), "{err}");
    }
}
