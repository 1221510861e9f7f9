"""BM25 over a topic corpus: build once, search top-500 for every query, save and load.

    index = BM25Index.build(doc_ids, texts)              # Lucene BM25, k1=0.9, b=0.4, code-aware tokens
    runs = index.search(query_texts, k=500)              # [[(doc_id, score), ...] per query]
    index.save("bm25-index"); BM25Index.load("bm25-index")

The index keeps the corpus statistics (vocabulary, term x document frequencies, exact document lengths) and hands
them to a scoring backend (`bm25_scorers.py`): `lucene` by default, `bm25s` or `rank_bm25` as references. Results
hold only documents that contain at least one query term, best first; equal scores are ordered by the document's
position in the corpus (Lucene breaks ties by its internal doc id, which is that position; Anserini's searchers
add a second sort key, the external doc id, which only differs when ids are not in corpus order).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.analyzer import Tokenizer
from freshstack_hf.retrieval.bm25_scorers import BACKENDS, bag_of_words, make_scorer
from freshstack_hf.retrieval.lucene import DEFAULT_B, DEFAULT_K1
from freshstack_hf.runs.run import RankedList

log = logging.getLogger(__name__)

FORMAT = "freshstack-bm25"
FORMAT_VERSION = 1
SCORE_BUDGET_BYTES = 1 << 28  # the dense (queries x docs) score matrix of one batch


def _is_token_lists(items: Sequence[Any]) -> bool:
    kinds = {isinstance(item, str) for item in items}
    if len(kinds) > 1:
        raise FreshStackError("mix of texts and token lists: pass all texts (str) or all token lists")
    return kinds == {False}


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise FreshStackError(f"unknown BM25 backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best positive entries of one row: score descending, then index ascending.

    argpartition alone picks arbitrary members of a tie at the k-th place; the tied block is resolved by index
    so that results are deterministic and Lucene-like.
    """
    n = scores.size
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0)
    candidates = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    kth = scores[candidates].min()
    if kth <= 0:
        chosen = np.flatnonzero(scores > 0)
    else:
        above = candidates[scores[candidates] > kth]
        tied = np.flatnonzero(scores == kth)[: k - above.size]
        chosen = np.concatenate([above, tied])
    order = np.lexsort((chosen, -scores[chosen]))
    chosen = chosen[order]
    return chosen, scores[chosen]


