"""The one run type and the conversions into it; the tie rule every ranked view of a run follows.

A run is `{query id: {doc id: score}}` (`Run`), the form trec_eval, ir_measures and the official evaluator
read, and the form our evaluator, run files and the leaderboard archive use. Retrievers produce ranked lists
(`RankedList`, best first) because that is what a top-k search yields; fusion also accepts bare id lists,
the column form of the `T-bm25` candidate configs. Everything that scores, stores or writes a run converts
to `Run` through one of the functions below, so no module keeps a private notion of "a run".

Order (`top_docs`): score descending, then doc id descending, trec_eval's rule; a run file, the evaluator and
the archive therefore agree on which documents make a run's top k even when scores tie.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import numpy as np

Run: TypeAlias = Mapping[str, Mapping[str, float]]  # query id -> doc id -> score
RankedList: TypeAlias = list[tuple[str, float]]  # one query's (doc id, score), best first
# What fusion and reranking accept for one query: a ranked list, a {doc: score} mapping, or ids in rank order.
Ranking: TypeAlias = Sequence[tuple[str, float]] | Mapping[str, float] | Sequence[str]


def from_ranked(ranked: Mapping[str, Sequence[tuple[str, float]]]) -> dict[str, dict[str, float]]:
    """A run from ranked lists or fused results (query -> [(doc, score)]); a repeated doc keeps its best score."""
    run: dict[str, dict[str, float]] = {}
    for qid, pairs in ranked.items():
        scores: dict[str, float] = {}
        for doc, score in pairs:
            value = float(score)
            if doc not in scores or value > scores[doc]:
                scores[doc] = value
        run[qid] = scores
    return run


def from_ids(ids: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """A run from ids in rank order (candidate lists): scores n, n-1, ..., 1 keep that order under `top_docs`."""
    run: dict[str, dict[str, float]] = {}
    for qid, docs in ids.items():
        unique = list(dict.fromkeys(docs))
        run[qid] = {doc: float(len(unique) - rank) for rank, doc in enumerate(unique)}
    return run


def top_docs(scores: Mapping[str, float], k: int) -> list[str]:
    """The k best doc ids of one query under the tie rule (score descending, then doc id descending)."""
    n = len(scores)
    if n == 0 or k <= 0:
        return []
    ids = list(scores)
    values = finite(np.fromiter(scores.values(), dtype=np.float64, count=n))
    if n > k:
        threshold = np.partition(values, n - k)[n - k]
        keep = np.flatnonzero(values >= threshold)  # every doc tied at the threshold competes on its id
        pairs = zip(values[keep].tolist(), [ids[i] for i in keep.tolist()], strict=True)
    else:
        pairs = zip(values.tolist(), ids, strict=True)
    return [doc_id for _, doc_id in sorted(pairs, reverse=True)[:k]]


def cut(run: Run, depth: int, queries: Sequence[str] | set[str] | frozenset[str] | None = None) -> dict:
    """The top `depth` of each query (of `queries`, when given) as a run: what an archive keeps."""
    wanted = run.keys() if queries is None else [q for q in run if q in queries]
    return {q: {d: float(run[q][d]) for d in top_docs(run[q], depth)} for q in wanted}


def finite(values: np.ndarray) -> np.ndarray:
    """`values` unchanged, or an error: NaN and infinity have no place in a ranking."""
    if not np.isfinite(values).all():
        raise ValueError("run scores must be finite numbers (found NaN or infinity)")
    return values
