//! Rendering one page in a fresh tab, within its budget.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use ::url::Url;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::cdp::{Browser, CdpError};

/// The network is idle once the page has loaded and no request of its has
/// been in flight for this long.
const QUIET: Duration = Duration::from_millis(300);
/// Commands that set a tab up or tear it down answer at once when the
/// browser is well; a browser that takes longer than this is restarted.
const COMMAND: Duration = Duration::from_secs(10);
/// Kept from the budget to read the DOM once the page has not gone quiet.
const READ_RESERVE: Duration = Duration::from_millis(1500);
/// Resource types a page's text can depend on: fetched. Everything else
/// (images, media, fonts, pings, event streams, subframes...) is refused.
const FETCHED_TYPES: &[&str] = &["Script", "XHR", "Fetch", "Stylesheet"];

/// What a subresource fetch answered: status, headers, body.
pub(crate) struct SubResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Fetches a page's subresource under the fetcher's policy, or says why not.
pub(crate) type SubFetch =
    Arc<dyn Fn(Url) -> Pin<Box<dyn Future<Output = Result<SubResponse, String>> + Send>> + Send + Sync>;

/// Why a page could not be rendered; `restart` when the browser itself is
/// in doubt (it stopped answering) and must be replaced.
#[derive(Debug)]
pub(crate) struct TabFailure {
    pub message: String,
    pub restart: bool,
}

impl TabFailure {
    fn new(message: impl Into<String>) -> Self {
        TabFailure { message: message.into(), restart: false }
    }
}

impl From<CdpError> for TabFailure {
    fn from(e: CdpError) -> Self {
        TabFailure { restart: matches!(e, CdpError::Timeout), message: e.to_string() }
    }
}

/// Renders `html`, served as `url`, and returns the DOM's HTML (at most
/// `max_bytes`). The tab, in a browser context of its own (no cookie or
/// storage shared with another page), is disposed of in every case.
pub(crate) async fn render(
    browser: &Arc<Browser>,
    url: &Url,
    html: &str,
    budget: Duration,
    max_bytes: u64,
    fetch: SubFetch,
) -> Result<String, TabFailure> {
    let deadline = Instant::now() + budget;
    let context = browser
        .call_within(COMMAND, None, "Target.createBrowserContext", json!({"disposeOnDetach": true}))
        .await?["browserContextId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let page = Page { url, html, deadline, budget, max_bytes };
    let result = render_in(browser, &context, &page, fetch).await;
    // Disposing of the context closes its tab, even one whose scripts never
    // stop; a browser that cannot do even that is replaced.
    let disposed =
        browser.call_within(COMMAND, None, "Target.disposeBrowserContext", json!({"browserContextId": context})).await;
    match (result, disposed) {
        (Ok(html), _) => Ok(html),
        (Err(mut e), Err(CdpError::Timeout)) => {
            e.restart = true;
            Err(e)
        }
        (Err(e), _) => Err(e),
    }
}

/// A page to render and its limits.
struct Page<'a> {
    url: &'a Url,
    html: &'a str,
    deadline: Instant,
    budget: Duration,
    max_bytes: u64,
}

async fn render_in(
    browser: &Arc<Browser>,
    context: &str,
    page: &Page<'_>,
    fetch: SubFetch,
) -> Result<String, TabFailure> {
    browser
        .call_within(
            COMMAND,
            None,
            "Browser.setDownloadBehavior",
            json!({"behavior": "deny", "browserContextId": context}),
        )
        .await?;
    let target = browser
        .call_within(COMMAND, None, "Target.createTarget", json!({"url": "about:blank", "browserContextId": context}))
        .await?["targetId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let session = browser
        .call_within(COMMAND, None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}))
        .await?["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut events = browser.subscribe(&session);
    let result = drive(browser, &session, &target, &mut events, page, fetch).await;
    browser.unsubscribe(&session);
    result
}

