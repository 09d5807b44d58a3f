//! A `webdup serve` process for tests: bound to a port the OS picks on
//! 127.0.0.1 (unless the test names `--bind`), its port read from stderr and
//! the rest of stderr drained so the server never blocks on it, killed when
//! dropped.

// Each test file uses a part of this.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

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
