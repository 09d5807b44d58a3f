//! The tabs of one browser, shared by every page of a run.
//!
//! At most [`super::RenderConfig::tabs`] pages render at once, each in a
//! fresh tab closed after use. The browser is started on the first page
//! and started again, for the next page, after it died or stopped
//! answering; the pages in flight when it died fail, the others are kept.

use std::sync::Arc;
use std::time::Duration;

use ::url::Url;
use tokio::sync::{Mutex, Semaphore};

use super::RenderConfig;
use super::cdp::Browser;
use super::tab::{self, SubFetch};

/// Time for Chromium to start and answer its first command.
const STARTUP: Duration = Duration::from_secs(30);

/// Renders pages in a shared headless Chromium.
pub(crate) struct Renderer {
    config: RenderConfig,
    tabs: Semaphore,
    browser: Mutex<Option<Arc<Browser>>>,
}

impl Renderer {
    /// Starts no browser yet: a run whose pages need no rendering never
    /// starts one.
    pub(crate) fn new(config: RenderConfig) -> Renderer {
        let tabs = Semaphore::new(config.tabs());
        Renderer { config, tabs, browser: Mutex::new(None) }
    }

    pub(crate) fn config(&self) -> &RenderConfig {
        &self.config
    }

    /// The running browser, started if there is none or it died.
    async fn browser(&self) -> Result<Arc<Browser>, String> {
        let mut slot = self.browser.lock().await;
        if let Some(b) = slot.as_ref().filter(|b| b.is_alive()) {
            return Ok(b.clone());
        }
        let path = self.config.chromium.as_deref().ok_or("no Chromium configured")?;
        let browser = Browser::launch(path, STARTUP).await?;
        *slot = Some(browser.clone());
        Ok(browser)
    }

    /// Renders `html` served as `url`; the error is a sentence for the
    /// page's record.
    pub(crate) async fn render(
        &self,
        url: &Url,
        html: &str,
        max_bytes: u64,
        fetch: SubFetch,
    ) -> Result<String, String> {
        let _tab = self.tabs.acquire().await.map_err(|e| e.to_string())?;
        let browser = self.browser().await?;
        match tab::render(&browser, url, html, self.config.timeout, max_bytes, fetch).await {
            Ok(html) => Ok(html),
            Err(e) => {
                if e.restart {
                    // Killed here so the next page starts a new one; the
                    // pages still in this one fail with "Chromium exited".
                    browser.kill();
                }
                Err(e.message)
            }
        }
    }
}
