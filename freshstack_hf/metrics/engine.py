"""Scores a run against nugget judgments at any cutoff, with every family `measures.FAMILIES` holds (alpha-nDCG,
Coverage, Recall, nDCG and Judged built in).

Semantics follow the official `freshstack` evaluator (pyndeval for alpha-nDCG, pytrec_eval for Recall and nDCG,
its Python loop for Coverage) and are checked against it in `tests/test_metrics_parity.py`:

* the queries of a topic are those with at least one nugget; every per-topic value is the mean over all of
  them, a query absent from the run (or with no positive judgment) scoring 0 on every measure;
* documents a query has no judgment for gain nothing; runs shorter than k are scored as they are;
* alpha-nDCG is not capped at k=20 (pyndeval is) and is never clipped: ndeval's greedy ideal can be beaten.

Tie rule (one for all measures): documents are ranked by score descending, then by doc id descending. This is
trec_eval's order, so Recall and nDCG agree with pytrec_eval even on tied runs; the official evaluator is not
consistent here (pyndeval breaks ties by ascending id, its Coverage by dict order), so parity is only
meaningful on tie-free runs.

Where the official evaluator crashes, this one scores 0: a query with an empty ranking, or a run query whose
nuggets have no judgment rows at all, raise KeyError in its alpha-nDCG (pyndeval returns nothing for them).

Reading the run (`ranking.ranked_rows`) is the only per-document work; every measure is then array arithmetic
over all queries at once (each family's `compute`, in `measures.py`), which is what makes a 1,000-doc run of
several hundred queries score in about as many milliseconds as the official evaluator needs tenths of a second.

Per nugget, `nugget_report` says which facts of the answers no run covers in its top k, and which no judged document
supports at all: a hard nugget (supported, but every system misses it) is told apart from an unsupported one (no
run can ever cover it, and it only lowers every score).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from freshstack_hf.metrics.measures import FAMILIES, HEADLINE, Measure, RankedJudgments, parse_measures
from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.metrics.ranking import ranked_rows
from freshstack_hf.runs.run import Run


class RunCoverageWarning(UserWarning):
    """A run that ranks none of a topic's judged queries: a zero that says nothing about retrieval."""


DEFAULT_ALPHA = dict(FAMILIES["alpha_ndcg"].defaults)["alpha"]  # ndeval's; a measure may carry another


@dataclass(frozen=True, slots=True)
class TopicResult:
    """Scores of one system on one topic: per query (for a run, every judged query) and their means."""

    per_query: dict[str, dict[str, float]]
    """query id -> {measure id: value}: each judged query's scores, the input of intervals and paired tests."""
    metrics: dict[str, float]
    """measure id (`alpha_ndcg@10`, ...) -> the mean over the topic's judged queries: the topic's score."""

    def column(self, measure: str | Measure) -> np.ndarray:
        """One measure's per-query values in query order, the input of the bootstrap and paired tests (queries
        without a value of it, such as an answer's Vital where no nugget is vital, are left out)."""
        key = measure.id if isinstance(measure, Measure) else measure
        return np.array([s[key] for s in self.per_query.values() if key in s], dtype=np.float64)


def evaluate(
    qrels: NuggetQrels,
    run: Run,
    measures: Iterable[str | Measure] | str = HEADLINE,
) -> TopicResult:
    """Score `run` ({query id: {doc id: score}}) on one topic. Run queries unknown to `qrels` are ignored.

    Parameters travel with the measures (`alpha_ndcg(alpha=0.3)@10`), not as arguments, so a result can never
    be stored without the alpha that made it.
    """
    wanted = parse_measures(measures)
    if not wanted:
        raise ValueError("no measures to compute")
    if len(qrels) and not any(qid in run for qid in qrels.query_ids):
        warnings.warn(
            f"the run ranks none of the topic's {len(qrels)} judged queries (e.g. {qrels.query_ids[0]!r}), so every "
            "query scores 0: check that the run's query ids are this topic's",
            RunCoverageWarning,
            stacklevel=2,
        )
    depth = max(m.k for m in wanted)
    supporting_only = not any(FAMILIES[m.family].reads_judged_rows for m in wanted)
    rows = ranked_rows(qrels, run, depth, supporting_only=supporting_only)
    columns = _score(qrels, rows, wanted)
    ids = [m.id for m in wanted]
    values = zip(*(columns[m].tolist() for m in wanted), strict=True)  # tolist: no numpy scalars per cell
    per_query = {qid: dict(zip(ids, row, strict=True)) for qid, row in zip(qrels.query_ids, values, strict=True)}
    metrics = {m.id: float(columns[m].mean()) if len(qrels) else 0.0 for m in wanted}
    return TopicResult(per_query=per_query, metrics=metrics)


