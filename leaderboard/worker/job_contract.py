"""What a track's job handler is given and what it is registered with: the contract between the worker and the
tracks (the registry itself is `leaderboard.worker.jobs`).

A handler takes a job's payload (JSON, written by the app) and the worker's `JobOptions`, and returns a
`JobOutput` (below). It runs in the worker's job process, which never sees the store nor any
secret-looking environment variable, except those its `JobKind.keeps`. A kind scored `live` is handed a job
folder of the embargoed questions' texts and the documents (`worker.live_pass`: never the private revision, its
judgments, nor the token the worker read it with), or why there is none, and returns its ranking of them; it seals
its process before it ranks anything (`worker.sandbox.seal_job`). What it needs from the store (the
ranking a fill starts from, the answers a judge reads) its `JobKind.inputs` names: the worker reads those blobs
of the job's system, verified, and hands them over in the payload (`job_inputs`), so a job runs on any machine
that can reach the store, with no folder shared with the app.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.baselines import registry
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.store.records import ResultMeta
from leaderboard.worker.vetting import DEFAULT_MAX_MODEL_BYTES


@dataclass(frozen=True, slots=True)
class JobOptions:
    """The worker's settings a handler may use (`freshstack-hf worker` flags); unknown options are refused."""

    dataset: str | None = None  # the dataset of jobs that name none ($FRESHSTACK_DATASET, else `freshstack`)
    cache_dir: str | None = None  # embedding cache of model jobs
    device: str | None = None  # torch device of model jobs
    devices: tuple[str, ...] | None = None  # the encoding pool's devices (default: every GPU when there are several)
    max_model_bytes: int = DEFAULT_MAX_MODEL_BYTES  # the largest model a model job loads


@dataclass(frozen=True, slots=True)
class JobOutput:
    """What an evaluation function returns to the worker.

    `results` maps topic -> a `freshstack_hf.metrics.TopicResult` (or any object or dict with `metrics`, and
    optionally `per_query` and `ci` = {measure: (low, high)}); `size` is the model's parameter count, if known;
    `runs` (topic -> top of the ranking) is stored with the results, so the row's detail can list missed nuggets;
    `blobs` ({role: `store.blobs.Blob`}) are any other content the results depend on (the answers a follow-up judges, a
    fill's judgments), stored in the same transaction;
    `cutoff` is a date the job found (a model card's), kept only where the submitter gave none; `follow_up` =
    (job kind, payload) is the system's next job, queued when these results are stored (the answer baseline's judge);
    `live_runs` (topic -> ranking) is a live-scored job's ranking of the embargoed questions it was handed
    (`worker.live_pass`), which the worker scores itself and stores nowhere (but `--live-runs`).
    """

    results: dict[str, Any]
    meta: ResultMeta
    size: int | None = None
    runs: dict[str, Any] | None = None
    cutoff: str | None = None
    follow_up: tuple[str, dict[str, Any]] | None = None
    blobs: dict[str, Any] | None = None
    live_runs: dict[str, Any] | None = None


Handler = Callable[[Mapping[str, Any], JobOptions], JobOutput]


@dataclass(frozen=True, slots=True)
class JobKind:
    """A kind of job a track queues: the handler a worker runs it with, and the secret variables its process keeps
    (only for kinds that run no submitted code: they send text to the operator's own endpoint)."""

    handler: Handler
    keeps: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()  # roles of the system's blobs the worker reads for the job (`BlobStore.system_blob`)
    live: bool = False  # scored live too: the worker hands it the embargoed questions to rank (`worker.live_pass`)
    # modules the worker's job launcher imports once, before it forks a job of the kind (`worker.job_launcher`):
    # the heavy libraries the handler imports when it runs, or which of them a job's payload needs
    imports: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]] = ()

    def imports_for(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """What the launcher imports before it forks a job of this kind with `payload`."""
        return self.imports(payload) if callable(self.imports) else self.imports


# The `JobKind.imports` of a kind that loads a sentence-transformers model or a CrossEncoder (with torch and
# transformers, 5 s of CPU to import: once per worker run, not once per job).
LOADS_MODELS = ("sentence_transformers",)


def models_for_method(key: str, default: str) -> Callable[[Mapping[str, Any]], tuple[str, ...]]:
    """The `JobKind.imports` of a kind that runs the retrieval method its payload names under `key` (else
    `default`): `LOADS_MODELS` for a method that needs a model (dense, hybrid, reranked), nothing for BM25."""

    def imports(payload: Mapping[str, Any]) -> tuple[str, ...]:
        try:
            return LOADS_MODELS if registry.needs([str(payload.get(key) or default)]) else ()
        except (KeyError, FreshStackError):  # an unknown method: the job says so itself
            return ()

    return imports


INPUTS = "stored_inputs"  # the payload key under which a handler finds its inputs: {role: bytes}


def job_inputs(payload: Mapping[str, Any], role: str, what: str) -> bytes:
    """The blob `role` the worker read for this job; refused naming `what` when the system keeps none."""
    found = (payload.get(INPUTS) or {}).get(role)
    if found is None:
        raise FreshStackError(f"the store keeps no {what} for this job's system: it cannot be run")
    return found


def payload_dataset(dataset: Dataset) -> dict[str, str]:
    """Where a worker finds the dataset a queued job is for: a Hub id with the commit the app serves (any machine
    can fetch it), else the local folder's absolute path (workers on the app's machine), with the revision the app
    asked for (a dated snapshot's name, which a worker's own copy of the repo resolves the same way)."""
    folder = Path(dataset.folder)
    from_hub = folder.name == dataset.revision and not Path(dataset.source).expanduser().exists()
    return {
        "dataset": dataset.source if from_hub else str(folder.resolve()),
        "dataset_revision": dataset.revision,
        "requested_revision": dataset.requested_revision or "",
    }


def _opened(source: str, revision: str | None, topics: list[str] | None) -> Dataset | None:
    try:
        return Dataset(source, revision, topics)
    except FreshStackError:
        return None


def open_job_dataset(payload: Mapping[str, Any], dataset: str | None, topics: list[str] | None = None) -> Dataset:
    """The data a job is scored on: exactly the revision it was queued for (`dataset_revision`: a content hash for a
    folder, the commit for a Hub download), so a row is never scored on other data.

    The worker's own dataset (`--dataset`, else $FRESHSTACK_DATASET) comes first when it holds that revision: a
    worker on another machine has its own copy or download and needs nothing of the app's filesystem. Otherwise the
    dataset the payload names (the app's folder, reachable from workers on its machine, or a Hub id); a payload
    naming none is run on the worker's own dataset, else `freshstack`."""
    named, wanted = payload.get("dataset"), payload.get("dataset_revision")
    own = dataset or os.environ.get("FRESHSTACK_DATASET")
    if own and wanted:
        mine = _opened(own, payload.get("requested_revision") or wanted, topics)
        if mine is not None and mine.revision == wanted:
            return mine
    if named and Path(str(named)).is_absolute() and not Path(str(named)).exists():
        raise FreshStackError(
            f"the job was queued for the dataset at {named} (revision {wanted}), which this machine does not have, "
            f"and the worker's dataset ({own or 'none given'}) does not hold that revision: run the worker with "
            "--dataset naming the board's dataset (its Hub id, or a copy of its folder)"
        )
    return Dataset(str(named or own or "freshstack"), wanted, topics)
