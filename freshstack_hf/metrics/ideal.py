"""Ideal rankings, the denominators of nDCG and alpha-nDCG, for all queries of a topic at once.

nDCG's ideal is the judged docs sorted by gain (trec_eval). alpha-nDCG's is ndeval's greedy ranking: at each
rank, the doc with the largest marginal gain given the nuggets already covered, ties to the lexicographically
larger doc id. Greedy is what ndeval (and so the official evaluator) divides by; it is not the true optimum,
so a run can score above 1, and that value is reported as is.

Both are computed for every query in one array pass per rank rather than one Python loop per query, since a
cold evaluation (a new topic, or the first run of a leaderboard) pays for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from freshstack_hf.metrics.qrels import NuggetQrels


def discounts(depth: int) -> np.ndarray:
    """`1 / log2(rank + 1)` for ranks 1..depth, the discount ndeval and trec_eval share."""
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


def ndcg_ideal(qrels: NuggetQrels, depth: int) -> np.ndarray:
    """Cumulative ideal DCG (queries x depth) with gain = number of nuggets a judged doc supports."""
    gains = qrels.matrix[:-1].sum(axis=1)
    owner = qrels.row_query
    order = np.lexsort((-gains, owner))  # by query, best gain first
    owner, gains = owner[order], gains[order]
    position = np.arange(len(order)) - qrels.row_starts[owner]
    keep = position < depth
    out = np.zeros((len(qrels), depth))
    out[owner[keep], position[keep]] = gains[keep]
    return np.cumsum(out * discounts(depth), axis=1)


def alpha_ideal(qrels: NuggetQrels, alpha: float, depth: int) -> np.ndarray:
    """Cumulative ideal alpha-DCG (queries x depth) of ndeval's greedy ranking."""
    positives = qrels.positive_rows()
    most = max((len(rows) for rows in positives), default=0)
    n_q, width = len(qrels), qrels.matrix.shape[1]
    # Candidates padded to `most` per query, in doc id descending order: argmax's first hit is the larger id.
    sizes = np.array([len(rows) for rows in positives], dtype=np.int64)
    owner = np.repeat(np.arange(n_q), sizes)
    slot = np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cand = np.zeros((n_q, max(most, 1), width))
    cand[owner, slot] = qrels.matrix[np.array([row for rows in positives for row in rows], dtype=np.int64)]
    weights = (1.0 - alpha) ** np.arange(depth + 1, dtype=np.float64)
    seen = np.zeros((n_q, width, 1), dtype=np.int64)  # times each nugget is covered by the ideal so far
    penalty = np.zeros(cand.shape[:2])  # inf once a doc is taken, so it is never picked again
    gains = np.zeros((n_q, depth))
    flat, base = cand.reshape(-1, width), np.arange(n_q) * cand.shape[1]
    for rank in range(min(depth, most)):
        marginal = np.matmul(cand, weights[seen])[:, :, 0]
        marginal -= penalty
        pick = marginal.argmax(axis=1) + base  # first maximum = larger doc id among ties
        gains[:, rank] = marginal.ravel()[pick]
        penalty.ravel()[pick] = np.inf
        seen[:, :, 0] += flat[pick].astype(np.int64)
    np.maximum(gains, 0.0, out=gains)  # queries out of candidates picked a taken doc (-inf): no gain
    return np.cumsum(gains * discounts(depth), axis=1)
