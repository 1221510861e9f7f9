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
aggregates) and recomputes only after a write, and only the columns someone sorts on. After a write, the stored
per-query scores are read again as text (`Store.per_query_texts`) and only the rows whose text changed are decoded
into vectors over their topic's queries (`PerQueryVectors`): with 1,000 systems, decoding every row again took
half of a first page's time after each new submission (`benchmarks/bench_leaderboard.py`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from freshstack_hf.defaults import RANK_RESAMPLES, SEED
from freshstack_hf.metrics import HEADLINE, Measure
from freshstack_hf.metrics.rank_uncertainty import RankInterval, rank_intervals
from freshstack_hf.metrics.score_table import AVERAGE
from leaderboard.tracks.retrieval.tables.table_columns import RANK, column

EXPLAINED = (
    f"**{RANK}**: the system's rank on the measure the table is sorted by, with the 95% interval of its rank over "
    f"a paired bootstrap of the queries (every system scored on the same resampled queries; the average "
    f"resamples each topic's queries and averages the topics); **≈1**: statistically tied with the leader (its "
    f"interval reaches rank 1, i.e. it ranks first in at least 2.5% of the resamples, as another system does too)"
)
PerQueryRows = Sequence[tuple[int, str, str, str, float, Any]]  # `Store.per_query_scores` rows
# (system id, topic) -> (dataset revision, its scores over the topic's judged queries, in `query_ids` order)
Vectors = Mapping[tuple[str, str], tuple[str, np.ndarray]]


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
    vectors = {
        (str(sid), topic): (rev, aligned(per_query, query_ids(topic)))
        for sid, topic, name, rev, _value, per_query in rows
        if name == measure and topic in topics and per_query
    }
    return rank_vectors(vectors, ids, topics, revision=revision, resamples=resamples, seed=seed)


def aligned(per_query: Mapping[str, float], query_ids: Sequence[str]) -> np.ndarray:
    """A system's per-query scores over the topic's judged queries, in their order; a query it lacks counts 0."""
    return np.array([per_query.get(q, 0.0) for q in query_ids], dtype=np.float64)


def rank_vectors(
    vectors: Vectors,
    ids: Sequence[str],
    topics: Sequence[str],
    *,
    revision: str | None = None,
    resamples: int = RANK_RESAMPLES,
    seed: int = SEED,
) -> dict[str, RankInterval]:
    """`rank_table` on per-query vectors: the systems of `ids` with a vector of the served `revision` on every
    topic of the scope are ranked; one systems x queries matrix per topic."""

    def usable(key: str, topic: str) -> bool:
        found = vectors.get((key, topic))
        return found is not None and revision in (None, found[0])

    ranked = [key for key in ids if all(usable(key, topic) for topic in topics)]
    if not ranked:
        return {}
    matrices = {topic: np.vstack([vectors[key, topic][1] for key in ranked]) for topic in topics}
    intervals = rank_intervals(matrices, resamples=resamples, seed=seed)
    return dict(zip(ranked, intervals, strict=True))


class PerQueryVectors:
    """One measure's stored per-query scores as vectors (`Vectors`), kept between reads: a row is decoded again
    only when its stored text or revision changed, so a new submission costs its own rows, not the board's."""

    def __init__(self, query_ids: Callable[[str], Sequence[str]], topics: Sequence[str]) -> None:
        self.query_ids, self.topics = query_ids, set(topics)
        self._known: dict[tuple[str, str], tuple[str | None, str, np.ndarray | None]] = {}

    def update(self, rows: Iterable[tuple[int, str, str, str | None]]) -> dict[tuple[str, str], tuple[str, np.ndarray]]:
        """The vectors of `rows` (`Store.per_query_texts`): rows without per-query scores, or of a topic the
        dataset does not serve, have none."""
        known: dict[tuple[str, str], tuple[str | None, str, np.ndarray | None]] = {}
        for sid, topic, revision, text in rows:
            key = (str(sid), topic)
            before = self._known.get(key)
            if before is not None and before[0] == text and before[1] == revision:
                known[key] = before
            else:
                known[key] = (text, revision, self._vector(topic, text))
        self._known = known
        return {key: (rev, vector) for key, (_, rev, vector) in known.items() if vector is not None}

    def _vector(self, topic: str, text: str | None) -> np.ndarray | None:
        per_query = json.loads(text) if text and topic in self.topics else None
        return aligned(per_query, self.query_ids(topic)) if per_query else None


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
        self._vectors: dict[str, Vectors] = {}  # measure -> its vectors at `_marker`
        self._decoded: dict[str, PerQueryVectors] = {}  # measure -> its decoded rows, kept across markers
        self._order: dict[str, list[str]] = {}  # topic -> its judged queries, sorted

    def intervals(self, sort: str) -> dict[str, RankInterval]:
        """{system id: rank interval} for the column `sort`; empty for a column that is not a measure."""
        found = scope_of(sort, self.dataset.topics)
        if found is None:
            return {}
        topics, measure = found
        # Read before the rows (a write in between forces a recompute), and before the lock, so that renders
        # asking at once share one read of it (`StoreFrame.frame` says why).
        marker = self.store.change_marker()
        with self._lock:
            if marker != self._marker:
                self._marker, self._cache, self._vectors = marker, {}, {}
            if sort not in self._cache:
                frame = self.board.frame()
                ids = frame.loc[frame[sort].notna(), "id"].tolist() if sort in frame.columns else []
                if measure.id not in self._vectors:
                    decoded = self._decoded.setdefault(
                        measure.id, PerQueryVectors(self._query_ids, self.dataset.topics)
                    )
                    self._vectors[measure.id] = decoded.update(self.store.per_query_texts(measure.id))
                self._cache[sort] = rank_vectors(
                    self._vectors[measure.id],
                    ids,
                    topics,
                    revision=self.dataset.revision,
                    resamples=self.resamples,
                    seed=self.seed,
                )
            return self._cache[sort]

    def cells(self, sort: str) -> dict[str, str]:
        """{system id: '3 (2–5)', '≈1' appended when tied with the leader}: the column's shown text."""
        return {key: interval.text() for key, interval in self.intervals(sort).items()}

    def _query_ids(self, topic: str) -> list[str]:
        """The topic's judged queries, in a fixed order: the columns of every system's matrix."""
        if topic not in self._order:
            self._order[topic] = sorted(self.dataset.qrels(topic).query_ids)
        return self._order[topic]
