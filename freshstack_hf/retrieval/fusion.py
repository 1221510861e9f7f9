"""Fusing ranked lists: reciprocal rank fusion, the paper's min-max score fusion, and the positive safeguard.

Every ordering here is deterministic: input lists with scores are re-sorted by (score desc, doc id asc), and
fused lists break ties by doc id, so the same runs always give the same candidates whatever dict order or
thread produced them. A run is `{query_id: ranking}` where a ranking is a list of `(doc_id, score)`, a
`{doc_id: score}` mapping, or a bare list of doc ids already in rank order (the `T-bm25` column form).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.run import RankedList, Ranking

RankingsByQuery = Mapping[str, Ranking]  # fusion's input: one system's ranking of each query

RRF_K = 100
DEPTH = 100


def ranked(ranking: Ranking) -> list[tuple[str, float | None]]:
    """A ranking as (doc_id, score) best first, one entry per doc (its best), score None for bare id lists."""
    if isinstance(ranking, Mapping):
        items: list[tuple[str, float | None]] = sorted(ranking.items(), key=lambda d: (-d[1], d[0]))
    else:
        entries = list(ranking)
        if entries and isinstance(entries[0], str):
            items = [(doc, None) for doc in entries]
        else:
            items = sorted(((d, float(s)) for d, s in entries), key=lambda d: (-d[1], d[0]))
    seen: set[str] = set()
    unique = []
    for doc, score in items:
        if doc not in seen:
            seen.add(doc)
            unique.append((doc, score))
    return unique


def _sorted_fused(scores: Mapping[str, float], depth: int | None) -> list[tuple[str, float]]:
    items = sorted(scores.items(), key=lambda d: (-d[1], d[0]))
    return items if depth is None else items[:depth]


def _query_ids(runs: Sequence[RankingsByQuery]) -> list[str]:
    return sorted({qid for run in runs for qid in run})


def rrf(
    runs: Sequence[RankingsByQuery], rrf_k: int = RRF_K, depth: int | None = DEPTH, input_depth: int | None = None
) -> dict[str, RankedList]:
    """Reciprocal rank fusion: each doc scores sum(1 / (rrf_k + rank)) over the lists holding it (rank from 1).

    Sums use `math.fsum`, so a doc's score does not depend on the order of the runs. `input_depth` limits
    how far down each list is read (all of it by default); `depth` how many fused docs are kept.
    """
    fused: dict[str, RankedList] = {}
    for qid in _query_ids(runs):
        parts: dict[str, list[float]] = {}
        for run in runs:
            for rank, (doc, _) in enumerate(ranked(run.get(qid, ()))[:input_depth], start=1):
                parts.setdefault(doc, []).append(1.0 / (rrf_k + rank))
        fused[qid] = _sorted_fused({doc: math.fsum(p) for doc, p in parts.items()}, depth)
    return fused


def minmax_fusion(runs: Sequence[RankingsByQuery], depth: int = DEPTH, eps: float = 1e-8) -> dict[str, RankedList]:
    """The paper's fusion: per query and system, scores of the top `depth` min-max normalised, then summed.

    Normalisation is `(s - min) / (max - min + eps)` as in the official `freshstack.util.fusion`, so a
    system whose top scores are all equal adds 0. Unlike it, inputs are sorted by score first (the official
    code trusts dict order) and scores are not rounded to 3 decimals (rounding makes ties). Every fused doc
    is kept: at most `depth` per system.
    """
    fused: dict[str, RankedList] = {}
    for qid in _query_ids(runs):
        parts: dict[str, list[float]] = {}
        for run in runs:
            top = ranked(run.get(qid, ()))[:depth]
            if any(s is None for _, s in top):
                raise FreshStackError(
                    f"min-max fusion needs scores, but query {qid!r} has a bare list of doc ids: "
                    "pass (doc_id, score) pairs or use rrf"
                )
            if not top:
                continue
            lo, hi = min(s for _, s in top), max(s for _, s in top)  # type: ignore[type-var]
            for doc, s in top:
                parts.setdefault(doc, []).append((s - lo) / (hi - lo + eps))  # type: ignore[operator]
        fused[qid] = _sorted_fused({doc: math.fsum(p) for doc, p in parts.items()}, None)
    return fused


@dataclass
class Safeguarded:
    """Fused lists cut to `depth`, with the queries that got a positive appended (for the manifest)."""

    runs: dict[str, RankedList]
    safeguarded: dict[str, str] = field(default_factory=dict)  # query id -> appended doc id
    without_positives: list[str] = field(default_factory=list)  # queries with no positive doc to append

    @property
    def count(self) -> int:
        return len(self.safeguarded)


def pick_positive(positives: Iterable[str], inputs: Sequence[RankingsByQuery], qid: str) -> str:
    """The positive that the input systems rank best (lowest rank in any list, then doc id); failing
    that, the smallest positive doc id. A rerank stage then starts from the positive easiest to find.
    """
    pos = set(positives)
    best: tuple[int, str] | None = None
    for run in inputs:
        for rank, (doc, _) in enumerate(ranked(run.get(qid, ())), start=1):
            if doc in pos:
                best = min(best, (rank, doc)) if best else (rank, doc)
                break
    return best[1] if best else min(pos)


def apply_safeguard(
    fused: Mapping[str, Sequence[tuple[str, float]]],
    positives: Mapping[str, Iterable[str]],
    *,
    depth: int = DEPTH,
    inputs: Sequence[RankingsByQuery] = (),
) -> Safeguarded:
    """Keep the top `depth` of each list; where none of them is a positive, append one at rank depth + 1.

    The appended doc is chosen by `pick_positive` from `inputs` (the runs that were fused) and scored one
    below the last kept score, so tools that re-sort a run by score keep it last. Queries with positives
    but no fused list get a list holding just that doc. Nothing is appended where a query has no positive.
    """
    result = Safeguarded(runs={})
    for qid in sorted(set(fused) | set(positives)):
        kept = list(fused.get(qid, ()))[:depth]
        pos = set(positives.get(qid, ()))
        if pos and not any(doc in pos for doc, _ in kept):
            doc = pick_positive(pos, inputs, qid)
            kept.append((doc, (kept[-1][1] if kept else 1.0) - 1.0))
            result.safeguarded[qid] = doc
        elif not pos and qid in positives:
            result.without_positives.append(qid)
        if qid in fused or kept:
            result.runs[qid] = kept
    return result
