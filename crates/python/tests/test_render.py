"""`render=` of the Python package and `WEBDUP_RENDER` of the Scrapy plugin, through a real headless
Chromium, over a site on 127.0.0.1 whose pages are written by JavaScript.

The client-rendered site (``/csr/NAME``) sends an empty ``<div id="root">``, the article as inline JSON
and an inline script that writes it into the DOM: its HTML holds no article text. The pre-rendered
site (``/ssr/NAME``) serves the same articles as plain HTML. Three near-duplicate versions of one
story, two of another, three that stand alone. Skipped, with a message, where no Chromium is
installed (the tests that need none still run).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

import loopback

import webdup

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM = os.environ.get("WEBDUP_CHROMIUM") or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
NEEDS_CHROMIUM = "no Chromium on PATH (apt install chromium): the rendering tests are skipped"
CRAWL_TIMEOUT = 300

VOCAB = (
    "harbour ferry island winter timetable bicycle market lighthouse keeper lamp channel storm coast village "
    "baker bread oven flour morning river bridge council school garden orchard apple pear cider festival music "
    "choir church bell tower clock station train platform ticket museum painting gallery library book reader "
    "poem author meadow sheep shepherd hill valley stream mill wheel stone wall castle knight horse saddle road "
    "inn traveller"
).split()


def paragraphs(seed: int, n: int = 5, words: int = 80) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCAB) for _ in range(words)) for _ in range(n)]


def edited(ps: list[str], seed: int) -> list[str]:
    """Two words of one paragraph changed: a near duplicate."""
    rng = random.Random(seed)
    ps = list(ps)
    w = ps[2].split()
    for i in (7, 41):
        w[i] = rng.choice([v for v in VOCAB if v != w[i]])
    ps[2] = " ".join(w)
    return ps


def articles() -> dict[str, tuple[str, list[str]]]:
    ferry, mill = paragraphs(1), paragraphs(2)
    return {
        "ferry": ("The ferry", ferry),
        "ferry-copy": ("The ferry", edited(ferry, 10)),
        "ferry-again": ("The ferry again", edited(ferry, 20)),
        "mill": ("The mill", mill),
        "mill-copy": ("The mill", edited(mill, 30)),
        "orchard": ("The orchard", paragraphs(3)),
        "castle": ("The castle", paragraphs(4)),
        "choir": ("The choir", paragraphs(5)),
    }


# The article's families: the clusters a duplicate finder must find.
FAMILIES = {"ferry": "ferry", "ferry-copy": "ferry", "ferry-again": "ferry", "mill": "mill", "mill-copy": "mill"}

WRITE = (
    "const d = JSON.parse(document.getElementById('data').textContent);"
    "const a = document.createElement('article'); const h = document.createElement('h1');"
    "h.textContent = d.title; a.appendChild(h);"
    "for (const t of d.paragraphs) { const p = document.createElement('p'); p.textContent = t; a.appendChild(p); }"
    "document.getElementById('root').appendChild(a);"
)


def shell(title: str, ps: list[str], before: str = "") -> str:
    data = json.dumps({"title": title, "paragraphs": ps}).replace("</", "<\\/")
    return ("<!doctype html><html><head><title>Site</title></head><body><div id=\"root\"></div>"
            f"<script type=\"application/json\" id=\"data\">{data}</script>"
            f"<script>{before}{WRITE}</script></body></html>")


def plain(title: str, ps: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in ps)
    return ("<!doctype html><html><head><title>Site</title></head><body><div id=\"root\">"
            f"<article><h1>{title}</h1>{body}</article></div></body></html>")


# Served server-rendered on the crawl's site, so `auto` must leave them alone.
PRERENDERED = ("orchard", "castle")


def serve(path: str) -> Optional[bytes]:
    arts = articles()
    if path == "/":
        links = "".join(f'<li><a href="/{"ssr" if n in PRERENDERED else "csr"}/{n}">{n}</a></li>' for n in arts)
        return f"<!doctype html><html><body><h1>Stories</h1><ul>{links}</ul></body></html>".encode()
    if path == "/bad/away":
        t, ps = arts["castle"]
        return shell(t, ps, before="location.href = '/elsewhere';").encode()
    kind, _, name = path.strip("/").partition("/")
    page = {"csr": shell, "ssr": plain}.get(kind)
    if page is None or name not in arts:
        return None
    return page(*arts[name]).encode()


def fetch(base: str, path: str) -> str:
    import urllib.request

    with urllib.request.urlopen(base + path) as r:
        return r.read().decode()


def groups(outcome: dict[str, Any]) -> set[frozenset[str]]:
    """Pages grouped by what they were found to duplicate: names joined to the name their match names."""
    parent = {n: n for n in outcome}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for n, o in outcome.items():
        if isinstance(o, str) and o in parent:
            parent[root(n)] = root(o)
    out: dict[str, set[str]] = {}
    for n in outcome:
        out.setdefault(root(n), set()).add(n)
    return {frozenset(g) for g in out.values() if len(g) > 1}


def expected_groups() -> set[frozenset[str]]:
    out: dict[str, set[str]] = {}
    for n, f in FAMILIES.items():
        out.setdefault(f, set()).add(n)
    return {frozenset(g) for g in out.values()}


def name_of(url: str) -> str:
    return urlsplit(url).path.rsplit("/", 1)[-1]


class RenderSite(unittest.TestCase):
    servers: loopback.Servers
    base: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.servers = loopback.Servers()
        cls.base = cls.servers.start(serve, "127.0.0.1")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.servers.close()

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def index_pages(self, kind: str, **kwargs: Any) -> dict[str, Any]:
        """Each article of `/kind/` checked and stored, in name order: what it duplicates (a name),
        "new", or the error it raised."""
        index = webdup.Index(Path(self.dir.name) / f"{kind}-{len(os.listdir(self.dir.name))}.db", **kwargs)
        outcome: dict[str, Any] = {}
        self.rendered: dict[str, bool] = {}
        for name in articles():
            url = f"{self.base}/{kind}/{name}"
            try:
                r = index.check_and_insert(url, html=fetch(self.base, f"/{kind}/{name}"))
            except webdup.WebdupError as e:
                outcome[name] = e
                continue
            self.rendered[name] = r.rendered
            outcome[name] = name_of(r.best.url) if r.seen else "new"
        return outcome


class IndexRenderTest(RenderSite):
    def test_a_missing_chromium_fails_at_construction_saying_how_to_install_it(self) -> None:
        db = Path(self.dir.name) / "i.db"
        with self.assertRaises(webdup.WebdupError) as e:
            webdup.Index(db, render="on", chromium="/nonexistent/chromium")
        self.assertIn("/nonexistent/chromium", str(e.exception))
        saved = {k: os.environ.get(k) for k in ("PATH", "WEBDUP_CHROMIUM")}
        os.environ["PATH"] = "/nonexistent"
        os.environ.pop("WEBDUP_CHROMIUM", None)
        try:
            with self.assertRaises(webdup.WebdupError) as e:
                webdup.Index(db, render="auto")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.assertIn("apt install chromium", str(e.exception))
        self.assertFalse(db.exists(), "nothing is created before the render settings are checked")
        with self.assertRaises(ValueError):
            webdup.Index(db, render="sometimes")
        # Off needs no browser.
        self.assertFalse(webdup.Index(db, render=False, chromium="/nonexistent/chromium").renders)

    @unittest.skipUnless(CHROMIUM, NEEDS_CHROMIUM)
    def test_rendered_pages_find_the_duplicates_of_the_prerendered_site(self) -> None:
        start = time.monotonic()
        prerendered = self.index_pages("ssr")
        self.assertEqual(groups(prerendered), expected_groups(), prerendered)
        self.assertFalse(any(isinstance(o, Exception) for o in prerendered.values()), prerendered)

        rendered = self.index_pages("csr", render="on")
        self.assertEqual(rendered, prerendered, "rendered: the same answers, page by page, as pre-rendered")
        self.assertTrue(all(self.rendered.values()), self.rendered)

        # Without rendering the shells have no article text (each is a no_text error): not these clusters.
        unrendered = self.index_pages("csr")
        self.assertNotEqual(groups(unrendered), expected_groups(), unrendered)
        self.assertFalse(any(self.rendered.values()))
        print(f"\n  index: 8 client-rendered pages rendered and checked in {time.monotonic() - start:.1f} s "
              f"(with the pre-rendered and unrendered runs)", file=sys.stderr)

    @unittest.skipUnless(CHROMIUM, NEEDS_CHROMIUM)
    def test_auto_renders_the_shells_only(self) -> None:
        index = webdup.Index(Path(self.dir.name) / "auto.db", render="auto")
        self.assertTrue(index.renders)
        t, ps = articles()["orchard"]
        page = index.check_and_insert(f"{self.base}/ssr/orchard", html=plain(t, ps))
        self.assertFalse(page.rendered)
        r = index.check_batch([{"url": f"{self.base}/csr/orchard", "html": shell(t, ps)},
                               {"url": f"{self.base}/ssr/orchard", "html": plain(t, ps)}])
        self.assertEqual([x.rendered for x in r], [True, False])
        self.assertEqual([x.seen for x in r], [True, True], "the shell, rendered, is the article stored")

    @unittest.skipUnless(CHROMIUM, NEEDS_CHROMIUM)
    def test_a_page_that_cannot_be_rendered_fails_alone(self) -> None:
        index = webdup.Index(Path(self.dir.name) / "bad.db", render="on", render_timeout=5)
        with self.assertRaises(webdup.WebdupError) as e:
            index.check_and_insert(f"{self.base}/bad/away", html=fetch(self.base, "/bad/away"))
        message = str(e.exception)
        self.assertIn("[render]", message)
        self.assertIn("/elsewhere", message)
        # The index goes on.
        t, ps = articles()["mill"]
        self.assertTrue(index.check_and_insert(f"{self.base}/csr/mill", html=shell(t, ps)).new)
        self.assertTrue(index.check(f"{self.base}/csr/mill-copy", html=shell(*articles()["mill-copy"])).seen)
        self.assertEqual(index.stats()["pages"], 1)


@unittest.skipUnless(CHROMIUM, NEEDS_CHROMIUM)
class ClusterRenderTest(RenderSite):
    def names(self, clusters: webdup.Clusters) -> set[frozenset[str]]:
        return {frozenset(name_of(m["id"]) for m in c["members"]) for c in clusters.clusters}

    def test_cluster_renders_dict_pages_and_fetched_urls(self) -> None:
        arts = articles()
        dicts = [{"url": f"{self.base}/csr/{n}", "html": shell(t, ps)} for n, (t, ps) in arts.items()]
        self.assertEqual(self.names(webdup.cluster(dicts, render="on")), expected_groups())
        self.assertNotEqual(self.names(webdup.cluster(dicts)), expected_groups())
        urls = [f"{self.base}/csr/{n}" for n in arts]
        run = webdup.cluster(urls, render="auto")
        self.assertEqual(self.names(run), expected_groups(), run.errors)
        fetches = json.loads(run.to_json())["fetches"]
        self.assertEqual(sum(1 for f in fetches if f.get("rendered")), len(arts))


def _crawl_main(config_path: str) -> None:
    """A Scrapy crawl of the site, in its own process (Twisted's reactor does not restart)."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    config = json.loads(Path(config_path).read_text())
    kept: list[str] = []
    dropped: list[str] = []
    errors: list[str] = []

    class StorySpider(scrapy.Spider):
        name = "stories"

        def parse(self, response: Any) -> Any:
            if urlsplit(response.url).path == "/":
                yield from response.follow_all(css="a")
            else:
                yield {"url": response.url, "html": response.text}

    settings = {**loopback.SCRAPY_SETTINGS, "WEBDUP_INDEX": config["index"], "WEBDUP_RENDER": config["render"],
                "CONCURRENT_REQUESTS": 4}
    if config["middleware"]:
        settings["DOWNLOADER_MIDDLEWARES"] = {"webdup.scrapy.WebdupDownloaderMiddleware": 570}
    else:
        settings["ITEM_PIPELINES"] = {"webdup.scrapy.WebdupPipeline": 300}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(StorySpider)
    # Named functions, held by this frame: Scrapy's signals keep weak references.
    def scraped(item: Any, response: Any, spider: Any) -> None:
        kept.append(item["url"])

    def item_dropped(item: Any, response: Any, exception: BaseException, spider: Any) -> None:
        dropped.append(item["url"])

    def item_error(item: Any, response: Any, spider: Any, failure: Any) -> None:
        errors.append(failure.getTraceback())

    def spider_error(failure: Any, response: Any, spider: Any) -> None:
        errors.append(failure.getTraceback())

    crawler.signals.connect(scraped, signal=signals.item_scraped)
    crawler.signals.connect(item_dropped, signal=signals.item_dropped)
    crawler.signals.connect(item_error, signal=signals.item_error)
    crawler.signals.connect(spider_error, signal=signals.spider_error)
    start = time.monotonic()
    process.crawl(crawler, start_urls=[config["start"]])
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    Path(config["out"]).write_text(json.dumps({"kept": kept, "dropped": dropped, "errors": errors, "stats": stats,
                                               "seconds": time.monotonic() - start}))


@unittest.skipUnless(CHROMIUM, NEEDS_CHROMIUM)
class ScrapyRenderTest(RenderSite):
    def crawl(self, render: str, middleware: bool = False, errors_ok: bool = False) -> dict:
        out = Path(self.dir.name) / f"crawl-{render}-{middleware}.json"
        config = Path(self.dir.name) / f"config-{render}-{middleware}.json"
        config.write_text(json.dumps({"index": str(Path(self.dir.name) / f"scrapy-{render}-{middleware}.db"),
                                      "render": render, "start": self.base + "/", "out": str(out),
                                      "middleware": middleware}))
        p = subprocess.run([sys.executable, __file__, "--crawl", str(config)], capture_output=True, text=True,
                           timeout=CRAWL_TIMEOUT, cwd=Path(__file__).parent)
        self.assertEqual(p.returncode, 0, p.stderr[-5000:])
        result = json.loads(out.read_text())
        result["stderr"] = p.stderr
        if not errors_ok:
            self.assertEqual(result["errors"], [], p.stderr[-5000:])
        return result

    def test_a_crawl_with_render_auto_drops_the_duplicate_pages(self) -> None:
        result = self.crawl("auto")
        kept = sorted(name_of(u) for u in result["kept"])
        dropped = sorted(name_of(u) for u in result["dropped"])
        self.assertEqual(sorted(kept + dropped), sorted(articles()), result["stderr"][-3000:])
        # One page kept per family, the others dropped; the stories that stand alone kept.
        self.assertEqual(len(dropped), 3, (kept, dropped))
        for family in ("ferry", "mill"):
            self.assertEqual(sum(FAMILIES.get(n) == family for n in kept), 1, (kept, dropped))
        for alone in ("orchard", "castle", "choir"):
            self.assertIn(alone, kept)
        stats = result["stats"]
        # Only the client-rendered pages were rendered.
        self.assertEqual(stats.get("webdup/rendered"), len(articles()) - len(PRERENDERED), stats)
        self.assertEqual(stats.get("webdup/duplicate"), 3, stats)
        self.assertNotIn("webdup/render_failed", stats)
        print(f"\n  scrapy + WEBDUP_RENDER=auto: {len(kept)} kept, {len(dropped)} dropped, "
              f"{stats.get('webdup/rendered')} rendered, crawl {result['seconds']:.1f} s", file=sys.stderr)

        # Without rendering, the shells' HTML has no article: the families are not told apart.
        # (A page with no text at all may be an item error of its own.)
        plain_run = self.crawl("off", errors_ok=True)
        self.assertNotIn("webdup/rendered", plain_run["stats"])
        plain_kept = sorted(name_of(u) for u in plain_run["kept"])
        self.assertNotEqual(plain_kept, kept, plain_run["stats"])

    def test_the_middleware_renders_too(self) -> None:
        result = self.crawl("on", middleware=True)
        stats = result["stats"]
        self.assertEqual(stats.get("webdup/ignored"), 3, stats)
        # Every response checked was rendered ("on"): the home page too.
        checked = sum(stats.get(f"webdup/{k}", 0) for k in ("new", "ignored", "skipped/template_only"))
        self.assertEqual(stats.get("webdup/rendered"), checked, stats)
        kept = sorted(name_of(u) for u in result["kept"])
        for alone in ("orchard", "castle", "choir"):
            self.assertIn(alone, kept)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--crawl":
        _crawl_main(sys.argv[2])
    else:
        unittest.main()
