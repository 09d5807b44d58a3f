//! The accept loop: which connections the server holds, and what each is
//! doing, so that one client cannot starve the rest.
//!
//! A connection is *waiting* while the server waits for a request's headers
//! (a new connection, or a kept-alive one between requests) and *busy* from
//! its headers to its answer. When a client's address already holds
//! [`ServeConfig::max_connections_per_ip`] connections, or the server holds
//! [`ServeConfig::max_connections`], a new connection takes the place of the
//! longest-waiting one (of that address, or else of the address holding
//! the most): sockets that trickle headers, however many and however fast
//! they are reopened, are the ones closed, and a client that sends its
//! request at once is served. Only when every held connection is busy is a
//! new one turned away, and even then [`HEALTH_RESERVE`] more are read for
//! a `GET /health` (anything else on them is a 503), so a probe still sees
//! the server alive.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use super::ServeConfig;
use super::guard::LocalAddr;

/// Connections beyond the limit that are still read for a `/health` probe
/// when every held connection is busy.
pub const HEALTH_RESERVE: usize = 16;

/// How long a reserve connection may take to send its request.
const RESERVE_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves `router` on `listener` until `shutdown` completes, with the
/// timeouts and connection limits of `config` (see the module
/// documentation of [`crate::serve`]). Then it stops accepting
/// connections, closes idle ones, lets the requests in flight finish for up
/// to [`ServeConfig::shutdown_grace`], and returns, dropping what is left.
/// (An insert cut off there is rolled back whole: the client got no answer.)
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    config: &ServeConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(config.header_timeout).keep_alive(true);
    let mut reserve_http = http.clone();
    reserve_http.header_read_timeout(RESERVE_TIMEOUT).keep_alive(false);
    let conns = Arc::new(Conns::new(config.max_connections, config.max_connections_per_ip));
    // Its connections are never marked busy (a health answer takes no
    // time), so a new one always finds room by evicting the oldest: slow
    // sockets turned away by `conns` cannot hold the reserve either.
    let reserve = Arc::new(Conns::new(HEALTH_RESERVE, HEALTH_RESERVE));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors or a connection reset before it was
                // accepted: back off a little rather than spin, and go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let local = stream.local_addr().unwrap_or(config.bind);
        let Some((slot, evicted)) = conns.admit(peer.ip()) else {
            match reserve.admit(peer.ip()) {
                Some((slot, evicted)) => {
                    let http = reserve_http.clone();
                    connections.spawn(async move {
                        let _slot = slot;
                        let service = hyper::service::service_fn(health_only);
                        let connection = http.serve_connection(TokioIo::new(stream), service);
                        tokio::select! {
                            _ = tokio::time::timeout(RESERVE_TIMEOUT * 2, connection) => {}
                            Ok(()) = evicted => {}
                        }
                    });
                }
                None => {
                    connections.spawn(refuse(stream));
                }
            }
            continue;
        };
        let _ = stream.set_nodelay(true);
        let slot = Arc::new(slot);
        let service = Tracked { inner: TowerToHyperService::new(router.clone()), slot, local };
        let http = http.clone();
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let connection = http.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let mut evicted = evicted;
            tokio::select! {
                _ = connection.as_mut() => return,
                // Dropping the connection closes the socket.
                Ok(()) = &mut evicted => return,
                _ = stop.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
            }
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(config.shutdown_grace, drained).await;
    connections.abort_all();
    Ok(())
}

