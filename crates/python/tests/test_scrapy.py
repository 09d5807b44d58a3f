"""A real Scrapy crawl with webdup on, over a site served on 127.0.0.1.

Run by tests/python.rs in a fresh venv beside test_api.py. WEBDUP_SITE
names a near-duplicate corpus (webdup_eval::corpus, docs/near-dup-corpus.md):
real article pages recombined with real templates, as ``pages/sNNNN/*.html``
with ``truth.tsv`` (each page's true cluster and kind). Its kinds:

- ``original``: an article in a site's template;
- ``mirror``: an original's bytes at another path of the same site;
- ``revision``: on the same site, a paragraph appended or removed or a few
  phrases rewritten, and some of the template's link texts changed;
- ``template_sibling``: the unchanged article in another site's template;
- ``thin``: 10-40 words of unique text in a template shared by several thin
  pages; each is a cluster of its own and must never be dropped.

Syndicated copies (edited, in another site's template) are not generated:
the index answers by one Jaccard threshold, without the cross-site rule of
``cluster`` that finds them.

Each site of the corpus (a ``sNNNN`` folder: one real site's template) is
served on a loopback address of its own, ``127.0.0.N``, as sites are on the
web: the pages of a host share its template, and the index learns each
host's template from its pages as they arrive. The home and listing pages
on 127.0.0.1 add what a crawler meets beside those pages: a home page
linking to one listing page per section, each listing its own share of the
pages (so no two listings look alike) by their full URLs, and
``?utm_source=...`` links to some originals. The server ignores the query string, so those are exact copies
under another URL, and Scrapy's duplicate filter, which keeps query strings,
fetches them as distinct pages; they belong to their page's cluster. Every
eighth original by id gets one (a fixed choice, not tuned: an exact copy is
found whatever its text). Pages are sent gzip-compressed when asked, as real
sites send them.

The spider follows the links of the home and listing pages and makes an
item (``url``, ``html``) of each article page. The known duplicates come
from truth.tsv and the URLs served, never from webdup: a true cluster of n
crawled URLs holds n - 1 duplicates, whichever member the crawl meets
first. The tests assert, for the pipeline (at 1 and at 16 concurrent
requests, the same counts), its ``tag`` action and the downloader
middleware: every article URL crawled once; every duplicate reported names
a page of its own cluster; no thin page dropped; of byte-identical copies at
most one kept; and per true cluster whose pages all reach the index's
threshold with each other (as webdup.compare measures; 0.8 for two pages of
one host, 0.5 for two hosts, as `webdup cluster` holds them; two pages of one
host also with half of what they share set aside, as the index holds them
until it has learned the host's template, and a corpus site has about four
pages), one page kept
and the n - 1 others dropped (tagged, ignored). Clusters with a pair below
the threshold keep at least one page; the share of known duplicates dropped
is printed. Such a pair is two revisions of one article that differ more
than each differs from it: when both arrive before it, a first-come answer
must call both new. Each crawl runs in its
own Python process (Twisted's reactor does not restart) and writes what
Scrapy's signals (``item_scraped``, ``item_dropped``) and the spider saw to
a JSON file.
"""

from __future__ import annotations

import csv
import html
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import unittest
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

import loopback

SITE_DIR = os.environ.get("WEBDUP_SITE")
# An article page's path on the served site; anything else is navigation.
ARTICLE = re.compile(r"^/s\d+/p\d+\.html$")
SECTION_SIZE = 12
UTM_EVERY = 8
UTM_QUERIES = (
    "utm_source=newsletter&utm_medium=email&utm_campaign=weekly",
    "utm_source=twitter&utm_medium=social",
    "utm_source=partner&utm_medium=referral&utm_content=sidebar",
)
# The index's default thresholds (the test leaves WEBDUP_THRESHOLD unset):
# two pages of one site (host), and of two different sites.
THRESHOLD = 0.8
CROSS_SITE_THRESHOLD = 0.5
# A crawl's deadline, in seconds (one takes a few on two cores).
CRAWL_TIMEOUT = 180
# The most a crawl of the test site may log (issue 39: a crawl of 2,773 pages logged 131.6 MB, every
# drop at WARNING with the item's whole HTML).
MAX_LOG_BYTES = 1_000_000
# What HTML looks like in a log.
HTML_MARKS = ("<html", "<div", "<p>", "<p ", "</p>", "<body", "<a href")


