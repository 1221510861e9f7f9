"""The board's rank column: each system's rank on the sorted measure with its 95% bootstrap interval.

The statistics are the library's (`freshstack_hf.metrics.rank_uncertainty`: a paired bootstrap over queries,
competition ranks, percentile interval, tied-with-the-leader rule); this module only feeds it. For the column the
table is sorted on (a topic's measure, or the average's), it reads the stored per-query scores of that measure
(`Store.per_query_scores`, the bulky column the board's own scan skips) of the systems shown on the board, scored
on the served dataset revision, and builds one systems x queries matrix per topic over the topic's judged
queries, a query a system lacks counting 0 as everywhere in the project. A system without per-query scores for a
topic of the scope (a row stored before they were kept, a published figure) gets no interval; the average needs
them for every topic, as the board's average needs every topic's value.

Cells are cached per store change marker, seed and column: a page render reads the marker (a few indexed
aggregates) and recomputes only after a write, and only the columns someone sorts on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from freshstack_hf.defaults import RANK_RESAMPLES, SEED
from freshstack_hf.metrics import HEADLINE, Measure
from freshstack_hf.metrics.rank_uncertainty import RankInterval, rank_intervals
from freshstack_hf.metrics.report import AVERAGE
from leaderboard.tracks.retrieval.leaderboard_table import RANK, column

EXPLAINED = (
    f"**{RANK}**: the system's rank on the measure the table is sorted by, with the 95% interval of its rank over "
    f"a paired bootstrap of the queries (every system scored on the same resampled queries; the average "
    f"resamples each topic's queries and averages the topics); **≈1**: statistically tied with the leader (its "
    f"interval reaches rank 1, i.e. it ranks first in at least 2.5% of the resamples, as another system does too)"
)
PerQueryRows = Sequence[tuple[int, str, str, str, float, Any]]  # `Store.per_query_scores` rows


def scope_of(name: str, topics: Sequence[str]) -> tuple[list[str], Measure] | None:
    """The topics and measure behind a metric column ('average α-nDCG@10' -> every topic); None otherwise."""
    for scope in (AVERAGE, *topics):
        for m in HEADLINE:
            if column(scope, m) == name:
                return (list(topics) if scope == AVERAGE else [scope]), m
    return None


def rank_table(
    rows: PerQueryRows,
    ids: Sequence[str],
    topics: Sequence[str],
    measure: str,
    query_ids: Callable[[str], Sequence[str]],
    *,
    revision: str | None = None,
    resamples: int = RANK_RESAMPLES,
    seed: int = SEED,
) -> dict[str, RankInterval]:
    """{system id: its rank interval} among the systems `ids` that have per-query `measure` scores on every one
    of `topics` (the ranking's scope), from `Store.per_query_scores` rows of the served `revision`."""
    wanted, scope = set(ids), set(topics)
    found: dict[str, dict[str, Mapping[str, float]]] = {}
    for sid, topic, name, rev, _value, per_query in rows:
        key = str(sid)
        if name == measure and topic in scope and key in wanted and per_query and (revision in (None, rev)):
            found.setdefault(key, {})[topic] = per_query
    ranked = [key for key in ids if len(found.get(key, {})) == len(scope)]
    if not ranked:
        return {}
    matrices = {}
    for topic in topics:
        qids = list(query_ids(topic))
        matrices[topic] = np.array([[found[k][topic].get(q, 0.0) for q in qids] for k in ranked], dtype=np.float64)
    intervals = rank_intervals(matrices, resamples=resamples, seed=seed)
    return dict(zip(ranked, intervals, strict=True))


class RankSource:
    """The rank cells of one board (a `BoardSource`) for the served dataset, cached per store change and column."""

    def __init__(
        self, store: Any, dataset: Any, board: Any, *, resamples: int = RANK_RESAMPLES, seed: int = SEED
    ) -> None:
        self.store, self.dataset, self.board = store, dataset, board
        self.resamples, self.seed = resamples, seed
        self._lock = threading.Lock()
        self._marker: Any = None
        self._cache: dict[str, dict[str, RankInterval]] = {}
        self._rows: dict[str, PerQueryRows] = {}

    def intervals(self, sort: str) -> dict[str, RankInterval]:
        """{system id: rank interval} for the column `sort`; empty for a column that is not a measure."""
        found = scope_of(sort, self.dataset.topics)
        if found is None:
            return {}
        topics, measure = found
        with self._lock:
            marker = self.store.change_marker()  # read before the rows: a write in between forces a recompute
            if marker != self._marker:
                self._marker, self._cache, self._rows = marker, {}, {}
            if sort not in self._cache:
                frame = self.board.frame()
                ids = frame.loc[frame[sort].notna(), "id"].tolist() if sort in frame.columns else []
                if measure.id not in self._rows:
                    self._rows[measure.id] = self.store.per_query_scores((measure.id,))
                self._cache[sort] = rank_table(
                    self._rows[measure.id],
                    ids,
                    topics,
                    measure.id,
                    self._query_ids,
                    revision=self.dataset.revision,
                    resamples=self.resamples,
                    seed=self.seed,
                )
            return self._cache[sort]

    def cells(self, sort: str) -> dict[str, str]:
        """{system id: '3 (2–5)', '≈1' appended when tied with the leader}: the column's shown text."""
        return {key: interval.text() for key, interval in self.intervals(sort).items()}

    def _query_ids(self, topic: str) -> list[str]:
        """The topic's judged queries, in a fixed order: the rows of every system's matrix."""
        return sorted(self.dataset.qrels(topic).query_ids)
