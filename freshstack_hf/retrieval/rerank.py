"""Reranking candidate lists with a sentence-transformers CrossEncoder (or any pair-scoring function).

Only the first `top_k` candidates of each query are scored (50 by default, as in the FreshStack paper; None
scores them all); the rest keep their order below them, so the output is still a full run over the same
candidates. By default all pairs of all queries go to the model in one call, which lets it batch across queries
(sentence-transformers sorts them by length first). MTEB's reranking tasks score differently: every candidate,
queries in the task's order, one model call per `batch_size` consecutive pairs. `pairs_per_call` and
`query_order` reproduce that exactly, so a score computed here is bit for bit the score MTEB computes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.fusion import ranked
from freshstack_hf.retrieval.models import (
    Precision,
    auto_device,
    cuda_dtype,
    load_with_explanation,
    require_dense,
    resolve_model_source,
)
from freshstack_hf.runs.run import Ranking

log = logging.getLogger(__name__)

RERANK_TOP_K = 50
ScoreFn = Callable[[list[tuple[str, str]]], Sequence[float]]


def load_cross_encoder(
    name_or_path: str | os.PathLike[str],
    *,
    device: str | None = None,
    precision: Precision = "auto",
    max_length: int | None = None,
    show_progress: bool = False,
) -> Any:
    """A CrossEncoder from a local directory or a cached Hub id; remote code is never trusted. transformers'
    loading bars show only with `show_progress`."""
    require_dense()
    from sentence_transformers import CrossEncoder

    model_id, local_dir = resolve_model_source(name_or_path)
    device = auto_device(device)
    source = str(local_dir) if local_dir is not None else model_id
    model = load_with_explanation(
        CrossEncoder, source, device=device, max_length=max_length, show_progress=show_progress
    )
    if model.num_labels != 1:
        raise FreshStackError(
            f"cross-encoder {model_id!r} has {model.num_labels} output labels; reranking needs one relevance "
            "score per pair: pass a model trained for reranking (num_labels=1)"
        )
    model.to(cuda_dtype(precision, device))
    return model


def _score_fn(scorer: Any, batch_size: int, show_progress: bool, **load: Any) -> ScoreFn:
    """Accept a name or path (loaded here), a loaded CrossEncoder, or a plain function over pairs."""
    if isinstance(scorer, str | os.PathLike):
        scorer = load_cross_encoder(scorer, show_progress=show_progress, **load)
    if hasattr(scorer, "predict"):
        model = scorer

        def predict(pairs: list[tuple[str, str]]) -> Sequence[float]:
            scores = model.predict(pairs, batch_size=batch_size, show_progress_bar=show_progress)
            return np.asarray(scores, dtype=np.float64).reshape(len(pairs), -1)[:, -1].tolist()

        return predict
    if callable(scorer):
        return scorer
    raise TypeError(f"scorer must be a model name or path, a CrossEncoder or a function, not {type(scorer)!r}")


def rerank(
    scorer: str | os.PathLike[str] | Any | ScoreFn,
    queries: Mapping[str, str],
    candidates: Mapping[str, Ranking],
    doc_texts: Mapping[str, str],
    *,
    top_k: int | None = RERANK_TOP_K,
    batch_size: int = 32,
    max_length: int | None = None,
    device: str | None = None,
    precision: Precision = "auto",
    show_progress: bool = False,
    pairs_per_call: int | None = None,
    query_order: Sequence[str] | None = None,
) -> dict[str, list[tuple[str, float]]]:
    """Rerank each query's first `top_k` candidates (None: all of them) by the scorer; the rest follow in their
    given order.

    Candidates are rankings as in `fusion` (pairs with scores, a mapping, or ids in rank order). Reranked
    docs carry the model's score, ties kept in candidate order; docs below `top_k` get scores stepping down
    by 1 from the lowest reranked score, so the run stays sorted by score.

    Pairs go to the scorer query after query, in `query_order` (default: sorted query ids; queries it omits
    follow, sorted), each query's in candidate order: all in one call, or with `pairs_per_call` in calls of
    that many consecutive pairs (a model batches within a call only, so the batches are those of MTEB's
    dataloader when `pairs_per_call` is its batch size).
    """
    if pairs_per_call is not None and pairs_per_call <= 0:
        raise FreshStackError(f"pairs_per_call must be a positive number of pairs, not {pairs_per_call}")
    heads, tails = _split_candidates(queries, candidates, doc_texts, top_k, query_order)
    pairs = [(queries[qid], doc_texts[d]) for qid, head in heads.items() for d in head]
    score = _score_fn(scorer, batch_size, show_progress, device=device, precision=precision, max_length=max_length)
    step = pairs_per_call or max(len(pairs), 1)
    scores = [float(s) for start in range(0, len(pairs), step) for s in score(pairs[start : start + step])]
    if len(scores) != len(pairs):
        raise FreshStackError(f"the scorer returned {len(scores)} scores for {len(pairs)} pairs")
    log.info("reranked %d pairs over %d queries", len(pairs), len(heads))
    out: dict[str, list[tuple[str, float]]] = {}
    pos = 0
    for qid, head in heads.items():
        scored = list(zip(head, scores[pos : pos + len(head)], strict=True))
        pos += len(head)
        order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
        reranked = [scored[i] for i in order]
        floor = min((s for _, s in scored), default=0.0)
        out[qid] = reranked + [(doc, floor - (i + 1)) for i, doc in enumerate(tails[qid])]
    return out


def _split_candidates(
    queries: Mapping[str, str],
    candidates: Mapping[str, Ranking],
    doc_texts: Mapping[str, str],
    top_k: int | None,
    query_order: Sequence[str] | None,
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each query's candidates split into the head the scorer reranks and the tail that follows, queries in pair
    order; every missing query or doc text is found before any is scored, and all of them refused at once."""
    heads: dict[str, list[str]] = {}
    tails: dict[str, list[str]] = {}
    problems: list[str] = []
    for qid in _pair_order(candidates, query_order):
        docs = [doc for doc, _ in ranked(candidates[qid])]
        cut = len(docs) if top_k is None else top_k
        heads[qid], tails[qid] = docs[:cut], docs[cut:]
        if heads[qid] and qid not in queries:
            problems.append(f"query {qid!r} has candidates but no query text")
        problems += [f"doc {d!r} (query {qid!r}) has no text" for d in heads[qid] if d not in doc_texts]
    if problems:
        raise FreshStackError(
            f"cannot rerank: {len(problems)} missing text(s), e.g. {'; '.join(problems[:3])}: pass the corpus "
            "and queries the candidates were retrieved from"
        )
    return heads, tails


def _pair_order(candidates: Mapping[str, Ranking], query_order: Sequence[str] | None) -> list[str]:
    """The queries whose pairs go to the scorer, in the order they go: `query_order`'s, then the rest sorted."""
    if query_order is None:
        return sorted(candidates)
    first = list(dict.fromkeys(q for q in query_order if q in candidates))
    return first + sorted(set(candidates) - set(first))
