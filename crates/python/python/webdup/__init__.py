"""webdup: find duplicate and near-duplicate web pages.

A crawl index in one SQLite file that crawlers ask "seen this?" (every
match confirmed by exact Jaccard, check-and-insert atomic across threads
and processes), clustering of pages or files, exact comparison, and
main-content extraction. The work runs in Rust with the GIL released.

    >>> import webdup
    >>> index = webdup.Index("crawl.db")
    >>> result = index.check_and_insert("https://example.com/a", html=html)
    >>> result.new, [m.url for m in result.near]

Scrapy: see ``webdup.scrapy``.
"""

from ._webdup import (
    CheckResult,
    Clusters,
    Index,
    Match,
    WebdupError,
    __version__,
    cluster,
    compare,
    extract,
)

__all__ = [
    "CheckResult",
    "Clusters",
    "Index",
    "Match",
    "WebdupError",
    "__version__",
    "cluster",
    "compare",
    "extract",
]
