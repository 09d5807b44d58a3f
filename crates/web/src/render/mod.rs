//! Pages as a browser sees them: a headless Chromium runs a page's scripts
//! and the DOM they leave is read back as the page's HTML.
//!
//! The fetcher fetches every page as always (robots.txt, politeness, the
//! cache, redirects, the address policy); a page to render is then opened
//! in a fresh tab, and Chromium is handed the body already fetched as the
//! answer to its main request, so no page is fetched twice. Every other
//! request the page makes (scripts, XHR, `fetch`, stylesheets) is paused by
//! Chromium and fetched by the fetcher under the same policy as a plain
//! fetch; images, media and fonts are refused (they never change the text).
//! Chromium itself opens no connection. Once the page's network is quiet (or
//! its budget, [`RenderConfig::timeout`], runs out) its
//! `document.documentElement.outerHTML` replaces the fetched body.
//!
//! Chromium is driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`), not a port: see `docs/render.md` for why,
//! and [`cdp`] for the client.

#[cfg(feature = "http")]
pub(crate) mod cdp;
#[cfg(feature = "http")]
pub(crate) mod pool;
mod shell;
#[cfg(feature = "http")]
pub(crate) mod tab;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use shell::looks_client_rendered;

use crate::error::{Error, Result};

/// Which fetched pages are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RenderMode {
    /// None: the fetched HTML is the page.
    #[default]
    Off,
    /// Every HTML page.
    On,
    /// Only pages whose fetched HTML looks like a client-rendered shell
    /// ([`looks_client_rendered`]).
    Auto,
}

/// Chromium's names on PATH, looked for in this order.
pub const CHROMIUM_NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/// How pages are rendered. Checked by [`RenderConfig::validate`], which
/// finds Chromium, so a missing browser stops a run before any work.
#[derive(Debug, Clone)]
pub struct RenderConfig {
    pub mode: RenderMode,
    /// The Chromium (or Chrome) executable; `None` looks for
    /// [`CHROMIUM_NAMES`] on `PATH`.
    pub chromium: Option<PathBuf>,
    /// A page's budget, from opening its tab to reading its DOM.
    pub timeout: Duration,
    /// Tabs open at once; 0 means one per core.
    pub tabs: usize,
}

impl Default for RenderConfig {
    fn default() -> Self {
        RenderConfig { mode: RenderMode::Off, chromium: None, timeout: Duration::from_secs(10), tabs: 0 }
    }
}

impl RenderConfig {
    /// Rejects a budget that cannot work and, when pages are to be
    /// rendered, finds Chromium (the path set in [`RenderConfig::chromium`]
    /// afterwards), or says how to install it.
    pub fn validate(mut self) -> Result<RenderConfig> {
        if self.mode == RenderMode::Off {
            return Ok(self);
        }
        if self.timeout < Duration::from_millis(100) || self.timeout > Duration::from_secs(600) {
            return Err(Error::Config(format!(
                "the render timeout must be 0.1 to 600 seconds, not {:?}",
                self.timeout
            )));
        }
        if self.tabs > 256 {
            return Err(Error::Config(format!("render tabs must be 0 (one per core) to 256, not {}", self.tabs)));
        }
        let found = match &self.chromium {
            Some(p) if is_executable(p) => p.clone(),
            Some(p) if p.components().count() == 1 => find_on_path(&[p.to_string_lossy().as_ref()])
                .ok_or_else(|| Error::Config(format!("Chromium: `{}` is not on PATH", p.display())))?,
            Some(p) => {
                return Err(Error::Config(format!("Chromium: {} is not an executable file", p.display())));
            }
            None => find_on_path(CHROMIUM_NAMES).ok_or_else(|| {
                Error::Config(format!(
                    "rendering pages needs Chromium, and none was found on PATH (looked for {}): install it \
                     (Debian/Ubuntu: `apt install chromium`; Fedora: `dnf install chromium`; macOS: \
                     `brew install --cask chromium`) or name it with --chromium PATH (or WEBDUP_CHROMIUM)",
                    CHROMIUM_NAMES.join(", ")
                ))
            })?,
        };
        self.chromium = Some(found);
        Ok(self)
    }

    /// Tabs open at once, 0 resolved to the number of cores.
    pub fn tabs(&self) -> usize {
        if self.tabs > 0 { self.tabs } else { std::thread::available_parallelism().map_or(2, |n| n.get()) }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn find_on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| is_executable(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_chromium_is_named_with_how_to_install() {
        let c =
            RenderConfig { mode: RenderMode::On, chromium: Some("/nonexistent/chromium".into()), ..Default::default() };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/chromium"), "{e}");
        let c =
            RenderConfig { mode: RenderMode::On, chromium: Some("no-such-browser-xyz".into()), ..Default::default() };
        assert!(c.validate().unwrap_err().to_string().contains("not on PATH"));
        // Off needs no browser at all.
        let c = RenderConfig { chromium: Some("/nonexistent".into()), ..Default::default() };
        assert!(c.validate().is_ok());
    }
}
