"""A generated multi-host site for the crawl-order test (test_scrapy_order.py): deterministic from its seed.

Each host has a template of its own: a header and navigation, a footer, and a blurb about the site
that sits inside the article container, so the extractor keeps it with the page's text (a site's
standard "about us" paragraph, as many sites print under every article). On each host:

- ``article``: an article of 300-450 words;
- ``revision``: an article with 1 to 4 words replaced, at another path (a light edit);
- ``mirror``: an article's bytes at another path;
- ``thin``: a title and 6-10 words of the page's own, with the blurb (140 words). The blurb is
  long enough that two thin pages of a host, compared with it (before the host's template is
  known), reach the same-site threshold of 0.8; without it they share nothing.

``write(root)`` writes ``<root>/<host>/<name>.html`` and ``<root>/truth.tsv`` (host, name, kind,
group: the article a revision or mirror copies). Words come from a fixed list, drawn by a seeded
``random.Random``; nothing depends on the machine or the time.
"""

from __future__ import annotations

import csv
import html
import random
from dataclasses import dataclass
from pathlib import Path

WORDS = (
    "river path bank bench lamp garden street market bridge harbour station library museum school "
    "council village town city county valley hill forest field farm orchard meadow lake island coast "
    "north south east west spring summer autumn winter morning evening night week month year season "
    "restored opened closed repaired painted planted built moved found lost kept carried offered "
    "visitors residents children families walkers cyclists drivers farmers teachers readers neighbours "
    "gravel stone timber brick glass iron copper paper cotton wool bread cheese apples pears plums "
    "quiet busy narrow wide steep gentle old new bright dark early late careful simple plain "
    "because although while after before during between under over along across around beyond "
    "report plan budget meeting survey notice letter record archive map photograph drawing table "
    "weather rain snow wind frost sunshine cloud storm flood drought harvest festival concert fair "
    "the a of to and in on for with by from at as that this which their its our".split()
)

BLURB_WORDS = 140
THIN_WORDS = (6, 10)
ARTICLE_WORDS = (300, 450)
REVISION_EDITS = (1, 4)


@dataclass
class Page:
    host: str  # a host name, e.g. "h1"; served on a loopback address of its own
    name: str  # the file name, e.g. "p007.html"
    kind: str  # article, revision, mirror, thin
    group: str  # the article this page copies ("host/name"), or its own for articles and thin pages
    html: str


def _words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


def _sentences(words: list[str], rng: random.Random) -> str:
    out, i = [], 0
    while i < len(words):
        n = rng.randint(8, 16)
        chunk = words[i:i + n]
        out.append(" ".join(chunk).capitalize() + ".")
        i += n
    return " ".join(out)


class Host:
    """One host's template: its name, navigation, blurb and footer."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.name = f"h{index}"
        self.title = " ".join(_words(rng, 2)).title() + f" Gazette {index}"
        self.nav = [" ".join(_words(rng, 2)).title() for _ in range(6)]
        self.blurb = _sentences(_words(rng, BLURB_WORDS), rng)
        self.footer = _sentences(_words(rng, 30), rng)

    def page(self, title: str, paragraphs: list[str]) -> str:
        nav = "".join(f'<li><a href="/{i}.html">{html.escape(n)}</a></li>' for i, n in enumerate(self.nav))
        body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
        return (
            f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)} | '
            f'{html.escape(self.title)}</title></head><body>'
            f'<header><a href="/">{html.escape(self.title)}</a><nav><ul>{nav}</ul></nav></header>'
            f'<main><article><h1>{html.escape(title)}</h1>{body}'
            f'<p class="about-the-site">{html.escape(self.blurb)}</p></article></main>'
            f'<footer><p>{html.escape(self.footer)}</p></footer></body></html>\n'
        )


def generate(seed: int, hosts: int = 4, pages_per_host: int = 14) -> list[Page]:
    """The site's pages, host by host. Per host about a third thin pages, a third articles, and
    revisions and mirrors of those articles."""
    rng = random.Random(seed)
    pages: list[Page] = []
    for h in range(1, hosts + 1):
        host = Host(h, rng)
        articles: list[tuple[str, str, list[str]]] = []  # name, title, words
        for n in range(pages_per_host):
            name = f"p{n:03}.html"
            kind = "thin" if n % 3 == 1 else ("article" if n % 3 == 0 or not articles else rng.choice(
                ["revision", "mirror"]))
            if kind == "thin":
                title = " ".join(_words(rng, 4)).title()
                own = _sentences(_words(rng, rng.randint(*THIN_WORDS)), rng)
                pages.append(Page(host.name, name, kind, f"{host.name}/{name}", host.page(title, [own])))
            elif kind == "article":
                title = " ".join(_words(rng, 5)).title()
                words = _words(rng, rng.randint(*ARTICLE_WORDS))
                articles.append((name, title, words))
                pages.append(Page(host.name, name, kind, f"{host.name}/{name}", host.page(title, _paragraphs(words))))
            else:
                of, title, words = rng.choice(articles)
                original = next(p for p in pages if p.host == host.name and p.name == of)
                if kind == "mirror":
                    page_html = original.html
                else:
                    words = list(words)
                    for _ in range(rng.randint(*REVISION_EDITS)):
                        words[rng.randrange(len(words))] = rng.choice(["renewed", "widened", "lit", "signed"])
                    page_html = host.page(title, _paragraphs(words))
                pages.append(Page(host.name, name, kind, f"{host.name}/{of}", page_html))
    return pages


def _paragraphs(words: list[str]) -> list[str]:
    # Paragraph breaks at fixed word counts, so a revision keeps its original's.
    rng = random.Random(len(words))
    return [_sentences(words[i:i + 60], rng) for i in range(0, len(words), 60)]


def write(root: Path, pages: list[Page]) -> None:
    """``<root>/<host>/<name>`` for each page, and ``<root>/truth.tsv``."""
    for page in pages:
        (root / page.host).mkdir(parents=True, exist_ok=True)
        (root / page.host / page.name).write_text(page.html, encoding="utf-8")
    with open(root / "truth.tsv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["host", "name", "kind", "group"])
        for page in pages:
            w.writerow([page.host, page.name, page.kind, page.group])
