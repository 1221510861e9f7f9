"""The project's baseline rows: BM25, dense, RRF hybrid, and a reranked hybrid when a cross-encoder is given.

Runs are computed by the library (`freshstack_hf.baselines`) on the dataset the app serves and scored like
any submission (`leaderboard.scoring`). Each row's dedupe key hashes its *configuration*
(`leaderboard.baseline_key`), known before any work (`plan_baselines` only fingerprints the model files), so a
restart finds every row stored and loads no model.

Two ways to fill the rows: `queue_baselines` (what the app does: each missing row is stored at once in state
queued with a `baseline` job, computed by a worker through `baseline_job`, so the app serves first) and
`compute_baselines` (here and now, in the caller's process: scripts, benchmarks, tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES, dense_retriever
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.baseline_key import BaselineRow, config_hash, queue_row
from leaderboard.scoring import ranking_blobs, score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval import BASELINE_JOB_KIND
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import model_fingerprint, weights_parameters

METHODS = ("bm25", "dense", "hybrid", "rerank")
Say = Callable[[str], None]


@dataclass(frozen=True)
class BaselinePlan:
    """The rows asked for (`wanted`, in order) with their configurations, dedupe keys and names: everything known
    before a model is loaded."""

    wanted: list[str]
    configs: dict[str, dict[str, Any]]  # every method the wanted rows need, by name
    hashes: dict[str, str]  # wanted method -> dedupe key
    names: dict[str, str]
    model: str | None  # the dense model as asked (name or folder), None for the packaged default
    cross_encoder: str | None
    dense_dir: Path | None

    def needs(self, methods: Iterable[str]) -> set[str]:
        """The runs computing `methods` takes: a hybrid needs BM25 and dense, a rerank also the hybrid."""
        todo = set(methods)
        needs = todo | ({"bm25", "dense"} if {"hybrid", "rerank"} & todo else set())
        return needs | ({"hybrid"} if "rerank" in todo else set())


def plan_baselines(
    dataset: Dataset,
    methods: Iterable[str] = ("bm25", "dense", "hybrid"),
    *,
    model: str | None = None,
    cross_encoder: str | None = None,
) -> BaselinePlan:
    """The configurations and dedupe keys of the rows `methods` (+ `rerank` with a cross-encoder) on `dataset`."""
    from freshstack_hf import baselines
    from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

    wanted = list(dict.fromkeys(methods)) + (["rerank"] if cross_encoder else [])
    unknown = set(wanted) - set(METHODS)
    if unknown:
        raise FreshStackError(f"unknown baseline method(s) {sorted(unknown)}: use bm25, dense, hybrid")
    if "rerank" in wanted and not cross_encoder:
        raise FreshStackError("a rerank baseline needs a cross-encoder: pass --cross-encoder")
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
    dense_name, ce_name = _short(dense_id), _short(ce_id)
    names = {
        "bm25": "BM25",
        "dense": f"Dense ({dense_name})",
        "hybrid": f"RRF hybrid (BM25 + {dense_name})",
        "rerank": f"Reranked hybrid ({ce_name})",
    }
    hashes = {m: config_hash(configs[m], dataset.revision) for m in wanted}
    return BaselinePlan(wanted, configs, hashes, names, model, cross_encoder, dense_dir)


def compute_runs(
    dataset: Dataset,
    plan: BaselinePlan,
    methods: Sequence[str],
    *,
    cache_dir: str | Path | None = None,
    device: str | None = None,
    devices: list[str] | None = None,
    say: Say = lambda _msg: None,
    show_progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """{method: {topic: BaselineRun}} for `methods` and the runs they are made from (`BaselinePlan.needs`).

    Dense embeddings go through the embedding cache (`cache_dir`, else the shared default), so rows computed
    one after another (dense, then the hybrid) encode the corpus once.
    """
    from freshstack_hf import baselines

    needs = plan.needs(methods)
    retriever = None
    if "dense" in needs:
        settings: dict[str, Any] = {"show_progress": show_progress, "device": device, "devices": devices}
        retriever = dense_retriever(plan.dense_dir, cache_dir=cache_dir, **settings)
    made: dict[str, dict[str, Any]] = {m: {} for m in needs}
    for topic_name in dataset.topics:
        topic = dataset.topic(topic_name)
        if "bm25" in needs:
            say(f"baselines: {topic_name}: BM25 over {len(topic.docs):,} docs")
            made["bm25"][topic_name] = baselines.bm25(topic, show_progress=show_progress)
        if "dense" in needs:
            say(f"baselines: {topic_name}: dense ({plan.configs['dense']['model']}) over {len(topic.docs):,} docs")
            made["dense"][topic_name] = baselines.dense(topic, retriever=retriever)
        if "hybrid" in needs:
            made["hybrid"][topic_name] = baselines.hybrid(made["bm25"][topic_name], made["dense"][topic_name])
        if "rerank" in needs:
            from freshstack_hf.retrieval.rerank import rerank

            top_k, ce_id = plan.configs["rerank"]["top_k"], plan.configs["rerank"]["model"]
            say(f"baselines: {topic_name}: reranking the hybrid top {top_k} with {ce_id}")
            ranked = rerank(
                plan.cross_encoder,
                {q.query_id: q.text for q in topic.queries},
                made["hybrid"][topic_name].run,
                {d.doc_id: d.text for d in topic.docs},
                device=device,
                show_progress=show_progress,
            )
            made["rerank"][topic_name] = baselines.BaselineRun("rerank", ranked, {"model": ce_id})
    return made


@dataclass(frozen=True)
class ScoredBaseline:
    """One row's scores, ready for the store, and the ranking the store keeps behind it."""

    results: dict[str, Any]
    meta: ResultMeta
    size: int | None
    archived: dict[str, Any]


