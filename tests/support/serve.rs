//! A `webdup serve` process for tests: bound to a port the OS picks on
//! 127.0.0.1 (unless the test names `--bind`), its port read from stderr and
//! the rest of stderr drained so the server never blocks on it, killed when
//! dropped.

// Each test file uses a part of this.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

pub struct Server {
    pub child: Child,
    /// Where to reach it: 127.0.0.1 and the port it bound.
    pub addr: SocketAddr,
}

impl Server {
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `webdup serve --index DB` with `extra` flags.
pub fn start(db: &Path, extra: &[&str]) -> Server {
    let bind: &[&str] = if extra.contains(&"--bind") { &[] } else { &["--bind", "127.0.0.1:0"] };
    let mut child = Command::new(env!("CARGO_BIN_EXE_webdup"))
        .args(["serve", "--index"])
        .arg(db)
        .args(bind)
        .args(extra)
        .env_remove("WEBDUP_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start webdup serve");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("serve's first line");
    let port = line.trim().rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).unwrap_or_else(|| panic!("{line}"));
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Server { child, addr: SocketAddr::from(([127, 0, 0, 1], port)) }
}

/// One request on a new connection (`Connection: close`); the status and
/// the body as JSON (a JSON string when it is not JSON). Panics after `limit`.
pub fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>, limit: Duration) -> (u16, Value) {
    let mut s = TcpStream::connect_timeout(&addr, limit).unwrap();
    s.set_read_timeout(Some(limit)).unwrap();
    s.set_write_timeout(Some(limit)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    read_response(&mut s).unwrap_or_else(|e| panic!("{method} {path}: no answer: {e}"))
}

pub fn read_response(s: &mut TcpStream) -> std::io::Result<(u16, Value)> {
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Ok((status, serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.into()))))
}

/// One request with reqwest: its status and its body as JSON (or as a JSON
/// string when it is not JSON).
pub async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let mut r = client.request(method, url);
    if let Some(b) = body {
        r = r.header("content-type", "application/json").body(b.to_string());
    }
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into())))
}
