"""The retrieval track's worker job: a submitted sentence-transformers model, vetted, run over each topic's corpus
(or its Nano pool) by dense retrieval, and scored.

Scores come from the library through `leaderboard.scoring` (the path submissions and baselines take), and the
model is vetted (`worker.vetting`) before anything of it is loaded. The run behind the row comes back with its
scores, so the worker archives it and the detail view can list the nuggets the model never covered, as for any
other row. Payload (JSON, written by `run_submit`): {"model": "org/name" or a path, "revision", "track": "full" |
"nano", "topics", "k", "batch_size", "max_seq_length", "dataset", "dataset_revision"}.

Efficiency (`efficiency`: documents/s, median query latency, dimension, index bytes, the hardware) is measured
by the worker itself and recorded with the results' parameters.

The model card's cutoff date (`cutoff`), where it gives one, comes back too; the store keeps it only
where the submitter typed none.

Measures are the leaderboard's (`MEASURES`, alpha included in each measure), whatever the payload asks: a row must
be comparable with the others.

Live scores (`leaderboard.live_scores`): when the worker handed the job the private split of its snapshot, the same
model ranks the embargoed questions over the private revision's corpus, which is the public one: its documents are
encoded once, the second pass reads them from the embedding cache (the worker's `--cache-dir`, else one kept for
the job's length). Only the rounded aggregates are recorded (`live` in the results' parameters).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, from_ranked
from leaderboard.live_scores import require_candidates, run_tag, score_live
from leaderboard.scoring import score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval import MODEL_JOB_KIND
from leaderboard.tracks.retrieval.cutoff import card_cutoff
from leaderboard.tracks.retrieval.efficiency import EfficiencyMeter
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput, open_job_dataset
from leaderboard.worker.private_split import PRIVATE
from leaderboard.worker.vetting import check_model_dir, model_dir


def _corpus(data: Dataset, name: str, track: str) -> list[Any]:
    """The documents a model searches on one topic: the whole corpus, or for the Nano track its candidates' pool."""
    docs = data.topic(name).docs
    if track == "nano":
        pool = {d for ids in data.candidates(name).values() for d in ids}
        docs = [d for d in docs if d.doc_id in pool]
    return docs


def evaluate_model(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """Dense retrieval with a sentence-transformers model over each topic's corpus (or its Nano subset), scored."""
    try:
        from freshstack_hf.retrieval.dense import DenseRetriever
    except ImportError as exc:
        raise FreshStackError(f"model jobs need dense retrieval ({exc}); install freshstack-hf[dense]") from exc

    if not payload.get("model"):
        raise FreshStackError("model job without 'model' (a Hub id or a local path) in its payload")
    track = payload.get("track", "full")
    if track not in ("full", "nano"):
        raise FreshStackError(f"unknown track {track!r}: use 'full' (whole corpora) or 'nano' (candidate pools)")
    folder = model_dir(str(payload["model"]), payload.get("revision"))
    params = check_model_dir(folder, options.max_model_bytes)
    data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    k = int(payload.get("k") or max(100, *(m.k for m in MEASURES)))
    settings = {"batch_size": int(payload.get("batch_size", 32)), "max_seq_length": payload.get("max_seq_length")}
    devices = list(options.devices) if options.devices is not None else None  # None: every GPU when several
    split = payload.get(PRIVATE)
    with contextlib.ExitStack() as stack:
        cache_dir = options.cache_dir
        if cache_dir is None and split and "folder" in split:  # the live pass reads the corpus's vectors from it
            cache_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="freshstack-live-"))
        retriever = DenseRetriever(str(folder), cache_dir=cache_dir, device=options.device, devices=devices, **settings)

        def rank(source: Dataset, name: str) -> tuple[Run, Any, list[str]]:
            docs, queries = _corpus(source, name, track), source.topic(name).queries
            ranked, stats = retriever.retrieve(
                [d.doc_id for d in docs], [d.text for d in docs], [q.query_id for q in queries],
                [q.text for q in queries], k=min(k, len(docs)),
            )  # fmt: skip
            return from_ranked(ranked), stats, [d.text for d in docs]

        def rank_live(private: Dataset, name: str) -> Run:
            if track == "nano":
                require_candidates(private, name)  # the pool of the embargoed questions' candidates
            return rank(private, name)[0]

        runs = {}
        meter, query_texts = EfficiencyMeter(), []
        for name in data.topics:
            runs[name], stats, doc_texts = rank(data, name)
            meter.add(stats, doc_texts)
            query_texts += [q.text for q in data.topic(name).queries]
        resamples = int(payload.get("resamples", RESAMPLES))
        scored = score_for_store(data, runs, data.topics, by_topic=True, resamples=resamples)
        live = score_live(split, data.topics, rank_live, resamples=resamples, tag=run_tag(payload["model"]))
        efficiency = meter.report(retriever, query_texts, options.device)  # the public split's costs alone
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
    meta["card_cutoff"] = card_cutoff(folder)
    meta["efficiency"] = efficiency
    meta["live"] = live
    output = ResultMeta(data.revision, __version__, meta)
    return JobOutput(scored.results, output, size=params, runs=scored.archived, cutoff=meta["card_cutoff"])


# what the worker runs for this track (`leaderboard.worker.jobs`); scored live when the worker reads the private split
JOB_KINDS = {MODEL_JOB_KIND: JobKind(evaluate_model, live=True)}
