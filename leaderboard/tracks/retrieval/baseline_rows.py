"""The project's baseline rows: BM25, dense, RRF hybrid, and a reranked hybrid when a cross-encoder is given.

Runs are computed by the library (`freshstack_hf.baselines`) on the dataset the app serves and scored like
any submission (`leaderboard.scoring`). Each row's dedupe key hashes its *configuration*
(`leaderboard.baseline_key`), so a restart finds every row stored and loads no model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES, dense_retriever
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.archive import RunArchive
from leaderboard.baseline_key import BaselineRow, config_hash
from leaderboard.schema import ResultMeta
from leaderboard.scoring import score_for_store
from leaderboard.store import Store
from leaderboard.vetting import model_fingerprint, weights_parameters


def compute_baselines(
    store: Store,
    dataset: Dataset,
    *,
    methods: Iterable[str] = ("bm25", "dense", "hybrid"),
    model: str | None = None,
    cross_encoder: str | None = None,
    cache_dir: str | Path | None = None,
    archive: RunArchive | None = None,
    say: Callable[[str], None] = lambda _msg: None,
    show_progress: bool = False,
    resamples: int = RESAMPLES,
) -> list[BaselineRow]:
    """Store the baseline rows missing for this dataset revision; rows already stored are left alone."""
    from freshstack_hf import baselines
    from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

    wanted = list(dict.fromkeys(methods)) + (["rerank"] if cross_encoder else [])
    unknown = set(wanted) - {"bm25", "dense", "hybrid", "rerank"}
    if unknown:
        raise FreshStackError(f"unknown baseline method(s) {sorted(unknown)}: use bm25, dense, hybrid")
    configs: dict[str, dict[str, Any]] = {
        "bm25": {"method": "bm25", "k": baselines.FIRST_STAGE_DEPTH, "k1": baselines.BM25_K1, "b": baselines.BM25_B}
    }
    dense_id = dense_dir = ce_id = None
    if {"dense", "hybrid", "rerank"} & set(wanted):
        dense_id, dense_dir, print_ = model_fingerprint(model or DEFAULT_DENSE_MODEL)
        configs["dense"] = {"method": "dense", "k": baselines.FIRST_STAGE_DEPTH, "model": dense_id, "files": print_}
        configs["hybrid"] = {
            "method": "hybrid",
            "rrf_k": baselines.RRF_K,
            "depth": baselines.HYBRID_DEPTH,
            "inputs": [configs["bm25"], configs["dense"]],
        }
    if cross_encoder:
        from freshstack_hf.retrieval.rerank import RERANK_TOP_K

        ce_id, _, ce_print = model_fingerprint(cross_encoder)
        configs["rerank"] = {
            "method": "rerank",
            "top_k": RERANK_TOP_K,
            "model": ce_id,
            "files": ce_print,
            "input": configs["hybrid"],
        }
    hashes = {m: config_hash(configs[m], dataset.revision) for m in wanted}
    done = {m: s for m in wanted if (s := store.find_system(hashes[m])) is not None and s.status == "scored"}
    todo = [m for m in wanted if m not in done]
    rows = [BaselineRow(m, s.name, s.id, False) for m, s in done.items()]
    if not todo:
        say(f"baselines: all {len(wanted)} rows already stored for dataset revision {dataset.revision}")
        return rows
    needs = set(todo) | ({"bm25", "dense"} if {"hybrid", "rerank"} & set(todo) else set())
    needs |= {"hybrid"} if "rerank" in todo else set()
    retriever = None
    if "dense" in needs:
        retriever = dense_retriever(dense_dir, cache_dir=cache_dir, show_progress=show_progress)
    made: dict[str, dict[str, Any]] = {m: {} for m in needs}
    for topic_name in dataset.topics:
        topic = dataset.topic(topic_name)
        if "bm25" in needs:
            say(f"baselines: {topic_name}: BM25 over {len(topic.docs):,} docs")
            made["bm25"][topic_name] = baselines.bm25(topic, show_progress=show_progress)
        if "dense" in needs:
            say(f"baselines: {topic_name}: dense ({dense_id}) over {len(topic.docs):,} docs")
            made["dense"][topic_name] = baselines.dense(topic, retriever=retriever)
        if "hybrid" in needs:
            made["hybrid"][topic_name] = baselines.hybrid(made["bm25"][topic_name], made["dense"][topic_name])
        if "rerank" in needs:
            from freshstack_hf.retrieval.rerank import rerank

            say(f"baselines: {topic_name}: reranking the hybrid top {configs['rerank']['top_k']} with {ce_id}")
            ranked = rerank(
                cross_encoder,
                {q.query_id: q.text for q in topic.queries},
                made["hybrid"][topic_name].run,
                {d.doc_id: d.text for d in topic.docs},
                show_progress=show_progress,
            )
            made["rerank"][topic_name] = baselines.BaselineRun("rerank", ranked, {"model": ce_id})
    dense_name, ce_name = _short(dense_id), _short(ce_id)
    names = {
        "bm25": "BM25",
        "dense": f"Dense ({dense_name})",
        "hybrid": f"RRF hybrid (BM25 + {dense_name})",
        "rerank": f"Reranked hybrid ({ce_name})",
    }
    size = weights_parameters(dense_dir) if dense_dir else None
    for method in todo:
        runs = {t: r.as_scores() for t, r in made[method].items()}
        scored = score_for_store(dataset, runs, dataset.topics, by_topic=True, resamples=resamples)
        params = {
            "job": "baseline",
            "config": configs[method],
            "dataset": dataset.source,
            **scored.parameters,
            "run_params": {t: r.params for t, r in made[method].items()},
            "seconds": {t: r.seconds for t, r in made[method].items()},
        }
        description = f"computed by freshstack-hf {__version__} on this dataset: " + json.dumps(configs[method])
        system, created = store.add_system(
            name=names[method],
            kind="baseline",
            content_hash=hashes[method],
            description=description,
            size=None if method == "bm25" else size,
            results=scored.results,
            meta=ResultMeta(dataset.revision, __version__, params),
        )
        if archive is not None:
            archive.save(hashes[method], scored.archived)
        say(f"baselines: stored {names[method]} as system #{system.id}")
        rows.append(BaselineRow(method, system.name, system.id, created))
    return rows


def _short(model_id: str | None) -> str:
    return (model_id or "").rstrip("/").split("/")[-1]
