"""What the Leaderboard page shows of the table: its rows filtered (name search, types, size buckets), one scope (the
average and every topic, or one topic), sorted, with the rank column (`shown_rows`).

`Filters` is one state of the page's six filters (search, types, sizes, topic, sort, order), the one spelling of
them that the Leaderboard tab, its `/table` API and the deep links (`deep_links`) share.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from leaderboard.page.display import sort_frame
from leaderboard.tracks.retrieval.tables.table_columns import (
    INFO,
    RANK,
    TAIL,
    TOPIC_ALL,
    default_sort,
    metric_columns,
)
from leaderboard.tracks.retrieval.tables.table_efficiency import EFFICIENCY, EFFICIENCY_COLUMNS
from leaderboard.tracks.retrieval.tables.table_live import live_columns

SIZE_BUCKETS = {"< 100M": (0, 1e8), "100M–1B": (1e8, 1e9), "1B–10B": (1e9, 1e10), "≥ 10B": (1e10, math.inf)}
UNKNOWN_SIZE = "unknown"


def size_bucket(params: float | None) -> str:
    if params is None or params != params:
        return UNKNOWN_SIZE
    return next((name for name, (low, high) in SIZE_BUCKETS.items() if low <= params < high), UNKNOWN_SIZE)


def filter_frame(
    frame: pd.DataFrame, *, search: str = "", types: Sequence[str] | None = None, sizes: Sequence[str] | None = None
) -> pd.DataFrame:
    """Name substring (case-insensitive), system kinds (keys of `TYPES`) and size buckets; None = no filter."""
    keep = pd.Series(True, index=frame.index)
    if search and search.strip():
        keep &= frame["system"].str.casefold().str.contains(search.strip().casefold(), regex=False)
    if types is not None:
        keep &= frame["_kind"].isin(list(types))
    if sizes is not None:
        keep &= frame["_params"].map(size_bucket).isin(list(sizes))
    return frame[keep]


def shown_rows(
    frame: pd.DataFrame,
    *,
    search: str = "",
    types: Sequence[str] | None = None,
    sizes: Sequence[str] | None = None,
    topic: str | None = None,
    sort: str | None = None,
    descending: bool = True,
    ranks: Callable[[str], Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """The rows and columns the page shows for one state of its controls: filtered, one scope, sorted.

    With `ranks` (`RankSource.cells`), a `RANK` column after the system's type holds each row's rank on the
    sorted column with its interval, computed over the whole board, so a filter hides rows but never re-ranks
    them; it is blank for a row without one and when the sort is not a measure.
    """
    view = view_frame(filter_frame(frame, search=search, types=types, sizes=sizes), topic)
    key = sort if sort in view.columns else default_sort(topic)
    if ranks is not None:
        cells = ranks(key)
        view = view.copy()
        view.insert(len(INFO), RANK, [cells.get(k, "") for k in view["id"]])
    return sort_frame(view, key, descending=descending)


@dataclass(frozen=True, slots=True)
class Filters:
    """One state of the table's six filters, as the page's controls hold them (in this order, `names()`): a name
    substring, the kinds and size buckets kept (None: all), the topic (`TOPIC_ALL` or empty: every topic), the sort
    column (an unknown one: the default sort) and the order (`asc`, else descending)."""

    search: str = ""
    types: tuple[str, ...] | None = None
    sizes: tuple[str, ...] | None = None
    topic: str = ""
    sort: str | None = None
    order: str = "desc"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(
        cls,
        search: str | None,
        types: Sequence[str] | None,
        sizes: Sequence[str] | None,
        topic: str | None,
        sort: Any,
        order: Any,
    ) -> Filters:
        """The filters of the controls' values, as Gradio passes them (lists, or None for a box left out)."""
        chosen = [None if picked is None else tuple(picked) for picked in (types, sizes)]
        return cls(search or "", chosen[0], chosen[1], topic or "", sort, order)

    @property
    def scope(self) -> str | None:
        """The one topic whose columns are shown, or None for the average and every topic's."""
        return None if self.topic in ("", TOPIC_ALL) else self.topic

    @property
    def descending(self) -> bool:
        return self.order != "asc"

    def key(self) -> tuple[Any, ...]:
        """The filters as a cache key (`StoreFrame.view`): the same view, however it was asked."""
        return (self.search, self.types, self.sizes, self.topic, self.sort, self.order)

    def rows(self, frame: pd.DataFrame, ranks: Callable[[str], Mapping[str, str]] | None = None) -> pd.DataFrame:
        """The rows and columns these filters show of `frame` (`shown_rows`)."""
        options = {"search": self.search, "types": self.types, "sizes": self.sizes, "topic": self.scope}
        return shown_rows(frame, **options, sort=self.sort, descending=self.descending, ranks=ranks)


def view_frame(frame: pd.DataFrame, topic: str | None = None) -> pd.DataFrame:
    """The displayed columns: all scopes, or one topic's (a `?topic=` view); internal columns dropped."""
    topics = frame.attrs.get("topics", [])
    live = [c for c in live_columns() if c in frame.columns]
    return frame[[*INFO, *metric_columns(topics, topic), *live, *EFFICIENCY_COLUMNS, *TAIL]]


def sort_choices(topics: Sequence[str], topic: str | None = None) -> list[str]:
    return [*metric_columns(topics, topic), *EFFICIENCY, "system", "size", "date"]
