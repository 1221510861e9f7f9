"""The project's answer baseline rows: extractive, citation-faithful answers from the hybrid top 3 (no LLM),
and an LLM's cited answers from the same docs when a generator endpoint is configured.

For every query, `freshstack_hf.answers.extractive_answers` copies the sentences of the top retrieved docs that
best match the question, each citing its doc, from the RRF hybrid of `freshstack_hf.baselines` (BM25 + the
packaged dense model, the retrieval baseline's parameters). The row is an `answers` system flagged as a baseline
by its content hash (`answers-baseline:`), scored by citation and queued for the judge when the app has one,
exactly like a submitted answer file. Its dedupe key hashes the configuration and the dataset revision, so a
restart finds it stored and computes nothing.

With a generator endpoint (`FRESHSTACK_ANSWER_MODEL` on the judge's endpoint), a second row is an LLM's answers
from the same top docs (`freshstack_hf.answers.llm_answers`, citing them by number). The app holds no key, so
that row is stored empty and an `answers_generate` job is queued: a worker generates, scores and judges it.

Two ways to fill the rows, as for the retrieval baselines: `queue_answer_baselines` (the app: both rows are
stored at once, queued; the extractive row's `answers_baseline` job, `answer_baseline_job`, retrieves, writes and
scores the answers, then queues their judge) and `compute_answer_baselines` (here and now: scripts and tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers.baseline_answers import DOCS_PER_ANSWER, SENTENCES_PER_DOC, extractive_answers
from freshstack_hf.answers.baseline_answers import EXTRACTIVE_RUN_ID as RUN_ID
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS, AnswerSet
from freshstack_hf.answers.rag_prompts import PROMPT_VERSION
from freshstack_hf.baselines import registry
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
from leaderboard.baseline_key import BaselineRow, config_hash, queue_row
from leaderboard.store.audit import board_entry
from leaderboard.store.store import Store
from leaderboard.tracks.answers import BASELINE_JOB_KIND, GENERATE_JOB_KIND, SYSTEM_KIND
from leaderboard.tracks.answers.answer_rows import BASELINE_PREFIX
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.judge_endpoint import JudgeEndpoint
from leaderboard.worker.vetting import model_fingerprint

LLM_DOCS = 3  # documents the LLM baseline answers from
Say = Callable[[str], None]
Ranked = dict[str, dict[str, list[str]]]  # topic -> query id -> document ids, best first (`top_docs`)


def retrievals() -> list[str]:
    """The methods the answer rows may retrieve with (`freshstack_hf.baselines.METHODS` with an `answers` rank)."""
    return [name for name, m in registry.METHODS.items() if m.answers is not None]


def answer_baseline_config(retrieval: str, setup: Any) -> dict[str, Any]:
    """Everything that decides the baseline's answers; its hash is the row's dedupe key. The retrieval's part is
    what each method it is computed with records (`Method.answer_part`: BM25's parameters, the dense model's
    fingerprint, the fusion constant)."""
    config: dict[str, Any] = {
        "method": "extractive",
        "retrieval": retrieval,
        "docs_per_answer": DOCS_PER_ANSWER,
        "sentences_per_doc": SENTENCES_PER_DOC,
        "max_words": DEFAULT_MAX_WORDS,
    }
    for name in registry.with_inputs([retrieval]):
        config |= registry.METHODS[name].answer_part(setup)
    return config


@dataclass(frozen=True)
class AnswerBaselinePlan:
    """The answer rows asked for (`extractive`, and `llm` with a generator), known before any model is loaded."""

    retrieval: str
    model: str | None  # the dense model as asked (name or folder), None for the packaged default
    dense_dir: Path | None
    configs: dict[str, dict[str, Any]]
    hashes: dict[str, str]
    names: dict[str, str]


def plan_answer_baselines(
    dataset: Dataset, retrieval: str = "hybrid", *, model: str | None = None, generator: JudgeEndpoint | None = None
) -> AnswerBaselinePlan:
    """The configurations, dedupe keys and names of the answer rows on `dataset`."""
    if retrieval not in retrievals():
        raise FreshStackError(f"unknown retrieval {retrieval!r} for the answer baseline: use {', '.join(retrievals())}")
    dense_dir, fingerprints = None, {}
    if registry.DENSE_MODEL in registry.needs([retrieval]):
        dense_id, dense_dir, files = model_fingerprint(model or DEFAULT_DENSE_MODEL)
        fingerprints = {"dense_id": dense_id, "dense_files": files}
    setup = registry.Setup(dense_model=model, **fingerprints)
    configs = {"extractive": answer_baseline_config(retrieval, setup)}
    title = registry.METHODS[retrieval].title
    names = {"extractive": f"Extractive top-{DOCS_PER_ANSWER} ({title})"}
    if generator is not None:
        llm = {"method": "llm", "generator": generator.name, "prompt_version": PROMPT_VERSION}
        configs["llm"] = {**configs["extractive"], **llm, "docs_per_answer": LLM_DOCS}
        configs["llm"].pop("sentences_per_doc")
        names["llm"] = f"LLM answers top-{LLM_DOCS} ({generator.model}, {retrieval})"
    hashes = {m: config_hash(c, dataset.revision, BASELINE_PREFIX) for m, c in configs.items()}
    return AnswerBaselinePlan(retrieval, model, dense_dir, configs, hashes, names)


def top_docs(
    dataset: Dataset,
    retrieval: str,
    dense_dir: str | Path | None,
    *,
    cache_dir: str | Path | None = None,
    device: str | None = None,
    devices: list[str] | None = None,
    say: Say = lambda _msg: None,
    show_progress: bool = False,
) -> dict[str, dict[str, list[str]]]:
    """{topic: {query: doc ids}}: the top docs of each query the answer rows answer from (the `retrieval` method's
    run, the dense model's embeddings, where it uses one, from the embedding cache)."""
    settings = {"cache_dir": cache_dir, "device": device, "devices": devices, "show_progress": show_progress}
    resources = registry.Resources(registry.Setup(dense_model=dense_dir), **settings)
    depth = max(DOCS_PER_ANSWER, LLM_DOCS)
    ranked: dict[str, dict[str, list[str]]] = {}
    for name in dataset.topics:
        say(f"answer baseline: {name}: the {retrieval} top {depth} of each query")
        run = registry.compute(dataset.topic(name), [retrieval], resources)[retrieval]
        ranked[name] = {q: [d for d, _ in docs[:depth]] for q, docs in run.run.items()}
    return ranked


def extractive_set(dataset: Dataset, ranked: dict[str, dict[str, list[str]]]) -> AnswerSet:
    """The extractive answers of every topic, from each query's top docs."""
    merged: dict[str, Any] = {}
    for name in dataset.topics:
        merged |= extractive_answers(dataset.topic(name), ranked[name]).answers
    return AnswerSet(merged, source=RUN_ID, run_id=RUN_ID, fmt="trec-rag")


def extractive_description(config: dict[str, Any]) -> str:
    return f"computed by freshstack-hf {__version__} on this dataset, no LLM: " + json.dumps(config)


def llm_description(generator: JudgeEndpoint, plan: AnswerBaselinePlan) -> str:
    return f"generated by {generator.name} from the {plan.retrieval} top {LLM_DOCS}: " + json.dumps(plan.configs["llm"])


def compute_answer_baselines(
    store: Store,
    dataset: Dataset,
    *,
    retrieval: str = "hybrid",
    model: str | None = None,
    cache_dir: str | Path | None = None,
    judge: JudgeEndpoint | None = None,
    generator: JudgeEndpoint | None = None,
    say: Say = lambda _msg: None,
    show_progress: bool = False,
    resamples: int = RESAMPLES,
) -> list[BaselineRow]:
    """Store the answer rows missing for this dataset revision, computed here: the extractive one (scored by
    citation now, its answers stored with it for the judge when there is one), and with a `generator`
    endpoint the LLM one (queued: a worker holds the key, generates, scores, judges)."""
    plan = plan_answer_baselines(dataset, retrieval, model=model, generator=generator)
    found = {m: s for m, h in plan.hashes.items() if (s := store.find_system(h)) is not None}
    rows = [BaselineRow(m, s.name, s.id, False, s.status) for m, s in found.items()]
    for m, s in found.items():
        say(f"answer baseline: {m} already stored as system #{s.id} ({s.status})")
    todo = [m for m in plan.configs if m not in found]
    if not todo:
        return rows
    ranked = top_docs(dataset, retrieval, plan.dense_dir, cache_dir=cache_dir, say=say, show_progress=show_progress)
    if "extractive" in todo:
        submitter = AnswerSubmitter(store, dataset, judge=judge, rate_limit=None, resamples=resamples)
        rows.append(_store_extractive(submitter, dataset, ranked, plan, say))
    if "llm" in todo and generator is not None:
        rows.append(_queue_llm(store, dataset, ranked, plan, generator, judge, resamples, say))
    return rows


def _store_extractive(
    submitter: AnswerSubmitter, dataset: Dataset, ranked: Ranked, plan: AnswerBaselinePlan, say: Say
) -> BaselineRow:
    """The extractive row, written from `ranked` and scored by citation now (its answers stored for the judge)."""
    config = plan.configs["extractive"]
    stored = submitter.store_answers(
        extractive_set(dataset, ranked),
        list(dataset.topics),
        name=plan.names["extractive"],
        content_hash=plan.hashes["extractive"],
        params={"job": "answers_baseline", "config": config},
        description=extractive_description(config),
        audit=board_entry("baseline", "scored", f"answer baseline '{plan.names['extractive']}' computed and stored"),
    )
    if stored is None:
        raise FreshStackError("answer baseline: no query of this dataset has nuggets to score")
    system, created, _ = stored
    say(f"answer baseline: stored {system.name} as system #{system.id}")
    return BaselineRow("extractive", system.name, system.id, created, system.status)


def _queue_llm(
    store: Store,
    dataset: Dataset,
    ranked: Ranked,
    plan: AnswerBaselinePlan,
    generator: JudgeEndpoint,
    judge: JudgeEndpoint | None,
    resamples: int,
    say: Say,
) -> BaselineRow:
    """The LLM row, queued with the documents it answers from: a worker holds the key, generates, scores, judges."""
    payload = {
        **payload_dataset(dataset),
        "topics": list(dataset.topics),
        "ranked": {t: {q: ids[:LLM_DOCS] for q, ids in r.items()} for t, r in ranked.items()},
        "generator": generator.as_payload(),
        "judge": judge.as_payload() if judge is not None else None,
        "resamples": resamples,
    }
    system, created = store.add_system(
        name=plan.names["llm"],
        kind=SYSTEM_KIND,
        content_hash=plan.hashes["llm"],
        description=llm_description(generator, plan),
        job=(GENERATE_JOB_KIND, payload),
        audit=board_entry("baseline", "queued", f"answer baseline '{plan.names['llm']}' queued for a worker"),
    )
    say(f"answer baseline: queued {system.name} as system #{system.id} for a worker")
    return BaselineRow("llm", system.name, system.id, created, system.status)


def queue_answer_baselines(
    store: Store,
    dataset: Dataset,
    *,
    retrieval: str = "hybrid",
    model: str | None = None,
    judge: JudgeEndpoint | None = None,
    generator: JudgeEndpoint | None = None,
    resamples: int = RESAMPLES,
    say: Say = lambda _msg: None,
) -> list[BaselineRow]:
    """Store each missing answer row at once, queued for a worker (no model is loaded here); returns every row.

    The extractive row's `answers_baseline` job retrieves, writes and scores the answers by citation, then queues
    their judge when the app names one; the LLM row's `answers_generate` job retrieves its top docs itself.
    """
    plan = plan_answer_baselines(dataset, retrieval, model=model, generator=generator)
    common = {
        **payload_dataset(dataset),
        "topics": list(dataset.topics),
        "retrieval": retrieval,
        "model": model,
        "judge": judge.as_payload() if judge is not None else None,
        "resamples": resamples,
    }
    jobs = {
        "extractive": (BASELINE_JOB_KIND, {**common, "max_words": DEFAULT_MAX_WORDS}),
        "llm": (GENERATE_JOB_KIND, {**common, "generator": generator.as_payload() if generator else None}),
    }
    descriptions = {"extractive": extractive_description(plan.configs["extractive"])}
    if generator is not None:
        descriptions["llm"] = llm_description(generator, plan)
    rows = []
    for method in plan.configs:
        kind, payload = jobs[method]
        rows.append(
            queue_row(
                store,
                method,
                name=plan.names[method],
                kind=SYSTEM_KIND,
                content_hash=plan.hashes[method],
                description=descriptions[method],
                job=(kind, {**payload, "content_hash": plan.hashes[method]}),
                say=lambda msg: say(f"answer baseline: {msg}"),
            )
        )
    return rows
