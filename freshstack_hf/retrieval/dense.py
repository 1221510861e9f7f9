"""Dense retrieval: any sentence-transformers model as a top-k retriever over a corpus, with its prompts.

Encoding (length-sorted batches, the on-disk embedding cache, several GPUs) is `freshstack_hf.retrieval.encoding`;
search keeps a running top-k over blocks of documents (`exact_search`), so 120,000 docs never need a full
query-by-corpus score matrix.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.embedding_cache import EmbeddingCache
from freshstack_hf.retrieval.encoding import EncodeStats, effective_max_length, encode_cached
from freshstack_hf.retrieval.encoding_pool import EncodingPool
from freshstack_hf.retrieval.exact_search import exact_search
from freshstack_hf.retrieval.models import (
    DEFAULT_DENSE_MODEL,
    DenseModel,
    Precision,
    load_dense_model,
)

log = logging.getLogger(__name__)


@dataclass
class DenseStats:
    """Encoding (documents and queries) and search costs of one `DenseRetriever.retrieve` call."""

    docs: EncodeStats
    queries: EncodeStats
    search_seconds: float = 0.0

    @property
    def encoded(self) -> int:
        return self.docs.encoded + self.queries.encoded

    @property
    def cached(self) -> int:
        return self.docs.cached + self.queries.cached

    @property
    def seconds(self) -> float:
        return self.docs.seconds + self.queries.seconds + self.search_seconds


class DenseRetriever:
    """Any sentence-transformers model (name, path or loaded `DenseModel`) as a top-k retriever with a cache.

    Prompts default to the model's own `query` and `document` (or `passage`) prompts; pass "" to disable.
    Devices: by default a big input is encoded on every visible GPU when there are several
    (`encoding_pool.pool_devices`); `devices` names the pool's devices instead, and a `device` naming one device
    (`cuda:1`, `cpu`) keeps the encoding there, so workers pinned one per GPU do not each spread over all of them.
    A pool, once started, serves the rest of the call (`retrieve`: documents and queries) or of a `pooled()` block
    (a job's every topic).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | DenseModel = DEFAULT_DENSE_MODEL,
        *,
        query_prompt: str | None = None,
        doc_prompt: str | None = None,
        max_seq_length: int | None = None,
        batch_size: int = 32,
        cache_dir: str | os.PathLike[str] | None = None,
        device: str | None = None,
        precision: Precision = "auto",
        devices: list[str] | None = None,
        show_progress: bool = False,
    ) -> None:
        if not isinstance(model, DenseModel):
            model = load_dense_model(model, device=device, precision=precision, show_progress=show_progress)
        self.dense = model
        prompts = getattr(self.dense.model, "prompts", None) or {}
        self.query_prompt = prompts.get("query", "") if query_prompt is None else query_prompt
        doc_default = prompts.get("document", prompts.get("passage", ""))
        self.doc_prompt = doc_default if doc_prompt is None else doc_prompt
        self.max_seq_length = effective_max_length(self.dense.model, max_seq_length)
        if devices is None and device not in (None, "cuda"):
            devices = []  # pinned to one device: no pool
        self.batch_size, self.devices, self.show_progress = batch_size, devices, show_progress
        self.cache_dir = cache_dir
        self._pool = EncodingPool(self.dense.model, devices)  # shared with `without_cache`'s twins

    def pooled(self) -> AbstractContextManager[EncodingPool]:
        """A block in which every encoding shares one multi-process pool, started when first needed (see
        `encoding_pool.EncodingPool`); the model is back on its device when the block ends."""
        return self._pool.held()

    def without_cache(self) -> DenseRetriever:
        """The same model, settings and pool, keeping no vector on disk: for texts that must leave no trace there
        (a live pass's embargoed questions)."""
        twin = copy.copy(self)
        twin.cache_dir = None
        return twin

    def _cache(self, prompt: str) -> EmbeddingCache | None:
        if self.cache_dir is None:
            return None
        d = self.dense
        return EmbeddingCache(
            self.cache_dir,
            model=d.model_id,
            revision=d.revision,
            max_seq_length=self.max_seq_length,
            prompt=prompt,
            dtype=d.dtype,
        )

    def encode(self, texts: Sequence[str], *, queries: bool = False) -> tuple[np.ndarray, EncodeStats]:
        prompt = self.query_prompt if queries else self.doc_prompt
        with self.pooled() as pool:
            return encode_cached(
                self.dense.model,
                texts,
                self._cache(prompt),
                prompt=prompt,
                batch_size=self.batch_size,
                max_seq_length=self.max_seq_length,
                show_progress=self.show_progress,
                pool=pool,
            )

    def retrieve(
        self,
        doc_ids: Sequence[str],
        doc_texts: Sequence[str],
        query_ids: Sequence[str],
        query_texts: Sequence[str],
        k: int = 500,
        *,
        doc_vectors: tuple[np.ndarray, EncodeStats] | None = None,
    ) -> tuple[dict[str, list[tuple[str, float]]], DenseStats]:
        """Top-k documents per query as (doc_id, cosine score), best first, ties to the earlier document.
        `doc_vectors`: the documents' vectors as `encode` made them (and what making them cost), for a caller that
        searches one corpus with several sets of questions (`baselines.retrievers.CorpusMemo`)."""
        _check_ids("document", doc_ids, doc_texts)
        _check_ids("query", query_ids, query_texts)
        with self.pooled():  # one pool, if any, for the documents and the queries
            doc_emb, doc_stats = doc_vectors if doc_vectors is not None else self.encode(doc_texts)
            query_emb, query_stats = self.encode(query_texts, queries=True)
        start = time.perf_counter()
        scores, index = exact_search(query_emb, doc_emb, k)
        run = {
            qid: [(doc_ids[i], float(s)) for i, s in zip(row_i.tolist(), row_s.tolist(), strict=True)]
            for qid, row_s, row_i in zip(query_ids, scores, index, strict=True)
        }
        return run, DenseStats(doc_stats, query_stats, time.perf_counter() - start)


def _check_ids(kind: str, ids: Sequence[str], texts: Sequence[str]) -> None:
    if len(ids) != len(texts):
        raise FreshStackError(f"{len(ids)} {kind} ids but {len(texts)} {kind} texts: pass one text per id")
    if len(set(ids)) != len(ids):
        dup = next(i for i, n in Counter(ids).items() if n > 1)
        raise FreshStackError(f"duplicate {kind} id {dup!r}: {kind} ids must be unique")
