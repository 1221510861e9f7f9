"""The scoring backends behind `BM25Index`: each turns a batch of queries into a dense (queries x docs) score matrix.

* `lucene` (default): Lucene's BM25 as Pyserini runs it (see `lucene.py`), on a precomputed term x document weight
  matrix. A batch of queries is a sparse (queries x terms) count matrix, so scoring is one matrix product; it is
  split by how much work each term brings. Long queries are dominated by frequent terms whose posting lists cover
  most documents: as sparse work they cost about 2 to 9 ns per posting and per query, whereas densifying the term's
  row once per batch and multiplying with BLAS costs a fraction of a nanosecond per document and per query. A term
  goes to the dense side when (queries in the batch using it) x df exceeds DENSE_RATIO x batch size x docs; the rest
  is one scipy sparse-sparse product.
* `bm25s` and `rank_bm25`: the same token lists handed to those packages, kept as references. bm25s's "lucene"
  method has Lucene's idf and formula but no length encoding, float32 scores and every document in N; rank-bm25's
  BM25Okapi has another idf (with an epsilon floor) and the textbook (k1 + 1) factor: its scores differ, only its
  ranking is comparable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from freshstack_hf.retrieval.lucene import bm25_weights

BACKENDS = ("lucene", "bm25s", "rank_bm25")
BM25_EXTRA_HINT = "pip install freshstack-hf[bm25]"
# Measured on the 117,000-doc benchmark: 0.01 to 0.1 all beat pure sparse scoring, 0.03 to 0.05 best.
DENSE_RATIO = 0.03
DENSE_BLOCK_BYTES = 1 << 27  # one group of densified term rows (float64), bounding the extra memory


class Scorer(Protocol):
    def score_batch(self, counts: sp.csr_matrix, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        """(queries x docs) float64 scores; `counts` holds each query's term counts, `tokens` the raw tokens."""
        ...


class LuceneScorer:
    """Lucene BM25 on a (terms x docs) weight matrix; see the module docstring for the dense/sparse split."""

    def __init__(self, tf: sp.csr_matrix, doc_lengths: np.ndarray, k1: float, b: float) -> None:
        self.weights = bm25_weights(tf, doc_lengths, k1=k1, b=b)
        self.df = np.diff(self.weights.indptr).astype(np.float64)

    def score_batch(self, counts: sp.csr_matrix, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        n_queries, n_terms = counts.shape
        n_docs = self.weights.shape[1]
        queries_per_term = np.bincount(counts.indices, minlength=n_terms)
        is_dense = queries_per_term * self.df > DENSE_RATIO * n_queries * n_docs
        dense_terms = np.flatnonzero(is_dense)

        sparse_counts = counts.copy()
        sparse_counts.data[is_dense[sparse_counts.indices]] = 0
        sparse_counts.eliminate_zeros()
        scores = (sparse_counts @ self.weights).toarray()
        if dense_terms.size:
            dense_counts = counts[:, dense_terms].toarray()
            group = max(1, DENSE_BLOCK_BYTES // (8 * n_docs))
            for start in range(0, dense_terms.size, group):
                rows = self.weights[dense_terms[start : start + group]].toarray()
                scores += dense_counts[:, start : start + group] @ rows
        return scores


class Bm25sScorer:
    """bm25s with method="lucene" on the same tokens (reference backend)."""

    def __init__(self, corpus_tokens: Sequence[Sequence[str]], k1: float, b: float) -> None:
        try:
            import bm25s
        except ImportError:
            raise ImportError(f"the bm25s backend needs bm25s: {BM25_EXTRA_HINT}") from None
        self.n_docs = len(corpus_tokens)
        self.retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        self.retriever.index([list(doc) for doc in corpus_tokens], show_progress=False)

    def score_batch(self, counts: sp.csr_matrix, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        scores = np.zeros((len(tokens), self.n_docs))
        for row, query in enumerate(tokens):
            if query:
                scores[row] = self.retriever.get_scores(list(query))
        return scores


class RankBm25Scorer:
    """rank-bm25's BM25Okapi on the same tokens (reference backend, slow: seconds per query on 100k docs)."""

    def __init__(self, corpus_tokens: Sequence[Sequence[str]], k1: float, b: float) -> None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError:
            raise ImportError(f"the rank_bm25 backend needs rank-bm25: {BM25_EXTRA_HINT}") from None
        self.okapi = BM25Okapi([list(doc) for doc in corpus_tokens], k1=k1, b=b)

    def score_batch(self, counts: sp.csr_matrix, tokens: Sequence[Sequence[str]]) -> np.ndarray:
        return np.vstack([self.okapi.get_scores(list(query)) for query in tokens]).astype(np.float64)


def make_scorer(
    backend: str,
    tf: sp.csr_matrix,
    doc_lengths: np.ndarray,
    k1: float,
    b: float,
    corpus_tokens: Callable[[], Sequence[Sequence[str]]],
) -> Scorer:
    """The backend's scorer; `corpus_tokens` is only called by the reference backends, which need token lists."""
    if backend == "lucene":
        return LuceneScorer(tf, doc_lengths, k1, b)
    if backend == "bm25s":
        return Bm25sScorer(corpus_tokens(), k1, b)
    if backend == "rank_bm25":
        return RankBm25Scorer(corpus_tokens(), k1, b)
    raise ValueError(f"unknown BM25 backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def bag_of_words(tf: sp.csr_matrix, doc_lengths: np.ndarray, terms: Sequence[str]) -> list[list[str]]:
    """Each document's tokens (each term repeated tf times, in term order), rebuilt from a term-major tf matrix.

    Word order is lost, which no bag-of-words scorer notices; a loaded index uses this to rebuild the reference
    backends without storing the token lists.
    """
    by_doc = tf.T.tocsr()
    by_doc.sort_indices()
    repeated = np.asarray(terms, dtype=object)[np.repeat(by_doc.indices, by_doc.data)].tolist()
    ends = np.cumsum(doc_lengths).tolist()
    return [repeated[s:e] for s, e in zip([0, *ends[:-1]], ends, strict=True)]
