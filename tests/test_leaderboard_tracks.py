"""Tracks plug into the leaderboard: the worker runs each job kind with the handler its track registered, and the
kinds the store accepts are the tracks' own (a store made by an earlier release still opens and works, on SQLite
and on PostgreSQL)."""

from __future__ import annotations

import functools
from datetime import datetime

import pytest
from sqlalchemy.schema import CreateTable

from freshstack_hf.errors import FreshStackError
from leaderboard.store.migrations import stored_schema
from leaderboard.store.records import JobRecord, ResultMeta
from leaderboard.store.schema import STORE_SCHEMA, SYSTEM_KINDS, Base, kind_check, systems
from leaderboard.store.store import Store
from leaderboard.tracks import answers, reranking, retrieval
from leaderboard.tracks.answers.answer_jobs import JOB_KINDS as ANSWER_JOBS
from leaderboard.tracks.reranking.rerank_job import JOB_KINDS as RERANK_JOBS
from leaderboard.tracks.retrieval.jobs.baseline_job import JOB_KINDS as BASELINE_JOBS
from leaderboard.tracks.retrieval.jobs.fill_job import JOB_KINDS as FILL_JOBS
from leaderboard.tracks.retrieval.jobs.model_job import JOB_KINDS as RETRIEVAL_JOBS
from leaderboard.tracks.retrieval.jobs.rescore_job import JOB_KINDS as RESCORE_JOBS
from leaderboard.tracks.retrieval.tables.leaderboard_table import build_frame
from leaderboard.worker import jobs, worker
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput
from leaderboard.worker.jobs import FILL_JOB_KIND
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV


def job(kind: str, payload: dict | None = None) -> JobRecord:
    now = datetime(2026, 1, 1)
    return JobRecord(7, 1, kind, payload or {}, "running", 1, 3, "w", None, None, now, now, None)


