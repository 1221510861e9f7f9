"""What a worker runs for each job kind: scoring a stored run, or a submitted model by dense retrieval.

Scores always come from the library (`freshstack_hf.metrics.evaluate`); this module only gathers the inputs
and records how the numbers were made (dataset revision, evaluator version, every parameter). A submitted
model is checked before anything of it is loaded: safetensors weights only, no custom code, under the size
cap, because the worker runs models that strangers chose. Payloads (JSON, written by the app):

* run:   {"run": {topic: {query_id: {doc_id: score}}}} or {"run_path": "file.json"} with that content,
         optional "topics", "measures", "dataset", "dataset_revision";
* model: {"model": "org/name" or a path, "revision", "track": "full" | "nano", "topics", "measures", "k",
         "batch_size", "max_seq_length", "dataset", "dataset_revision"}.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from leaderboard.schema import JobOutput, JobRecord, ResultMeta

DEFAULT_MAX_MODEL_BYTES = 4_000_000_000
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
SAFE_DOWNLOAD = ["*.json", "*.txt", "*.model", "*.safetensors"]  # config, tokenizer, weights; never code or pickle


def evaluate_job(job: JobRecord, **options: Any) -> JobOutput:
    """The worker's default evaluate function; `options` go to `evaluate_run` / `evaluate_model`."""
    if job.kind == "run":
        return evaluate_run(job.payload, dataset=options.get("dataset"))
    if job.kind == "model":
        return evaluate_model(job.payload, **options)
    raise FreshStackError(f"job {job.id}: unknown kind {job.kind!r}; this worker runs 'run' and 'model' jobs")


def _open_dataset(payload: Mapping[str, Any], dataset: str | None) -> tuple[str, Path, str]:
    """(source, local repo folder, revision to record) for the dataset the payload names."""
    from freshstack_hf.repo.reader import resolve_repo

    source = str(payload.get("dataset") or dataset or os.environ.get("FRESHSTACK_DATASET") or "freshstack")
    revision = payload.get("dataset_revision")
    repo = resolve_repo(source, revision, payload.get("topics"))
    return source, repo, dataset_revision(repo, revision)


def dataset_revision(repo: Path, revision: str | None) -> str:
    """The Hub commit of a downloaded snapshot, else the revision asked for, else a hash of the local data files."""
    if repo.parent.name == "snapshots":
        return repo.name
    if revision:
        return revision
    from freshstack_hf.repo.reader import local_revision

    return local_revision(repo)


def _measures(payload: Mapping[str, Any]) -> tuple[Any, ...]:
    from freshstack_hf.metrics import MEASURES, parse_measures

    return parse_measures(payload.get("measures") or MEASURES)


def evaluate_run(payload: Mapping[str, Any], *, dataset: str | None = None) -> JobOutput:
    """Score a run already validated by the app, topic by topic, against the dataset's judgments."""
    from freshstack_hf.metrics import DEFAULT_ALPHA, evaluate, qrels_from_topic
    from freshstack_hf.repo.reader import load_topic

    if "run" in payload:
        run = payload["run"]
    elif "run_path" in payload:
        run = json.loads(Path(payload["run_path"]).read_text(encoding="utf-8"))
    else:
        raise FreshStackError("run job without 'run' or 'run_path' in its payload")
    if not isinstance(run, Mapping) or not all(isinstance(v, Mapping) for v in run.values()):
        raise FreshStackError("a run payload must map topic -> query id -> doc id -> score")
    topics = list(payload.get("topics") or run)
    source, repo, revision = _open_dataset({**payload, "topics": topics}, dataset)
    measures = _measures(payload)
    results = {}
    for name in topics:
        qrels = qrels_from_topic(load_topic(repo, name))
        results[name] = evaluate(qrels, run.get(name, {}), measures, alpha=DEFAULT_ALPHA)
    params = {"job": "run", "dataset": source, "topics": topics, "measures": [m.id for m in measures]}
    return JobOutput(results, ResultMeta(revision, __version__, {**params, "alpha": DEFAULT_ALPHA}))


