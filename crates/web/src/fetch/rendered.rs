//! A fetched page through the renderer, and the requests it makes while it
//! renders: fetched here, under the same policy as pages.

use std::sync::Arc;
use std::time::Instant;

use ::url::Url;
use reqwest::header;

use super::client::{Inner, Purpose, empty_record};
use super::policy::{Reached, Trust};
use super::url::{UrlError, normalize};
use super::{FetchError, FetchErrorKind, FetchOutcome, Fetcher};
use crate::error::DocErrorKind;
use crate::render::pool::Renderer;
use crate::render::tab::{SubFetch, SubResponse};
use crate::render::{RenderMode, looks_client_rendered};
use crate::source::{Format, Location, Source};
use webdup_core::DocKey;

/// Response headers not handed to Chromium: the body it gets is already
/// decoded and whole.
const DROPPED_HEADERS: &[header::HeaderName] =
    &[header::CONTENT_ENCODING, header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION];

/// A page handed to [`Fetcher::render`], as the render step left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPage {
    /// The DOM Chromium left, or the HTML given when the page was not
    /// rendered (rendering is off, or `auto` found no shell).
    pub html: String,
    /// `html` is the rendered DOM.
    pub rendered: bool,
    /// The HTML given looks like a client-rendered shell
    /// ([`looks_client_rendered`]).
    pub shell: bool,
}

impl Fetcher {
    /// Renders a page the caller already fetched (a crawler's response), as
    /// a fetched page is rendered ([`crate::render`]): with
    /// [`RenderMode::On`] always, with [`RenderMode::Auto`] when it looks
    /// client-rendered, never with [`RenderMode::Off`]. Its requests are
    /// fetched by this fetcher under the address policy and robots.txt of
    /// their origin, as a page's are; the page's own origin counts as one
    /// the user named (a loopback page may load its own scripts), every
    /// other internal address is refused ([`crate::fetch::policy`]).
    ///
    /// Blocks until the page is rendered, at most its budget
    /// ([`crate::render::RenderConfig::timeout`]) after a tab is free; safe
    /// to call from many threads at once (the fetcher's tabs bound how many
    /// render). Must not be called from inside an async runtime.
    ///
    /// Fails with [`FetchErrorKind::Render`] when the page cannot be
    /// rendered (its scripts never stop, it navigates away, its DOM is too
    /// large, Chromium died...), [`FetchErrorKind::InvalidUrl`] or
    /// [`FetchErrorKind::Scheme`] for a URL that is not http(s).
    pub fn render(&self, url: &str, html: String) -> Result<RenderedPage, FetchError> {
        let shell = looks_client_rendered(&html);
        let unchanged = |html| Ok(RenderedPage { html, rendered: false, shell });
        let Some(renderer) = &self.inner.renderer else {
            return unchanged(html);
        };
        if renderer.config().mode == RenderMode::Auto && !shell {
            return unchanged(html);
        }
        let page = normalize(url, true).map_err(|e| {
            let kind = match e {
                UrlError::Scheme(_) => FetchErrorKind::Scheme,
                UrlError::Invalid(_) => FetchErrorKind::InvalidUrl,
            };
            FetchError::new(kind, format!("{e}: {url}"))
        })?;
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(FetchError::new(
                FetchErrorKind::Internal,
                "Fetcher::render was called from inside an async runtime",
            ));
        }
        let trust = self.inner.policy.check(&page, Reached::Named).ok();
        let html = self.runtime.block_on(self.inner.render_html(renderer, &page, trust, &html))?;
        Ok(RenderedPage { html, rendered: true, shell })
    }
}

impl Inner {
    /// Marks an HTML page that looks client-rendered, and renders it when
    /// the run renders pages (all of them, or with `auto` the shells). A
    /// page that cannot be rendered becomes a `render` error of its own.
    pub(super) async fn render_page(self: &Arc<Self>, requested: &Url, mut outcome: FetchOutcome) -> FetchOutcome {
        let Some(doc) = outcome.document.as_mut().filter(|d| d.format == Format::Html) else {
            return outcome;
        };
        outcome.record.shell = looks_client_rendered(&doc.body);
        let Some(renderer) = &self.renderer else {
            return outcome;
        };
        if renderer.config().mode == RenderMode::Auto && !outcome.record.shell {
            return outcome;
        }
        let start = Instant::now();
        let page = outcome.record.final_url.as_deref().and_then(|u| Url::parse(u).ok()).unwrap_or(requested.clone());
        // The page's own trust: named when it ended on the origin the user
        // named, public otherwise; its requests are reached from it.
        let named = self.trust_of(requested);
        let trust = self.policy.check(&page, Reached::From { from: requested, trust: &named }).ok();
        match self.render_html(renderer, &page, trust, &doc.body).await {
            Ok(html) => {
                doc.body = html;
                outcome.record.rendered = true;
            }
            Err(e) => {
                outcome.document = None;
                outcome.record.error = Some(e);
            }
        }
        outcome.record.elapsed += start.elapsed();
        outcome
    }

