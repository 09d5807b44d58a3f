//! A DevTools protocol client over `--remote-debugging-pipe`.
//!
//! Chromium reads commands from its fd 3 and writes replies and events to
//! its fd 4, each a JSON message ended by a NUL byte. Only this process
//! holds the other ends: unlike `--remote-debugging-port`, no other local
//! process or user can connect and drive the browser. A writer thread sends
//! commands; a reader thread routes each reply to its caller by `id` and
//! each event to its tab by `sessionId` (tabs are attached with `flatten`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// Why a command got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CdpError {
    /// The browser exited or its pipe closed.
    Closed,
    /// The command was refused (`error` in the reply).
    Refused(String),
    /// No answer within the time given.
    Timeout,
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpError::Closed => f.write_str("Chromium exited"),
            CdpError::Refused(m) => write!(f, "Chromium refused a command: {m}"),
            CdpError::Timeout => f.write_str("Chromium did not answer in time"),
        }
    }
}

type Reply = Result<Value, CdpError>;

#[derive(Default)]
struct Routes {
    pending: HashMap<u64, oneshot::Sender<Reply>>,
    sessions: HashMap<String, mpsc::UnboundedSender<Value>>,
}

/// One running Chromium and the pipe to it. Dropping it kills the browser.
pub(crate) struct Browser {
    child: Mutex<Child>,
    writer: std::sync::mpsc::Sender<Vec<u8>>,
    next_id: Arc<AtomicU64>,
    routes: Arc<Mutex<Routes>>,
    alive: Arc<AtomicBool>,
    /// The profile directory, removed with the browser.
    _profile: tempfile::TempDir,
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Browser {
    /// Starts Chromium at `path` with a fresh profile and waits until it
    /// answers (at most `startup`).
    pub(crate) async fn launch(path: &Path, startup: Duration) -> Result<Arc<Browser>, String> {
        let profile = tempfile::Builder::new()
            .prefix("webdup-chromium-")
            .tempdir()
            .map_err(|e| format!("cannot make a profile folder: {e}"))?;
        let (cmd_read, cmd_write) = pipe().map_err(|e| e.to_string())?;
        let (ev_read, ev_write) = pipe().map_err(|e| e.to_string())?;
        let log = File::create(profile.path().join("stderr.log")).map_err(|e| e.to_string())?;
        let mut command = Command::new(path);
        command
            .arg("--headless=new")
            .arg("--remote-debugging-pipe")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args([
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-component-extensions-with-background-pages",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-sync",
                "--disable-gpu",
                "--mute-audio",
                "--no-pings",
                "--password-store=basic",
                "--use-mock-keychain",
                "--metrics-recording-only",
                // Every request a page makes is paused and answered by the
                // fetcher; what the pause does not catch (WebSockets, a
                // service worker's own fetches) meets a proxy that does not
                // exist, loopback included, so Chromium reaches no host.
                "--proxy-server=http://127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>",
                "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
                "--dns-prefetch-disable",
            ]);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            // Chromium refuses to start as root with its sandbox (it cannot
            // drop privileges); containers and CI often run as root.
            command.arg("--no-sandbox");
        }
        command.arg("about:blank").stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        let (r, w) = (cmd_read.as_raw_fd(), ev_write.as_raw_fd());
        // SAFETY: only async-signal-safe calls (fcntl, dup2, close) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Moved above 4 first, so dup2 onto 3 and 4 never closes
                // the other end; dup2 clears close-on-exec on the copies.
                let r2 = libc::fcntl(r, libc::F_DUPFD, 10);
                let w2 = libc::fcntl(w, libc::F_DUPFD, 10);
                if r2 < 0 || w2 < 0 || libc::dup2(r2, 3) < 0 || libc::dup2(w2, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(r2);
                libc::close(w2);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| format!("cannot start {}: {e}", path.display()))?;
        drop((cmd_read, ev_write));
        let routes = Arc::new(Mutex::new(Routes::default()));
        let alive = Arc::new(AtomicBool::new(true));
        let next_id = Arc::new(AtomicU64::new(1));
        let (writer, commands) = std::sync::mpsc::channel::<Vec<u8>>();
        let mut out = File::from(cmd_write);
        std::thread::Builder::new()
            .name("webdup-cdp-write".into())
            .spawn(move || {
                for message in commands {
                    if out.write_all(&message).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        {
            let (routes, alive, writer, next_id) = (routes.clone(), alive.clone(), writer.clone(), next_id.clone());
            let input = BufReader::with_capacity(1 << 16, File::from(ev_read));
            std::thread::Builder::new()
                .name("webdup-cdp-read".into())
                .spawn(move || read_messages(input, &routes, &alive, &writer, &next_id))
                .map_err(|e| e.to_string())?;
        }
        let browser = Arc::new(Browser { child: Mutex::new(child), writer, next_id, routes, alive, _profile: profile });
        if let Err(e) = browser.call_within(startup, None, "Browser.getVersion", json!({})).await {
            let log = std::fs::read_to_string(browser._profile.path().join("stderr.log")).unwrap_or_default();
            let tail: String =
                log.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join(" | ");
            return Err(format!(
                "{} did not start ({e}){}",
                path.display(),
                if tail.is_empty() { String::new() } else { format!(": {tail}") }
            ));
        }
        // New windows a page opens are reported here, to be closed.
        browser
            .call_within(startup, None, "Target.setDiscoverTargets", json!({"discover": true}))
            .await
            .map_err(|e| e.to_string())?;
        Ok(browser)
    }

    /// False once the browser has exited or its pipe closed.
    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Kills the browser: the reader sees the pipe close and fails every
    /// command in flight.
    pub(crate) fn kill(&self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }

    /// The events of a session, from now on.
    pub(crate) fn subscribe(&self, session: &str) -> mpsc::UnboundedReceiver<Value> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_alive() {
            routes.sessions.insert(session.to_string(), tx);
        }
        rx
    }

    pub(crate) fn unsubscribe(&self, session: &str) {
        self.routes.lock().unwrap_or_else(|e| e.into_inner()).sessions.remove(session);
    }

    /// Sends a command (to the browser, or to a tab's `session`) and waits
    /// for its reply at most `limit`.
    pub(crate) async fn call_within(
        &self,
        limit: Duration,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            if !self.is_alive() {
                return Err(CdpError::Closed);
            }
            routes.pending.insert(id, tx);
        }
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::from(s);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| CdpError::Refused(e.to_string()))?;
        bytes.push(0);
        if self.writer.send(bytes).is_err() {
            self.routes.lock().unwrap_or_else(|e| e.into_inner()).pending.remove(&id);
            return Err(CdpError::Closed);
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => {
                self.routes.lock().unwrap_or_else(|e| e.into_inner()).pending.remove(&id);
                Err(CdpError::Timeout)
            }
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends a command whose reply nobody waits for.
fn send_unanswered(writer: &std::sync::mpsc::Sender<Vec<u8>>, next_id: &AtomicU64, method: &str, params: Value) {
    let id = next_id.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut bytes) = serde_json::to_vec(&json!({"id": id, "method": method, "params": params})) {
        bytes.push(0);
        let _ = writer.send(bytes);
    }
}

/// The reader thread: routes every message until the pipe closes, then
/// fails whatever is still waiting.
fn read_messages(
    mut input: BufReader<File>,
    routes: &Mutex<Routes>,
    alive: &AtomicBool,
    writer: &std::sync::mpsc::Sender<Vec<u8>>,
    next_id: &AtomicU64,
) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(0, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.last() == Some(&0) {
            buf.pop();
        }
        let Ok(mut message) = serde_json::from_slice::<Value>(&buf) else {
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let reply = match message.get_mut("error") {
                Some(e) => Err(CdpError::Refused(
                    e.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string(),
                )),
                None => Ok(message.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
            };
            let tx = routes.lock().unwrap_or_else(|e| e.into_inner()).pending.remove(&id);
            if let Some(tx) = tx {
                let _ = tx.send(reply);
            }
            continue;
        }
        if let Some(session) = message.get("sessionId").and_then(Value::as_str) {
            let routes = routes.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(tx) = routes.sessions.get(session) {
                let _ = tx.send(message);
            }
            continue;
        }
        // A window a page opened (window.open, a target=_blank click): it
        // is closed at once, its requests never reach the fetcher.
        if message.get("method").and_then(Value::as_str) == Some("Target.targetCreated") {
            let info = &message["params"]["targetInfo"];
            let opened = info.get("openerId").and_then(Value::as_str).is_some_and(|o| !o.is_empty());
            if let (true, Some(target)) = (opened, info.get("targetId").and_then(Value::as_str)) {
                send_unanswered(writer, next_id, "Target.closeTarget", json!({"targetId": target}));
            }
        }
    }
    let mut routes = routes.lock().unwrap_or_else(|e| e.into_inner());
    alive.store(false, Ordering::Release);
    // Dropping the senders wakes every caller and every tab with "closed".
    routes.pending.clear();
    routes.sessions.clear();
}
