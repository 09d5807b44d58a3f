"""Scrapy integration: an item pipeline and a downloader middleware.

Three lines of settings::

    ITEM_PIPELINES = {"webdup.scrapy.WebdupPipeline": 300}
    WEBDUP_INDEX = "crawl.db"
    # optional: WEBDUP_ACTION = "tag", WEBDUP_THRESHOLD = 0.8

The pipeline reads each item's page (``url`` and ``html`` fields, or
``text``; see the settings below), asks the index and records the page in
one atomic step (``Index.check_and_insert``), so pages Scrapy processes at
the same time cannot both pass as new. A page whose content the index has
seen (the same page, the same text, or exact Jaccard at least the threshold) is dropped
(``WEBDUP_ACTION = "drop"``, the default) or kept with a ``webdup`` field
saying what it duplicates (``"tag"``).

The downloader middleware does the same check before the spider parses the
response, and ignores a response whose content was seen: its links are
then not followed either::

    DOWNLOADER_MIDDLEWARES = {"webdup.scrapy.WebdupDownloaderMiddleware": 570}

Its number must stay below Scrapy's ``HttpCompressionMiddleware`` (590) and
``MetaRefreshMiddleware`` (580): responses pass the middlewares from the
highest number down, so only there is the body decompressed and a meta
refresh already followed. A response still compressed is let through
unchecked, with a warning.

Use one of the two per index: both record every page they see, so a page
checked by the middleware would be seen again by the pipeline.

The middleware lets through, unchecked and unrecorded, responses whose URL
matches one of ``WEBDUP_SKIP_URLS`` (navigation: home, section and tag
listings) and pages with no text of their own beyond their site's
template as the index learned it: the index then learns each site's
template from its content pages alone.

Logging: each drop (ignored response) is logged at DEBUG with its URL and
what it duplicates, never the item; Scrapy's own drop message, which
carries the whole item, is logged below DEBUG (``DropItem``'s
``log_level``), so not at any usual ``LOG_LEVEL``. When the spider closes,
one INFO line sums up what was kept and dropped, by reason; the same counts
are in the crawl stats (``webdup/new``, ``webdup/duplicate``,
``webdup/duplicate/<kind>``, ``webdup/skipped/<why>``).

Settings:

- ``WEBDUP_INDEX``: the index file (created if missing). Required.
- ``WEBDUP_THRESHOLD``, ``WEBDUP_EXTRACTOR``: a new index's settings (an
  existing index keeps those it was built with).
- ``WEBDUP_ACTION``: ``drop`` (default) or ``tag``.
- ``WEBDUP_CRAWL``: the crawl pages are recorded in (default: the spider's
  name).
- ``WEBDUP_SKIP_URLS``: regular expressions (a list, or one string); the
  middleware lets a response whose URL one matches (``re.search``) through
  unchecked and unrecorded.
- ``WEBDUP_URL_FIELD``, ``WEBDUP_HTML_FIELD``, ``WEBDUP_TEXT_FIELD``,
  ``WEBDUP_TAG_FIELD``: item field names (``url``, ``html``, ``text``,
  ``webdup``).
- ``WEBDUP_RENDER``: ``off`` (default), ``auto`` or ``on`` (``True`` and
  ``False`` too): pages are rendered in a headless Chromium before they are
  checked (``Index(render=...)``): ``auto`` only those whose HTML looks
  client-rendered (an empty application root and scripts). Their scripts
  and data are fetched by webdup, not Scrapy. Counted in ``webdup/rendered``;
  a page that cannot be rendered passes unchecked, with a warning, and is
  counted in ``webdup/render_failed``. The middleware then checks in a worker
  thread, off the reactor.
- ``WEBDUP_CHROMIUM``: the browser (default: the ``WEBDUP_CHROMIUM``
  environment variable, else ``chromium`` and the usual names on PATH).
- ``WEBDUP_RENDER_TIMEOUT``: a page's render budget in seconds (default 10).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import threading
from collections import Counter
from typing import Any, Callable, Optional, TypeVar

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from twisted.internet.threads import deferToThread

from . import CheckResult, Index, WebdupError

ACTIONS = ("drop", "tag")
# The level Scrapy logs its own drop message at, with the whole item in it:
# below DEBUG, so no usual LOG_LEVEL shows it (webdup logs the drop at DEBUG
# with the URL and the match only).
ITEM_LOG_LEVEL = 5

logger = logging.getLogger(__name__)
T = TypeVar("T")

# One Index per file and process, shared by the pipeline and the middleware
# of every spider: an Index is safe to share across threads.
_open: dict[tuple[str, str, Optional[str], Optional[float]], Index] = {}
_open_lock = threading.Lock()


RENDER_MODES = ("off", "auto", "on")


def _render_mode(value: Any) -> str:
    """WEBDUP_RENDER as a mode: off, auto or on; True and False (or their spellings on the command line) too."""
    if value is None or value is False:
        return "off"
    if value is True:
        return "on"
    mode = str(value).strip().lower()
    mode = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off", "": "off"}.get(mode, mode)
    if mode not in RENDER_MODES:
        raise NotConfigured(f"WEBDUP_RENDER must be one of {', '.join(RENDER_MODES)} (or True, False), not {value!r}")
    return mode


def _index(settings: Any) -> Index:
    path = settings.get("WEBDUP_INDEX")
    if not path:
        raise NotConfigured("set WEBDUP_INDEX to the index file, e.g. WEBDUP_INDEX = 'crawl.db'")
    threshold = settings.getfloat("WEBDUP_THRESHOLD") if settings.get("WEBDUP_THRESHOLD") is not None else None
    extractor = settings.get("WEBDUP_EXTRACTOR")
    render = _render_mode(settings.get("WEBDUP_RENDER"))
    chromium = settings.get("WEBDUP_CHROMIUM") or None
    timeout = settings.getfloat("WEBDUP_RENDER_TIMEOUT") if settings.get("WEBDUP_RENDER_TIMEOUT") is not None else None
    key = (str(path), render, chromium, timeout)
    with _open_lock:
        if key not in _open:
            _open[key] = Index(path, threshold=threshold, extractor=extractor, render=render, chromium=chromium,
                               render_timeout=timeout)
        return _open[key]


def _render_failed(index: Index, error: WebdupError) -> bool:
    """True when `error` is a page's render failure (it then passes unchecked), not another page error."""
    return index.renders and "[render]" in str(error)


