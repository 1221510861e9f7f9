"""Scoring a run over several topics with intervals, comparing two runs, and rendering both.

The CLI and the leaderboard worker need the same thing: per-topic means, per-query values, 95% intervals
for the headline measures, the all-topics average and, for two runs, paired differences with p-values. It is
built here once, from plain qrels and runs, so neither front end computes a number itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from freshstack_hf.metrics.engine import DEFAULT_ALPHA, TopicResult, average_topics, evaluate
from freshstack_hf.metrics.measures import HEADLINE, Measure, parse_measures
from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.metrics.ranking import Run
from freshstack_hf.metrics.stats import DEFAULT_RESAMPLES, Interval, PairedTest, bootstrap_ci, paired_test

AVERAGE = "average"


@dataclass(frozen=True, slots=True)
class RunScores:
    """One run on several topics: results per topic, intervals of the headline measures, the average."""

    topics: dict[str, TopicResult]
    intervals: dict[str, dict[str, Interval]]  # topic name or AVERAGE -> measure id -> interval
    average: dict[str, float]


def score_run(
    qrels: Mapping[str, NuggetQrels],
    run: Run,
    measures: Iterable[str | Measure] = HEADLINE,
    *,
    interval_measures: Iterable[str | Measure] = HEADLINE,
    alpha: float = DEFAULT_ALPHA,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> RunScores:
    """Evaluate `run` on every topic of `qrels` (topic name -> qrels) and bootstrap the headline measures."""
    wanted = parse_measures([*parse_measures(measures), *parse_measures(interval_measures)])
    with_ci = [m.id for m in parse_measures(interval_measures)]
    topics = {name: evaluate(q, run, wanted, alpha=alpha) for name, q in qrels.items()}
    intervals: dict[str, dict[str, Interval]] = {
        name: {m: bootstrap_ci(r.column(m), resamples=resamples, seed=seed) for m in with_ci}
        for name, r in topics.items()
        if r.per_query
    }
    if topics and all(r.per_query for r in topics.values()):
        intervals[AVERAGE] = {
            m: bootstrap_ci([r.column(m) for r in topics.values()], resamples=resamples, seed=seed) for m in with_ci
        }
    return RunScores(topics, intervals, average_topics(topics))


def compare_runs(
    a: RunScores,
    b: RunScores,
    measures: Iterable[str | Measure] = HEADLINE,
    *,
    method: str = "randomization",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, dict[str, PairedTest]]:
    """Paired tests of B vs A per topic and on the all-topics average (stratified by topic)."""
    ids = [m.id for m in parse_measures(measures)]
    names = [t for t in a.topics if t in b.topics and a.topics[t].per_query]
    out = {
        t: {
            m: paired_test(a.topics[t].column(m), b.topics[t].column(m), method=method, resamples=resamples, seed=seed)
            for m in ids
        }
        for t in names
    }
    if names:
        out[AVERAGE] = {
            m: paired_test(
                [a.topics[t].column(m) for t in names],
                [b.topics[t].column(m) for t in names],
                method=method,
                resamples=resamples,
                seed=seed,
            )
            for m in ids
        }
    return out


def scores_json(scores: RunScores) -> dict:
    """`{"topics": {T: {"metrics", "ci95", "per_query"}}, "average": {"metrics", "ci95"}}`, full precision."""
    topics = {
        name: {
            "metrics": result.metrics,
            "ci95": {m: [i.low, i.high] for m, i in scores.intervals.get(name, {}).items()},
            "per_query": result.per_query,
        }
        for name, result in scores.topics.items()
    }
    average_ci = {m: [i.low, i.high] for m, i in scores.intervals.get(AVERAGE, {}).items()}
    return {"topics": topics, "average": {"metrics": scores.average, "ci95": average_ci}}


def comparison_json(tests: Mapping[str, Mapping[str, PairedTest]]) -> dict:
    rows = {
        scope: {m: {"diff": t.diff, "ci95": [t.low, t.high], "p_value": t.p_value} for m, t in by_measure.items()}
        for scope, by_measure in tests.items()
    }
    return {"topics": {k: v for k, v in rows.items() if k != AVERAGE}, "average": rows.get(AVERAGE, {})}
