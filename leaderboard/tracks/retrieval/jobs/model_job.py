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

The job opens as every model job does (`worker.model_opening`: the payload checked, the model's folder found and
vetted, the dataset opened at its revision). Once the model is loaded and the public dataset opened, the job seals
its process (`worker.sandbox.seal_job`: no network, nothing readable but the model, the datasets it was given and
the Python install) before it ranks anything.

Live scores (`leaderboard.live_scores`): when the worker handed the job a folder of its snapshot's embargoed questions
(`worker.live_pass`: their texts and the documents, never a judgment) and the seal held, the same model ranks those
questions over that corpus, which is the public one, and the job returns the ranking (`JobOutput.live_runs`) for the
worker to score. The documents are encoded once: the second pass reads their vectors from the embedding cache (the
worker's `--cache-dir`, else one kept for the job's length); the embargoed questions are encoded with no cache at
all, so no vector of theirs, nor the hash of their text, is left anywhere once the job ends.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.dense import DenseRetriever
from freshstack_hf.retrieval.encoding_pool import visible_gpus
from freshstack_hf.runs import Run, from_ranked
from leaderboard.live_scores import rank_embargoed, require_candidates
from leaderboard.scoring import score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval import MODEL_JOB_KIND
from leaderboard.tracks.retrieval.jobs.efficiency import EfficiencyMeter
from leaderboard.tracks.retrieval.submissions.cutoff import card_cutoff
from leaderboard.worker.job_contract import LOADS_MODELS, JobKind, JobOptions, JobOutput
from leaderboard.worker.model_opening import open_model_job
from leaderboard.worker.sandbox import seal_job
from leaderboard.worker.vetting import check_model_dir


def _corpus(data: Dataset, name: str, track: str) -> list[Any]:
    """The documents a model searches on one topic: the whole corpus, or for the Nano track its candidates' pool."""
    docs = data.topic(name).docs
    if track == "nano":
        pool = {d for ids in data.candidates(name).values() for d in ids}
        docs = [d for d in docs if d.doc_id in pool]
    return docs


def _may_pool(retriever: Any) -> bool:
    """Whether encoding may start sentence-transformers' pool of processes (several GPUs): it needs /dev/shm."""
    return len(retriever.devices) >= 2 if retriever.devices is not None else visible_gpus() > 1


def evaluate_model(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """Dense retrieval with a sentence-transformers model over each topic's corpus (or its Nano subset), scored."""
    opened = open_model_job(
        payload, options, kind="model", needs="dense retrieval", vet=check_model_dir, refuse=_checked_track
    )
    folder, params, data, split = opened.folder, opened.params, opened.data, opened.live_pass
    track = payload.get("track", "full")
    k = int(payload.get("k") or max(100, *(m.k for m in MEASURES)))
    settings = {"batch_size": int(payload.get("batch_size", 32)), "max_seq_length": payload.get("max_seq_length")}
    devices = list(options.devices) if options.devices is not None else None  # None: every GPU when several
    with contextlib.ExitStack() as stack:
        cache_dir = _cache_dir(options.cache_dir, split, stack)
        retriever = DenseRetriever(str(folder), cache_dir=cache_dir, device=options.device, devices=devices, **settings)
        split = seal_job(split, read=[folder, data.folder], write=[cache_dir], shared_memory=_may_pool(retriever))
        ranker = _TopicRanker(retriever, retriever.without_cache(), track, k)
        runs = {}
        meter, query_texts = EfficiencyMeter(), []
        with retriever.pooled():  # one pool, if any, for every topic, public and live
            for name in data.topics:
                runs[name], stats, doc_texts = ranker.public(data, name)
                meter.add(stats, doc_texts)
                query_texts += [q.text for q in data.topic(name).queries]
            live_runs, live = rank_embargoed(split, data.topics, ranker.live)
        resamples = int(payload.get("resamples", RESAMPLES))
        scored = score_for_store(data, runs, data.topics, by_topic=True, resamples=resamples)
        efficiency = meter.report(retriever, query_texts, options.device)  # the public split's costs alone
    meta = _parameters(payload, retriever, data, params, track, k, settings["batch_size"]) | scored.parameters
    meta["card_cutoff"] = card_cutoff(folder)
    meta["efficiency"] = efficiency
    if live is not None:  # why it ranked nothing; the worker writes the live record itself
        meta["live"] = live
    output = ResultMeta(data.revision, __version__, meta)
    return JobOutput(
        scored.results, output, size=params, runs=scored.archived, cutoff=meta["card_cutoff"], live_runs=live_runs
    )


def _checked_track(payload: Mapping[str, Any]) -> None:
    """Refuses a track this job does not know, before anything of the model is loaded."""
    track = payload.get("track", "full")
    if track not in ("full", "nano"):
        raise FreshStackError(f"unknown track {track!r}: use 'full' (whole corpora) or 'nano' (candidate pools)")


def _cache_dir(given: str | None, split: Any, stack: contextlib.ExitStack) -> str | None:
    """The embedding cache the job writes: the worker's, made before the seal (which lets it be written only), or
    for a live pass without one a folder kept for the job's length, from which the second pass reads the corpus's
    vectors."""
    if given is None and split and "folder" in split:
        return stack.enter_context(tempfile.TemporaryDirectory(prefix="freshstack-live-"))
    if given is not None:
        Path(given).mkdir(parents=True, exist_ok=True)
    return given


@dataclass(frozen=True)
class _TopicRanker:
    """One topic's queries ranked over its corpus (or its Nano pool) by the job's model: the public questions
    through the embedding cache, the embargoed ones with the corpus's vectors from it and their own encoded uncached."""

    retriever: DenseRetriever
    uncached: DenseRetriever
    track: str
    k: int

    def public(self, source: Dataset, name: str) -> tuple[Run, Any, list[str]]:
        """The topic's run, the encoding's stats and the documents' texts (what the efficiency meter reads)."""
        docs, queries = _corpus(source, name, self.track), source.topic(name).queries
        ranked, stats = self.retriever.retrieve(
            [d.doc_id for d in docs], [d.text for d in docs], [q.query_id for q in queries],
            [q.text for q in queries], k=min(self.k, len(docs)),
        )  # fmt: skip
        return from_ranked(ranked), stats, [d.text for d in docs]

    def live(self, handed: Dataset, name: str) -> Run:
        if self.track == "nano":
            require_candidates(handed, name)  # the pool of the embargoed questions' candidates
        docs, queries = _corpus(handed, name, self.track), handed.topic(name).queries
        texts = [d.text for d in docs]
        ranked, _ = self.uncached.retrieve(
            [d.doc_id for d in docs], texts, [q.query_id for q in queries], [q.text for q in queries],
            k=min(self.k, len(docs)), doc_vectors=self.retriever.encode(texts),
        )  # fmt: skip
        return from_ranked(ranked)


def _parameters(
    payload: Mapping[str, Any], retriever: DenseRetriever, data: Dataset, params: Any, track: str, k: int, batch: int
) -> dict[str, Any]:
    """What the row's results record of how they were computed (the scoring's own parameters follow)."""
    return {
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
        "batch_size": batch,
    }


# what the worker runs for this track (`leaderboard.worker.jobs`); scored live when the worker reads the private split
JOB_KINDS = {MODEL_JOB_KIND: JobKind(evaluate_model, live=True, imports=LOADS_MODELS)}