def test_the_job_table_is_the_tracks_tables():
    tables = {**RETRIEVAL_JOBS, **RERANK_JOBS, **FILL_JOBS, **ANSWER_JOBS, **BASELINE_JOBS, **RESCORE_JOBS}
    assert tables == jobs.JOB_KINDS
    kinds = {retrieval.MODEL_JOB_KIND, reranking.RERANK_JOB_KIND, FILL_JOB_KIND, retrieval.RESCORE_JOB_KIND}
    kinds |= {answers.JUDGE_JOB_KIND, answers.GENERATE_JOB_KIND}
    baselines = {retrieval.BASELINE_JOB_KIND, answers.BASELINE_JOB_KIND}  # the rows an app queues when it starts
    assert set(jobs.JOB_KINDS) == kinds | baselines and set(jobs.BASELINE_JOB_KINDS) == baselines
    assert worker.KIND_SECRETS == {
        FILL_JOB_KIND: (JUDGE_KEY_ENV,),
        answers.JUDGE_JOB_KIND: (JUDGE_KEY_ENV,),
        answers.GENERATE_JOB_KIND: (JUDGE_KEY_ENV,),
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
    with pytest.raises(
        FreshStackError, match=r"unknown kind 'run'; this worker runs 'model', 'reranker', 'fill', 'answers_judge'"
    ):
        jobs.evaluate_job(job("run", {"run": {"alpha": {"q": {"d": 1.0}}}}))
    with pytest.raises(TypeError, match="cache_path"):  # options are the worker's, spelled as JobOptions spells them
        jobs.evaluate_job(job("model"), cache_path="x")


EARLIER_KINDS = ("baseline", "run", "model", "reported", "answers")  # what the previous release's CHECK allowed
SCORES = {"t": {"metrics": {"alpha_ndcg@10": 0.5}, "per_query": {"q": {"alpha_ndcg@10": 0.5}}}}


def make_earlier_store(url: str, kinds: tuple[str, ...], rows: dict[str, str]) -> None:
    """A store as an earlier release made it: systems.kind allowing `kinds`, holding `rows` (content hash: kind)."""
    with Store(url) as old:
        ddl = str(CreateTable(systems).compile(dialect=old.engine.dialect))
        with old.engine.begin() as conn:
            conn.exec_driver_sql(ddl.replace(kind_check(SYSTEM_KINDS), kind_check(kinds)))
            Base.metadata.create_all(conn)
            for content_hash, kind in rows.items():
                conn.exec_driver_sql(
                    "INSERT INTO systems (name, kind, description, created_at, identity, content_hash, status) "
                    f"VALUES ('{kind} row', '{kind}', '', '2025-01-01 00:00:00', '', '{content_hash}', 'pending')"
                )


def test_the_store_accepts_the_kinds_the_tracks_declare(tmp_path):
    assert (*retrieval.SYSTEM_KINDS, *reranking.SYSTEM_KINDS, *answers.SYSTEM_KINDS) == SYSTEM_KINDS
    assert "reported" not in SYSTEM_KINDS  # figures published elsewhere are never stored
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        with pytest.raises(FreshStackError, match="system kind 'reported' unknown"):
            store.add_system(name="published", kind="reported", content_hash="r1")


def test_a_store_of_the_previous_release_opens_and_works(store_url):
    """Its CHECK allows `reported` (which no track declares any more) but not the reranking kinds: widened, rows
    kept and `reported` still allowed, every current kind is stored in it."""
    make_earlier_store(store_url, EARLIER_KINDS, {"b": "baseline", "a": "answers"})
    with Store(store_url) as store:
        store.create_all()
        stored = [
            store.add_system(name=k, kind=k, content_hash=f"new-{k}", results=SCORES, meta=ResultMeta("r"))[0]
            for k in SYSTEM_KINDS
        ]
        assert [s.kind for s in stored] == list(SYSTEM_KINDS)
        assert {r.system.content_hash for r in store.leaderboard_rows()} == {
            "b",
            "a",
            *(f"new-{k}" for k in SYSTEM_KINDS),
        }
        assert [r["value"] for r in store.results_for(stored[0].id)] == [0.5]


def test_an_older_store_is_widened_keeping_every_kind_its_rows_hold(store_url):
    """Made before `answers` existed, and holding a row of a kind no track declares any more: the widened CHECK
    allows the current kinds and keeps that row (it would otherwise make the store fail to open)."""
    make_earlier_store(store_url, ("baseline", "run", "model", "reported"), {"b": "baseline", "r": "reported"})
    with Store(store_url) as store:
        store.create_all()
        answers_system, created = store.add_system(name="A", kind="answers", content_hash="a")
        assert created and answers_system.kind == "answers"
        assert {r.system.content_hash: r.system.kind for r in store.leaderboard_rows()} == {
            "b": "baseline",
            "r": "reported",
            "a": "answers",
        }
        store.create_all()  # nothing left to widen
        assert len(store.leaderboard_rows()) == 3


# Rows of a store made before `systems.track` (content hash: kind), and the rule the Leaderboard table read each
# row's track by then: a model keyed `model:nano:...` was nano, any other model full, any other row none.
SCHEMA_2_ROWS = {
    "model:nano:abc": "model",
    "model:full:abc": "model",
    "MODEL:NANO:abc": "model",  # the prefix is compared as it was, byte for byte
    "model:nano:run-file": "run",
    "baseline:abc": "baseline",
}


def old_rule(kind: str, content_hash: str) -> str | None:
    if kind != "model":
        return None
    return "nano" if content_hash.startswith("model:nano:") else "full"


def test_an_older_store_gets_each_rows_track_once_by_the_rule_the_table_read_it_by(store_url):
    """Store schema 2 had no `systems.track`: opened, the column is added and filled for the rows it holds exactly
    as the table used to guess it; afterwards nothing guesses (a row stored without a track keeps none)."""
    make_earlier_store(store_url, SYSTEM_KINDS, SCHEMA_2_ROWS)
    with Store(store_url) as old, old.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE systems DROP COLUMN track")
        conn.exec_driver_sql("INSERT INTO store_meta (key, value) VALUES ('schema', '2')")
    with Store(store_url) as store:
        store.create_all()
        tracks = {r.system.content_hash: r.system.track for r in store.leaderboard_rows()}
        assert tracks == {h: old_rule(kind, h) for h, kind in SCHEMA_2_ROWS.items()}
        assert tracks["model:nano:abc"] == "nano" and tracks["MODEL:NANO:abc"] == "full"
        with store.db.read() as conn:
            assert stored_schema(conn) == STORE_SCHEMA == 3
        later, _ = store.add_system(name="later", kind="model", content_hash="model:nano:later")
        store.create_all()  # the fill ran once, when the column was added: this row's track stays untold
        assert store.get_system(later.id).track is None
        ids = {r.system.content_hash: str(r.system.id) for r in store.leaderboard_rows()}
        frame = build_frame(store.leaderboard_rows(), ["t"])
    types = dict(zip(frame["id"], frame["type"], strict=True))
    assert types[ids["model:nano:abc"]] == "submitted model · nano (pending)"
    assert types[ids["model:nano:later"]] == types[ids["MODEL:NANO:abc"]] == "submitted model (pending)"


def test_an_outcome_names_each_average_by_its_tracks_measure_table():
    from leaderboard.submission.outcome import SubmitOutcome
    from leaderboard.tracks.answers.answer_submit import AnswerOutcome

    details = {"topics": ["alpha", "beta"], "average": {"answers:citation_recall": 0.25, "answers:nugget_all": 0.5}}
    table = ["", "Average of the topics (alpha, beta):", "", "| measure | average |", "| --- | ---: |"]
    assert AnswerOutcome("scored", "scored: answers #1", 1, details=details).markdown().split("\n") == [
        "scored: answers \\#1",
        *table,
        "| Cit\\. recall | 0.250 |",
        "| All | 0.500 |",
    ]
    run = {"topics": ["alpha", "beta"], "average": {"alpha_ndcg@10": 0.3245}}
    assert SubmitOutcome("scored", "ok", 2, details=run).markdown().split("\n")[-1] == "| α\\-nDCG@10 | 0.325 |"
