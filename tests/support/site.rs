//! A web site for crawl tests: a real HTTP/1.1 server on 127.0.0.1 (one
//! thread per connection, `Connection: close`) that answers each request
//! from a function of its path and records every path it served, so a test
//! can check what a crawl fetched and what it never asked for.

// Each test file uses a part of this.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Article texts for the sites of crawl tests: long enough to be
/// fingerprinted, unrelated to each other.
pub const ARTICLE: &str = "The harbour office posts the winter ferry timetable every monday morning by the ticket \
    window. Crossings to the island take forty minutes in calm weather and an hour when the wind turns \
    north. The first boat leaves at seven, the last returns at nine, and bicycles travel free on every \
    sailing except the late ferry on saturdays, when the deck is kept clear for the market stalls that \
    come back from the island fair.";

pub const OTHER: &str = "The lighthouse keeper climbs one hundred and twelve steps each evening to light the \
    lamp. Since the lens was replaced in the spring the beam reaches twenty miles out to sea, and the \
    fishing fleet steers by it through the narrow channel between the rocks and the sandbanks that \
    shift with every winter storm along the northern coast of the bay.";

/// One answer of the site.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// Extra header lines, each ending in `\r\n`.
    pub headers: String,
    pub content_type: &'static str,
    pub body: String,
}

impl Reply {
    /// A 200 HTML page.
    pub fn html(body: impl Into<String>) -> Reply {
        Reply { status: 200, headers: String::new(), content_type: "text/html; charset=utf-8", body: body.into() }
    }

    /// A plain-text answer (robots.txt).
    pub fn text(body: impl Into<String>) -> Reply {
        Reply { content_type: "text/plain", ..Reply::html(body) }
    }

    /// An XML answer (a sitemap).
    pub fn xml(body: impl Into<String>) -> Reply {
        Reply { content_type: "application/xml", ..Reply::html(body) }
    }

    pub fn not_found() -> Reply {
        Reply { status: 404, ..Reply::text("not found") }
    }

    /// A redirect to `location` (absolute, or a path of this site).
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply { status, headers: format!("Location: {location}\r\n"), ..Reply::text("") }
    }

    /// The same reply with an extra header line.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }
}

type Pages = dyn Fn(&str) -> Reply + Send + Sync;

/// The running site; stopped when dropped.
pub struct Site {
    pub port: u16,
    served: Arc<Mutex<Vec<String>>>,
    /// Each response waits this long (milliseconds), so a crawl can be
    /// killed midway.
    delay: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Site {
    /// Serves `pages` (path and query as requested -> reply).
    pub fn start(pages: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("bound address").port();
        let served = Arc::new(Mutex::new(Vec::new()));
        let delay = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let pages: Arc<Pages> = Arc::new(pages);
        let (s, d, st) = (served.clone(), delay.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(conn) = conn {
                    let (s, ms, pages) = (s.clone(), d.load(Ordering::Relaxed), pages.clone());
                    std::thread::spawn(move || answer(conn, &s, ms, &*pages));
                }
            }
        });
        Site { port, served, delay, stop }
    }

    /// The absolute URL of `path` on this site.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every path served so far, in the order answered.
    pub fn served(&self) -> Vec<String> {
        self.served.lock().unwrap().clone()
    }

    /// Paths served after the first `from`, robots.txt left out.
    pub fn pages_served_since(&self, from: usize) -> Vec<String> {
        self.served.lock().unwrap()[from..].iter().filter(|p| *p != "/robots.txt").cloned().collect()
    }

    /// Makes every later response wait `ms` milliseconds.
    pub fn set_delay(&self, ms: u64) {
        self.delay.store(ms, Ordering::Relaxed);
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn answer(mut s: TcpStream, served: &Mutex<Vec<String>>, delay: u64, pages: &Pages) {
    let Ok(clone) = s.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(delay));
    served.lock().unwrap().push(path.clone());
    let r = pages(&path);
    let _ = write!(
        s,
        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{}\r\n{}",
        r.status,
        r.content_type,
        r.body.len(),
        r.headers,
        r.body
    );
}
