"""Type stubs for the native module (crates/python/src/lib.rs)."""

import os
import pathlib
from typing import Any, Optional, Sequence, Union, overload

__version__: str

class WebdupError(Exception):
    """An index, a page or an input webdup could not use."""

class Match:
    """An indexed page like the one checked, with its exact overlap."""

    id: int
    """The page's row in the index; the smaller of two ids was stored first."""
    url: str
    crawl: str
    final_url: Optional[str]
    title: Optional[str]
    jaccard: float
    """Exact Jaccard of the two shingle sets."""
    containment: float
    """Share of the checked page's shingles found in this page."""
    contained: float
    """Share of this page's shingles found in the checked page."""

class CheckResult:
    """What the index held like a page."""

    url: str
    identical: list[Match]
    """Pages that are the same decoded page (same bytes), in insertion order."""
    same_text: list[Match]
    """Other pages with the same normalized text, in insertion order (never for a page of under 5 shingles)."""
    near: list[Match]
    """Other pages with exact Jaccard at least the threshold (the cross-site one for another host's page), most similar first."""
    candidates: int
    id: Optional[int]
    """The page's row after an insert; None for a check."""
    crawl: Optional[str]
    template: Optional[str]
    """"learned" or "not yet learned": whether the page's site template was learned when it was checked
    (until it is, two pages of the site are matched conservatively); None when the index suppresses none."""
    template_only: bool
    """The page has no text of its own beyond its site's template as the index learned it (never seen on that text)."""
    rendered: bool
    """The page's HTML was rendered in Chromium before it was checked (``Index(render=...)``)."""
    @property
    def seen(self) -> bool: ...
    @property
    def new(self) -> bool: ...
    @property
    def best(self) -> Optional[Match]:
        """The first identical page, else the first of the same text, else the nearest page."""
    @property
    def kind(self) -> Optional[str]:
        """What `best` is: "identical", "same-text" or "near"; None when nothing was seen."""
    def __bool__(self) -> bool: ...

Redirects = Sequence[tuple[str, int]]
PageDict = dict[str, Any]
"""url, html or text, and optionally final_url, status, redirects, canonical, title, crawl."""

class Index:
    """A crawl index in one SQLite file, shared safely by threads and processes."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        threshold: Optional[float] = None,
        extractor: Optional[str] = None,
        crawl: str = "python",
        *,
        render: Union[str, bool, None] = None,
        chromium: Union[str, os.PathLike[str], None] = None,
        render_timeout: Optional[float] = None,
    ) -> None:
        """``render``: "off" (default), "auto" or "on" (False, True) renders pages in a headless Chromium
        before they are checked; ``chromium`` the browser, ``render_timeout`` a page's budget in seconds."""
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def renders(self) -> bool:
        """True when pages are rendered in Chromium before they are checked."""
    @property
    def threshold(self) -> float: ...
    @property
    def cross_site_threshold(self) -> Optional[float]:
        """The threshold of two pages of different hosts; None: `threshold` for every pair."""
    def check(
        self,
        url: str,
        html: Optional[str] = None,
        text: Optional[str] = None,
        *,
        final_url: Optional[str] = None,
        status: Optional[int] = None,
        redirects: Optional[Redirects] = None,
        canonical: Optional[str] = None,
        title: Optional[str] = None,
        crawl: Optional[str] = None,
    ) -> CheckResult: ...
    def insert(
        self,
        url: str,
        html: Optional[str] = None,
        text: Optional[str] = None,
        *,
        final_url: Optional[str] = None,
        status: Optional[int] = None,
        redirects: Optional[Redirects] = None,
        canonical: Optional[str] = None,
        title: Optional[str] = None,
        crawl: Optional[str] = None,
    ) -> int: ...
    def check_and_insert(
        self,
        url: str,
        html: Optional[str] = None,
        text: Optional[str] = None,
        *,
        final_url: Optional[str] = None,
        status: Optional[int] = None,
        redirects: Optional[Redirects] = None,
        canonical: Optional[str] = None,
        title: Optional[str] = None,
        crawl: Optional[str] = None,
        skip_template_only: bool = False,
    ) -> CheckResult: ...
    @overload
    def check_batch(self, pages: list[PageDict]) -> list[CheckResult]: ...
    @overload
    def check_batch(self, pages: Any) -> Any:
        """An Arrow table in (anything with ``__arrow_c_stream__``), a ``pyarrow.Table`` out."""
    def insert_batch(self, pages: Any) -> list[int]: ...
    @overload
    def check_and_insert_batch(self, pages: list[PageDict]) -> list[CheckResult]: ...
    @overload
    def check_and_insert_batch(self, pages: Any) -> Any: ...
    def remove(self, url: str) -> int: ...
    def get(self, url: str) -> list[dict[str, Any]]: ...
    def stats(self) -> dict[str, Any]: ...

class Clusters:
    """The clusters of a run, with its failures and the report `webdup cluster` writes."""

    @property
    def clusters(self) -> list[dict[str, Any]]: ...
    @property
    def errors(self) -> list[dict[str, Any]]: ...
    @property
    def summary(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def to_csv(self) -> str: ...
    def to_arrow(self) -> Any:
        """One row per clustered page, as a ``pyarrow.Table``."""
    def __len__(self) -> int: ...

def cluster(
    pages: Union[Sequence[str], Sequence[PageDict]],
    threshold: Optional[float] = None,
    extractor: Optional[str] = None,
    *,
    render: Union[str, bool, None] = None,
    chromium: Union[str, os.PathLike[str], None] = None,
    render_timeout: Optional[float] = None,
) -> Clusters: ...
def compare(
    a: str,
    b: str,
    *,
    text: bool = False,
    threshold: Optional[float] = None,
    extractor: Optional[str] = None,
) -> dict[str, Any]: ...
def extract(html: str, url: Optional[str] = None, extractor: str = "auto") -> dict[str, Any]: ...
