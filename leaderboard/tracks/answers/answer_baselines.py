"""The project's answer baseline rows: extractive, citation-faithful answers from the hybrid top 3 (no LLM),
and an LLM's cited answers from the same docs when a generator endpoint is configured.

For every query, `freshstack_hf.answers.extractive_answers` copies the sentences of the top retrieved docs that
best match the question, each citing its doc, from the RRF hybrid of `freshstack_hf.baselines` (BM25 + the
packaged dense model, the retrieval baseline's parameters). The row is an `answers` system flagged as a baseline
by its content hash (`answers-baseline:`), scored by citation at once and queued for the judge when the app has
one, exactly like a submitted answer file. Its dedupe key hashes the configuration and the dataset revision, so a
restart finds it stored and computes nothing.

With a generator endpoint (`FRESHSTACK_ANSWER_MODEL` on the judge's endpoint), a second row is an LLM's answers
from the same top docs (`freshstack_hf.answers.llm_answers`, citing them by number). The app holds no key, so
that row is stored empty and an `answers_generate` job is queued: a worker generates, scores and judges it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers.extractive import DOCS_PER_ANSWER, RUN_ID, SENTENCES_PER_DOC, extractive_answers
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS, AnswerSet
from freshstack_hf.defaults import RESAMPLES, dense_retriever
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.archive import RunArchive
from leaderboard.baseline_key import BaselineRow, config_hash
from leaderboard.store import Store
from leaderboard.tracks.answers import GENERATE_JOB_KIND, SYSTEM_KIND
from leaderboard.tracks.answers.answer_rows import BASELINE_PREFIX
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.answers.judge_endpoint import JudgeEndpoint

RETRIEVALS = ("hybrid", "bm25")
NAMES = {"hybrid": "Extractive top-3 (RRF hybrid)", "bm25": "Extractive top-3 (BM25)"}
LLM_DOCS = 3  # documents the LLM baseline answers from


def answer_baseline_config(retrieval: str, dense_id: str | None, files: str | None) -> dict[str, Any]:
    """Everything that decides the baseline's answers; its hash is the row's dedupe key."""
    from freshstack_hf import baselines

    config: dict[str, Any] = {
        "method": "extractive",
        "retrieval": retrieval,
        "bm25": {"k1": baselines.BM25_K1, "b": baselines.BM25_B, "k": baselines.FIRST_STAGE_DEPTH},
        "docs_per_answer": DOCS_PER_ANSWER,
        "sentences_per_doc": SENTENCES_PER_DOC,
        "max_words": DEFAULT_MAX_WORDS,
    }
    if retrieval == "hybrid":
        config |= {"dense": {"model": dense_id, "files": files}, "rrf_k": baselines.RRF_K}
    return config


def compute_answer_baselines(
    store: Store,
    dataset: Dataset,
    *,
    retrieval: str = "hybrid",
    model: str | None = None,
    cache_dir: str | Path | None = None,
    judge: JudgeEndpoint | None = None,
    generator: JudgeEndpoint | None = None,
    archive: RunArchive | None = None,
    say: Callable[[str], None] = lambda _msg: None,
    show_progress: bool = False,
    resamples: int = RESAMPLES,
) -> list[BaselineRow]:
    """Store the answer rows missing for this dataset revision: the extractive one (scored by citation now, its
    answers archived beside `archive` for the judge when there is one), and with a `generator` endpoint the LLM one
    (queued: a worker holds the key, generates, scores, judges)."""
    from freshstack_hf import baselines
    from freshstack_hf.answers.rag_prompts import PROMPT_VERSION
    from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
    from leaderboard.vetting import model_fingerprint

    if retrieval not in RETRIEVALS:
        raise FreshStackError(f"unknown retrieval {retrieval!r} for the answer baseline: use {', '.join(RETRIEVALS)}")
    dense_id = dense_dir = files = None
    if retrieval == "hybrid":
        dense_id, dense_dir, files = model_fingerprint(model or DEFAULT_DENSE_MODEL)
    configs = {"extractive": answer_baseline_config(retrieval, dense_id, files)}
    if generator is not None:
        llm = {"method": "llm", "generator": generator.name, "prompt_version": PROMPT_VERSION}
        configs["llm"] = {**configs["extractive"], **llm, "docs_per_answer": LLM_DOCS}
        configs["llm"].pop("sentences_per_doc")
    hashes = {m: config_hash(c, dataset.revision, BASELINE_PREFIX) for m, c in configs.items()}
    found = {m: s for m, h in hashes.items() if (s := store.find_system(h)) is not None}
    rows = [BaselineRow(m, s.name, s.id, False) for m, s in found.items()]
    for m, s in found.items():
        say(f"answer baseline: {m} already stored as system #{s.id} ({s.status})")
    todo = [m for m in configs if m not in found]
    if not todo:
        return rows
    retriever = None
    if dense_dir is not None:
        retriever = dense_retriever(dense_dir, cache_dir=cache_dir, show_progress=show_progress)
    ranked: dict[str, dict[str, list[str]]] = {}
    merged: dict[str, Any] = {}
    for name in dataset.topics:
        topic = dataset.topic(name)
        say(f"answer baseline: {name}: the {retrieval} top {max(DOCS_PER_ANSWER, LLM_DOCS)} of each query")
        run = baselines.bm25(topic, show_progress=show_progress)
        if retriever is not None:
            run = baselines.hybrid(run, baselines.dense(topic, retriever=retriever))
        ranked[name] = {q: [d for d, _ in docs[: max(DOCS_PER_ANSWER, LLM_DOCS)]] for q, docs in run.run.items()}
        merged |= extractive_answers(topic, ranked[name]).answers
    submitter = AnswerSubmitter(store, dataset, judge=judge, rate_limit=None, resamples=resamples, archive=archive)
    if "extractive" in todo:
        config = configs["extractive"]
        stored = submitter.store_answers(
            AnswerSet(merged, source=RUN_ID, run_id=RUN_ID, fmt="trec-rag"),
            list(dataset.topics),
            name=NAMES[retrieval],
            content_hash=hashes["extractive"],
            params={"job": "answers_baseline", "config": config},
            description=f"computed by freshstack-hf {__version__} on this dataset, no LLM: " + json.dumps(config),
        )
        if stored is None:
            raise FreshStackError("answer baseline: no query of this dataset has nuggets to score")
        system, created, _ = stored
        say(f"answer baseline: stored {system.name} as system #{system.id}")
        rows.append(BaselineRow("extractive", system.name, system.id, created))
    if "llm" in todo and generator is not None:
        payload = {
            "dataset": str(dataset.folder),
            "dataset_revision": dataset.revision,
            "topics": list(dataset.topics),
            "ranked": {t: {q: ids[:LLM_DOCS] for q, ids in r.items()} for t, r in ranked.items()},
            "generator": generator.as_payload(),
            "judge": judge.as_payload() if judge is not None else None,
            "resamples": resamples,
        }
        system, created = store.add_system(
            name=f"LLM answers top-{LLM_DOCS} ({generator.model}, {retrieval})",
            kind=SYSTEM_KIND,
            content_hash=hashes["llm"],
            description=f"generated by {generator.name} from the {retrieval} top {LLM_DOCS}: "
            + json.dumps(configs["llm"]),
            job=(GENERATE_JOB_KIND, payload),
        )
        say(f"answer baseline: queued {system.name} as system #{system.id} for a worker")
        rows.append(BaselineRow("llm", system.name, system.id, created))
    return rows