def _score(qrels: NuggetQrels, rows: np.ndarray, wanted: tuple[Measure, ...]) -> dict[Measure, np.ndarray]:
    """Per-query values of each measure from the ranked rows: each family (with each set of parameters asked) is
    computed once, to its deepest cutoff, by its own `Family.compute`."""
    ranked = RankedJudgments(qrels, rows, qrels.matrix[rows])  # queries x depth x nugget slots
    deepest: dict[tuple[str, tuple], int] = {}
    for m in wanted:
        deepest[m.family, m.params] = max(m.k, deepest.get((m.family, m.params), 0))
    cum = {  # (family, params) -> queries x depth, cutoff k in column k-1
        (family, params): FAMILIES[family].compute(ranked.head(depth), dict(params))
        for (family, params), depth in deepest.items()
    }
    return {m: cum[m.family, m.params][:, m.k - 1] for m in wanted}


def covered_nuggets(qrels: NuggetQrels, run: Run, k: int) -> dict[str, set[str]]:
    """query id -> the nugget ids supported by at least one of the run's top-k docs."""
    hit = qrels.matrix[ranked_rows(qrels, run, k, supporting_only=True)].any(axis=1)
    return {
        qid: {n for slot, n in enumerate(nuggets) if hit[i, slot]}
        for i, (qid, nuggets) in enumerate(qrels.query_nuggets.items())
    }


@dataclass(frozen=True, slots=True)
class NuggetCoverage:
    """One nugget: does any judged doc support it, and which of the given runs cover it in their top k."""

    query_id: str
    nugget_id: str
    supported: bool
    covered_by: tuple[str, ...]


def nugget_report(qrels: NuggetQrels, runs: Mapping[str, Run], k: int = 20) -> list[NuggetCoverage]:
    """Every nugget of the topic with the names of the runs whose top k supports it."""
    hits = {name: covered_nuggets(qrels, run, k) for name, run in runs.items()}
    supported = np.zeros((len(qrels), qrels.matrix.shape[1]), dtype=bool)
    np.logical_or.at(supported, qrels.row_query, qrels.matrix[:-1])
    return [
        NuggetCoverage(
            query_id=qid,
            nugget_id=nugget_id,
            supported=bool(supported[i, slot]),
            covered_by=tuple(name for name, covered in hits.items() if nugget_id in covered[qid]),
        )
        for i, (qid, nuggets) in enumerate(qrels.query_nuggets.items())
        for slot, nugget_id in enumerate(nuggets)
    ]


def uncovered_nuggets(qrels: NuggetQrels, runs: Mapping[str, Run], k: int = 20) -> list[NuggetCoverage]:
    """The nuggets none of the runs covers in its top k (unsupported ones included, flagged)."""
    return [row for row in nugget_report(qrels, runs, k) if not row.covered_by]


def topic_average(values: Mapping[str, float], topics: Iterable[str] | None = None) -> float | None:
    """The all-topics score, defined here only: the plain mean of topic values, each topic weighing the same
    whatever its size. Over `topics` when given, and None when any of them has no value: an average over
    fewer topics would not be comparable with one over all of them.
    """
    names = list(values) if topics is None else list(topics)
    found = [values.get(t) for t in names]
    if not names or any(v is None or v != v for v in found):  # v != v: NaN
        return None
    return float(np.mean(np.asarray(found, dtype=np.float64)))


def topic_averages(values: np.ndarray) -> np.ndarray:
    """`topic_average` of each row of a systems x topics matrix at once (NaN where a topic's value is missing).

    The same rule, vectorised for a leaderboard of thousands of rows: a row with any NaN has no average.
    """
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        return np.full(matrix.shape[0] if matrix.ndim else 0, np.nan)
    return matrix.mean(axis=1)  # NaN propagates: one missing topic, no average


def average_topics(results: Mapping[str, TopicResult] | Iterable[TopicResult]) -> dict[str, float]:
    """`topic_average` of every measure the results share (topic means of several `TopicResult`s)."""
    items = list(results.values()) if isinstance(results, Mapping) else list(results)
    if not items:
        return {}
    shared = [m for m in items[0].metrics if all(m in r.metrics for r in items)]
    by_topic = {m: {str(i): r.metrics[m] for i, r in enumerate(items)} for m in shared}
    return {m: value for m in shared if (value := topic_average(by_topic[m])) is not None}
