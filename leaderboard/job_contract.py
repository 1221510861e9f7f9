"""What a track's job handler is given and what it is registered with: the contract between the worker and the
tracks (the registry itself is `leaderboard.jobs`).

A handler takes a job's payload (JSON, written by the app) and the worker's `JobOptions`, and returns a
`JobOutput` (`leaderboard.schema`). It runs in the worker's job process, which never sees the store nor any
secret-looking environment variable, except those its `JobKind.keeps`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.repo.dataset import Dataset
from leaderboard.schema import JobOutput
from leaderboard.vetting import DEFAULT_MAX_MODEL_BYTES


@dataclass(frozen=True, slots=True)
class JobOptions:
    """The worker's settings a handler may use (`freshstack-hf worker` flags); unknown options are refused."""

    dataset: str | None = None  # the dataset of jobs that name none ($FRESHSTACK_DATASET, else `freshstack`)
    cache_dir: str | None = None  # embedding cache of model jobs
    device: str | None = None  # torch device of model jobs
    devices: tuple[str, ...] | None = None  # the encoding pool's devices (default: every GPU when there are several)
    max_model_bytes: int = DEFAULT_MAX_MODEL_BYTES  # the largest model a model job loads
    archive_dir: str | None = None  # the app's --runs-dir (`archive.runs_dir`), where judge jobs read answers


Handler = Callable[[Mapping[str, Any], JobOptions], JobOutput]


@dataclass(frozen=True, slots=True)
class JobKind:
    """A kind of job a track queues: the handler a worker runs it with, and the secret variables its process keeps
    (only for kinds that run no submitted code: they send text to the operator's own endpoint)."""

    handler: Handler
    keeps: tuple[str, ...] = ()


def payload_dataset(dataset: Dataset) -> dict[str, str]:
    """Where a worker finds the dataset a queued job is for: a Hub id with the commit the app serves (any machine
    can fetch it), else the local folder's absolute path (workers that share the app's filesystem)."""
    folder = Path(dataset.folder)
    from_hub = folder.name == dataset.revision and not Path(dataset.source).expanduser().exists()
    return {
        "dataset": dataset.source if from_hub else str(folder.resolve()),
        "dataset_revision": dataset.revision,
    }


def open_job_dataset(payload: Mapping[str, Any], dataset: str | None, topics: list[str] | None = None) -> Dataset:
    """The dataset a payload names (else the worker's default, else $FRESHSTACK_DATASET, else `freshstack`)."""
    source = str(payload.get("dataset") or dataset or os.environ.get("FRESHSTACK_DATASET") or "freshstack")
    return Dataset(source, payload.get("dataset_revision"), topics)
