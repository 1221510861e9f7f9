"""Exact top-k search over embeddings in bounded memory: documents scored a block at a time, merged as it goes."""

from __future__ import annotations

import numpy as np


def _topk_columns(scores: np.ndarray, index: np.ndarray | None, k: int) -> np.ndarray:
    """Columns holding each row's k best by (score desc, doc index asc), unordered, in linear time.

    `index` gives each column's doc index (None: the column number). argpartition picks arbitrarily among
    values equal to the k-th; the rare rows where such a tie straddles the cut (duplicate documents) are
    redone with a full sort.
    """
    if k >= scores.shape[1]:
        return np.broadcast_to(np.arange(scores.shape[1]), scores.shape).copy()
    cut = scores.shape[1] - k
    top = np.argpartition(scores, cut, axis=1)[:, cut:]
    kth = np.take_along_axis(scores, top, axis=1).min(axis=1, keepdims=True)
    for row in np.flatnonzero((scores >= kth).sum(axis=1) > k):
        cols = np.arange(scores.shape[1]) if index is None else index[row]
        top[row] = np.lexsort((cols, -scores[row]))[:k]
    return top


def exact_search(
    query_emb: np.ndarray,
    doc_emb: np.ndarray,
    k: int,
    *,
    block_size: int = 8192,
    query_block_size: int = 256,
    normalize: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact dot-product (cosine with `normalize`) top-k: (scores, doc indices), each (n_queries, min(k, n_docs)).

    Documents are scored a block at a time and merged into a running top-k, so the working memory is about
    12 bytes (score and partition index) per query_block_size x block_size, some 25 MiB at the defaults,
    whatever the corpus size. Order: score desc, then doc index asc.
    """
    q_all = np.asarray(query_emb, dtype=np.float32)
    docs = np.asarray(doc_emb, dtype=np.float32)
    if normalize:
        q_all = q_all / np.maximum(np.linalg.norm(q_all, axis=1, keepdims=True), 1e-12)
    k = max(0, min(k, docs.shape[0]))
    scores_out = np.empty((q_all.shape[0], k), dtype=np.float32)
    index_out = np.empty((q_all.shape[0], k), dtype=np.int64)
    if k == 0:
        return scores_out, index_out
    for qs in range(0, q_all.shape[0], query_block_size):
        q = q_all[qs : qs + query_block_size]
        best_s = np.empty((q.shape[0], 0), dtype=np.float32)
        best_i = np.empty((q.shape[0], 0), dtype=np.int64)
        for ds in range(0, docs.shape[0], block_size):
            block = docs[ds : ds + block_size]
            if normalize:
                block = block / np.maximum(np.linalg.norm(block, axis=1, keepdims=True), 1e-12)
            s = q @ block.T
            top = _topk_columns(s, None, k)
            cand_s = np.concatenate([best_s, np.take_along_axis(s, top, axis=1)], axis=1)
            cand_i = np.concatenate([best_i, top + ds], axis=1)
            keep = _topk_columns(cand_s, cand_i, k)  # unordered: one sort at the end instead of one per block
            best_s = np.take_along_axis(cand_s, keep, axis=1)
            best_i = np.take_along_axis(cand_i, keep, axis=1)
        order = np.lexsort((best_i, -best_s), axis=1)
        best_s, best_i = np.take_along_axis(best_s, order, axis=1), np.take_along_axis(best_i, order, axis=1)
        scores_out[qs : qs + q.shape[0]], index_out[qs : qs + q.shape[0]] = best_s, best_i
    return scores_out, index_out