class Site:
    """The corpus as served: pages by path, each URL's true cluster and kind."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, Path] = {}  # served path -> page file
        self.cluster: dict[str, str] = {}  # article URL path (with query) -> true cluster
        self.kind: dict[str, str] = {}  # article URL path (with query) -> kind ("utm" for the copies added here)
        with open(root / "truth.tsv", newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                page_id = row["id"]  # pages/sNNNN/pNNNNN.html
                path = "/" + page_id.split("/", 1)[1]
                assert ARTICLE.match(path), page_id
                self.files[path] = root / page_id
                self.cluster[path] = row["cluster"]
                self.kind[path] = row["kind"]
        originals = sorted(p for p, k in self.kind.items() if k == "original")
        for i, path in enumerate(originals[::UTM_EVERY]):
            variant = f"{path}?{UTM_QUERIES[i % len(UTM_QUERIES)]}"
            self.cluster[variant] = self.cluster[path]
            self.kind[variant] = "utm"
        self.titles = {p: self._title(self.files[p]) for p in self.files}
        # Sections: the article URLs in a fixed random order, cut in slices.
        links = sorted(self.cluster)
        random.Random(19).shuffle(links)
        self.sections = [links[i:i + SECTION_SIZE] for i in range(0, len(links), SECTION_SIZE)]
        # Each corpus site's base URL (its own loopback address), set by the Server.
        self.sites = sorted({self.site_of(p) for p in self.files})
        self.bases: dict[str, str] = {}

    @staticmethod
    def site_of(path: str) -> str:
        """The corpus site of an article path: its ``sNNNN`` folder."""
        return path.split("/")[1]

    @staticmethod
    def _title(path: Path) -> str:
        m = re.search(r"<title[^>]*>(.*?)</title>", path.read_text(encoding="utf-8", errors="replace"), re.S | re.I)
        return " ".join(html.unescape(m.group(1)).split()) if m else path.name

    def members(self) -> dict[str, list[str]]:
        """True cluster -> its article URL paths."""
        out: dict[str, list[str]] = defaultdict(list)
        for path, cluster in self.cluster.items():
            out[cluster].append(path)
        return out

    def home(self) -> bytes:
        items = "".join(
            f'<li><a href="/section/{k + 1}.html">Section {k + 1}: {len(s)} stories</a></li>'
            for k, s in enumerate(self.sections)
        )
        return self._page("The archive", f"<h1>The archive</h1><ul>{items}</ul>")

    def listing(self, k: int) -> Optional[bytes]:
        if not 1 <= k <= len(self.sections):
            return None
        items = []
        for link in self.sections[k - 1]:
            path = urlsplit(link).path
            title = html.escape(self.titles[path])
            url = html.escape(self.bases[self.site_of(path)] + link)
            items.append(f'<li><a href="{url}">{title}</a> <small>{html.escape(link)}</small></li>')
        body = f"<h1>Section {k}</h1><p>Stories filed in section {k} of the archive.</p><ul>{''.join(items)}</ul>"
        return self._page(f"Section {k}", body)

    @staticmethod
    def _page(title: str, body: str) -> bytes:
        return (
            f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>'
            f'<body>{body}</body></html>'
        ).encode()

    def get(self, path: str) -> Optional[bytes]:
        if path in ("/", "/index.html"):
            return self.home()
        m = re.fullmatch(r"/section/(\d+)\.html", path)
        if m:
            return self.listing(int(m.group(1)))
        file = self.files.get(path)
        return file.read_bytes() if file else None


class Server(loopback.Servers):
    """The site in threads: home and listings on 127.0.0.1, each corpus site on 127.0.0.N (2, 3...),
    ephemeral ports; every address serves every path, and the query string is ignored."""

    def __init__(self, site: Site) -> None:
        super().__init__()
        assert len(site.sites) < 250, "one loopback address per corpus site"
        # Compressed when asked, as real sites do (Scrapy asks).
        self.base = self.start(site.get, "127.0.0.1", gzip_when_asked=True)
        for n, name in enumerate(site.sites):
            site.bases[name] = self.start(site.get, f"127.0.0.{n + 2}", gzip_when_asked=True)


def crawl(base: str, out: Path, concurrency: int, *, action: Optional[str] = None,
          middleware: Optional[int] = None, skip_urls: Optional[list[str]] = None, log: bool = False) -> dict:
    """Runs one crawl in a fresh Python process (see `_crawl_main`) and returns what it recorded:
    with the pipeline, or with the downloader middleware at this number (and WEBDUP_SKIP_URLS).
    With `log`, Scrapy logs at INFO to ``crawl.log`` (as a crawl run in production), and every
    record of DEBUG and above goes to ``debug.log`` but Scrapy's "Scraped from" of each kept item,
    which carries the item by design."""
    config = {
        "log": log,
        "skip_urls": skip_urls,
        "start": base + "/",
        "out": str(out / "result.json"),
        "index": str(out / "crawl.db"),
        "concurrency": concurrency,
        "action": action,
        "middleware": middleware,
    }
    config_path = out / "config.json"
    config_path.write_text(json.dumps(config))
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--crawl", str(config_path)],
        capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False, cwd=out,
    )
    if proc.returncode != 0 or not Path(config["out"]).exists():
        raise AssertionError(f"the crawl failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(Path(config["out"]).read_text())
    result["stderr"] = proc.stderr
    return result


def _crawl_main(config_path: str) -> None:
    """The crawl, in its own process: a spider following links from the home page."""
    import warnings

    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import IgnoreRequest

    config = json.loads(Path(config_path).read_text())
    parsed: list[str] = []  # every URL the spider's callback saw
    kept: list[dict] = []
    dropped: list[dict] = []
    ignored: list[dict] = []  # requests a downloader middleware ignored
    errors: list[str] = []

    class SiteSpider(scrapy.Spider):
        name = "site"

        def parse(self, response: Any) -> Any:
            parsed.append(response.url)
            if ARTICLE.match(urlsplit(response.url).path):
                # An article: an item, and its template's links are not followed.
                yield {"url": response.url, "html": response.text}
            else:
                yield from response.follow_all(css="a", errback=self.failed)

        def failed(self, failure: Any) -> None:
            if failure.check(IgnoreRequest):
                ignored.append({"url": failure.request.url, "reason": str(failure.value)})
            else:
                errors.append(f"request failed: {failure.request.url}: {failure.getTraceback()}")

    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": config["concurrency"],
        "CONCURRENT_REQUESTS_PER_DOMAIN": config["concurrency"],
        **loopback.SCRAPY_SETTINGS,
        "WEBDUP_INDEX": config["index"],
    }
    if config["middleware"] is not None:
        settings["DOWNLOADER_MIDDLEWARES"] = {"webdup.scrapy.WebdupDownloaderMiddleware": config["middleware"]}
    else:
        settings["ITEM_PIPELINES"] = {"webdup.scrapy.WebdupPipeline": 300}
    if config["action"]:
        settings["WEBDUP_ACTION"] = config["action"]
    if config["skip_urls"] is not None:
        settings["WEBDUP_SKIP_URLS"] = config["skip_urls"]
    if config["log"]:
        import logging

        from scrapy.logformatter import SCRAPEDMSG

        settings["LOG_LEVEL"] = "INFO"
        settings["LOG_FILE"] = str(Path(config["out"]).parent / "crawl.log")
        debug = logging.FileHandler(Path(config["out"]).parent / "debug.log", encoding="utf-8")
        debug.setLevel(logging.DEBUG)
        debug.setFormatter(logging.Formatter("%(asctime)s [%(name)s] %(levelname)s: %(message)s"))
        debug.addFilter(lambda record: record.msg != SCRAPEDMSG)
        logging.getLogger().addHandler(debug)

    def scraped(item: Any, response: Any, spider: Any) -> None:
        kept.append(dict(item))

    def item_dropped(item: Any, response: Any, exception: BaseException, spider: Any) -> None:
        dropped.append({"url": item["url"], "reason": str(exception)})

    def item_error(item: Any, response: Any, spider: Any, failure: Any) -> None:
        errors.append(f"item error on {item.get('url')}: {failure.getTraceback()}")

    def spider_error(failure: Any, response: Any, spider: Any) -> None:
        errors.append(f"spider error on {response.url}: {failure.getTraceback()}")

    process = CrawlerProcess(settings)
    # Every warning, recorded (Scrapy's logging setup just took them over).
    warnings.simplefilter("always")
    caught: list[str] = []
    show = warnings.showwarning

    def record(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        caught.append(f"{category.__name__}: {message} ({filename}:{lineno})")
        show(message, category, filename, lineno, file, line)

    warnings.showwarning = record
    crawler = process.create_crawler(SiteSpider)
    crawler.signals.connect(scraped, signal=signals.item_scraped)
    crawler.signals.connect(item_dropped, signal=signals.item_dropped)
    crawler.signals.connect(item_error, signal=signals.item_error)
    crawler.signals.connect(spider_error, signal=signals.spider_error)
    start = time.monotonic()
    process.crawl(crawler, start_urls=[config["start"]])
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    for item in kept:
        item.pop("html", None)
    Path(config["out"]).write_text(json.dumps({
        "parsed": parsed, "kept": kept, "dropped": dropped, "ignored": ignored, "errors": errors, "stats": stats,
        "warnings": caught, "seconds": time.monotonic() - start,
    }))


def cold_jaccard(compared: dict) -> float:
    """Jaccard with half the shared shingles set aside (webdup_store::cold_jaccard), from what
    webdup.compare answers."""
    kept = compared["shared_shingles"] / 2
    differing = compared["only_in_a"] + compared["only_in_b"]
    return 1.0 if kept + differing == 0 else kept / (kept + differing)


def path_of(url: str) -> str:
    """An article URL's path and query on the served site."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def named_url(reason: str) -> str:
    """The URL a drop reason names ("duplicate of URL (identical: ...)", "near duplicate of URL (Jaccard x)")."""
    m = re.search(r"duplicate of (\S+)", reason)
    assert m, reason
    return m.group(1)


