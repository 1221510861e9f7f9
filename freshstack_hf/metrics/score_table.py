"""One system's per-query scores on several topics, and everything reported from them, for runs and answers alike.

Each track computes its own per-query values and topic means (runs: the engine's nugget measures; generated
answers: citation and nugget-assignment scores) as `TopicResult`s; from there one table gives the 95% bootstrap
intervals, the all-topics average (`topic_average`: the plain mean of topic means, absent when a topic lacks the
measure) with its interval stratified by topic, the paired comparison of two tables, and the stored form of a
leaderboard result row. So the CLI's `evaluate`, `evaluate-answers`, the worker and the leaderboard cannot
disagree on how an interval or an average is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics.engine import TopicResult, average_topics
from freshstack_hf.metrics.uncertainty import Interval, PairedTest, bootstrap_cis, paired_test

AVERAGE = "average"  # the scope of the all-topics values, beside the topic names


@dataclass(frozen=True, slots=True)
class ScoreTable:
    """Per topic its per-query values and means; intervals per scope (topic name or `AVERAGE`) and measure."""

    topics: dict[str, TopicResult]
    """topic -> its `TopicResult` (per-query values and means)."""
    intervals: dict[str, dict[str, Interval]]
    """scope (a topic, or `AVERAGE`) -> measure id -> its 95% bootstrap interval."""
    average: dict[str, float]
    """measure id -> the plain mean of the topics' means (each topic weighs the same)."""

    def stored(self, measures: Iterable[str] | None = None, key: Callable[[str], str] = str) -> dict[str, Any]:
        """Per topic {"metrics", "per_query", "ci": {measure: (low, high)}}, what a leaderboard result row holds:
        every measure or only `measures`, each id written as `key(id)`; a topic with none of them is left out."""
        keep = None if measures is None else set(measures)
        out: dict[str, Any] = {}
        for name, result in self.topics.items():
            ids = [m for m in result.metrics if keep is None or m in keep]
            if not ids:
                continue
            ci = self.intervals.get(name, {})
            out[name] = {
                "metrics": {key(m): result.metrics[m] for m in ids},
                "per_query": {q: {key(m): v for m, v in s.items() if m in ids} for q, s in result.per_query.items()},
                "ci": {key(m): (iv.low, iv.high) for m, iv in ci.items() if m in ids},
            }
        return out


def tabulate(
    topics: Mapping[str, TopicResult],
    interval_measures: Iterable[str] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[dict[str, dict[str, Interval]], dict[str, float]]:
    """The intervals (of `interval_measures`, default every measure a topic has; none with `resamples=0`) and
    the all-topics average of `topics`: what a `ScoreTable` adds to per-topic results."""
    wanted = None if interval_measures is None else list(interval_measures)
    average = average_topics(topics)
    ids = [m for m in (average if wanted is None else wanted) if m in average]
    intervals: dict[str, dict[str, Interval]] = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        stratified = None
        if resamples > 0 and ids and all(r.per_query for r in topics.values()):
            # The all-topics intervals draw as many samples as every topic's together, from their own generator:
            # drawn on a second thread (NumPy draws, gathers and sums without the GIL), they cost no wall time.
            columns = {m: [r.column(m) for r in topics.values()] for m in ids}
            stratified = pool.submit(bootstrap_cis, columns, resamples=resamples, seed=seed)
        if resamples > 0:
            for name, result in topics.items():
                measures = [m for m in (result.metrics if wanted is None else wanted) if m in result.metrics]
                if result.per_query and measures:
                    columns = {m: result.column(m) for m in measures}
                    intervals[name] = bootstrap_cis(columns, resamples=resamples, seed=seed)
        if stratified is not None:
            intervals[AVERAGE] = stratified.result()
    return intervals, average


def compare_tables(
    a: ScoreTable,
    b: ScoreTable,
    measures: Iterable[str] | None = None,
    *,
    method: str = "randomization",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, dict[str, PairedTest]]:
    """Paired tests of B vs A per topic and on the all-topics average (stratified by topic), on the queries both
    have a value for; `measures` default to those both tables have."""
    wanted = None if measures is None else list(measures)
    names = [t for t in a.topics if t in b.topics and a.topics[t].per_query]
    out: dict[str, dict[str, PairedTest]] = {}
    for t in names:
        ta, tb = a.topics[t], b.topics[t]
        ids = wanted if wanted is not None else [m for m in ta.metrics if m in tb.metrics]
        out[t] = {m: paired_test(*_aligned(ta, tb, m), method=method, resamples=resamples, seed=seed) for m in ids}
    ids = wanted if wanted is not None else [m for m in a.average if m in b.average]
    if names and ids:
        pairs = {m: [_aligned(a.topics[t], b.topics[t], m) for t in names] for m in ids}
        out[AVERAGE] = {
            m: paired_test([p[0] for p in ps], [p[1] for p in ps], method=method, resamples=resamples, seed=seed)
            for m, ps in pairs.items()
        }
    return out


def _aligned(a: TopicResult, b: TopicResult, measure: str) -> tuple[list[float], list[float]]:
    """Both results' values of `measure` on the queries both have it for, in A's query order."""
    qids = [q for q, s in a.per_query.items() if measure in s and measure in b.per_query.get(q, {})]
    return [a.per_query[q][measure] for q in qids], [b.per_query[q][measure] for q in qids]
