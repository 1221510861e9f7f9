"""The scoring entry point: a run over several topics with intervals, two runs compared, both as JSON.

The CLI and the leaderboard worker need the same thing: per-topic means, per-query values, 95% intervals
for the headline measures, the all-topics average and, for two runs, paired differences with p-values. It is
built here once, from plain qrels and runs, so neither front end computes a number itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics.engine import evaluate
from freshstack_hf.metrics.measures import HEADLINE, Measure, parse_measures
from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.metrics.score_table import AVERAGE, ScoreTable, compare_tables, tabulate
from freshstack_hf.metrics.uncertainty import PairedTest
from freshstack_hf.runs.run import Run


@dataclass(frozen=True, slots=True)
class RunScores(ScoreTable):
    """One run on several topics (a `ScoreTable`: per-topic results, intervals, the average).

    `missing` counts, per topic, the judged queries the run has no ranking for (they score 0); front ends
    warn with it, since a run covering few judged queries scores low for a reason that is not retrieval.
    """

    missing: dict[str, int] = field(default_factory=dict)
    """topic -> how many of its judged queries the run has no ranking for (each scores 0)."""


def score_topics(
    qrels: Mapping[str, NuggetQrels],
    runs: Mapping[str, Run],
    measures: Iterable[str | Measure] = HEADLINE,
    *,
    interval_measures: Iterable[str | Measure] = HEADLINE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> RunScores:
    """The scoring path every front end takes: each topic's run against its qrels, intervals, the average.

    `runs` maps topic -> run (a run may hold other topics' queries; they are ignored). Measures carry their
    parameters (`alpha_ndcg(alpha=0.3)@10`). The CLI, the leaderboard (runs and baselines), the worker (runs
    and models) and the MTEB task all score through here, so they cannot disagree on a number.
    """
    unknown = sorted(set(runs) - set(qrels))
    if unknown:
        raise ValueError(f"runs for topics without qrels: {unknown}")
    wanted = parse_measures([*parse_measures(measures), *parse_measures(interval_measures)])
    with_ci = [m.id for m in parse_measures(interval_measures)]
    topics = {name: evaluate(qrels[name], run, wanted) for name, run in runs.items()}
    missing = {name: sum(1 for q in qrels[name].query_ids if not runs[name].get(q)) for name in runs}
    intervals, average = tabulate(topics, with_ci, resamples=resamples, seed=seed)
    return RunScores(topics, intervals, average, missing)


def score_run(
    qrels: Mapping[str, NuggetQrels],
    run: Run,
    measures: Iterable[str | Measure] = HEADLINE,
    *,
    interval_measures: Iterable[str | Measure] = HEADLINE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> RunScores:
    """`score_topics` with one run (all topics' queries in one file) scored on every topic of `qrels`."""
    return score_topics(
        qrels,
        {name: run for name in qrels},
        measures,
        interval_measures=interval_measures,
        resamples=resamples,
        seed=seed,
    )


def compare_runs(
    a: RunScores,
    b: RunScores,
    measures: Iterable[str | Measure] = HEADLINE,
    *,
    method: str = "randomization",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, dict[str, PairedTest]]:
    """Paired tests of B vs A per topic and on the all-topics average (stratified by topic)."""
    ids = [m.id for m in parse_measures(measures)]
    return compare_tables(a, b, ids, method=method, resamples=resamples, seed=seed)


def scores_json(scores: RunScores) -> dict:
    """`{"topics": {T: {"metrics", "ci95", "per_query"}}, "average": {"metrics", "ci95"}}`, full precision."""
    topics = {
        name: {
            "metrics": row["metrics"],
            "ci95": {m: list(iv) for m, iv in row["ci"].items()},
            "per_query": row["per_query"],
        }
        for name, row in scores.stored().items()
    }
    average_ci = {m: [i.low, i.high] for m, i in scores.intervals.get(AVERAGE, {}).items()}
    return {"topics": topics, "average": {"metrics": scores.average, "ci95": average_ci}}


def comparison_json(tests: Mapping[str, Mapping[str, PairedTest]]) -> dict:
    """Paired tests (runs' or answer files') as `{"topics": {T: {m: {"diff", "ci95", "p_value"}}}, "average"}`."""
    rows = {
        scope: {m: {"diff": t.diff, "ci95": [t.low, t.high], "p_value": t.p_value} for m, t in by_measure.items()}
        for scope, by_measure in tests.items()
    }
    return {"topics": {k: v for k, v in rows.items() if k != AVERAGE}, "average": rows.get(AVERAGE, {})}
