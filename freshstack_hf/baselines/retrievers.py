"""The baseline retrievers on a topic (BM25, dense, their RRF hybrid) as runs the evaluator reads, and the
baseline parameters (the official BM25 baseline's k1/b, the depths, the fusion constant) in one place.

Every method of the registry (`registry.py`) and the candidate lists (`candidates.py`) run these functions, so
a depth or a BM25 parameter is one edit here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from freshstack_hf.defaults import dense_retriever
from freshstack_hf.retrieval.encoding import EncodeStats
from freshstack_hf.retrieval.fusion import rrf
from freshstack_hf.runs.run import RankedList, from_ranked

BM25_K1, BM25_B = 0.9, 0.4  # Pyserini's defaults, which the official FreshStack BM25 baseline ran
FIRST_STAGE_DEPTH = 500
HYBRID_DEPTH = 100
RRF_K = 100


class Document(Protocol):
    @property
    def doc_id(self) -> str: ...

    @property
    def text(self) -> str: ...


class Question(Protocol):
    @property
    def query_id(self) -> str: ...

    @property
    def text(self) -> str: ...


class Searched(Protocol):
    """What a method retrieves over: a name, documents and queries, each with an id and a text. A `Topic` is one;
    so are the build's pooling queries over its chunks (`stages/pools.py`), which have no judgments yet, so a
    method reads nothing else of it."""

    @property
    def name(self) -> str: ...

    @property
    def docs(self) -> Sequence[Document]: ...

    @property
    def queries(self) -> Sequence[Question]: ...


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


@dataclass
class CorpusMemo:
    """What methods make from a corpus alone (BM25's index, the dense document vectors), kept for one corpus, so a
    second set of questions over it (a snapshot's embargoed questions beside its public ones, in the `candidates`
    stage) searches what the first made instead of making it again. A corpus of other ids or texts empties it first:
    it never holds more than one corpus's."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    made: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, docs: Sequence[Document], make: Callable[[], Any]) -> tuple[Any, bool]:
        """(what `make` makes of `docs` under `key`, whether this call made it rather than reusing it)."""
        ids, texts = [d.doc_id for d in docs], [d.text for d in docs]
        if ids != self.ids or texts != self.texts:
            self.ids, self.texts, self.made = ids, texts, {}
        if key in self.made:
            return self.made[key], False
        self.made[key] = make()
        return self.made[key], True


def bm25(
    topic: Searched, k: int = FIRST_STAGE_DEPTH, *, show_progress: bool = False, memo: CorpusMemo | None = None
) -> BaselineRun:
    """BM25 top-k; with `memo`, the index of a corpus it holds is searched as is (its `index` seconds then time only
    the look-up)."""
    # The BM25 engine loads scipy (a second of a cold start): imported here, every command that only reads the
    # registry (`--help`, `drift`'s and `retrieve`'s choices, the board's rows) starts without it.
    from freshstack_hf.retrieval.bm25 import BM25Index

    def build() -> BM25Index:
        ids, texts = [d.doc_id for d in topic.docs], [d.text for d in topic.docs]
        return BM25Index.build(ids, texts, k1=BM25_K1, b=BM25_B, show_progress=show_progress)

    start = time.perf_counter()
    index = memo.get("bm25", topic.docs, build)[0] if memo is not None else build()
    built = time.perf_counter()
    hits = index.search([q.text for q in topic.queries], k=k, show_progress=show_progress)
    done = time.perf_counter()
    run = {q.query_id: list(h) for q, h in zip(topic.queries, hits, strict=True)}
    return BaselineRun(
        "bm25", run, {"k": k, **index.params}, {"index": round(built - start, 3), "search": round(done - built, 3)}
    )


def dense(
    topic: Searched,
    model: str = "",
    k: int = FIRST_STAGE_DEPTH,
    *,
    cache_dir: str | Path | None = None,
    batch_size: int = 32,
    max_seq_length: int | None = None,
    show_progress: bool = False,
    retriever: Any = None,
    memo: CorpusMemo | None = None,
) -> BaselineRun:
    """Dense top-k; pass `retriever` to reuse one loaded model across topics, and `memo` to encode a corpus once for
    several sets of questions (a `DenseRetriever`'s vectors; the reused ones count as neither encoded nor cached)."""
    retriever = retriever or dense_retriever(
        model, cache_dir=cache_dir, batch_size=batch_size, max_seq_length=max_seq_length, show_progress=show_progress
    )
    doc_ids, doc_texts = [d.doc_id for d in topic.docs], [d.text for d in topic.docs]
    settings: dict[str, Any] = {}
    if memo is not None:
        model = f"{retriever.dense.model_id}@{retriever.dense.revision}"
        key = f"dense {model} {retriever.max_seq_length} {retriever.doc_prompt!r}"  # what the vectors depend on
        (vectors, encoded), made = memo.get(key, topic.docs, lambda: retriever.encode(doc_texts))
        settings["doc_vectors"] = (vectors, encoded if made else EncodeStats(texts=len(doc_texts)))
    run, stats = retriever.retrieve(
        doc_ids, doc_texts, [q.query_id for q in topic.queries], [q.text for q in topic.queries], k=k, **settings
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
    start = time.perf_counter()
    fused = rrf([first.run, second.run], rrf_k=rrf_k, depth=depth)
    params = {"rrf_k": rrf_k, "depth": depth, "inputs": [first.method, second.method]}
    return BaselineRun("hybrid", fused, params, {"fuse": round(time.perf_counter() - start, 3)})
