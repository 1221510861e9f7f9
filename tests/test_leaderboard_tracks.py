"""Tracks plug into the leaderboard: the worker runs each job kind with the handler its track registered, and the
kinds the store accepts are the tracks' own."""

from __future__ import annotations

import functools
from datetime import datetime

import pytest

from freshstack_hf.errors import FreshStackError
from leaderboard import jobs, worker
from leaderboard.job_contract import JobKind, JobOptions
from leaderboard.schema import JobOutput, JobRecord, ResultMeta
from leaderboard.store import Store
from leaderboard.tracks import answers, retrieval
from leaderboard.tracks.answers.answer_jobs import JOB_KINDS as ANSWER_JOBS
from leaderboard.tracks.retrieval.model_job import JOB_KINDS as RETRIEVAL_JOBS


def job(kind: str, payload: dict | None = None) -> JobRecord:
    now = datetime(2026, 1, 1)
    return JobRecord(7, 1, kind, payload or {}, "running", 1, 3, "w", None, None, now, now, None)


def test_the_job_table_is_the_tracks_tables():
    assert jobs.JOB_KINDS == {**RETRIEVAL_JOBS, **ANSWER_JOBS}
    assert set(jobs.JOB_KINDS) == {retrieval.MODEL_JOB_KIND, answers.JUDGE_JOB_KIND, answers.GENERATE_JOB_KIND}
    assert worker.KIND_SECRETS == {
        answers.JUDGE_JOB_KIND: (answers.JUDGE_KEY_ENV,),
        answers.GENERATE_JOB_KIND: (answers.JUDGE_KEY_ENV,),
    }


def test_a_kind_registered_in_the_table_is_run_by_the_worker(tmp_path, monkeypatch):
    """A toy track's kind: one entry in the table, and the real worker runs it with the worker's options."""
    seen = []

    def toy(payload, options: JobOptions) -> JobOutput:
        seen.append((payload, options))
        return JobOutput({"t": {"metrics": {"toy": payload["value"]}}}, ResultMeta("rev", parameters={"job": "toy"}))

    monkeypatch.setitem(jobs.JOB_KINDS, "toy", JobKind(toy))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        system, _ = store.add_system(name="toy", kind="run", content_hash="toy", job=("toy", {"value": 0.25}))
        evaluate = functools.partial(jobs.evaluate_job, dataset="somewhere", device="cpu")
        assert worker.run_worker(store, evaluate, once=True, isolate=False).done == 1
        assert [r["value"] for r in store.results_for(system.id)] == [0.25]
    assert seen == [({"value": 0.25}, JobOptions(dataset="somewhere", device="cpu"))]


def test_there_is_no_run_job_kind():
    """Run files are validated strictly and scored when submitted; a `run` job (never queued by the app, and it
    skipped strict validation) is refused like any unknown kind, naming the kinds this worker runs."""
    with pytest.raises(FreshStackError, match=r"unknown kind 'run'; this worker runs 'model', 'answers_judge'"):
        jobs.evaluate_job(job("run", {"run": {"alpha": {"q": {"d": 1.0}}}}))
    with pytest.raises(TypeError, match="cache_path"):  # options are the worker's, spelled as JobOptions spells them
        jobs.evaluate_job(job("model"), cache_path="x")
