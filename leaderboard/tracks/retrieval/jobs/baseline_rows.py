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
from freshstack_hf.baselines import registry
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
from leaderboard.baseline_key import BaselineRow, config_hash, queue_row
from leaderboard.scoring import score_for_store
from leaderboard.store.audit import board_entry
from leaderboard.store.records import ResultMeta, SystemState
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval import BASELINE_JOB_KIND
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import model_fingerprint, weights_parameters

Say = Callable[[str], None]
# A row in one of these states is left alone: scored, or a worker is computing it.
LIVE_OR_SCORED = (SystemState.SCORED, SystemState.QUEUED, SystemState.RUNNING)


@dataclass(frozen=True)
class BaselinePlan:
    """The rows asked for (`wanted`, in order) with their configurations, dedupe keys and names: everything known
    before a model is loaded. The methods themselves are `freshstack_hf.baselines.METHODS`."""

    wanted: list[str]
    configs: dict[str, dict[str, Any]]  # every method the wanted rows need, by name
    hashes: dict[str, str]  # wanted method -> dedupe key
    names: dict[str, str]
    setup: Any  # `baselines.Setup`: the models as asked and fingerprinted
    dense_dir: Path | None

    @property
    def model(self) -> str | None:
        """The dense model as asked (name or folder), None for the packaged default."""
        return self.setup.dense_model

    @property
    def cross_encoder(self) -> str | None:
        return self.setup.cross_encoder


def plan_baselines(
    dataset: Dataset,
    methods: Iterable[str] | None = None,
    *,
    model: str | None = None,
    cross_encoder: str | None = None,
) -> BaselinePlan:
    """The configurations and dedupe keys of the rows `methods` (default: the registry's board rows; with a
    cross-encoder also the methods that need one) on `dataset`."""
    asked = list(dict.fromkeys(registry.board_methods() if methods is None else methods))
    unknown = [m for m in asked if m not in registry.METHODS]
    if unknown:
        raise FreshStackError(f"unknown baseline method(s) {unknown}: use {', '.join(registry.board_methods())}")
    with_ce = [m for m, spec in registry.METHODS.items() if registry.CROSS_ENCODER in spec.needs]
    wanted = asked + [m for m in with_ce if cross_encoder and m not in asked]
    if registry.CROSS_ENCODER in registry.needs(wanted) and not cross_encoder:
        raise FreshStackError("a rerank baseline needs a cross-encoder: pass --cross-encoder")
    fingerprints: dict[str, Any] = {"dense_model": model, "cross_encoder": cross_encoder}
    dense_dir = None
    if registry.DENSE_MODEL in registry.needs(wanted):
        dense_id, dense_dir, files = model_fingerprint(model or DEFAULT_DENSE_MODEL)
        fingerprints |= {"dense_id": dense_id, "dense_files": files}
    if cross_encoder:
        ce_id, _, ce_files = model_fingerprint(cross_encoder)
        fingerprints |= {"cross_encoder_id": ce_id, "cross_encoder_files": ce_files}
    setup = registry.Setup(**fingerprints)
    configs = registry.configs(wanted, setup)
    names = {m: registry.METHODS[m].label(setup) for m in registry.with_inputs(wanted)}
    hashes = {m: config_hash(configs[m], dataset.revision) for m in wanted}
    return BaselinePlan(wanted, configs, hashes, names, setup, dense_dir)


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
    """{method: {topic: BaselineRun}} for `methods` and the runs they are made from (their registry inputs).

    Dense embeddings go through the embedding cache (`cache_dir`, else the shared default), so rows computed
    one after another (dense, then the hybrid) encode the corpus once.
    """
    settings = {"cache_dir": cache_dir, "device": device, "devices": devices, "show_progress": show_progress}
    resources = registry.Resources(plan.setup, say=say, **settings)
    made: dict[str, dict[str, Any]] = {m: {} for m in registry.with_inputs(methods)}
    with resources.pooled():  # one encoding pool, if any, for every topic
        for topic_name in dataset.topics:
            for method, run in registry.compute(dataset.topic(topic_name), methods, resources).items():
                made[method][topic_name] = run
    return made


@dataclass(frozen=True)
class ScoredBaseline:
    """One row's scores, ready for the store, and the ranking the store keeps behind it (as the store keeps it:
    `blobs`, encoded while the row was scored)."""

    results: dict[str, Any]
    meta: ResultMeta
    size: int | None
    archived: dict[str, Any]
    blobs: dict[str, Any]


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
    return ScoredBaseline(scored.results, meta, size_of(plan, method), scored.archived, scored.blobs())


def size_of(plan: BaselinePlan, method: str) -> int | None:
    """A row's parameter count: the dense model's (read from its safetensors headers) when the row uses it."""
    uses_dense = registry.DENSE_MODEL in registry.needs([method])
    return weights_parameters(plan.dense_dir) if plan.dense_dir and uses_dense else None


def description(plan: BaselinePlan, method: str) -> str:
    return f"computed by freshstack-hf {__version__} on this dataset: " + json.dumps(plan.configs[method])


def compute_baselines(
    store: Store,
    dataset: Dataset,
    *,
    methods: Iterable[str] | None = None,
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
    done = {m: s for m, s in found.items() if s is not None and s.status in LIVE_OR_SCORED}
    for system in done.values():
        if system.status != SystemState.SCORED:
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
            store.save_results(stored.id, row.results, row.meta, replace=True, blobs=row.blobs)
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
                blobs=row.blobs,
                audit=board_entry("baseline", "scored", f"baseline '{plan.names[method]}' computed and stored"),
            )
        say(f"baselines: stored {plan.names[method]} as system #{system.id}")
        rows.append(BaselineRow(method, system.name, system.id, created))
    return rows


def queue_baselines(
    store: Store,
    dataset: Dataset,
    *,
    methods: Iterable[str] | None = None,
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
