"""The retrieval track's `baseline` job: one of the project's baseline rows (BM25, dense, RRF hybrid, reranked
hybrid), computed by a worker and scored, so the app serves before its baselines exist (`baseline_rows`).

Payload (JSON, written by `baseline_rows.queue_baselines`): {"method", "model" (the dense model as the app was
given it, null for the packaged one), "cross_encoder", "content_hash" (the row's dedupe key), "dataset",
"dataset_revision", "topics", "resamples"}. The worker plans the row again from its own copy of the models and
data, and refuses the job when that plan's key differs from the row's: other model files or another dataset
revision would store numbers under a configuration they were not computed with.

A hybrid or reranked row computes the runs it fuses in the same job; the dense embeddings come from the worker's
embedding cache (`--cache-dir`, else the shared default), so the dense row's encoding is not repeated. With
several GPUs the corpus is encoded on all of them (`freshstack_hf.retrieval.encoding`'s pool).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from freshstack_hf.baselines.registry import METHODS
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from leaderboard.fault_points import POINTS
from leaderboard.tracks.retrieval import BASELINE_JOB_KIND
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_runs, plan_baselines, score_baseline
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput, models_for_method, open_job_dataset

log = logging.getLogger(__name__)


def evaluate_baseline(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """Compute and score the baseline row the payload names, checked against the row's dedupe key first."""
    method = payload.get("method")
    if method not in METHODS or not payload.get("content_hash"):
        raise FreshStackError(f"baseline job without a 'content_hash' and a method of {', '.join(METHODS)}")
    POINTS.hold_baselines()
    data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    if payload.get("dataset_revision") and data.revision != payload["dataset_revision"]:
        raise FreshStackError(
            f"dataset {data.source} is at revision {data.revision} on this worker, but the row was queued for "
            f"{payload['dataset_revision']}: give the worker the app's dataset (--dataset), or restart the app"
        )
    plan = plan_baselines(data, [method], model=payload.get("model"), cross_encoder=payload.get("cross_encoder"))
    if plan.hashes[method] != payload["content_hash"]:
        raise FreshStackError(
            f"the {plan.names[method]} row was queued for other model files than this worker has "
            f"({plan.configs[method]}): run the worker with the app's models"
        )
    devices = list(options.devices) if options.devices else None
    made = compute_runs(
        data, plan, [method], cache_dir=options.cache_dir, device=options.device, devices=devices, say=log.info
    )
    row = score_baseline(data, plan, method, made, int(payload.get("resamples", RESAMPLES)))
    return JobOutput(row.results, row.meta, size=row.size, runs=row.archived)


# what the worker runs for this track (`leaderboard.worker.jobs`)
JOB_KINDS = {BASELINE_JOB_KIND: JobKind(evaluate_baseline, imports=models_for_method("method", "bm25"))}
