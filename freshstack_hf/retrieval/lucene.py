"""Lucene's BM25 (BM25Similarity of Lucene 8, 9 and 10, as Pyserini/Anserini run it), reproduced in numpy.

What makes Lucene's BM25 differ from the textbook formula, and what is reproduced here:

* idf = ln(1 + (N - df + 0.5) / (df + 0.5)), where N is the field's docCount: documents with at least one token.
* per term: idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)). Lucene 8 dropped the textbook (k1 + 1) factor (it
  scales every score alike, so rankings are unchanged); Pyserini's Anserini has been on Lucene 9 since 2022 and
  the formula and norms are the same in Lucene 8, 9 and 10.
* dl is not the document's length but its *norm*: the length squeezed into one byte by `SmallFloat.intToByte4`
  and decoded by `byte4ToInt` (exact up to 40, then 4 significant bits: 100 -> 96, 1000 -> 984). avgdl =
  sumTotalTermFreq / docCount uses the exact lengths. Without the encoding, top-10 order differed from Lucene's
  in about a third of long real queries when this engine was specified.
* Pyserini's bag-of-words query (Anserini's BagOfWordsQueryGenerator) groups repeated query tokens into one
  `BoostQuery(TermQuery, count)`, so a term's score is multiplied by how often it occurs in the query.

Lucene computes each term's score in float32 (and sums them in double); this module works in float64 throughout, so
its scores agree with Lucene's to float32 precision (about 1e-7 relative) and rankings only differ where Lucene's
float32 rounding ties or flips two documents whose scores are that close.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

DEFAULT_K1 = 0.9  # Pyserini's defaults (LuceneSearcher.set_bm25), used by the official FreshStack baseline
DEFAULT_B = 0.4


_POWERS_OF_TWO = 2 ** np.arange(63, dtype=np.int64)


def _long_to_int4(values: np.ndarray) -> np.ndarray:
    """Lucene's SmallFloat.longToInt4: a float-like code with 4 significant bits (3 stored, 1 implicit)."""
    values = values.astype(np.int64)
    # Bit length (64 - numberOfLeadingZeros): how many powers of two are <= the value.
    num_bits = np.searchsorted(_POWERS_OF_TWO, values, side="right")
    shift = np.maximum(num_bits - 4, 0)
    normal = ((values >> shift) & 0x07) | ((shift + 1) << 3)
    return np.where(num_bits < 4, values, normal)


def _int4_to_long(codes: np.ndarray) -> np.ndarray:
    """Lucene's SmallFloat.int4ToLong, the inverse of `_long_to_int4` up to the dropped low bits."""
    codes = codes.astype(np.int64)
    bits = codes & 0x07
    shift = (codes >> 3) - 1
    return np.where(shift < 0, bits, (bits | 0x08) << np.maximum(shift, 0))


# SmallFloat.intToByte4 keeps bytes 0..NUM_FREE_VALUES-1 for the small integers themselves:
# MAX_INT4 = longToInt4(Integer.MAX_VALUE) = 231, so NUM_FREE_VALUES = 255 - 231 = 24.
_NUM_FREE_VALUES = 255 - int(_long_to_int4(np.array([2**31 - 1]))[0])


def int_to_byte4(lengths: np.ndarray | int) -> np.ndarray:
    """SmallFloat.intToByte4: the one-byte norm Lucene stores for a field length (as uint8)."""
    values = np.asarray(lengths, dtype=np.int64)
    if (values < 0).any() or (values > 2**31 - 1).any():
        raise ValueError("SmallFloat.intToByte4 only encodes lengths in [0, 2**31 - 1]")
    encoded = np.where(
        values < _NUM_FREE_VALUES, values, _NUM_FREE_VALUES + _long_to_int4(np.maximum(values - _NUM_FREE_VALUES, 0))
    )
    return encoded.astype(np.uint8)


def byte4_to_int(codes: np.ndarray | int) -> np.ndarray:
    """SmallFloat.byte4ToInt: the length Lucene's BM25 sees for a stored norm byte."""
    codes = np.asarray(codes, dtype=np.int64) & 0xFF
    decoded = np.where(
        codes < _NUM_FREE_VALUES, codes, _NUM_FREE_VALUES + _int4_to_long(np.maximum(codes - _NUM_FREE_VALUES, 0))
    )
    return np.minimum(decoded, 2**31 - 1)


def encoded_lengths(lengths: np.ndarray) -> np.ndarray:
    """The lengths after Lucene's lossy round trip through one byte: what BM25Similarity uses as dl."""
    return byte4_to_int(int_to_byte4(lengths))


def lucene_idf(df: np.ndarray, doc_count: int) -> np.ndarray:
    """BM25Similarity.idf: ln(1 + (docCount - df + 0.5) / (df + 0.5)); always positive."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((doc_count - df + 0.5) / (df + 0.5))


def bm25_weights(
    tf: sp.csr_matrix, doc_lengths: np.ndarray, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B
) -> sp.csr_matrix:
    """Per-(term, document) Lucene BM25 scores for a term-major tf matrix (terms x documents).

    A query's score is then a sum of rows, each weighted by the term's count in the query; precomputing the rows
    turns search into sparse and dense matrix products.
    """
    doc_lengths = np.asarray(doc_lengths, dtype=np.int64)
    doc_count = int(np.count_nonzero(doc_lengths))
    avgdl = float(doc_lengths.sum()) / doc_count if doc_count else 1.0
    # Lucene caches 1 / (k1 * (1 - b + b * dl / avgdl)) for the 256 possible norms; this is the same per document.
    norm_inverse = 1.0 / (k1 * ((1.0 - b) + b * encoded_lengths(doc_lengths) / avgdl))
    df = np.diff(tf.indptr)
    idf = lucene_idf(df, doc_count)
    freq = tf.data.astype(np.float64)
    idf_per_posting = np.repeat(idf, df)
    # weight - weight / (1 + freq * normInverse) is Lucene's rewrite of idf * freq / (freq + norm).
    data = idf_per_posting - idf_per_posting / (1.0 + freq * norm_inverse[tf.indices])
    return sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)