class BM25Index:
    """A BM25 index of one corpus. Build it with `BM25Index.build` or `BM25Index.load`."""

    def __init__(
        self,
        doc_ids: list[str],
        terms: list[str],
        tf: sp.csr_matrix,
        doc_lengths: np.ndarray,
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        backend: str = "lucene",
        tokenizer: Tokenizer | None = None,
        corpus_tokens: Sequence[Sequence[str]] | None = None,
    ) -> None:
        _check_backend(backend)
        self.doc_ids = doc_ids
        self.terms = terms
        self.vocab = dict(zip(terms, range(len(terms)), strict=True))
        self.tf = tf
        self.doc_lengths = doc_lengths
        self.k1, self.b, self.backend, self.tokenizer = float(k1), float(b), backend, tokenizer

        def tokens() -> Sequence[Sequence[str]]:
            return corpus_tokens if corpus_tokens is not None else bag_of_words(tf, doc_lengths, terms)

        self._scorer = make_scorer(backend, tf, doc_lengths, self.k1, self.b, tokens)

    @classmethod
    def build(
        cls,
        doc_ids: Sequence[str],
        docs: Sequence[str] | Sequence[Sequence[str]],
        *,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        tokenizer: Tokenizer | None = None,
        backend: str = "lucene",
        show_progress: bool = False,
    ) -> BM25Index:
        """Index `docs` (texts, or token lists used as they are) under `doc_ids`.

        Texts are tokenized with `tokenizer` (default: the code-aware `Tokenizer()`); an index built from token
        lists only knows how to tokenize string queries if a tokenizer is given.
        """
        doc_ids = [str(d) for d in doc_ids]
        if len(doc_ids) != len(docs):
            raise FreshStackError(f"{len(doc_ids)} doc ids for {len(docs)} documents")
        if not doc_ids:
            raise FreshStackError("cannot build a BM25 index over an empty corpus")
        _check_backend(backend)
        if len(set(doc_ids)) != len(doc_ids):
            dupes = sorted(d for d, n in Counter(doc_ids).items() if n > 1)
            raise FreshStackError(f"{len(dupes)} duplicate doc ids, e.g. {', '.join(dupes[:5])}")
        if _is_token_lists(docs):
            corpus_tokens = docs
        else:
            tokenizer = tokenizer or Tokenizer()
            corpus_tokens = tokenizer.tokenize_many(docs, show_progress=show_progress)  # type: ignore[arg-type]
        terms, tf, lengths = _count_terms(corpus_tokens)
        log.info("BM25 index: %d docs, %d terms, %d postings", len(doc_ids), len(terms), tf.nnz)
        return cls(
            doc_ids, terms, tf, lengths, k1=k1, b=b, backend=backend, tokenizer=tokenizer, corpus_tokens=corpus_tokens
        )

    @property
    def num_docs(self) -> int:
        return len(self.doc_ids)

    @property
    def params(self) -> dict[str, Any]:
        """What the index was built with; saved beside it and recorded with runs."""
        return {
            "k1": self.k1,
            "b": self.b,
            "backend": self.backend,
            "num_docs": self.num_docs,
            "num_terms": len(self.terms),
            "num_postings": int(self.tf.nnz),
            "tokenizer": self.tokenizer.to_config() if self.tokenizer else None,
        }

    def _query_tokens(self, queries: Sequence[str] | Sequence[Sequence[str]]) -> Sequence[Sequence[str]]:
        if not queries or _is_token_lists(queries):
            return queries  # type: ignore[return-value]
        if self.tokenizer is None:
            raise FreshStackError(
                "this index was built from token lists: pass token lists, or build it with a "
                "tokenizer to search with texts"
            )
        return [self.tokenizer(q) for q in queries]  # type: ignore[arg-type]

    def _counts(self, tokens: Sequence[Sequence[str]]) -> sp.csr_matrix:
        """(queries x terms) counts: a term repeated in a query scores once per occurrence, as in Pyserini."""
        get = self.vocab.get
        ids = [[i for i in map(get, query) if i is not None] for query in tokens]
        rows = np.repeat(np.arange(len(ids)), [len(q) for q in ids])
        cols = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=rows.size)
        ones = np.ones(rows.size)
        return sp.csr_matrix((ones, (rows, cols)), shape=(len(ids), len(self.terms)))

    def search(
        self,
        queries: Sequence[str] | Sequence[Sequence[str]],
        k: int = 500,
        *,
        batch_size: int | None = None,
        show_progress: bool = False,
    ) -> list[RankedList]:
        """Top-k (doc_id, score) per query, best first; queries are texts or token lists."""
        tokens = self._query_tokens(queries)
        if batch_size is None:
            batch_size = max(1, min(256, SCORE_BUDGET_BYTES // (8 * self.num_docs)))
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(tokens), desc="BM25 search", unit="query")
        results: list[RankedList] = []
        for start in range(0, len(tokens), batch_size):
            batch = tokens[start : start + batch_size]
            scores = self._scorer.score_batch(self._counts(batch), batch)
            for row in scores:
                idx, vals = top_k(row, k)
                results.append(list(zip(map(self.doc_ids.__getitem__, idx.tolist()), vals.tolist(), strict=True)))
            if bar is not None:
                bar.update(len(batch))
        if bar is not None:
            bar.close()
        return results

    def save(self, folder: str | Path) -> Path:
        """Write the corpus statistics (not the backend's matrices, rebuilt at load) and the parameters."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(
            folder / "stats.npz",
            tf_data=self.tf.data,
            tf_indices=self.tf.indices,
            tf_indptr=self.tf.indptr,
            doc_lengths=self.doc_lengths,
        )
        (folder / "terms.json").write_text(json.dumps(self.terms, ensure_ascii=False), encoding="utf-8")
        (folder / "doc_ids.json").write_text(json.dumps(self.doc_ids, ensure_ascii=False), encoding="utf-8")
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "freshstack_hf_version": __version__, **self.params}
        (folder / "params.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return folder

    @classmethod
    def load(cls, folder: str | Path, *, backend: str | None = None) -> BM25Index:
        """Read an index written by `save`; `backend` overrides the saved one (the statistics serve all three)."""
        folder = Path(folder)
        names = ("params.json", "stats.npz", "terms.json", "doc_ids.json")
        missing = [n for n in names if not (folder / n).is_file()]
        if missing:
            raise FreshStackError(f"{folder} is not a BM25 index folder: missing {', '.join(missing)}")
        meta = json.loads((folder / "params.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
            raise FreshStackError(
                f"{folder}: unsupported index format {meta.get('format')!r} version "
                f"{meta.get('format_version')!r} (this version reads {FORMAT} {FORMAT_VERSION})"
            )
        terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
        doc_ids = json.loads((folder / "doc_ids.json").read_text(encoding="utf-8"))
        with np.load(folder / "stats.npz") as stats:
            tf = sp.csr_matrix(
                (stats["tf_data"], stats["tf_indices"], stats["tf_indptr"]), shape=(len(terms), len(doc_ids))
            )
            lengths = stats["doc_lengths"]
        tokenizer = Tokenizer.from_config(meta["tokenizer"]) if meta.get("tokenizer") else None
        return cls(
            doc_ids,
            terms,
            tf,
            lengths,
            k1=meta["k1"],
            b=meta["b"],
            backend=backend or meta["backend"],
            tokenizer=tokenizer,
        )


def _count_terms(corpus_tokens: Sequence[Sequence[str]]) -> tuple[list[str], sp.csr_matrix, np.ndarray]:
    """Vocabulary (in order of first appearance), term-major tf matrix and exact lengths of a tokenized corpus."""
    import pandas as pd  # its hash-based factorize is the fastest string -> id map at hand (one C pass)

    lengths = np.fromiter(map(len, corpus_tokens), dtype=np.int64, count=len(corpus_tokens))
    flat = np.empty(int(lengths.sum()), dtype=object)
    flat[:] = list(chain.from_iterable(corpus_tokens))
    codes, uniques = pd.factorize(flat, sort=False)
    terms = [str(t) for t in uniques]
    docs = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    # One entry per token; the coo -> csr conversion sums the repeats of a (term, doc) pair into its tf.
    tf = sp.csr_matrix(
        (np.ones(flat.size, dtype=np.int32), (codes.astype(np.int32), docs)), shape=(len(terms), len(lengths))
    )
    return terms, tf, lengths
