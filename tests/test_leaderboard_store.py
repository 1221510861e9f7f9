"""The leaderboard store on a SQLite file and on the real PostgreSQL server: dedupe, queue, leases, atomicity.

PostgreSQL tests run in a schema of their own (created and dropped per test), so parallel runs never collide.
Point them at another server with FRESHSTACK_TEST_PG_URL; they skip, saying why, when none answers.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import event, insert, select
from store_rows import count, topic_scores

from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import results, systems
from leaderboard.store.store import Store


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL (conftest.py's `store` is SQLite only)."""
    return store_on_each_backend


def test_add_system_is_idempotent_by_content_hash(store):
    first, created = store.add_system(name="<b>BM25</b>", kind="baseline", content_hash="sha256:aa", job=("run", {}))
    again, created_again = store.add_system(name="other", kind="run", content_hash="sha256:aa", job=("run", {}))
    assert created and not created_again
    assert again == first and first.name == "BM25" and first.status == "queued"
    assert len(store.queue.list_jobs()) == 1  # the duplicate queued nothing
    assert store.find_system("sha256:aa") == first and store.find_system("nope") is None
    _, created_other = store.add_system(name="x", kind="run", content_hash="sha256:bb")
    assert created_other and count(store, systems) == 2


def test_add_system_refuses_bad_input(store):
    with pytest.raises(FreshStackError, match="kind"):
        store.add_system(name="x", kind="hack", content_hash="h")
    with pytest.raises(FreshStackError, match="name is empty"):
        store.add_system(name="<script>alert(1)</script>", kind="run", content_hash="h")
    with pytest.raises(FreshStackError, match="http"):
        store.add_system(name="x", kind="run", content_hash="h", link="javascript:alert(1)")
    assert count(store, systems) == 0


def test_50_concurrent_submissions_from_threads_are_stored_once_each(store):
    barrier = threading.Barrier(50)

    def submit(i: int) -> tuple[int, bool, int, bool]:
        barrier.wait()
        own, own_created = store.add_system(name=f"run {i}", kind="run", content_hash=f"h{i}")
        dup, dup_created = store.add_system(name=f"dup {i}", kind="run", content_hash="same", job=("run", {"i": i}))
        return own.id, own_created, dup.id, dup_created

    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(submit, range(50)))
    assert len({o[0] for o in outcomes}) == 50 and all(o[1] for o in outcomes)
    assert len({o[2] for o in outcomes}) == 1 and sum(o[3] for o in outcomes) == 1
    assert count(store, systems) == 51 and len(store.queue.list_jobs()) == 1


def _submit_in_process(url: str, i: int, barrier, answers) -> None:
    with Store(url) as s:
        barrier.wait()
        own = s.add_system(name=f"p{i}", kind="run", content_hash=f"proc-{i}")[1]
        dup = s.add_system(name=f"d{i}", kind="run", content_hash="proc-same", job=("run", {}))[1]
    answers.put((i, own, dup))


