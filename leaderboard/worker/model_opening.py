"""How a job that measures a submitted model opens, whichever track it is (a sentence-transformers model, a
CrossEncoder): the model's dependencies present, its payload naming a model, the kind's own refusals of the payload,
the model's folder found (a local folder, a cached snapshot, or a download of the pinned commit) and vetted by the
kind before anything of it is loaded, the dataset opened at the revision the job was queued for, and the live pass
the worker handed (`live_pass`), which the job hands on to its seal (`sandbox.seal_job`).

Each step refuses with the kind's own words (`FreshStackError`), so a refused job says what it is and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import require_dense
from leaderboard.worker.job_contract import JobOptions, open_job_dataset
from leaderboard.worker.private_split import PRIVATE
from leaderboard.worker.vetting import model_dir


@dataclass(frozen=True)
class OpenedModelJob:
    """What a model job works on once opened: the vetted model folder, its parameter count, the dataset at its
    revision and the live pass the worker handed (None when it handed none)."""

    folder: Path
    params: int
    data: Dataset
    live_pass: Any


def open_model_job(
    payload: Mapping[str, Any],
    options: JobOptions,
    *,
    kind: str,
    needs: str,
    vet: Callable[[Path, int], int],
    refuse: Callable[[Mapping[str, Any]], None] = lambda payload: None,
) -> OpenedModelJob:
    """Open a `kind` job (its model loaded through `needs`, checked by `refuse` and `vet`) as the module docstring
    says; refused before anything of the model is loaded."""
    try:
        require_dense()
    except ImportError as exc:
        raise FreshStackError(f"{kind} jobs need {needs} ({exc}); install freshstack-hf[dense]") from exc
    if not payload.get("model"):
        raise FreshStackError(f"{kind} job without 'model' (a Hub id or a local path) in its payload")
    refuse(payload)
    folder = model_dir(str(payload["model"]), payload.get("revision"))
    params = vet(folder, options.max_model_bytes)
    data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    return OpenedModelJob(folder, params, data, payload.get(PRIVATE))
