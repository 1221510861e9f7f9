"""The answers track's `answers_baseline` job: the extractive answer baseline row, computed by a worker so the app
serves before it exists (`answer_baselines.queue_answer_baselines`).

The job retrieves each query's top docs (BM25, or the RRF hybrid with the dense model, its embeddings from the
worker's embedding cache), writes the extractive answers and scores them by citation, exactly as
`answer_baselines.compute_answer_baselines` does in the app. The answers are stored with the citation scores (a
blob of the row, by their hash) and, when the app names a judge, the row's `answers_judge` job is queued as the
job's follow-up, in the same transaction: the judge reads them from the store wherever it runs, and the judge's
key stays with the workers that hold it, as for a submitted answer file.

Payload (JSON): {"retrieval", "model", "content_hash", "dataset", "dataset_revision", "topics", "judge" (base_url
and model, or null), "max_words", "resamples"}. As for the retrieval baselines, the worker plans the row again
and refuses the job when its dedupe key differs from the row's (other model files, another dataset revision).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers import score_answers, to_trec_rag
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError
from leaderboard.fault_points import POINTS
from leaderboard.store.blobs import Blob
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.answers import ANSWERS_BLOB, JUDGE_JOB_KIND
from leaderboard.tracks.answers.answer_baselines import extractive_set, plan_answer_baselines, top_docs
from leaderboard.tracks.answers.answer_rows import stored_results
from leaderboard.tracks.answers.answer_submit import judge_payload
from leaderboard.worker.job_contract import JobOptions, JobOutput, open_job_dataset
from leaderboard.worker.judge_endpoint import JudgeEndpoint

log = logging.getLogger(__name__)


def planned_dataset(payload: Mapping[str, Any], options: JobOptions, method: str) -> tuple[Any, Any]:
    """The job's dataset and the answer rows' plan, once the row's dedupe key is checked against the payload's."""
    data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    generator = payload.get("generator")
    plan = plan_answer_baselines(
        data,
        str(payload.get("retrieval") or "hybrid"),
        model=payload.get("model"),
        generator=JudgeEndpoint(**generator) if generator else None,
    )
    if plan.hashes.get(method) != payload.get("content_hash"):
        raise FreshStackError(
            f"the answer baseline row was queued for another dataset revision or other model files than this "
            f"worker has (dataset {data.source} at {data.revision}): run the worker with the app's dataset and models"
        )
    return data, plan


def evaluate_answers_baseline(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """The extractive answer baseline, scored by citation; its judge queued as the follow-up when one is named."""
    if not payload.get("content_hash"):
        raise FreshStackError("answers_baseline job without the row's 'content_hash' in its payload")
    POINTS.hold_baselines()
    data, plan = planned_dataset(payload, options, "extractive")
    devices = list(options.devices) if options.devices else None
    ranked = top_docs(
        data, plan.retrieval, plan.dense_dir, cache_dir=options.cache_dir, device=options.device, devices=devices,
        say=log.info,
    )  # fmt: skip
    answers = extractive_set(data, ranked)
    resamples = int(payload.get("resamples", RESAMPLES))
    max_words = int(payload.get("max_words") or DEFAULT_MAX_WORDS)
    scores = score_answers([data.topic(t) for t in data.topics], answers, resamples=resamples, seed=SEED)
    results = stored_results(scores)
    if not results:
        raise FreshStackError("answer baseline: no query of this dataset has nuggets to score")
    params = {
        "job": "answers_baseline",
        "config": plan.configs["extractive"],
        "topics": list(data.topics),
        "judge": None,
        "max_words": max_words,
        "resamples": resamples,
        "seed": SEED,
        "dataset": data.source,
    }
    # Stored with the scores, filed under the text's sha256: the judge job names it so and reads it from the store.
    checked = Blob.of(to_trec_rag(answers).encode("utf-8"), ANSWERS_BLOB)
    follow_up = None
    if payload.get("judge"):
        judge = JudgeEndpoint(**payload["judge"])
        judged = judge_payload(checked.sha256, data, list(data.topics), judge, max_words, resamples)
        follow_up = (JUDGE_JOB_KIND, judged)
    meta = ResultMeta(data.revision, __version__, params)
    return JobOutput(results, meta, follow_up=follow_up, blobs={ANSWERS_BLOB: checked})
