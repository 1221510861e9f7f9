"""The worker's job kinds: one table, `JOB_KINDS` ({kind: JobKind}), filled from each track's own table.

A track adds a kind of job by listing it in its jobs module (`tracks.retrieval.jobs.model_job.JOB_KINDS`,
`tracks.answers.answer_jobs.JOB_KINDS`); this module only gathers those tables, and `evaluate_job` (the worker's
default evaluate function) runs a job with the handler its kind names. The kinds (their handlers, their payloads):

* `model` (retrieval): a submitted sentence-transformers model, vetted, run and scored;
* `reranker` (reranking, the Reranking tab): a submitted CrossEncoder, vetted, reranking the fixed candidates as
  MTEB's `FreshStackReranking` does, scored;
* `fill` (retrieval): a stored system's unjudged top-k documents judged into a new qrels revision; a side job, as
  its track declares (`SIDE_JOB_KINDS`): it leaves files, not scores, so its state never shows on its system's row;
* `answers_judge` (answers): All/Vital of stored answers, judged at the endpoint the app named;
* `answers_generate` (answers): the LLM answer baseline, generated, scored and judged;
* `baseline` (retrieval): one of the project's baseline rows (BM25, dense, hybrid, reranked), computed and scored;
* `answers_baseline` (answers): the extractive answer baseline, written and scored by citation, its judge queued;
* `rescore` (retrieval): a stored run's archived ranking scored on a newer dataset revision (`remeasure`).

`BASELINE_JOB_KINDS` are the jobs the app queues for its own baseline rows when it starts (`queue_baselines`, every
track's, called by `cli.serve_board`); the board's own worker (`cli.serve_board`, unless `--no-worker`) runs every
kind, those with a time cap of their own, long enough to encode a corpus on a CPU.

There is no `run` kind: run files are validated strictly and scored when they are submitted (`run_submit`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from freshstack_hf.baselines import registry
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.baseline_key import BaselineRow
from leaderboard.defaults import LIVE_SCORES_PER_WEEK
from leaderboard.store.records import JobRecord
from leaderboard.tracks.answers import BASELINE_JOB_KIND as ANSWERS_BASELINE
from leaderboard.tracks.answers.answer_baselines import queue_answer_baselines
from leaderboard.tracks.answers.answer_jobs import JOB_KINDS as ANSWER_JOBS
from leaderboard.tracks.reranking.rerank_job import JOB_KINDS as RERANK_JOBS
from leaderboard.tracks.retrieval import BASELINE_JOB_KIND as RETRIEVAL_BASELINE
from leaderboard.tracks.retrieval import FILL_JOB_KIND as FILL_JOB_KIND  # what `fill-board` (`cli.fill_board`) queues
from leaderboard.tracks.retrieval.jobs.baseline_job import JOB_KINDS as BASELINE_JOBS
from leaderboard.tracks.retrieval.jobs.baseline_rows import queue_baselines as queue_retrieval_baselines
from leaderboard.tracks.retrieval.jobs.fill_job import JOB_KINDS as FILL_JOBS
from leaderboard.tracks.retrieval.jobs.model_job import JOB_KINDS as RETRIEVAL_JOBS
from leaderboard.tracks.retrieval.jobs.remeasure import Remeasured, remeasure
from leaderboard.tracks.retrieval.jobs.rescore_job import JOB_KINDS as RESCORE_JOBS
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput
from leaderboard.worker.judge_endpoint import JudgeEndpoint

JOB_KINDS: dict[str, JobKind] = {
    **RETRIEVAL_JOBS, **RERANK_JOBS, **FILL_JOBS, **ANSWER_JOBS, **BASELINE_JOBS, **RESCORE_JOBS
}  # fmt: skip
BASELINE_JOB_KINDS = (RETRIEVAL_BASELINE, ANSWERS_BASELINE)


def evaluate_job(job: JobRecord, **options: Any) -> JobOutput:
    """The worker's default evaluate function: `options` are `JobOptions` (dataset, cache_dir, device, ...)."""
    kind = JOB_KINDS.get(job.kind)
    if kind is None:
        runs = ", ".join(repr(k) for k in JOB_KINDS)
        raise FreshStackError(f"job {job.id}: unknown kind {job.kind!r}; this worker runs {runs} jobs")
    return kind.handler(job.payload, JobOptions(**options))


def kept_secrets() -> dict[str, tuple[str, ...]]:
    """The secret variables each kind's job process keeps (every other secret-looking variable is dropped)."""
    return {name: kind.keeps for name, kind in JOB_KINDS.items() if kind.keeps}


def queue_baselines(
    store: Any,
    dataset: Dataset,
    *,
    methods: Sequence[str],
    model: str | None = None,
    cross_encoder: str | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> list[BaselineRow]:
    """Every track's missing baseline rows, stored queued for a worker (cheap: no model is loaded here): the
    retrieval rows `methods` names, then the Answers tab's extractive row, from the hybrid when it is computed (and
    the LLM answer baseline's, when the environment names a generator at the judge's endpoint)."""
    rows = queue_retrieval_baselines(store, dataset, methods=methods, model=model, cross_encoder=cross_encoder, say=say)
    rows += queue_answer_baselines(
        store,
        dataset,
        retrieval=registry.answer_retrieval(methods),
        model=model,
        judge=JudgeEndpoint.from_env(),
        generator=JudgeEndpoint.generator_from_env(),
        say=say,
    )
    return rows


def measure_on(
    store: Any,
    dataset: Dataset,
    *,
    baselines: bool = False,
    methods: Sequence[str] = (),
    model: str | None = None,
    cross_encoder: str | None = None,
    live_per_week: int = LIVE_SCORES_PER_WEEK,
    say: Callable[[str], None] = lambda _msg: None,
) -> Remeasured:
    """Every stored system of another revision queued on `dataset`'s revision (`tracks.retrieval.jobs.remeasure`: models
    and rerankers submitted again, their live scorings counted against their owners' `live_per_week`, runs
    re-scored), and with `baselines` every track's baseline rows of it (`queue_baselines`): what the store does when
    it learns of a revision (the board's start, `remeasure`)."""
    done = remeasure(store, dataset, live_per_week=live_per_week)
    if baselines:
        rows = queue_baselines(store, dataset, methods=methods, model=model, cross_encoder=cross_encoder, say=say)
        done.baselines = len(rows)
    say(done.summary())
    return done
