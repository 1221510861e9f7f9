"""One page of a long table: which rows a page number shows, and the caption that says so.

The Leaderboard table sends one page of rows at a time: at 1,000 systems the browser took longer to draw every
row than the whole page had to show its first ones (`benchmarks/bench_leaderboard.py`), while sorting, filtering,
search and the rank column stay on the server over every row. Page numbers count from 1, as the page's address
(`?page=3`) and its page box show them. A page number that cannot be shown is never an error: below 1 (or not a
number) is the first page, beyond the end is the last, so an old link to page 40 of a board that shrank still
opens on rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

PAGE_ROWS = 50  # rows per page: two screens of the table; 100 took the browser visibly longer to draw


@dataclass(frozen=True, slots=True)
class PageSlice:
    """Page `page` of `pages` shows rows `start` (0-based) to `stop` (excluded) of `total`."""

    page: int
    pages: int
    start: int
    stop: int
    total: int

    @property
    def rows(self) -> int:
        return self.stop - self.start

    def caption(self) -> str:
        """`rows 51–100 of 1,001 · page 2 of 21`, as the table's label shows it."""
        if not self.total:
            return "no rows match"
        return f"rows {self.start + 1:,}–{self.stop:,} of {self.total:,} · page {self.page} of {self.pages}"


def page_number(value: Any) -> int:
    """A page number from a page box, an API argument or an address: a whole number >= 1, else 1."""
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        return 1
    return int(number) if math.isfinite(number) and number >= 1 else 1


def page_slice(total: int, page: Any = 1, size: int = PAGE_ROWS) -> PageSlice:
    """The rows page `page` shows of `total`, `size` a page: below 1 is page 1, beyond the end the last page."""
    if size < 1:
        raise ValueError(f"a page holds at least one row, not {size}")
    pages = max(1, math.ceil(total / size))
    page = min(page_number(page), pages)
    start = (page - 1) * size
    return PageSlice(page, pages, start, min(start + size, total), total)
