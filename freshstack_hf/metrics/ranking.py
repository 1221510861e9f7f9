"""Turns a run into ranked judgment rows: for each query and rank, which judged doc (if any) sits there.

This is the only part of scoring that must touch every retrieved document, so it is written to do so once,
in bulk: all scores are read into one array, each query's top-k threshold comes from one `np.partition`, and
only the query's judged docs (a few dozen) are looked up by id. Their rank is the number of top-k scores
above theirs. That shortcut needs unique scores near the top, so a query with tied scores there is ranked
by `top_docs`, which applies the tie rule (score descending, then doc id descending) exactly.

With `supporting_only`, only the docs that support a nugget are looked up (a third of the judged docs in
FreshStack's judgments): a judged doc that supports nothing then reads as unjudged, which changes nothing for a
measure computed from support alone (every built-in one but Judged@k), and those lookups are a quarter of a cold
evaluation.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from itertools import chain, repeat
from struct import pack_into

import numpy as np

from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.runs.run import Run, top_docs
from freshstack_hf.runs.run import finite as _finite

_NAN = float("nan")


def ranked_rows(qrels: NuggetQrels, run: Run, depth: int, *, supporting_only: bool = False) -> np.ndarray:
    """queries x depth matrix of `qrels.matrix` rows; unjudged docs (with `supporting_only`, docs supporting no
    nugget too) and ranks past a run's end -> empty row."""
    lookups = qrels.row_lookups(supporting_only)
    out = np.full((len(qrels), depth), qrels.unjudged_row, dtype=np.int64)
    present = [(i, scores) for i, qid in enumerate(qrels.query_ids) if (scores := run.get(qid))]
    if not present or depth <= 0:
        return out
    lengths = np.fromiter((len(s) for _, s in present), dtype=np.int64, count=len(present))
    total, width = int(lengths.sum()), int(lengths.max())
    if len(present) * width > 4 * total + 1_000_000:  # very uneven run lengths: padding would cost more
        for i, scores in present:
            _rank_exactly(lookups[i], qrels.unjudged_row, i, scores, out)
        return out
    values, judged = _read_scores(lookups, present, total)
    grid = _pad(values, lengths, width)
    k = min(depth, width)
    top = np.sort(np.partition(grid, width - k, axis=1)[:, width - k :], axis=1)[:, ::-1]  # descending
    threshold = top[:, -1]
    tied = ((top[:, 1:] == top[:, :-1]) & np.isfinite(top[:, 1:])).any(axis=1)
    tied |= (lengths > k) & ((grid >= threshold[:, None]).sum(axis=1) > k)

    counts = np.array([len(lookups[i]) for i, _ in present], dtype=np.int64)
    owner = np.repeat(np.arange(len(present)), counts)  # position in `present` of each judged entry
    rows = np.fromiter(chain.from_iterable(lookups[i].values() for i, _ in present), dtype=np.int64, count=len(judged))
    inside = (judged >= threshold[owner]) & ~tied[owner]  # NaN (doc not retrieved) compares False
    owner, rows, judged = owner[inside], rows[inside], judged[inside]
    ranks = (top[owner] > judged[:, None]).sum(axis=1)
    query_index = np.fromiter((i for i, _ in present), dtype=np.int64, count=len(present))
    out[query_index[owner], ranks] = rows
    for p in np.flatnonzero(tied).tolist():
        _rank_exactly(lookups[present[p][0]], qrels.unjudged_row, present[p][0], present[p][1], out)
    return out


def _read_scores(
    lookups: list[dict[str, int]], present: list[tuple[int, Mapping[str, float]]], total: int
) -> tuple[np.ndarray, np.ndarray]:
    """All run scores (one flat array) and the scores of each query's judged docs (NaN where not retrieved).

    Both are read in one pass per query while its dict is in cache; `struct.pack_into` converts a query's
    scores to doubles about a quarter faster than `np.fromiter`, and this loop is most of a cold evaluation.
    """
    buffer = bytearray(8 * total)
    judged: list[float] = []
    offset = 0
    for i, scores in present:
        n = len(scores)
        try:
            pack_into(f"{n}d", buffer, offset, *scores.values())
        except struct.error as exc:
            raise ValueError(f"run scores must be numbers ({exc})") from None
        offset += 8 * n
        judged.extend(map(scores.get, lookups[i], repeat(_NAN)))
    return _finite(np.frombuffer(buffer, dtype=np.float64)), np.array(judged, dtype=np.float64)


def _pad(values: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """One row per query, short rows padded with -inf (which never outranks a real score)."""
    if (lengths == width).all():
        return values.reshape(len(lengths), width)
    grid = np.full((len(lengths), width), -np.inf)
    starts = np.cumsum(lengths) - lengths
    flat = np.arange(len(values)) + np.repeat(np.arange(len(lengths)) * width - starts, lengths)
    grid.ravel()[flat] = values
    return grid


def _rank_exactly(
    lookup: dict[str, int], unjudged: int, index: int, scores: Mapping[str, float], out: np.ndarray
) -> None:
    """The slow, exact path for one query: full tie rule on doc ids."""
    top = top_docs(scores, out.shape[1])
    out[index, : len(top)] = [lookup.get(d, unjudged) for d in top]
