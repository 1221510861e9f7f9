"""The built-in retrieval methods (BM25, dense, their RRF hybrid, the hybrid reranked), registered on import.

The package imports this module, so `METHODS` holds them wherever the registry is read; their configs are what
existing board rows' dedupe keys hash, so they must not change for an existing method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf.baselines.registry import CROSS_ENCODER, DENSE_MODEL, Method, Resources, Setup, register_method
from freshstack_hf.baselines.retrievers import (
    BM25_B,
    BM25_K1,
    FIRST_STAGE_DEPTH,
    HYBRID_DEPTH,
    RRF_K,
    BaselineRun,
    Searched,
    bm25,
    dense,
    hybrid,
)
from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.rerank import RERANK_TOP_K, rerank


def _short(model_id: str | None) -> str:
    """A model's short name for row labels: the last part of its id or path."""
    return str(model_id or "").rstrip("/").rsplit("/", 1)[-1]


def _bm25_config(_setup: Setup, _inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "bm25", "k": FIRST_STAGE_DEPTH, "k1": BM25_K1, "b": BM25_B}


def _dense_config(setup: Setup, _inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "dense", "k": FIRST_STAGE_DEPTH, "model": setup.dense_id, "files": setup.dense_files}


def _hybrid_config(_setup: Setup, inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "hybrid", "rrf_k": RRF_K, "depth": HYBRID_DEPTH, "inputs": [inputs["bm25"], inputs["dense"]]}


def _rerank_config(setup: Setup, inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    files = setup.cross_encoder_files
    return {"method": "rerank", "top_k": RERANK_TOP_K, "model": setup.cross_encoder_id, "files": files,
            "input": inputs["hybrid"]}  # fmt: skip


def _rerank(topic: Searched, inputs: Mapping[str, BaselineRun], resources: Resources, _k: int | None) -> BaselineRun:
    setup = resources.setup
    if not setup.cross_encoder:
        raise FreshStackError("a rerank baseline needs a cross-encoder: pass --cross-encoder")
    ce_id = setup.cross_encoder_id or str(setup.cross_encoder)
    resources.say(f"baselines: {topic.name}: reranking the hybrid top {RERANK_TOP_K} with {ce_id}")
    ranked = rerank(
        setup.cross_encoder,
        {q.query_id: q.text for q in topic.queries},
        inputs["hybrid"].run,
        {d.doc_id: d.text for d in topic.docs},
        device=resources.device,
        show_progress=resources.show_progress,
    )
    return BaselineRun("rerank", ranked, {"model": ce_id})


def _bm25(topic: Searched, _inputs: Mapping[str, BaselineRun], resources: Resources, k: int | None) -> BaselineRun:
    resources.say(f"baselines: {topic.name}: BM25 over {len(topic.docs):,} docs")
    return bm25(topic, k or FIRST_STAGE_DEPTH, show_progress=resources.show_progress, memo=resources.corpus)


def _dense(topic: Searched, _inputs: Mapping[str, BaselineRun], resources: Resources, k: int | None) -> BaselineRun:
    retriever = resources.dense_retriever()
    model = resources.setup.dense_id or retriever.dense.model_id
    resources.say(f"baselines: {topic.name}: dense ({model}) over {len(topic.docs):,} docs")
    return dense(topic, k=k or FIRST_STAGE_DEPTH, retriever=retriever, memo=resources.corpus)


def _hybrid(_topic: Searched, inputs: Mapping[str, BaselineRun], _resources: Resources, k: int | None) -> BaselineRun:
    return hybrid(inputs["bm25"], inputs["dense"], depth=k or HYBRID_DEPTH)


register_method(Method(
    "bm25", "BM25", _bm25_config, lambda _s: "BM25", _bm25,
    answer_part=lambda _s: {"bm25": {"k1": BM25_K1, "b": BM25_B, "k": FIRST_STAGE_DEPTH}}, answers=1, stored="bm25",
))  # fmt: skip
register_method(Method(
    "dense", "dense", _dense_config, lambda s: f"Dense ({_short(s.dense_id)})", _dense,
    answer_part=lambda s: {"dense": {"model": s.dense_id, "files": s.dense_files}}, needs=(DENSE_MODEL,),
    stored="dense",
))  # fmt: skip
register_method(Method(
    "hybrid", "RRF hybrid", _hybrid_config, lambda s: f"RRF hybrid (BM25 + {_short(s.dense_id)})", _hybrid,
    answer_part=lambda _s: {"rrf_k": RRF_K}, inputs=("bm25", "dense"), answers=0, stored="top_ranked",
))  # fmt: skip
register_method(Method(
    "rerank", "reranked hybrid", _rerank_config, lambda s: f"Reranked hybrid ({_short(s.cross_encoder_id)})",
    _rerank, inputs=("hybrid",), needs=(CROSS_ENCODER,), board=False,
))  # fmt: skip