def score_baseline(
    dataset: Dataset, plan: BaselinePlan, method: str, made: dict[str, dict[str, Any]], resamples: int = RESAMPLES
) -> ScoredBaseline:
    """Score one computed row like any submission, with the parameters and timings behind it."""
    runs = {t: r.as_scores() for t, r in made[method].items()}
    scored = score_for_store(dataset, runs, dataset.topics, by_topic=True, resamples=resamples)
    params = {
        "job": "baseline",
        "config": plan.configs[method],
        "dataset": dataset.source,
        **scored.parameters,
        "run_params": {t: r.params for t, r in made[method].items()},
        "seconds": {t: r.seconds for t, r in made[method].items()},
    }
    meta = ResultMeta(dataset.revision, __version__, params)
    return ScoredBaseline(scored.results, meta, size_of(plan, method), scored.archived)


def size_of(plan: BaselinePlan, method: str) -> int | None:
    """A row's parameter count: the dense model's (read from its safetensors headers), none for BM25."""
    return weights_parameters(plan.dense_dir) if plan.dense_dir and method != "bm25" else None


def description(plan: BaselinePlan, method: str) -> str:
    return f"computed by freshstack-hf {__version__} on this dataset: " + json.dumps(plan.configs[method])


def compute_baselines(
    store: Store,
    dataset: Dataset,
    *,
    methods: Iterable[str] = ("bm25", "dense", "hybrid"),
    model: str | None = None,
    cross_encoder: str | None = None,
    cache_dir: str | Path | None = None,
    say: Say = lambda _msg: None,
    show_progress: bool = False,
    resamples: int = RESAMPLES,
) -> list[BaselineRow]:
    """Compute and store, in this process, the baseline rows missing for this dataset revision.

    Rows already scored are left alone, and so are rows queued or running (a worker is computing them, see
    `queue_baselines`); a row left failed gets its scores.
    """
    plan = plan_baselines(dataset, methods, model=model, cross_encoder=cross_encoder)
    found = {m: store.find_system(plan.hashes[m]) for m in plan.wanted}
    done = {m: s for m, s in found.items() if s is not None and s.status in ("scored", "queued", "running")}
    for system in done.values():
        if system.status != "scored":
            say(f"baselines: {system.name} is {system.status} for a worker (system #{system.id}); left to it")
    todo = [m for m in plan.wanted if m not in done]
    rows = [BaselineRow(m, s.name, s.id, False, s.status) for m, s in done.items()]
    if not todo:
        say(f"baselines: all {len(plan.wanted)} rows already stored for dataset revision {dataset.revision}")
        return rows
    made = compute_runs(dataset, plan, todo, cache_dir=cache_dir, say=say, show_progress=show_progress)
    for method in todo:
        row = score_baseline(dataset, plan, method, made, resamples)
        stored = found[method]
        if stored is not None:  # a row a worker failed to compute: its scores now
            store.save_results(stored.id, row.results, row.meta, replace=True, blobs=ranking_blobs(row.archived))
            system, created = store.get_system(stored.id) or stored, False
        else:
            system, created = store.add_system(
                name=plan.names[method],
                kind="baseline",
                content_hash=plan.hashes[method],
                description=description(plan, method),
                size=row.size,
                results=row.results,
                meta=row.meta,
                blobs=ranking_blobs(row.archived),
            )
        say(f"baselines: stored {plan.names[method]} as system #{system.id}")
        rows.append(BaselineRow(method, system.name, system.id, created))
    return rows


def queue_baselines(
    store: Store,
    dataset: Dataset,
    *,
    methods: Iterable[str] = ("bm25", "dense", "hybrid"),
    model: str | None = None,
    cross_encoder: str | None = None,
    resamples: int = RESAMPLES,
    say: Say = lambda _msg: None,
) -> list[BaselineRow]:
    """Store each missing baseline row at once, queued with a `baseline` job for a worker; returns every row.

    Cheap (no model is loaded), so the app serves right after it. A row already scored, queued or running is
    left as it is; a failed one is queued again (see `baseline_key.queue_row`).
    """
    plan = plan_baselines(dataset, methods, model=model, cross_encoder=cross_encoder)
    rows = []
    for method in plan.wanted:
        payload = {
            "method": method,
            "model": plan.model,
            "cross_encoder": plan.cross_encoder,
            "content_hash": plan.hashes[method],
            **payload_dataset(dataset),
            "topics": list(dataset.topics),
            "resamples": resamples,
        }
        rows.append(
            queue_row(
                store,
                method,
                name=plan.names[method],
                kind="baseline",
                content_hash=plan.hashes[method],
                description=description(plan, method),
                size=size_of(plan, method),
                job=(BASELINE_JOB_KIND, payload),
                say=lambda msg: say(f"baselines: {msg}"),
            )
        )
    return rows


def _short(model_id: str | None) -> str:
    return (model_id or "").rstrip("/").split("/")[-1]
