"""The worker's RAG-track jobs: `answers_judge` (All/Vital of stored answers, judged by the endpoint the app
named), `answers_generate` (the LLM answer baseline: generated, then scored and judged) and `answers_baseline` (the
extractive answer baseline, `answer_baseline_job`).

For a judge job the app stored the citation scores and the checked answers (a blob of the system, TREC RAG JSONL)
and queued their hash with the dataset and the judge's URL and model: the worker reads the answers from the store
(`JobKind.inputs`), checks they have that hash, and only judges them (the citation rows are stored already; only
the judge's measures come back). A job queued by an older release carries the answers text itself, and still runs.
A generate job carries each query's top doc ids instead and returns every measure. The key is never in a payload
nor in the store: the worker process reads it from its own environment, `FRESHSTACK_JUDGE_API_KEY` (the job process
keeps that one variable for these job kinds only, `JobKind.keeps`; they run no submitted code, they only send text to
the endpoint). Model answers are cached (`freshstack_hf.answers.default_judge_cache`), so a retried job pays for no
request twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers import AnswerSet, LLMJudge, llm_answers, parse_answers, score_answers
from freshstack_hf.answers.judge import default_judge_cache
from freshstack_hf.answers.measures import JUDGE_IDS
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.transport import endpoint_label
from leaderboard.fault_points import POINTS
from leaderboard.store.blobs import sha256_of
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.answers import ANSWERS_BLOB, BASELINE_JOB_KIND, GENERATE_JOB_KIND, JUDGE_JOB_KIND
from leaderboard.tracks.answers.answer_baseline_job import evaluate_answers_baseline, planned_dataset
from leaderboard.tracks.answers.answer_baselines import LLM_DOCS, top_docs
from leaderboard.tracks.answers.answer_rows import stored_results
from leaderboard.worker.job_contract import (
    JobKind,
    JobOptions,
    JobOutput,
    job_inputs,
    models_for_method,
    open_job_dataset,
)
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV


def archived_answers(payload: Mapping[str, Any]) -> str:
    """The answers a judge job names: read from the store by the worker, or (jobs of older releases) as text."""
    if isinstance(payload.get("answers"), str):
        return payload["answers"]
    data = job_inputs(payload, ANSWERS_BLOB, "answers file")
    if sha256_of(data) != payload["answers_sha256"]:
        raise FreshStackError(
            f"the system's stored answers are not the ones this job was queued for ({payload['answers_sha256']}): "
            "submit the answers again"
        )
    return data.decode("utf-8")


def evaluate_answers_judge(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """Judge the payload's answers on its topics; returns the judge measures per topic for `finish_job`."""
    judge_cfg = payload.get("judge") or {}
    named = isinstance(payload.get("answers"), str) or "answers_sha256" in payload
    if not named or not judge_cfg.get("base_url") or not judge_cfg.get("model"):
        raise FreshStackError("answers_judge job without 'answers_sha256' and a judge {base_url, model} in its payload")
    data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    answers = parse_answers(
        archived_answers(payload),
        source="stored answers",
        query_ids=data.query_ids(),
        doc_ids=data.doc_ids(),
        max_words=payload.get("max_words"),
        fmt="trec-rag",
    )
    judge = LLMJudge(judge_cfg["base_url"], judge_cfg["model"], default_judge_cache(), api_key_env=JUDGE_KEY_ENV)
    resamples = int(payload.get("resamples", RESAMPLES))
    topics = [data.topic(t) for t in data.topics]
    scores = score_answers(topics, answers, judge, resamples=resamples, seed=SEED, citations=False)  # judge only
    results = stored_results(scores, JUDGE_IDS)
    if not results:
        raise FreshStackError("the judge produced no score: none of the answered queries has nuggets")
    params = {
        "job": JUDGE_JOB_KIND,
        "judge": judge.name,
        "prompt_version": judge.prompt_version,
        "judge_stats": scores.judge_stats,
        "topics": data.topics,
        "dataset": data.source,
        "resamples": resamples,
        "seed": SEED,
    }
    return JobOutput(results, ResultMeta(data.revision, __version__, params))


def evaluate_answers_generate(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """The LLM answer baseline: answers generated from each query's top docs, then every measure of them.

    The top docs are the payload's `ranked` (jobs of the synchronous `compute_answer_baselines`), or retrieved
    here (jobs the app queued before serving, `queue_answer_baselines`: no `ranked`, the row's `content_hash`).
    """
    generator, judge_cfg = payload.get("generator") or {}, payload.get("judge")
    ranked = payload.get("ranked")
    if not generator.get("base_url") or not generator.get("model"):
        raise FreshStackError("answers_generate job without a generator {base_url, model}")
    if not isinstance(ranked, Mapping) and not payload.get("content_hash"):
        raise FreshStackError("answers_generate job without 'ranked' docs nor the row's 'content_hash'")
    if isinstance(ranked, Mapping):
        data = open_job_dataset(payload, options.dataset, payload.get("topics"))
    else:
        POINTS.hold_baselines()
        data, plan = planned_dataset(payload, options, "llm")
        devices = list(options.devices) if options.devices else None
        top = top_docs(
            data, plan.retrieval, plan.dense_dir, cache_dir=options.cache_dir, device=options.device, devices=devices
        )
        ranked = {t: {q: ids[:LLM_DOCS] for q, ids in r.items()} for t, r in top.items()}
    cache = default_judge_cache()
    merged: dict[str, Any] = {}
    for name in data.topics:
        generated = llm_answers(
            data.topic(name),
            ranked.get(name, {}),
            base_url=generator["base_url"],
            model=generator["model"],
            cache_path=cache,
            api_key_env=JUDGE_KEY_ENV,
        )
        merged |= generated.answers
    answers = AnswerSet(merged, source="generated", run_id=f"llm:{generator['model']}", fmt="trec-rag")
    judge = None
    if judge_cfg:
        judge = LLMJudge(judge_cfg["base_url"], judge_cfg["model"], cache, api_key_env=JUDGE_KEY_ENV)
    resamples = int(payload.get("resamples", RESAMPLES))
    scores = score_answers([data.topic(t) for t in data.topics], answers, judge, resamples=resamples, seed=SEED)
    results = stored_results(scores)
    if not results:
        raise FreshStackError("no score for the generated answers: no query of these topics has nuggets")
    params = {
        "job": GENERATE_JOB_KIND,
        "generator": endpoint_label(generator["model"], generator["base_url"]),
        "judge": judge.name if judge is not None else None,
        "judge_stats": scores.judge_stats,
        "answered": len(answers.answers),
        "topics": data.topics,
        "dataset": data.source,
        "resamples": resamples,
        "seed": SEED,
    }
    return JobOutput(results, ResultMeta(data.revision, __version__, params))


# What the worker runs for this track (`leaderboard.worker.jobs`): the LLM kinds keep the endpoint's key, and nothing
# else; the extractive baseline sends nothing anywhere, so its process keeps no secret.
JOB_KINDS = {
    JUDGE_JOB_KIND: JobKind(evaluate_answers_judge, keeps=(JUDGE_KEY_ENV,), inputs=(ANSWERS_BLOB,)),
    GENERATE_JOB_KIND: JobKind(evaluate_answers_generate, keeps=(JUDGE_KEY_ENV,)),
    BASELINE_JOB_KIND: JobKind(evaluate_answers_baseline, imports=models_for_method("retrieval", "hybrid")),
}
