#!/usr/bin/env python3
"""What webdup's Scrapy pipeline costs a crawl (issue 39): CPU and peak memory.

Serves a near-duplicate corpus (webdup_eval::corpus, made by
``scripts/bench-scrapy.sh`` from ../shared/data) on loopback as the Scrapy
test does (crates/python/tests/test_scrapy.py: a home page, section
listings on 127.0.0.1, each corpus site on an address of its own), and
crawls it with a real Scrapy crawl (16 concurrent requests, LOG_LEVEL
INFO), alternately without webdup and with ``WebdupPipeline`` (the
README's three settings), ROUNDS times each. Each crawl runs in a fresh
process and reports its own CPU time (user + system, every thread) and
peak RSS; the server runs in this process and is not counted.

Prints each crawl, then the medians: CPU ms per item and peak RSS without
and with the pipeline, and their difference.

    usage: bench_scrapy.py CORPUS [ROUNDS]
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

import loopback  # noqa: E402
from test_scrapy import ARTICLE, Server, Site  # noqa: E402

CONCURRENCY = 16


def crawl_main(config_path: str) -> None:
    """One crawl, in its own process; writes its item count, CPU seconds and peak RSS."""
    from urllib.parse import urlsplit

    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    config = json.loads(Path(config_path).read_text())
    counts = {"items": 0, "dropped": 0}

    class SiteSpider(scrapy.Spider):
        name = "bench"

        def parse(self, response: Any) -> Any:
            if ARTICLE.match(urlsplit(response.url).path):
                yield {"url": response.url, "html": response.text}
            else:
                yield from response.follow_all(css="a")

    settings: dict[str, Any] = {
        **loopback.SCRAPY_SETTINGS,
        "CONCURRENT_REQUESTS": CONCURRENCY,
        "CONCURRENT_REQUESTS_PER_DOMAIN": CONCURRENCY,
        "LOG_LEVEL": "INFO",
        "LOG_FILE": config["log"],
    }
    if config["webdup"]:
        settings["ITEM_PIPELINES"] = {"webdup.scrapy.WebdupPipeline": 300}
        settings["WEBDUP_INDEX"] = config["index"]

    def scraped(item: Any, response: Any, spider: Any) -> None:
        counts["items"] += 1

    def dropped(item: Any, response: Any, exception: BaseException, spider: Any) -> None:
        counts["dropped"] += 1

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    crawler.signals.connect(scraped, signal=signals.item_scraped)
    crawler.signals.connect(dropped, signal=signals.item_dropped)
    start = time.monotonic()
    process.crawl(crawler, start_urls=[config["start"]])
    process.start()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    Path(config["out"]).write_text(json.dumps({
        **counts,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux
        "seconds": time.monotonic() - start,
    }))


def crawl(base: str, work: Path, name: str, webdup: bool) -> dict:
    out = work / name
    out.mkdir()
    config = {"start": base + "/", "webdup": webdup, "index": str(out / "crawl.db"),
              "out": str(out / "result.json"), "log": str(out / "crawl.log")}
    (out / "config.json").write_text(json.dumps(config))
    subprocess.run([sys.executable, __file__, "--crawl", str(out / "config.json")], check=True, cwd=out)
    result = json.loads((out / "result.json").read_text())
    result["log_bytes"] = (out / "crawl.log").stat().st_size
    return result


def main(corpus: Path, rounds: int) -> None:
    site = Site(corpus)
    server = Server(site)
    runs: dict[bool, list[dict]] = {False: [], True: []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(rounds):
                for webdup in (False, True):
                    result = crawl(server.base, Path(tmp), f"{r}-{webdup}", webdup)
                    runs[webdup].append(result)
                    kept = result["items"]
                    print(f"round {r + 1} {'with webdup' if webdup else 'without   '}: {kept} items kept, "
                          f"{result['dropped']} dropped, CPU {result['cpu']:.2f} s, peak RSS "
                          f"{result['rss_mib']:.0f} MiB, {result['seconds']:.1f} s, log {result['log_bytes']} bytes",
                          flush=True)
    finally:
        # Results first: stopping some 200 servers takes a while (each polls every 0.5 s).
        report(site, runs, rounds)
        server.close()


def report(site: Site, runs: dict[bool, list[dict]], rounds: int) -> None:
    if not all(runs.values()):
        return
    pages = len(site.cluster)
    cpu = {w: statistics.median(r["cpu"] for r in runs[w]) for w in runs}
    rss = {w: statistics.median(r["rss_mib"] for r in runs[w]) for w in runs}
    print(f"{pages} article pages crawled ({len(site.sections) + 1} navigation pages), {rounds} rounds, medians:")
    print(f"  CPU per article page: {1000 * cpu[False] / pages:.2f} ms without webdup, "
          f"{1000 * cpu[True] / pages:.2f} ms with the pipeline: +{1000 * (cpu[True] - cpu[False]) / pages:.2f} ms")
    print(f"  peak RSS: {rss[False]:.0f} MiB without, {rss[True]:.0f} MiB with: +{rss[True] - rss[False]:.0f} MiB")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--crawl":
        crawl_main(sys.argv[2])
    elif len(sys.argv) in (2, 3):
        main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) == 3 else 3)
    else:
        sys.exit(__doc__)