def safetensors_parameters(path: Path) -> int:
    """Parameter count from a safetensors header alone (8-byte length, then JSON): no tensor is read."""
    with path.open("rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        if length > 100_000_000:
            raise FreshStackError(f"{path.name}: safetensors header of {length} bytes; the file is corrupt")
        header = json.loads(fh.read(length))
    return sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")


def check_model_dir(model_dir: Path, max_bytes: int = DEFAULT_MAX_MODEL_BYTES) -> int:
    """Refuse a model that would run code or unpickle weights, or is over the cap; returns its parameter count."""
    files = [p for p in model_dir.rglob("*") if p.is_file() and ".git" not in p.parts]
    where = f"model {model_dir}"
    if code := [p.relative_to(model_dir).as_posix() for p in files if p.suffix == ".py"]:
        raise FreshStackError(f"{where} contains Python code ({', '.join(code[:3])}): custom code is not run here")
    for config in (p for p in files if p.name == "config.json"):
        if "auto_map" in json.loads(config.read_text(encoding="utf-8")):
            raise FreshStackError(f"{where}: {config.name} maps to custom classes (auto_map); they are not run here")
    modules = model_dir / "modules.json"
    if modules.is_file():
        foreign = [m["type"] for m in json.loads(modules.read_text()) if not m["type"].startswith("sentence_transf")]
        if foreign:
            raise FreshStackError(f"{where}: modules.json names non-sentence-transformers modules {foreign}")
    weights = [p for p in files if p.suffix == ".safetensors"]
    for pickled in (p for p in files if p.suffix in PICKLE_SUFFIXES):
        if not any(w.parent == pickled.parent for w in weights):
            raise FreshStackError(f"{where}: {pickled.name} is a pickle; only safetensors weights are accepted")
    if not weights:
        raise FreshStackError(f"{where} has no .safetensors weights; convert it (safetensors) and resubmit")
    total = sum(p.stat().st_size for p in weights)
    if total > max_bytes:
        raise FreshStackError(
            f"{where}: {total / 1e9:.2f} GB of weights, over this worker's cap of {max_bytes / 1e9:g}"
        )
    return sum(safetensors_parameters(p) for p in weights)


def _model_dir(name: str, revision: str | None) -> Path:
    from freshstack_hf.retrieval.models import resolve_model_source

    model_id, local = resolve_model_source(name, revision)
    if local is not None:
        return local
    from huggingface_hub import snapshot_download  # online only: resolve_model_source refuses offline misses

    return Path(snapshot_download(model_id, revision=revision, allow_patterns=SAFE_DOWNLOAD))


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
    from freshstack_hf.metrics import evaluate, qrels_from_topic
    from freshstack_hf.repo.reader import list_topics, load_candidates, load_topic

    if not payload.get("model"):
        raise FreshStackError("model job without 'model' (a Hub id or a local path) in its payload")
    track = payload.get("track", "full")
    if track not in ("full", "nano"):
        raise FreshStackError(f"unknown track {track!r}: use 'full' (whole corpora) or 'nano' (candidate pools)")
    model_dir = _model_dir(str(payload["model"]), payload.get("revision"))
    params = check_model_dir(model_dir, max_model_bytes)
    source, repo, revision = _open_dataset(payload, dataset)
    topics = list(payload.get("topics") or list_topics(repo))
    measures = _measures(payload)
    k = int(payload.get("k") or max(100, *(m.k for m in measures)))
    settings = {"batch_size": int(payload.get("batch_size", 32)), "max_seq_length": payload.get("max_seq_length")}
    retriever = DenseRetriever(str(model_dir), cache_dir=cache_dir, device=device, **settings)
    results = {}
    for name in topics:
        topic = load_topic(repo, name)
        docs = topic.docs
        if track == "nano":
            pool = {d for ids in load_candidates(repo, name, "top_ranked").values() for d in ids}
            docs = [d for d in docs if d.doc_id in pool]
        queries = topic.queries
        ranked, _ = retriever.retrieve(
            [d.doc_id for d in docs], [d.text for d in docs], [q.query_id for q in queries], [q.text for q in queries],
            k=min(k, len(docs)),
        )  # fmt: skip
        run = {qid: dict(pairs) for qid, pairs in ranked.items()}
        results[name] = evaluate(qrels_from_topic(topic), run, measures)
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
        "dataset": source,
        "topics": topics,
        "measures": [m.id for m in measures],
        "batch_size": settings["batch_size"],
    }
    return JobOutput(results, ResultMeta(revision, __version__, meta), size=params)