/// Answers a connection over every limit with a 503 and closes it.
async fn refuse(mut stream: tokio::net::TcpStream) {
    let body = r#"{"error":"too many connections; retry shortly"}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         retry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

/// A reserve connection's one request: `/health` is answered, anything
/// else is a 503.
async fn health_only(
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<axum::body::Body>, std::convert::Infallible> {
    let health = request.uri().path() == "/health" && request.method() == hyper::Method::GET;
    let (status, body) = if health {
        (StatusCode::OK, r#"{"status":"ok"}"#)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"too many connections; retry shortly"}"#)
    };
    let mut r = hyper::Response::new(axum::body::Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if !health {
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    Ok(r)
}

/// The router as a connection's service: marks the connection busy while
/// a request is answered, and tells the router the address the connection
/// came in on.
struct Tracked {
    inner: TowerToHyperService<Router>,
    slot: Arc<Slot>,
    local: SocketAddr,
}

type Answer = <TowerToHyperService<Router> as hyper::service::Service<hyper::Request<Incoming>>>::Response;
type Failed = <TowerToHyperService<Router> as hyper::service::Service<hyper::Request<Incoming>>>::Error;

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = Answer;
    type Error = Failed;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Failed>> + Send>>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        self.slot.busy();
        request.extensions_mut().insert(LocalAddr(self.local));
        let answer = self.inner.call(request);
        let slot = self.slot.clone();
        Box::pin(async move {
            let answer = answer.await;
            slot.waiting();
            answer
        })
    }
}

/// The connections held, by address.
pub(super) struct Conns {
    held: Mutex<Held>,
    max: usize,
    per_ip: usize,
}

#[derive(Default)]
struct Held {
    next: u64,
    live: HashMap<u64, Entry>,
    by_ip: HashMap<IpAddr, usize>,
}

struct Entry {
    ip: IpAddr,
    /// Since when it waits for a request's headers; `None` while busy.
    waiting: Option<Instant>,
    evict: Option<oneshot::Sender<()>>,
}

/// A held connection; dropping it lets the connection go.
pub(super) struct Slot {
    conns: Arc<Conns>,
    id: u64,
}

impl Conns {
    pub(super) fn new(max: usize, per_ip: usize) -> Conns {
        Conns { held: Mutex::new(Held::default()), max: max.max(1), per_ip: per_ip.max(1) }
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for a new connection from `ip`, made by evicting the
    /// longest-waiting connection when a limit is reached (see the module
    /// documentation); the receiver fires when this one is evicted in turn.
    /// `None` when every connection that would have to go is busy.
    pub(super) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<(Slot, oneshot::Receiver<()>)> {
        let mut held = self.held();
        let from_ip = held.by_ip.get(&ip).copied().unwrap_or(0);
        let victim = if from_ip >= self.per_ip {
            Some(held.longest_waiting(|e| e.ip == ip)?)
        } else if held.live.len() >= self.max {
            Some(held.longest_waiting(|_| true)?)
        } else {
            None
        };
        if let Some(id) = victim {
            held.forget(id);
        }
        let id = held.next;
        held.next += 1;
        let (tx, rx) = oneshot::channel();
        held.live.insert(id, Entry { ip, waiting: Some(Instant::now()), evict: Some(tx) });
        *held.by_ip.entry(ip).or_default() += 1;
        Some((Slot { conns: self.clone(), id }, rx))
    }

    /// How many connections are held (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held().live.len()
    }
}

impl Held {
    /// Of the waiting connections `eligible` takes, the one of the address
    /// holding the most connections that has waited longest.
    fn longest_waiting(&self, eligible: impl Fn(&Entry) -> bool) -> Option<u64> {
        self.live
            .iter()
            .filter(|(_, e)| eligible(e))
            .filter_map(|(id, e)| {
                Some((self.by_ip.get(&e.ip).copied().unwrap_or(0), std::cmp::Reverse((e.waiting?, *id))))
            })
            .max()
            .map(|(_, std::cmp::Reverse((_, id)))| id)
    }

    /// Lets connection `id` go (evicting it if it is still running).
    fn forget(&mut self, id: u64) {
        if let Some(mut e) = self.live.remove(&id) {
            if let Some(tx) = e.evict.take() {
                let _ = tx.send(());
            }
            if let Some(n) = self.by_ip.get_mut(&e.ip) {
                *n -= 1;
                if *n == 0 {
                    self.by_ip.remove(&e.ip);
                }
            }
        }
    }
}

impl Slot {
    fn set(&self, waiting: Option<Instant>) {
        if let Some(e) = self.conns.held().live.get_mut(&self.id) {
            e.waiting = waiting;
        }
    }

    /// Its request's headers are in.
    fn busy(&self) {
        self.set(None);
    }

    /// Its answer is sent: it waits for the next request.
    fn waiting(&self) {
        self.set(Some(Instant::now()));
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.conns.held();
        if let Some(e) = held.live.get_mut(&self.id) {
            // Closing on its own: nothing to tell it.
            e.evict = None;
        }
        held.forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_address_gives_up_its_longest_waiting_connection_and_never_a_busy_one() {
        let conns = Arc::new(Conns::new(100, 3));
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let (busy, mut busy_rx) = conns.admit(a).unwrap();
        busy.busy();
        let (_first, mut first_rx) = conns.admit(a).unwrap();
        let (second, mut second_rx) = conns.admit(a).unwrap();
        let (_other, mut other_rx) = conns.admit(b).unwrap();
        // A fourth from `a`: its oldest waiting one goes.
        let (third, _) = conns.admit(a).unwrap();
        assert!(first_rx.try_recv().is_ok());
        assert!(second_rx.try_recv().is_err() && busy_rx.try_recv().is_err() && other_rx.try_recv().is_err());
        assert_eq!(conns.len(), 4);
        // All of `a`'s busy: the next is turned away.
        second.busy();
        third.busy();
        assert!(conns.admit(a).is_none());
        assert!(conns.admit(b).is_some());
        drop(busy);
        assert!(conns.admit(a).is_some());
    }

    #[test]
    fn a_full_server_evicts_from_the_address_holding_the_most() {
        let conns = Arc::new(Conns::new(4, 10));
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let (_b1, mut b_rx) = conns.admit(b).unwrap();
        let mut held: Vec<_> = (0..3).map(|_| conns.admit(a).unwrap()).collect();
        let (_c, _) = conns.admit(b).unwrap();
        assert!(b_rx.try_recv().is_err(), "b held one, a three: a's oldest goes");
        assert!(held[0].1.try_recv().is_ok());
        assert!(held.iter_mut().skip(1).all(|(_, rx)| rx.try_recv().is_err()));
        assert_eq!(conns.len(), 4);
    }
}
