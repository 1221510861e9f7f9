"""Nano-style candidate lists written into the dataset repo: BM25 top-500, dense top-500, RRF hybrid top-100.

The hybrid list is what rerankers are compared on (MTEB calls it `top_ranked`). Where its top 100 holds no
positive, one positive is appended at rank 101 (the *safeguard*, as NanoCodeRAG does) so a reranker always has
something to find; the manifest counts those queries, and list quality is measured before the append, so the
appended doc never counts in Recall@100. The paper's own fusion (min-max normalised scores summed over each
system's top 100) is measured beside it for reference.

Each topic is committed on its own, so an interrupted run keeps the topics already done (`skip_done` resumes),
and dense embeddings are cached on disk, so a rerun encodes nothing it has seen.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from freshstack_hf.baselines import registry, retrievers
from freshstack_hf.defaults import dense_retriever
from freshstack_hf.metrics import evaluate, qrels_from_topic
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.reader import load_topic
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import transaction
from freshstack_hf.retrieval.fusion import apply_safeguard, minmax_fusion
from freshstack_hf.runs.run import RankedList, from_ranked
from freshstack_hf.topic import Topic

log = logging.getLogger(__name__)

QUALITY_MEASURES = ("alpha_ndcg@10", "coverage@20", "recall@50", "ndcg@10", "recall@100")


def positives(topic: Topic) -> dict[str, set[str]]:
    return {q: {d for d, s in docs.items() if s > 0} for q, docs in topic.qrels.items()}


def list_quality(topic: Topic, runs: dict[str, dict[str, RankedList]]) -> dict[str, dict[str, float]]:
    qrels = qrels_from_topic(topic)
    return {name: evaluate(qrels, from_ranked(run), QUALITY_MEASURES).metrics for name, run in runs.items()}


def topic_candidates(
    topic: Topic,
    *,
    dense_model: str = "",
    retriever: Any = None,
    cache_dir: str | Path | None = None,
    show_progress: bool = False,
    resources: registry.Resources | None = None,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any]]:
    """Candidate lists (file stem -> query -> doc ids) and the manifest record for one topic, from the methods of
    `registry.METHODS` that the board's baseline rows and `retrieve` run too. `resources` (which then stand for
    the other settings) are shared by a caller making lists for two sets of questions over one corpus: with a
    `retrievers.CorpusMemo` the second searches the first's BM25 index and document vectors."""

    if resources is None:
        setup = registry.Setup(dense_model=dense_model or None)
        resources = registry.Resources(setup, cache_dir=cache_dir, show_progress=show_progress, retriever=retriever)
    runs = registry.compute(topic, ["hybrid"], resources)  # the registry's hybrid and the two lists it fuses
    bm25, dense, hybrid = runs["bm25"], runs["dense"], runs["hybrid"]
    guarded = apply_safeguard(hybrid.run, positives(topic), depth=retrievers.HYBRID_DEPTH, inputs=[bm25.run, dense.run])
    paper = minmax_fusion([bm25.run, dense.run], depth=retrievers.HYBRID_DEPTH)
    quality = list_quality(
        topic, {"bm25": bm25.run, "dense": dense.run, "hybrid_rrf": hybrid.run, "hybrid_minmax": paper}
    )
    lists = {
        "bm25": _ids(bm25.run, topic),
        "dense": _ids(dense.run, topic),
        "top_ranked": _ids(guarded.runs, topic),
    }
    record = {
        "bm25": {"params": bm25.params, "seconds": bm25.seconds},
        "dense": {"params": dense.params, "seconds": dense.seconds},
        "hybrid": {"params": hybrid.params, "fusion": "rrf"},
        "safeguard": {
            "rank": retrievers.HYBRID_DEPTH + 1,
            "queries": guarded.count,
            "appended": dict(sorted(guarded.safeguarded.items())),
            "queries_without_positive": guarded.without_positives,
        },
        "quality": quality,
    }
    return lists, record


def _ids(run: dict[str, RankedList], topic: Topic) -> dict[str, list[str]]:
    """Lists in query order of the topic; a query nothing was retrieved for gets an empty list."""
    return {q: [d for d, _ in run.get(q, [])] for q in topic.query_ids}


def build_candidates(
    repo: str | Path,
    topics: list[str],
    *,
    dense_model: str = "",
    cache_dir: str | Path | None = None,
    skip_done: bool = False,
    show_progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Compute and write candidate configs for each topic (one atomic commit per topic)."""

    repo = Path(repo)
    done = {t for t, e in read_manifest(repo)["topics"].items() if e.get("candidates")}
    retriever = None
    records: dict[str, dict[str, Any]] = {}
    for name in topics:
        if skip_done and name in done:
            log.info("candidates for %s exist; skipped", name)
            continue
        if retriever is None:  # one model load for all topics
            retriever = dense_retriever(dense_model, cache_dir=cache_dir, show_progress=show_progress)
        topic = load_topic(repo, name)
        lists, record = topic_candidates(topic, retriever=retriever, show_progress=show_progress)
        with transaction(repo) as st:
            for stem, table in lists.items():
                st.write_table(name, stem, candidates_table(table))
            st.manifest["topics"][name]["candidates"] = record
        records[name] = record
    return records