@pytest.mark.slow
def test_50_concurrent_submissions_from_processes_are_stored_once_each(store, store_url):
    ctx = multiprocessing.get_context("fork")
    store.engine.dispose()  # children must not share the parent's pooled connections
    barrier, answers = ctx.Barrier(50), ctx.Queue()
    procs = [ctx.Process(target=_submit_in_process, args=(store_url, i, barrier, answers)) for i in range(50)]
    for p in procs:
        p.start()
    got = [answers.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert all(p.exitcode == 0 for p in procs)
    assert all(own for _, own, _ in got) and sum(dup for _, _, dup in got) == 1
    assert count(store, systems) == 51 and len(store.queue.list_jobs()) == 1


@pytest.mark.slow
def test_rate_limit_counts_per_identity_in_a_sliding_window(store):
    assert [bool(store.rate_limit.check("1.2.3.4", 3)) for _ in range(4)] == [True, True, True, False]
    refused = store.rate_limit.check("1.2.3.4", 3)
    assert not refused and refused.used == 3 and 3500 < refused.retry_after_seconds <= 3600
    assert store.rate_limit.check("user:alice", 3)  # identities are counted apart
    assert store.rate_limit.check("short", 1, window_seconds=1.0)
    assert not store.rate_limit.check("short", 1, window_seconds=1.0)
    time.sleep(1.05)
    assert store.rate_limit.check("short", 1, window_seconds=1.0)  # the window slid past the first one


def test_rate_limit_holds_under_concurrency(store):
    barrier = threading.Barrier(10)

    def attempt(_: int) -> bool:
        barrier.wait()
        return bool(store.rate_limit.check("burst", 3))

    with ThreadPoolExecutor(10) as pool:
        assert sum(pool.map(attempt, range(10))) == 3


@pytest.mark.slow
def test_leaderboard_rows_for_1000_systems_in_two_queries(store):
    topics, measures = [f"topic{t}" for t in range(5)], ["alpha_ndcg@10", "coverage@20", "recall@50"]
    now = datetime.now(UTC).replace(tzinfo=None)
    base = {"kind": "run", "description": "d", "identity": "", "status": "scored", "created_at": now}
    per_query = {f"q{q}": 0.5 for q in range(50)}
    common = {"schema_version": 1, "evaluator_version": "0.1.0", "dataset_revision": "r", "created_at": now}
    with store.engine.begin() as conn:
        conn.execute(insert(systems), [{**base, "name": f"s{i}", "content_hash": f"h{i}"} for i in range(1000)])
        ids = conn.execute(select(systems.c.id)).scalars().all()
        rows = [
            {"system_id": i, "topic": t, "measure": m, "value": i / 1000, "per_query": per_query, "parameters": {}}
            | common
            for i in ids
            for t in topics
            for m in measures
        ]
        conn.execute(insert(results), rows)
    statements: list[str] = []

    def count_statement(conn, cursor, statement, *args) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    # the row count is what a page render pays per system; its time is `make bench`'s to measure, not a test's
    event.listen(store.engine, "before_cursor_execute", count_statement)
    try:
        board = store.leaderboard_rows()
    finally:
        event.remove(store.engine, "before_cursor_execute", count_statement)
    assert len(statements) == 2, statements  # one for the systems, one for all their scores: never one per system
    assert len(board) == 1000 and all(len(row.scores) == 5 for row in board)
    assert board[10].scores["topic3"]["recall@50"].value == board[10].system.id / 1000
    assert board[0].dataset_revision == "r" and board[0].evaluator_version == "0.1.0"
    assert len(store.leaderboard_rows(kinds=("baseline",))) == 0


def test_store_urls(tmp_path):
    with pytest.raises(FreshStackError, match="SQLite file"):
        Store("sqlite://")
    with pytest.raises(FreshStackError, match="only sqlite"):
        Store("mysql://x@localhost/db")
    with Store(f"sqlite:///{tmp_path / 'new' / 'dir' / 'lb.db'}") as s:  # parent folders are created
        s.create_all()
        s.create_all()  # idempotent
        assert "lb.db" in repr(s)
        with s.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    assert Store("postgresql://u:secret@h/db").engine.url.drivername == "postgresql+psycopg"
    assert "secret" not in repr(Store("postgresql://u:secret@h/db"))


def test_a_store_made_before_a_system_kind_existed_is_widened_in_place(store_url):
    """An older store's CHECK on systems.kind lacks `answers`: create_all widens it, keeping rows and ids."""
    from sqlalchemy.schema import CreateTable

    from leaderboard.store.schema import SYSTEM_KINDS, systems

    assert "answers" in SYSTEM_KINDS
    with Store(store_url) as old:
        ddl = str(CreateTable(systems).compile(dialect=old.engine.dialect))
        assert ", 'answers'" in ddl
        with old.engine.begin() as conn:
            conn.exec_driver_sql(ddl.replace(", 'answers'", ""))  # the table as an older release declared it
        from leaderboard.store.schema import Base

        with old.engine.begin() as conn:
            Base.metadata.create_all(conn)  # the other tables, as the old release made them
        kept, _ = old.add_system(
            name="BM25", kind="baseline", content_hash="b", results={"t": topic_scores()}, meta=ResultMeta("r")
        )
        with pytest.raises(Exception, match=r"(?i)check"):
            old.add_system(name="A", kind="answers", content_hash="a-early")
    with Store(store_url) as store:
        store.create_all()
        answers, created = store.add_system(name="A", kind="answers", content_hash="a")
        assert created and answers.kind == "answers"
        assert store.get_system(kept.id).name == "BM25" and len(store.results_for(kept.id)) == 2
        store.create_all()  # a second call finds nothing to widen
        assert count(store, systems) == 2