async def _in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker thread, awaited from a Scrapy coroutine.

    Under the asyncio reactor (Scrapy's default) or no reactor, an asyncio
    loop runs the coroutine: the loop's executor. Under another Twisted
    reactor, Twisted's thread pool, whose Deferred the coroutine awaits.
    """
    call = functools.partial(fn, *args, **kwargs)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return await deferToThread(call)
    return await loop.run_in_executor(None, call)


def describe(result: CheckResult) -> dict[str, Any]:
    """What a tag holds: whether the page is new, and what it duplicates."""
    best = result.best
    return {
        "new": result.new,
        "id": result.id,
        "duplicate_of": best.url if best else None,
        "kind": result.kind,
        "jaccard": best.jaccard if best else None,
        "containment": best.containment if best else None,
        "template": result.template,
    }


def _reason(result: CheckResult) -> str:
    best = result.best
    assert best is not None
    # Said when the site's template was not yet learned: the check was then
    # conservative, and what the pages share may still be the site's.
    learning = " (template not yet learned)" if result.template == "not yet learned" else ""
    if result.identical:
        return f"duplicate of {best.url} (identical: the same page){learning}"
    if result.same_text:
        return f"duplicate of {best.url} (same text, another page){learning}"
    return f"near duplicate of {best.url} (Jaccard {best.jaccard:.3f}){learning}"


KINDS = ("identical", "same-text", "near")


class _Tally:
    """What a pipeline or middleware did in a crawl: counted in the crawl stats
    as it goes, and summed up in one INFO line when the spider closes."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.counts: Counter[str] = Counter()

    def add(self, key: str) -> None:
        self.counts[key] += 1
        if self.stats is not None:
            self.stats.inc_value(f"webdup/{key}")

    def duplicate(self, result: CheckResult) -> None:
        self.add("duplicate")
        self.add(f"duplicate/{result.kind}")

    def rendering(self) -> str:
        """What rendering did, for the summary line ("" when no page was rendered or failed to be)."""
        rendered, failed = self.counts["rendered"], self.counts["render_failed"]
        if not rendered and not failed:
            return ""
        line = f"; {rendered} rendered in Chromium"
        return line + (f", {failed} could not be (passed unchecked)" if failed else "")

    def by_kind(self, prefix: str, names: tuple[str, ...]) -> str:
        parts = [f"{name} {self.counts[f'{prefix}/{name}']}" for name in names if self.counts[f"{prefix}/{name}"]]
        return f" ({', '.join(parts)})" if parts else ""


class WebdupPipeline:
    """Drops (or tags) items whose page the index has seen."""

    def __init__(
        self,
        index: Index,
        action: str = "drop",
        crawl: Optional[str] = None,
        url_field: str = "url",
        html_field: str = "html",
        text_field: str = "text",
        tag_field: str = "webdup",
    ) -> None:
        if action not in ACTIONS:
            raise NotConfigured(f"WEBDUP_ACTION must be one of {', '.join(ACTIONS)}, not {action!r}")
        self.index = index
        self.action = action
        self.crawl = crawl
        self.url_field, self.html_field, self.text_field, self.tag_field = url_field, html_field, text_field, tag_field
        self.tally = _Tally(None)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebdupPipeline":
        s = crawler.settings
        pipeline = cls(
            _index(s),
            action=s.get("WEBDUP_ACTION", "drop"),
            crawl=s.get("WEBDUP_CRAWL"),
            url_field=s.get("WEBDUP_URL_FIELD", "url"),
            html_field=s.get("WEBDUP_HTML_FIELD", "html"),
            text_field=s.get("WEBDUP_TEXT_FIELD", "text"),
            tag_field=s.get("WEBDUP_TAG_FIELD", "webdup"),
        )
        pipeline.tally = _Tally(crawler.stats)
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(pipeline.spider_closed, signal=signals.spider_closed)
        return pipeline

    def spider_opened(self, spider: Any) -> None:
        if self.crawl is None:
            self.crawl = spider.name

    def spider_closed(self, spider: Any) -> None:
        logger.info("webdup: %s", self.summary())

    def summary(self) -> str:
        """The crawl's counts in one line: items kept and dropped (tagged), by kind of match."""
        counts = self.tally.counts
        duplicates = counts["duplicate"]
        done = "dropped" if self.action == "drop" else "tagged as duplicates"
        kept = counts["new"] + counts["not_a_page"] + (duplicates if self.action == "tag" else 0)
        line = f"{kept} items kept, {duplicates} {done}{self.tally.by_kind('duplicate', KINDS)}"
        if counts["not_a_page"]:
            line += f"; {counts['not_a_page']} items without a page (no url, or no html or text) passed unchecked"
        return f"{line}{self.tally.rendering()}; index {self.index.path}"

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        # A coroutine: Scrapy 2.14 and later deprecate a Deferred returned here.
        adapter = ItemAdapter(item)
        url = adapter.get(self.url_field)
        html = adapter.get(self.html_field)
        text = None if html is not None else adapter.get(self.text_field)
        if not url or (html is None and text is None):
            # Not a page: nothing to check.
            self.tally.add("not_a_page")
            return item
        # Off the reactor thread: extraction and SQLite release the GIL, so
        # pages are checked in parallel, and check_and_insert keeps that safe.
        try:
            result = await _in_thread(self.index.check_and_insert, url, html=html, text=text, crawl=self.crawl)
        except WebdupError as e:
            if not _render_failed(self.index, e):
                raise
            self.tally.add("render_failed")
            logger.warning("webdup could not render %s, passed unchecked: %s", url, e)
            return item
        return self._decide(result, item, adapter)

    def _decide(self, result: CheckResult, item: Any, adapter: ItemAdapter) -> Any:
        if result.rendered:
            self.tally.add("rendered")
        if result.new:
            self.tally.add("new")
        else:
            self.tally.duplicate(result)
        if result.seen and self.action == "drop":
            reason = _reason(result)
            logger.debug("webdup dropped %s: %s", result.url, reason)
            raise DropItem(reason, log_level=ITEM_LOG_LEVEL)
        if self.action == "tag":
            adapter[self.tag_field] = describe(result)
        return item


class WebdupDownloaderMiddleware:
    """Ignores responses whose content the index has seen, before parsing."""

    def __init__(self, index: Index, crawl: Optional[str] = None, skip_urls: Any = ()) -> None:
        self.index = index
        self.crawl = crawl
        self.skip_urls = _patterns(skip_urls)
        self.tally = _Tally(None)
        self._warned_encoded = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebdupDownloaderMiddleware":
        s = crawler.settings
        middleware = cls(_index(s), crawl=s.get("WEBDUP_CRAWL"), skip_urls=s.get("WEBDUP_SKIP_URLS") or ())
        middleware.tally = _Tally(crawler.stats)
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def spider_opened(self, spider: Any) -> None:
        if self.crawl is None:
            self.crawl = spider.name

    def spider_closed(self, spider: Any) -> None:
        logger.info("webdup: %s", self.summary())

    def summary(self) -> str:
        """The crawl's counts in one line: responses passed and ignored, by kind of match, and skipped."""
        counts = self.tally.counts
        line = (f"{counts['new']} responses passed, {counts['ignored']} ignored as duplicates"
                f"{self.tally.by_kind('duplicate', KINDS)}")
        skipped = counts["skipped/navigation"] + counts["skipped/template_only"]
        if skipped:
            line += (f", {skipped} passed unrecorded"
                     f"{self.tally.by_kind('skipped', ('navigation', 'template_only'))}")
        return f"{line}{self.tally.rendering()}; index {self.index.path}"

    def process_response(self, request: Any, response: Any, spider: Any = None) -> Any:
        if not isinstance(response, TextResponse) or response.status != 200:
            return response
        content_type = response.headers.get(b"Content-Type", b"").decode("latin-1").lower()
        if "html" not in content_type:
            return response
        if response.headers.get(b"Content-Encoding", b"").strip().lower() not in (b"", b"identity"):
            # Still compressed: the middleware sits above HttpCompressionMiddleware.
            if not self._warned_encoded:
                self._warned_encoded = True
                logger.warning(
                    "WebdupDownloaderMiddleware sees compressed responses (%s) and lets them through "
                    "unchecked: give it a number below 580 in DOWNLOADER_MIDDLEWARES",
                    response.url,
                )
            self.tally.add("unchecked_encoded")
            return response
        if any(p.search(response.url) for p in self.skip_urls):
            self.tally.add("skipped/navigation")
            return response
        check = functools.partial(self.index.check_and_insert, response.url, html=response.text,
                                  status=response.status, crawl=self.crawl, skip_template_only=True)
        if self.index.renders:
            # A page takes about a second to render: in a worker thread, so
            # the reactor goes on downloading (Scrapy awaits the coroutine).
            return self._rendered(request, response, check)
        return self._decide(request, response, check())

    async def _rendered(self, request: Any, response: Any, check: Callable[[], CheckResult]) -> Any:
        try:
            result = await _in_thread(check)
        except WebdupError as e:
            if not _render_failed(self.index, e):
                raise
            self.tally.add("render_failed")
            logger.warning("webdup could not render %s, passed unchecked: %s", response.url, e)
            return response
        if result.rendered:
            self.tally.add("rendered")
        return self._decide(request, response, result)

    def _decide(self, request: Any, response: Any, result: CheckResult) -> Any:
        request.meta["webdup"] = describe(result)
        if result.seen:
            self.tally.add("ignored")
            self.tally.duplicate(result)
            raise IgnoreRequest(f"{response.url}: {_reason(result)}")
        self.tally.add("skipped/template_only" if result.id is None else "new")
        return response


def _patterns(value: Any) -> list[re.Pattern[str]]:
    """WEBDUP_SKIP_URLS as compiled patterns: one string or a list; a bad pattern is named."""
    if isinstance(value, str):
        value = [value]
    out = []
    for p in value:
        try:
            out.append(re.compile(p))
        except re.error as e:
            raise NotConfigured(f"WEBDUP_SKIP_URLS: {p!r} is not a regular expression: {e}") from e
    return out