@unittest.skipUnless(SITE_DIR, "WEBDUP_SITE names no site (tests/python.rs generates one)")
class ScrapyCrawlTest(unittest.TestCase):
    site: Site
    server: Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.site = Site(Path(SITE_DIR or "."))
        cls.server = Server(cls.site)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()

    _pairs_ok: dict[str, bool] = {}

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def crawl(self, concurrency: int, name: str, **kwargs: Any) -> dict:
        out = Path(self.dir.name) / name
        out.mkdir()
        result = crawl(self.server.base, out, concurrency, **kwargs)
        self.assertEqual(result["errors"], [], result["stderr"])
        webdup_warnings = [w for w in result["warnings"] if "webdup" in w.lower()]
        self.assertEqual(webdup_warnings, [], "webdup's Scrapy classes warn under this Scrapy")
        return result

    def per_cluster(self, urls: list[str]) -> Counter:
        return Counter(self.site.cluster[path_of(u)] for u in urls)

    def summary(self, kept: list[str], dropped: list[str]) -> str:
        by_kind: dict[str, Counter] = defaultdict(Counter)
        for u in kept:
            by_kind[self.site.kind[path_of(u)]]["kept"] += 1
        for u in dropped:
            by_kind[self.site.kind[path_of(u)]]["dropped"] += 1
        return ", ".join(f"{k} {c['kept']} kept / {c['dropped']} dropped" for k, c in sorted(by_kind.items()))

    def jaccards(self, cluster: str) -> list[str]:
        """The exact Jaccard of each pair of a cluster's pages, as webdup's index measures it
        (webdup.compare: same extractor and shingles). Only to explain a failure."""
        import itertools

        import webdup

        pages = sorted(p for p in self.site.members()[cluster] if "?" not in p)
        lines = []
        for a, b in itertools.combinations(pages, 2):
            c = webdup.compare(self.site.files[a].read_text(encoding="utf-8"),
                               self.site.files[b].read_text(encoding="utf-8"))
            lines.append(f"      Jaccard {c['jaccard']:.3f}, half the shared set aside {cold_jaccard(c):.3f} "
                         f"(needs {self.threshold_of(a, b)})  {self.site.kind[a]} {a} ~ {self.site.kind[b]} {b}")
        return lines

    def all_pairs_above_threshold(self, cluster: str) -> bool:
        """True when every two pages of the cluster reach the index's threshold for them (0.8 on one
        host, 0.5 across hosts), as the index measures (webdup.compare: the same extractor and
        shingles). Only then does a first-come check keep exactly one of them whatever the order of
        arrival; otherwise two pages below the threshold to each other, arriving before the page
        both are like, are both new. Two pages of one host must reach it also with half of what
        they share set aside: until the index has learned the host's template it holds them so."""
        import itertools

        import webdup

        def reach(a: str, b: str) -> bool:
            c = webdup.compare(self.site.files[a].read_text(encoding="utf-8"),
                               self.site.files[b].read_text(encoding="utf-8"))
            if Site.site_of(a) != Site.site_of(b):
                return c["jaccard"] >= CROSS_SITE_THRESHOLD
            return c["jaccard"] >= THRESHOLD and cold_jaccard(c) >= THRESHOLD

        if cluster not in self._pairs_ok:
            pages = sorted(p for p in self.site.members()[cluster] if "?" not in p)
            self._pairs_ok[cluster] = all(reach(a, b) for a, b in itertools.combinations(pages, 2))
        return self._pairs_ok[cluster]

    def threshold_of(self, a: str, b: str) -> float:
        """The index's threshold for two article paths: each corpus site is a host of its own."""
        return THRESHOLD if Site.site_of(a) == Site.site_of(b) else CROSS_SITE_THRESHOLD

    def assert_one_kept_per_cluster(self, kept: list[str], dropped: list[str], reasons: dict[str, str]) -> None:
        """Every article URL crawled once; no drop naming a page of another cluster; no thin page
        dropped; at most one page kept of byte-identical copies (the race of the hand-written
        pipeline: exact copies slipping through); per true cluster whose pages all reach the
        threshold with each other, 1 kept and n - 1 dropped. The other clusters (the engine
        measures some of their pairs below the threshold) keep at least one page; how many of
        their duplicates were dropped is printed, not asserted."""
        site = self.site
        self.assertEqual(sorted(path_of(u) for u in kept + dropped), sorted(site.cluster),
                         "every article URL served, utm copies included, is crawled exactly once")
        for url, reason in reasons.items():
            other = named_url(reason)
            self.assertIn(path_of(other), site.cluster, reason)
            self.assertEqual(site.cluster[path_of(other)], site.cluster[path_of(url)],
                             f"{path_of(url)} ({site.kind[path_of(url)]}) dropped as a copy of another cluster's "
                             f"{path_of(other)} ({site.kind[path_of(other)]}): {reason}")
        thin_dropped = [path_of(u) for u in dropped if site.kind[path_of(u)] == "thin"]
        self.assertEqual(thin_dropped, [], "thin pages are clusters of their own")
        same_bytes = Counter(site.files[path_of(u).split("?")[0]].read_bytes() for u in kept)
        self.assertEqual([n for n in same_bytes.values() if n > 1], [], "two byte-identical pages both kept")
        kept_n, dropped_n = self.per_cluster(kept), self.per_cluster(dropped)
        wrong, missed, known = [], 0, 0
        for cluster, members in sorted(site.members().items()):
            known += len(members) - 1
            missed += kept_n[cluster] - 1
            self.assertGreaterEqual(kept_n[cluster], 1, f"{cluster}: every page dropped")
            if kept_n[cluster] == 1 or not self.all_pairs_above_threshold(cluster):
                continue
            lines = [f"  {cluster}: {len(members)} URLs, kept {kept_n[cluster]}, dropped {dropped_n[cluster]}"
                     " (in the order the pipeline answered)"]
            for u in kept:
                if site.cluster[path_of(u)] == cluster:
                    lines.append(f"    kept    {site.kind[path_of(u)]:16} {path_of(u)}")
            for u in dropped:
                if site.cluster[path_of(u)] == cluster:
                    lines.append(f"    dropped {site.kind[path_of(u)]:16} {path_of(u)}: {reasons.get(u)}")
            wrong.append("\n".join(lines + self.jaccards(cluster)))
        below = [f"{c} (kept {kept_n[c]} of {len(m)})" for c, m in sorted(site.members().items())
                 if not self.all_pairs_above_threshold(c)]
        print(f"\n    dropped {known - missed} of {known} known duplicates; per kind: {self.summary(kept, dropped)}; "
              f"clusters with a pair below the threshold: {', '.join(below) or 'none'}", file=sys.stderr)
        if wrong:
            self.fail(f"{len(wrong)} clusters whose pages all reach the threshold not deduplicated to one page "
                      f"(the index's thresholds: Jaccard {THRESHOLD} on one host, {CROSS_SITE_THRESHOLD} across "
                      "hosts):\n" + "\n".join(wrong))

    def test_the_pipeline_drops_the_known_duplicates_at_1_and_16_concurrent_requests(self) -> None:
        counts = {}
        for concurrency in (1, 16):
            with self.subTest(concurrency=concurrency):
                # One of the two crawls logs as a production crawl would (INFO), to see what reaches its log.
                result = self.crawl(concurrency, f"drop-{concurrency}", log=concurrency == 16)
                kept = [i["url"] for i in result["kept"]]
                reasons = {d["url"]: d["reason"] for d in result["dropped"]}
                self.assertEqual(len(reasons), len(result["dropped"]))
                self.assert_one_kept_per_cluster(kept, list(reasons), reasons)
                stats = result["stats"]
                self.assertEqual(stats.get("webdup/new"), len(kept))
                self.assertEqual(stats.get("webdup/duplicate"), len(reasons))
                by_kind = {k: stats.get(f"webdup/duplicate/{k}", 0) for k in ("identical", "same-text", "near")}
                self.assertEqual(sum(by_kind.values()), len(reasons), stats)
                self.assertEqual(by_kind["identical"], sum("(identical" in r for r in reasons.values()))
                if concurrency == 16:
                    self.assert_quiet_log(Path(self.dir.name) / f"drop-{concurrency}", kept, reasons, by_kind)
                counts[concurrency] = (self.per_cluster(kept), self.per_cluster(list(reasons)))
        if len(counts) == 2:
            # The clusters whose pages all reach the threshold end alike at 1 and 16.
            steady = [c for c in self.site.members() if self.all_pairs_above_threshold(c)]
            self.assertEqual({c: counts[1][0][c] for c in steady}, {c: counts[16][0][c] for c in steady},
                             "the same counts per cluster at 1 and 16 concurrent requests")

    def page_texts(self) -> list[str]:
        """A run of each page's own words (60 characters of its main text, from its middle)."""
        import webdup

        out = []
        for path, file in sorted(self.site.files.items()):
            text = " ".join(webdup.extract(file.read_text(encoding="utf-8"))["text"].split())
            if len(text) >= 60:
                mid = len(text) // 2
                out.append(text[mid - 30:mid + 30])
        return out

    def assert_quiet_log(self, out: Path, kept: list[str], reasons: dict[str, str], by_kind: dict[str, int]) -> None:
        """The crawl's log (INFO) under MAX_LOG_BYTES, with no HTML nor any page's text, and one summary line
        whose counts are the crawl's; its DEBUG log (but Scrapy's "Scraped from" records) with no HTML nor
        page text either, and one line per drop naming the page and what it duplicates."""
        log = (out / "crawl.log").read_text(encoding="utf-8")
        debug = (out / "debug.log").read_text(encoding="utf-8")
        self.assertLess(len(log.encode()), MAX_LOG_BYTES)
        texts = self.page_texts()
        self.assertGreater(len(texts), len(self.site.files) // 2)
        for name, text in (("crawl.log", log), ("debug.log", debug)):
            # Not assertNotIn: its message would be the whole log.
            html = [mark for mark in HTML_MARKS if mark in text]
            self.assertEqual(html, [], f"HTML in {name}, first at: {text[text.find(html[0]) - 300:][:600] if html else ''}")
            leaked = [t for t in texts if t in text]
            self.assertEqual(leaked, [], f"pages' text in {name}")
        summary = [line for line in log.splitlines() if "webdup: " in line and "items kept" in line]
        self.assertEqual(len(summary), 1, log[-3000:])
        parts = [f"{k} {n}" for k, n in by_kind.items() if n]
        self.assertIn(f"{len(kept)} items kept, {len(reasons)} dropped ({', '.join(parts)})", summary[0])
        self.assertIn("INFO", summary[0])
        drops = [line for line in debug.splitlines() if "webdup dropped " in line]
        self.assertEqual(len(drops), len(reasons))
        for url, reason in reasons.items():
            self.assertIn(f"DEBUG: webdup dropped {url}: {reason}", debug)

    def test_tag_keeps_every_item_and_says_what_it_duplicates(self) -> None:
        result = self.crawl(16, "tag", action="tag")
        self.assertEqual(result["dropped"], [])
        items = result["kept"]
        for item in items:
            self.assertEqual(set(item), {"url", "webdup"}, item["url"])
            tag = item["webdup"]
            self.assertEqual(tag["duplicate_of"] is None, tag["new"], item)
            self.assertIsInstance(tag["id"], int)
        new = [i["url"] for i in items if i["webdup"]["new"]]
        duplicates = {i["url"]: f"duplicate of {i['webdup']['duplicate_of']}" for i in items if not i["webdup"]["new"]}
        self.assert_one_kept_per_cluster(new, list(duplicates), duplicates)

    def test_the_downloader_middleware_keeps_duplicates_from_the_spider(self) -> None:
        # The home and section listings are navigation: let through, not recorded.
        result = self.crawl(16, "middleware", middleware=570, skip_urls=[r"^http://[^/]+/(section/[^/]*)?$"])
        parsed = result["parsed"]
        articles = [u for u in parsed if ARTICLE.match(urlsplit(u).path)]
        navigation = sorted(urlsplit(u).path for u in parsed if not ARTICLE.match(urlsplit(u).path))
        self.assertEqual(navigation, sorted(["/"] + [f"/section/{k + 1}.html" for k in range(len(self.site.sections))]))
        self.assertEqual([i["url"] for i in result["kept"]], articles, "the spider made an item of each page it saw")
        ignored = {i["url"]: i["reason"] for i in result["ignored"]}
        self.assertEqual(len(ignored), len(result["ignored"]))
        # The spider's callback saw one page per cluster; the others were ignored as copies.
        self.assert_one_kept_per_cluster(articles, list(ignored), ignored)
        stats = result["stats"]
        self.assertEqual(stats.get("webdup/ignored"), len(ignored))
        self.assertEqual(stats.get("webdup/new"), len(articles))
        self.assertEqual(stats.get("webdup/skipped/navigation"), len(navigation))
        self.assertNotIn("webdup/unchecked_encoded", stats)
        # The index holds the articles the middleware checked, none of the navigation pages.
        recorded = self.recorded(Path(self.dir.name) / "middleware")
        self.assertEqual(sorted(recorded), sorted(articles + list(ignored)))

    def test_without_skip_urls_the_middleware_records_navigation_pages(self) -> None:
        # What WEBDUP_SKIP_URLS changes: without it, every listing is checked and recorded.
        result = self.crawl(16, "middleware-all", middleware=570)
        navigation = [u for u in result["parsed"] if not ARTICLE.match(urlsplit(u).path)]
        self.assertEqual(len(navigation), len(self.site.sections) + 1)
        recorded = self.recorded(Path(self.dir.name) / "middleware-all")
        self.assertEqual(sorted(u for u in recorded if not ARTICLE.match(urlsplit(u).path)), sorted(navigation))
        self.assertNotIn("webdup/skipped/navigation", result["stats"])

    @staticmethod
    def recorded(out: Path) -> list[str]:
        """The URLs the crawl's index holds."""
        import sqlite3

        with sqlite3.connect(f"file:{out / 'crawl.db'}?mode=ro", uri=True) as db:
            return [row[0] for row in db.execute("SELECT url FROM pages")]

    def test_a_middleware_before_decompression_checks_nothing_and_says_so(self) -> None:
        # Above HttpCompressionMiddleware (590) a response's body is still gzip (the server
        # compresses, as real sites do): checking it would index bytes as text.
        result = self.crawl(16, "middleware-950", middleware=950)
        stats = result["stats"]
        # (Scrapy takes a few still-compressed bodies for plain Responses, not text: never checked.)
        self.assertGreater(stats.get("webdup/unchecked_encoded", 0), len(self.site.cluster) // 2)
        self.assertNotIn("webdup/new", stats)
        self.assertNotIn("webdup/ignored", stats)
        self.assertEqual(len(result["kept"]), len(self.site.cluster))
        self.assertIn("give it a number below 580", result["stderr"])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--crawl":
        _crawl_main(sys.argv[2])
    else:
        unittest.main()
