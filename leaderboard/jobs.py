"""What a worker runs for each job kind: scoring a stored run, or a submitted model by dense retrieval.

Scores come from the library through `leaderboard.scoring` (the path submissions and baselines take), and a
model is vetted (`leaderboard.vetting`) before anything of it is loaded. The run behind a model's row comes
back with its scores, so the worker archives it and the detail view can list the nuggets the model never
covered, as for any other row. Payloads (JSON, written by the app):

* run:   {"run": {topic: {query_id: {doc_id: score}}}} or {"run_path": "file.json"} with that content,
         optional "topics", "dataset", "dataset_revision";
* model: {"model": "org/name" or a path, "revision", "track": "full" | "nano", "topics", "k",
         "batch_size", "max_seq_length", "dataset", "dataset_revision"}.

Measures are the leaderboard's (`MEASURES`, alpha included in each measure), whatever the payload asks:
a row must be comparable with the others.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.schema import JobOutput, JobRecord, ResultMeta
from leaderboard.scoring import score_for_store
from leaderboard.vetting import DEFAULT_MAX_MODEL_BYTES, check_model_dir, model_dir


def evaluate_job(job: JobRecord, **options: Any) -> JobOutput:
    """The worker's default evaluate function; `options` go to `evaluate_run` / `evaluate_model`."""
    if job.kind == "run":
        return evaluate_run(job.payload, dataset=options.get("dataset"))
    if job.kind == "model":
        return evaluate_model(job.payload, **options)
    if job.kind == "answers_judge":
        from leaderboard.tracks.answers.answer_jobs import evaluate_answers_judge

        return evaluate_answers_judge(job.payload, dataset=options.get("dataset"))
    if job.kind == "answers_generate":
        from leaderboard.tracks.answers.answer_jobs import evaluate_answers_generate

        return evaluate_answers_generate(job.payload, dataset=options.get("dataset"))
    raise FreshStackError(
        f"job {job.id}: unknown kind {job.kind!r}; this worker runs 'run', 'model', 'answers_judge' and "
        "'answers_generate' jobs"
    )


def open_job_dataset(payload: Mapping[str, Any], dataset: str | None, topics: list[str] | None = None) -> Dataset:
    """The dataset a payload names (else the worker's default, else $FRESHSTACK_DATASET, else `freshstack`)."""
    source = str(payload.get("dataset") or dataset or os.environ.get("FRESHSTACK_DATASET") or "freshstack")
    return Dataset(source, payload.get("dataset_revision"), topics)


def evaluate_run(payload: Mapping[str, Any], *, dataset: str | None = None) -> JobOutput:
    """Score a run already validated by the app, topic by topic, against the dataset's judgments."""
    if "run" in payload:
        run = payload["run"]
    elif "run_path" in payload:
        run = json.loads(Path(payload["run_path"]).read_text(encoding="utf-8"))
    else:
        raise FreshStackError("run job without 'run' or 'run_path' in its payload")
    if not isinstance(run, Mapping) or not all(isinstance(v, Mapping) for v in run.values()):
        raise FreshStackError("a run payload must map topic -> query id -> doc id -> score")
    topics = list(payload.get("topics") or run)
    data = open_job_dataset(payload, dataset, topics)
    runs = {t: run.get(t, {}) for t in topics}
    resamples = int(payload.get("resamples", RESAMPLES))
    scored = score_for_store(data, runs, topics, by_topic=True, resamples=resamples)
    params = {"job": "run", "dataset": data.source, "topics": topics, **scored.parameters}
    return JobOutput(scored.results, ResultMeta(data.revision, __version__, params), runs=scored.archived)


def evaluate_model(
    payload: Mapping[str, Any],
    *,
    dataset: str | None = None,
    cache_dir: str | None = None,
    device: str | None = None,
    max_model_bytes: int = DEFAULT_MAX_MODEL_BYTES,
) -> JobOutput:
    """Dense retrieval with a sentence-transformers model over each topic's corpus (or its Nano subset), scored."""
    try:
        from freshstack_hf.retrieval.dense import DenseRetriever
    except ImportError as exc:
        raise FreshStackError(f"model jobs need dense retrieval ({exc}); install freshstack-hf[dense]") from exc
    from freshstack_hf.metrics import MEASURES
    from freshstack_hf.runs import from_ranked

    if not payload.get("model"):
        raise FreshStackError("model job without 'model' (a Hub id or a local path) in its payload")
    track = payload.get("track", "full")
    if track not in ("full", "nano"):
        raise FreshStackError(f"unknown track {track!r}: use 'full' (whole corpora) or 'nano' (candidate pools)")
    folder = model_dir(str(payload["model"]), payload.get("revision"))
    params = check_model_dir(folder, max_model_bytes)
    data = open_job_dataset(payload, dataset, payload.get("topics"))
    k = int(payload.get("k") or max(100, *(m.k for m in MEASURES)))
    settings = {"batch_size": int(payload.get("batch_size", 32)), "max_seq_length": payload.get("max_seq_length")}
    retriever = DenseRetriever(str(folder), cache_dir=cache_dir, device=device, **settings)
    runs = {}
    for name in data.topics:
        topic = data.topic(name)
        docs = topic.docs
        if track == "nano":
            pool = {d for ids in data.candidates(name).values() for d in ids}
            docs = [d for d in docs if d.doc_id in pool]
        queries = topic.queries
        ranked, _ = retriever.retrieve(
            [d.doc_id for d in docs], [d.text for d in docs], [q.query_id for q in queries], [q.text for q in queries],
            k=min(k, len(docs)),
        )  # fmt: skip
        runs[name] = from_ranked(ranked)
    resamples = int(payload.get("resamples", RESAMPLES))
    scored = score_for_store(data, runs, data.topics, by_topic=True, resamples=resamples)
    meta = {
        "job": "model",
        "model": str(payload["model"]),
        "model_revision": retriever.dense.revision,
        "parameters": params,
        "track": track,
        "k": k,
        "query_prompt": retriever.query_prompt,
        "doc_prompt": retriever.doc_prompt,
        "max_seq_length": retriever.max_seq_length,
        "dtype": retriever.dense.dtype,
        "dataset": data.source,
        "topics": data.topics,
        "batch_size": settings["batch_size"],
        **scored.parameters,
    }
    return JobOutput(scored.results, ResultMeta(data.revision, __version__, meta), size=params, runs=scored.archived)
