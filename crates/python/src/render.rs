//! `render=`, `chromium=` and `render_timeout=`: pages rendered in a
//! headless Chromium before they are fingerprinted, as `--render` does.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBool;

use webdup::fetch::{FetchConfig, Fetcher};
use webdup::render::{RenderConfig, RenderMode};
use webdup::source::RawDocument;
use webdup::{DocError, DocErrorKind};

use crate::error;

/// The render settings of the Python arguments: `render` is "off", "auto",
/// "on" (or False, True); `chromium` a path or a name on PATH (default:
/// `WEBDUP_CHROMIUM`, else the usual names on PATH); `render_timeout` a
/// page's budget in seconds. Chromium is looked for here, so a missing one
/// fails before any page, saying how to install it.
pub(crate) fn render_config(
    render: Option<&Bound<'_, PyAny>>,
    chromium: Option<PathBuf>,
    render_timeout: Option<f64>,
) -> PyResult<RenderConfig> {
    let mode = match render {
        None => RenderMode::Off,
        Some(r) if r.is_none() => RenderMode::Off,
        Some(r) if r.is_instance_of::<PyBool>() => {
            if r.extract::<bool>()? {
                RenderMode::On
            } else {
                RenderMode::Off
            }
        }
        Some(r) => match r.extract::<String>().ok().as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("off") => RenderMode::Off,
            Some("on") => RenderMode::On,
            Some("auto") => RenderMode::Auto,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "render must be \"off\", \"auto\" or \"on\" (or False, True), not {}",
                    r.repr()?
                )));
            }
        },
    };
    let mut config = RenderConfig { mode, ..RenderConfig::default() };
    if let Some(t) = render_timeout {
        if !(0.1..=600.0).contains(&t) {
            return Err(PyValueError::new_err(format!("render_timeout must be 0.1 to 600 seconds, not {t}")));
        }
        config.timeout = Duration::from_secs_f64(t);
    }
    config.chromium =
        chromium.or_else(|| std::env::var_os("WEBDUP_CHROMIUM").filter(|v| !v.is_empty()).map(PathBuf::from));
    config.validate().map_err(error)
}

/// The fetcher settings of a run or an index that renders with `render`.
pub(crate) fn fetch_config(render: RenderConfig) -> FetchConfig {
    FetchConfig { render, ..FetchConfig::default() }
}

/// Renders the HTML pages of `docs` (by their `url`) with `fetcher`, a tab
/// per page at most as many at once as the fetcher has tabs; a page that
/// cannot be rendered becomes its `render` error.
pub(crate) fn render_documents(
    fetcher: &Fetcher,
    tabs: usize,
    docs: Vec<RawDocument>,
) -> Vec<Result<RawDocument, DocError>> {
    let slots: Vec<std::sync::Mutex<Option<Result<RawDocument, DocError>>>> =
        docs.into_iter().map(|d| std::sync::Mutex::new(Some(Ok(d)))).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..tabs.clamp(1, slots.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = slots.get(i) else { break };
                    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
                    let Some(Ok(mut doc)) = slot.take() else { continue };
                    let url = doc.url.clone().unwrap_or_else(|| doc.id.clone());
                    *slot = Some(if doc.format != webdup::source::Format::Html {
                        Ok(doc)
                    } else {
                        match fetcher.render(&url, std::mem::take(&mut doc.body)) {
                            Ok(done) => {
                                doc.body = done.html;
                                Ok(doc)
                            }
                            Err(e) => Err(DocError::new(&doc.id, doc.key, DocErrorKind::Render, e.to_string())),
                        }
                    });
                }
            });
        }
    });
    slots.into_iter().map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every page done")).collect()
}