    /// Renders `html` served as `page`, whose own trust is `trust` (`None`:
    /// the policy refuses the page's address, so every request it makes is
    /// refused too); the requests it makes are fetched by
    /// [`Inner::fetch_subresource`]. The one way a page is rendered, fetched
    /// here or handed over by the caller ([`Fetcher::render`]).
    async fn render_html(
        self: &Arc<Self>,
        renderer: &Renderer,
        page: &Url,
        trust: Option<Trust>,
        html: &str,
    ) -> Result<String, FetchError> {
        let inner = self.clone();
        let from = page.clone();
        let fetch: SubFetch = Arc::new(move |url: Url| {
            let (inner, from, trust) = (inner.clone(), from.clone(), trust.clone());
            Box::pin(async move {
                let trust = trust.ok_or("the page's own address is refused")?;
                inner.fetch_subresource(&from, trust, url).await.map_err(|e| e.to_string())
            })
        });
        renderer.render(page, html, self.config.max_bytes, fetch).await.map_err(|message| FetchError {
            kind: FetchErrorKind::Render,
            message,
            doc_kind: DocErrorKind::Render,
        })
    }

    /// Fetches `url`, which the page `from` (fetched with `trust`) asked
    /// for: refused if the policy refuses it from that page (an internal
    /// address from a public page) or robots.txt disallows it.
    pub(super) async fn fetch_subresource(
        &self,
        from: &Url,
        trust: Trust,
        url: Url,
    ) -> Result<SubResponse, FetchError> {
        let trust = self
            .policy
            .check(&url, Reached::From { from, trust: &trust })
            .map_err(|r| FetchError::new(FetchErrorKind::InternalAddress, format!("{url}: {r}")))?;
        let source = Source { id: url.to_string(), key: DocKey(0), location: Location::Url(url.to_string()) };
        let mut record = empty_record(&source, Some(&url));
        let resp = self.follow(&url, Purpose::Subresource, &mut record, trust).await?;
        let headers = resp
            .headers
            .iter()
            .filter(|(name, _)| !DROPPED_HEADERS.contains(name))
            .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_string())))
            .collect();
        Ok(SubResponse { status: resp.status.as_u16(), headers, body: resp.body.unwrap_or_default() })
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::Trust;
    use super::super::url::origin_key;
    use super::super::{FetchConfig, Fetcher};
    use super::*;

    /// A public page's requests to internal addresses are refused by the
    /// policy before any connection (nothing here reaches the network: every
    /// URL is refused, and the public page itself is never fetched).
    #[test]
    fn a_public_page_never_reaches_internal_addresses() {
        let fetcher = Fetcher::new(FetchConfig::default().validate().unwrap()).unwrap();
        let page = Url::parse("http://93.184.215.14/article").unwrap();
        for internal in [
            "http://127.0.0.1:6379/",
            "http://10.1.2.3/api",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]/x.js",
            "http://2130706433/x.js",
            "http://192.168.0.1/data.json",
        ] {
            let url = Url::parse(internal).unwrap();
            let r = fetcher.runtime.block_on(fetcher.inner.fetch_subresource(&page, Trust::Public, url));
            let e = r.err().unwrap_or_else(|| panic!("{internal} was fetched"));
            assert_eq!(e.kind, FetchErrorKind::InternalAddress, "{internal}: {e}");
        }
        // A loopback page the user named may load from its own origin, and
        // from no other internal one.
        let named = Url::parse("http://127.0.0.1:8080/").unwrap();
        let trust = Trust::Named(origin_key(&named));
        let own = Url::parse("http://127.0.0.1:8080/app.js").unwrap();
        assert!(fetcher.inner.policy.check(&own, Reached::From { from: &named, trust: &trust }).is_ok());
        let other = Url::parse("http://127.0.0.1:8081/app.js").unwrap();
        assert!(fetcher.inner.policy.check(&other, Reached::From { from: &named, trust: &trust }).is_err());
    }
}