async fn drive(
    browser: &Arc<Browser>,
    session: &str,
    target: &str,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Value>,
    page: &Page<'_>,
    fetch: SubFetch,
) -> Result<String, TabFailure> {
    let Page { url, html, deadline, .. } = *page;
    let s = Some(session);
    for (method, params) in [
        ("Page.enable", json!({})),
        ("Inspector.enable", json!({})),
        ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
        ("Fetch.enable", json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})),
    ] {
        browser.call_within(COMMAND, s, method, params).await?;
    }
    let navigate = browser.call_within(
        deadline.saturating_duration_since(Instant::now()) + COMMAND,
        s,
        "Page.navigate",
        json!({"url": url.as_str()}),
    );
    tokio::pin!(navigate);
    let mut navigated = false;
    let mut served = false;
    let mut loaded = false;
    let mut last_activity = Instant::now();
    let mut in_flight: JoinSet<()> = JoinSet::new();
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let read_at = deadline.checked_sub(READ_RESERVE).filter(|t| *t > Instant::now() + READ_RESERVE / 2);
    let read_at = read_at.unwrap_or(deadline - (deadline.saturating_duration_since(Instant::now()) / 4));
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else {
                    return Err(TabFailure::new(if browser.is_alive() { "the tab was closed" } else { "Chromium exited" }));
                };
                let params = &event["params"];
                match event["method"].as_str().unwrap_or_default() {
                    "Fetch.requestPaused" => {
                        last_activity = Instant::now();
                        let id = params["requestId"].as_str().unwrap_or_default().to_string();
                        let request_url = params["request"]["url"].as_str().unwrap_or_default();
                        let kind = params["resourceType"].as_str().unwrap_or_default();
                        let main_frame = params["frameId"].as_str() == Some(target);
                        if kind == "Document" && main_frame {
                            if served {
                                let _ = fail(browser, session, &id, "Aborted").await;
                                return Err(TabFailure::new(format!(
                                    "the page's script opens {request_url} in its place (a navigation or a \
                                     download; not followed)"
                                )));
                            }
                            served = true;
                            let headers = [("Content-Type".to_string(), "text/html; charset=utf-8".to_string())];
                            fulfill(browser, session, &id, 200, &headers, html.as_bytes()).await?;
                            continue;
                        }
                        let method = params["request"]["method"].as_str().unwrap_or_default();
                        let wanted = FETCHED_TYPES.contains(&kind) && method == "GET";
                        match Url::parse(request_url) {
                            Ok(sub) if wanted && matches!(sub.scheme(), "http" | "https") => {
                                let (browser, session, fetch) = (browser.clone(), session.to_string(), fetch.clone());
                                in_flight.spawn(async move {
                                    match fetch(sub).await {
                                        Ok(r) => {
                                            let _ = fulfill(&browser, &session, &id, r.status, &r.headers, &r.body).await;
                                        }
                                        Err(_) => {
                                            let _ = fail(&browser, &session, &id, "BlockedByClient").await;
                                        }
                                    }
                                });
                            }
                            _ => {
                                fail(browser, session, &id, "BlockedByClient").await?;
                            }
                        }
                    }
                    "Page.lifecycleEvent"
                        if params["frameId"].as_str() == Some(target) && params["name"].as_str() == Some("load") =>
                    {
                        loaded = true;
                    }
                    "Page.loadEventFired" => loaded = true,
                    "Page.javascriptDialogOpening" => {
                        // Dismissed: an alert never blocks the page, and its
                        // text is not the page's.
                        browser.call_within(COMMAND, s, "Page.handleJavaScriptDialog", json!({"accept": false})).await?;
                    }
                    "Inspector.targetCrashed" => return Err(TabFailure::new("the tab crashed")),
                    "Inspector.detached" => return Err(TabFailure::new("the tab was closed")),
                    _ => {}
                }
            }
            Some(_) = in_flight.join_next(), if !in_flight.is_empty() => last_activity = Instant::now(),
            reply = &mut navigate, if !navigated => {
                navigated = true;
                let reply = reply?;
                if let Some(e) = reply.get("errorText").and_then(Value::as_str) {
                    return Err(TabFailure::new(format!("navigation failed: {e}")));
                }
            }
            _ = tick.tick() => {
                let now = Instant::now();
                if loaded && in_flight.is_empty() && now.duration_since(last_activity) >= QUIET {
                    break;
                }
                if now >= read_at {
                    break;
                }
            }
        }
    }
    in_flight.abort_all();
    read_dom(browser, session, page).await
}

/// Reads the DOM's HTML, refusing one larger than `max_bytes` before it
/// crosses the pipe. A page whose scripts never stop never answers.
async fn read_dom(browser: &Browser, session: &str, page: &Page<'_>) -> Result<String, TabFailure> {
    let Page { deadline, budget, max_bytes, .. } = *page;
    let limit = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(200));
    let expression = format!(
        "(() => {{ const h = document.documentElement ? document.documentElement.outerHTML : ''; \
         return h.length > {max_bytes} ? {{too_large: h.length}} : {{html: h}}; }})()"
    );
    let reply = browser
        .call_within(limit, Some(session), "Runtime.evaluate", json!({"expression": expression, "returnByValue": true}))
        .await;
    let reply = match reply {
        Err(CdpError::Timeout) => {
            return Err(TabFailure::new(format!(
                "the page's scripts did not stop within its {:.1} s budget (--render-timeout)",
                budget.as_secs_f64()
            )));
        }
        r => r?,
    };
    let value = &reply["result"]["value"];
    if let Some(n) = value.get("too_large").and_then(Value::as_u64) {
        return Err(TabFailure::new(format!("the rendered DOM is {n} characters, over the {max_bytes} byte limit")));
    }
    let html = value.get("html").and_then(Value::as_str).ok_or_else(|| {
        TabFailure::new(format!(
            "the DOM could not be read: {}",
            reply.get("exceptionDetails").map_or_else(|| "no value".to_string(), |e| e["text"].to_string())
        ))
    })?;
    if html.len() as u64 > max_bytes {
        return Err(TabFailure::new(format!(
            "the rendered DOM is {} bytes, over the {max_bytes} byte limit",
            html.len()
        )));
    }
    Ok(html.to_string())
}

async fn fulfill(
    browser: &Browser,
    session: &str,
    id: &str,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<(), CdpError> {
    let headers: Vec<Value> = headers.iter().map(|(n, v)| json!({"name": n, "value": v})).collect();
    browser
        .call_within(
            COMMAND,
            Some(session),
            "Fetch.fulfillRequest",
            json!({"requestId": id, "responseCode": status, "responseHeaders": headers, "body": base64(body)}),
        )
        .await
        .map(drop)
}

async fn fail(browser: &Browser, session: &str, id: &str, reason: &str) -> Result<(), CdpError> {
    browser
        .call_within(COMMAND, Some(session), "Fetch.failRequest", json!({"requestId": id, "errorReason": reason}))
        .await
        .map(drop)
}

/// Standard base64 with padding, as `Fetch.fulfillRequest` takes bodies.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        let cases =
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }
}
