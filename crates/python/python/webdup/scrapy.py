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

Settings:

- ``WEBDUP_INDEX``: the index file (created if missing). Required.
- ``WEBDUP_THRESHOLD``, ``WEBDUP_EXTRACTOR``: a new index's settings (an
  existing index keeps those it was built with).
- ``WEBDUP_ACTION``: ``drop`` (default) or ``tag``.
- ``WEBDUP_CRAWL``: the crawl pages are recorded in (default: the spider's
  name).
- ``WEBDUP_URL_FIELD``, ``WEBDUP_HTML_FIELD``, ``WEBDUP_TEXT_FIELD``,
  ``WEBDUP_TAG_FIELD``: item field names (``url``, ``html``, ``text``,
  ``webdup``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from typing import Any, Callable, Optional, TypeVar

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from twisted.internet.threads import deferToThread

from . import CheckResult, Index

ACTIONS = ("drop", "tag")

logger = logging.getLogger(__name__)
T = TypeVar("T")

# One Index per file and process, shared by the pipeline and the middleware
# of every spider: an Index is safe to share across threads.
_open: dict[str, Index] = {}
_open_lock = threading.Lock()


def _index(settings: Any) -> Index:
    path = settings.get("WEBDUP_INDEX")
    if not path:
        raise NotConfigured("set WEBDUP_INDEX to the index file, e.g. WEBDUP_INDEX = 'crawl.db'")
    threshold = settings.getfloat("WEBDUP_THRESHOLD") if settings.get("WEBDUP_THRESHOLD") is not None else None
    extractor = settings.get("WEBDUP_EXTRACTOR")
    key = str(path)
    with _open_lock:
        if key not in _open:
            _open[key] = Index(path, threshold=threshold, extractor=extractor)
        return _open[key]


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
        self.stats: Any = None

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
        pipeline.stats = crawler.stats
        crawler.signals.connect(pipeline.spider_opened, signal=signals.spider_opened)
        return pipeline

    def spider_opened(self, spider: Any) -> None:
        if self.crawl is None:
            self.crawl = spider.name

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        # A coroutine: Scrapy 2.14 and later deprecate a Deferred returned here.
        adapter = ItemAdapter(item)
        url = adapter.get(self.url_field)
        html = adapter.get(self.html_field)
        text = None if html is not None else adapter.get(self.text_field)
        if not url or (html is None and text is None):
            # Not a page: nothing to check.
            return item
        # Off the reactor thread: extraction and SQLite release the GIL, so
        # pages are checked in parallel, and check_and_insert keeps that safe.
        result = await _in_thread(self.index.check_and_insert, url, html=html, text=text, crawl=self.crawl)
        return self._decide(result, item, adapter)

    def _decide(self, result: CheckResult, item: Any, adapter: ItemAdapter) -> Any:
        if self.stats is not None:
            self.stats.inc_value("webdup/new" if result.new else "webdup/duplicate")
        if result.seen and self.action == "drop":
            raise DropItem(_reason(result))
        if self.action == "tag":
            adapter[self.tag_field] = describe(result)
        return item


class WebdupDownloaderMiddleware:
    """Ignores responses whose content the index has seen, before parsing."""

    def __init__(self, index: Index, crawl: Optional[str] = None) -> None:
        self.index = index
        self.crawl = crawl
        self.stats: Any = None
        self._warned_encoded = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WebdupDownloaderMiddleware":
        s = crawler.settings
        middleware = cls(_index(s), crawl=s.get("WEBDUP_CRAWL"))
        middleware.stats = crawler.stats
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        return middleware

    def spider_opened(self, spider: Any) -> None:
        if self.crawl is None:
            self.crawl = spider.name

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
            if self.stats is not None:
                self.stats.inc_value("webdup/unchecked_encoded")
            return response
        result = self.index.check_and_insert(response.url, html=response.text, status=response.status, crawl=self.crawl)
        request.meta["webdup"] = describe(result)
        if result.seen:
            if self.stats is not None:
                self.stats.inc_value("webdup/ignored")
            raise IgnoreRequest(f"{response.url}: {_reason(result)}")
        if self.stats is not None:
            self.stats.inc_value("webdup/new")
        return response
