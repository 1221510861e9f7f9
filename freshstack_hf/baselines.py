"""The baseline retrievers on a topic: BM25, dense and their RRF hybrid, as runs the evaluator reads.

One place decides the baseline parameters (the official BM25 baseline's k1/b, depths, fusion constant), so the
candidate lists, `freshstack-hf retrieve` and the leaderboard's baseline rows cannot drift apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.run import RankedList, from_ranked
from freshstack_hf.topic import Topic

BM25_K1, BM25_B = 0.9, 0.4  # Pyserini's defaults, which the official FreshStack BM25 baseline ran
FIRST_STAGE_DEPTH = 500
HYBRID_DEPTH = 100
RRF_K = 100
METHODS = ("bm25", "dense", "hybrid")


@dataclass
class BaselineRun:
    """A run and what produced it: method, parameters and timings (for the manifest and the leaderboard)."""

    method: str
    run: dict[str, RankedList]  # query id -> ranked list, best first
    params: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_scores(self) -> dict[str, dict[str, float]]:
        """The evaluator's input form {query: {doc: score}}."""
        return from_ranked(self.run)


def bm25(topic: Topic, k: int = FIRST_STAGE_DEPTH, *, show_progress: bool = False) -> BaselineRun:
    from freshstack_hf.retrieval.bm25 import BM25Index

    start = time.perf_counter()
    index = BM25Index.build(
        [d.doc_id for d in topic.docs], [d.text for d in topic.docs], k1=BM25_K1, b=BM25_B, show_progress=show_progress
    )
    built = time.perf_counter()
    hits = index.search([q.text for q in topic.queries], k=k, show_progress=show_progress)
    done = time.perf_counter()
    run = {q.query_id: list(h) for q, h in zip(topic.queries, hits, strict=True)}
    return BaselineRun(
        "bm25", run, {"k": k, **index.params}, {"index": round(built - start, 3), "search": round(done - built, 3)}
    )


def dense(
    topic: Topic,
    model: str = "",
    k: int = FIRST_STAGE_DEPTH,
    *,
    cache_dir: str | Path | None = None,
    batch_size: int = 32,
    max_seq_length: int | None = None,
    show_progress: bool = False,
    retriever: Any = None,
) -> BaselineRun:
    """Dense top-k; pass `retriever` to reuse one loaded model across topics."""
    from freshstack_hf.defaults import dense_retriever

    retriever = retriever or dense_retriever(
        model, cache_dir=cache_dir, batch_size=batch_size, max_seq_length=max_seq_length, show_progress=show_progress
    )
    run, stats = retriever.retrieve(
        [d.doc_id for d in topic.docs],
        [d.text for d in topic.docs],
        [q.query_id for q in topic.queries],
        [q.text for q in topic.queries],
        k=k,
    )
    params = {
        "k": k,
        "model": retriever.dense.model_id,
        "revision": retriever.dense.revision,
        "max_seq_length": retriever.max_seq_length,
        "query_prompt": retriever.query_prompt,
        "doc_prompt": retriever.doc_prompt,
        "encoded": stats.encoded,
        "cached": stats.cached,
    }
    seconds = {"encode": round(stats.docs.seconds + stats.queries.seconds, 3), "search": round(stats.search_seconds, 3)}
    return BaselineRun("dense", run, params, seconds)


def hybrid(first: BaselineRun, second: BaselineRun, depth: int = HYBRID_DEPTH, rrf_k: int = RRF_K) -> BaselineRun:
    """RRF of two runs, top `depth` kept (no safeguard: that belongs to the candidate lists only)."""
    from freshstack_hf.retrieval.fusion import rrf

    start = time.perf_counter()
    fused = rrf([first.run, second.run], rrf_k=rrf_k, depth=depth)
    params = {"rrf_k": rrf_k, "depth": depth, "inputs": [first.method, second.method]}
    return BaselineRun("hybrid", fused, params, {"fuse": round(time.perf_counter() - start, 3)})


def run_method(topic: Topic, method: str, *, model: str = "", k: int | None = None, **dense_kw: Any) -> BaselineRun:
    if method not in METHODS:
        raise FreshStackError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if method == "bm25":
        return bm25(topic, k or FIRST_STAGE_DEPTH, show_progress=dense_kw.get("show_progress", False))
    if method == "dense":
        return dense(topic, model, k or FIRST_STAGE_DEPTH, **dense_kw)
    both = bm25(topic, show_progress=dense_kw.get("show_progress", False)), dense(topic, model, **dense_kw)
    return hybrid(*both, depth=k or HYBRID_DEPTH)
