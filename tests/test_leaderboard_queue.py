"""The leaderboard's job queue on a SQLite file and on the real PostgreSQL server: one claimer per job, leases and
heartbeats, retries up to a limit, and results stored all or nothing."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy.exc import IntegrityError
from store_rows import META, count, queue_counts, stored_job, topic_scores

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from leaderboard.store.records import SCHEMA_VERSION
from leaderboard.store.schema import results


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL (conftest.py's `store` is SQLite only)."""
    return store_on_each_backend


@pytest.mark.slow
def test_each_job_is_claimed_by_exactly_one_of_several_concurrent_claimers(store):
    system, _ = store.add_system(name="s", kind="model", content_hash="m")
    ids = {store.queue.enqueue(system.id, "model", {"n": n}).id for n in range(40)}
    barrier = threading.Barrier(8)

    def claimer(w: int) -> list[int]:
        barrier.wait()
        mine = []
        while (job := store.queue.claim_job(f"worker-{w}", 60)) is not None:
            assert job.lease_owner == f"worker-{w}" and job.state == "running" and job.attempts == 1
            mine.append(job.id)
        return mine

    with ThreadPoolExecutor(8) as pool:
        claimed = [job for batch in pool.map(claimer, range(8)) for job in batch]
    assert sorted(claimed) == sorted(ids)  # every job once, none twice
    assert queue_counts(store) == {"running": 40}


@pytest.mark.slow
def test_expired_lease_returns_the_job_and_the_zombie_cannot_write(store):
    system, _ = store.add_system(name="s", kind="model", content_hash="m", job=("model", {"model": "x"}))
    job = store.queue.claim_job("w1", lease_seconds=0.8)
    assert job is not None and store.queue.claim_job("w2", 0.8) is None  # leased: nobody else gets it
    time.sleep(0.9)
    again = store.queue.claim_job("w2", lease_seconds=30)
    assert again is not None and again.id == job.id and again.attempts == 2 and again.lease_owner == "w2"
    assert not store.queue.heartbeat(job.id, "w1")  # the zombie learns it lost the job ...
    assert not store.queue.finish_job(job.id, "w1", {"t": topic_scores(0.9)}, META)  # ... and cannot store results
    assert not store.queue.fail_job(job.id, "w1", "zombie") and not store.queue.release_job(job.id, "w1")
    assert count(store, results) == 0
    assert store.queue.finish_job(job.id, "w2", {"t": topic_scores(0.4)}, META, size=123)
    assert not store.queue.finish_job(job.id, "w2", {"t": topic_scores(0.4)}, META)  # done is done
    rows = store.results_for(system.id)
    assert [(r["topic"], r["measure"], r["value"]) for r in rows] == [
        ("t", "alpha_ndcg@10", 0.4),
        ("t", "coverage@20", 0.2),
    ]
    stored = store.get_system(system.id)
    assert stored.status == "scored" and stored.size == 123
    assert stored_job(store, job.id).state == "done"


@pytest.mark.slow
def test_heartbeats_keep_the_lease(store):
    store.add_system(name="s", kind="model", content_hash="m", job=("model", {}))
    job = store.queue.claim_job("w1", lease_seconds=1.0)
    for _ in range(5):  # longer than the lease in all, but each beat comes well within it
        time.sleep(0.25)
        assert store.queue.heartbeat(job.id, "w1", lease_seconds=1.0)
        assert store.queue.claim_job("w2", 1.0) is None


@pytest.mark.slow
def test_a_job_that_keeps_losing_its_worker_fails_after_max_attempts(store):
    system, _ = store.add_system(name="s", kind="model", content_hash="m", job=("model", {}), max_attempts=2)
    for attempt in (1, 2):
        job = store.queue.claim_job(f"w{attempt}", lease_seconds=0.2)
        assert job.attempts == attempt
        time.sleep(0.3)
    assert store.queue.claim_job("w3", 0.2) is None
    job = stored_job(store, job.id)
    assert job.state == "failed" and "heartbeats" in job.error
    assert store.get_system(system.id).status == "failed"


def test_release_requeues_and_fail_is_final(store):
    system, _ = store.add_system(name="s", kind="model", content_hash="m", job=("model", {}))
    job = store.queue.claim_job("w1", 30)
    assert store.queue.release_job(job.id, "w1", "stopping")
    assert stored_job(store, job.id).state == "queued" and store.get_system(system.id).status == "queued"
    job = store.queue.claim_job("w2", 30)
    assert job.attempts == 2
    assert store.queue.fail_job(job.id, "w2", "model has pickle weights")
    assert store.queue.claim_job("w3", 30) is None
    assert store.get_system(system.id).error == "model has pickle weights"


class _ExplodingResults(Mapping):
    """Topic results whose second topic blows up while the first topic's rows are already written."""

    def __init__(self) -> None:
        self._data = {"t1": topic_scores(), "t2": None}

    def __getitem__(self, key):
        if key == "t2":
            raise RuntimeError("evaluator crashed mid-save")
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return 2


def test_save_results_is_all_or_nothing(store):
    system, _ = store.add_system(name="s", kind="run", content_hash="r")
    with pytest.raises(RuntimeError, match="mid-save"):
        store.save_results(system.id, _ExplodingResults(), META)
    with pytest.raises(ValueError, match="finite"):
        store.save_results(system.id, {"t1": topic_scores(), "t2": topic_scores(math.nan)}, META)
    assert count(store, results) == 0 and store.get_system(system.id).status == "pending"
    store.save_results(system.id, {"t1": topic_scores(0.5), "t2": topic_scores(0.6)}, META)
    with pytest.raises(IntegrityError):  # scores are never silently doubled ...
        store.save_results(system.id, {"t3": topic_scores(), "t1": topic_scores(0.9)}, META)
    assert count(store, results) == 4
    store.save_results(system.id, {"t1": topic_scores(0.9)}, META, replace=True)  # ... only replaced on request
    rows = store.results_for(system.id)
    assert len(rows) == 2 and rows[0]["value"] == 0.9
    assert rows[0]["per_query"] == {"q0": 0.9, "q1": 0.9, "q2": 0.9}
    assert rows[0]["parameters"] == {"k": 10} and rows[0]["dataset_revision"] == "rev-1"
    assert rows[0]["schema_version"] == SCHEMA_VERSION and rows[0]["evaluator_version"] == __version__
    with pytest.raises(FreshStackError, match="no system"):
        store.save_results(999, {"t1": topic_scores()}, META)


def test_finish_with_bad_results_stores_nothing_and_keeps_the_job(store):
    store.add_system(name="s", kind="model", content_hash="m", job=("model", {}))
    job = store.queue.claim_job("w1", 30)
    with pytest.raises(ValueError):
        store.queue.finish_job(job.id, "w1", {"t1": topic_scores(), "t2": topic_scores(math.inf)}, META)
    assert count(store, results) == 0 and stored_job(store, job.id).state == "running"
    assert store.queue.fail_job(job.id, "w1", "bad results")
