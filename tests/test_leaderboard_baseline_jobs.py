"""Baseline rows as queue jobs, on a SQLite file and on the real PostgreSQL server: queued once with their dedupe
key, computed by a real worker into the numbers `compute_baselines` stores in-process, a failed row queued again,
the queue's kind filter and follow-up jobs, and the page's "Computing" line."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from cross_encoders import minilm_cross_encoder
from store_rows import META, topic_scores

from freshstack_hf.errors import FreshStackError
from leaderboard.page.computing import in_progress, status_line
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval import BASELINE_JOB_KIND
from leaderboard.tracks.retrieval.jobs.baseline_job import evaluate_baseline
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines, queue_baselines
from leaderboard.worker.job_contract import JobOptions
from leaderboard.worker.jobs import BASELINE_JOB_KINDS, evaluate_job
from leaderboard.worker.worker import run_worker


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL."""
    return store_on_each_backend


def _values(store: Store, system_id: int) -> dict[tuple[str, str], tuple[float, float | None, float | None]]:
    return {(r["topic"], r["measure"]): (r["value"], r["ci_low"], r["ci_high"]) for r in store.results_for(system_id)}


@pytest.mark.slow
def test_a_missing_baseline_is_queued_once_and_a_worker_stores_the_in_process_numbers(store, lb_dataset, tmp_path):
    said: list[str] = []
    (row,) = queue_baselines(store, lb_dataset, methods=["bm25"], resamples=200, say=said.append)
    assert (row.method, row.name, row.created, row.status) == ("bm25", "BM25", True, "queued")
    assert said == [f"baselines: queued BM25 as system #{row.system_id} for a worker"]
    (job,) = store.queue.list_jobs()
    assert job.kind == BASELINE_JOB_KIND and job.system_id == row.system_id
    assert job.payload["content_hash"] == store.get_system(row.system_id).content_hash
    assert job.payload["dataset_revision"] == lb_dataset.revision and job.payload["method"] == "bm25"
    assert in_progress(store) == [{"system_id": row.system_id, "name": "BM25", "kind": "baseline", "state": "queued"}]

    (again,) = queue_baselines(store, lb_dataset, methods=["bm25"], resamples=200, say=said.append)
    assert (again.system_id, again.created, again.status) == (row.system_id, False, "queued")
    assert len(store.queue.list_jobs()) == 1
    assert said[-1] == f"baselines: BM25 is already queued (system #{row.system_id})"

    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder))
    kinds = {"kinds": BASELINE_JOB_KINDS, "max_idle_seconds": 0.1, "poll_seconds": 0.05}
    stats = run_worker(store, evaluate, isolate=False, **kinds)
    assert stats.done == 1, store.queue.list_jobs()
    system = store.get_system(row.system_id)
    assert system.status == "scored" and in_progress(store) == [] and status_line(in_progress(store)) == ""
    assert store.blobs.ranking_of(system.id) is not None  # the ranking behind the row, for the Detail tab

    with Store(f"sqlite:///{tmp_path / 'in-process.db'}") as sync:
        sync.create_all()
        (made,) = compute_baselines(sync, lb_dataset, methods=["bm25"], resamples=200)
        assert sync.get_system(made.system_id).content_hash == system.content_hash  # the same dedupe key
        assert _values(store, row.system_id) == _values(sync, made.system_id)

    (stored,) = queue_baselines(store, lb_dataset, methods=["bm25"], resamples=200)
    assert (stored.created, stored.status) == (False, "scored") and store.queue.live_jobs() == 0
    assert compute_baselines(store, lb_dataset, methods=["bm25"])[0].created is False


def test_a_failed_baseline_is_queued_again_with_its_failed_job(store, lb_dataset):
    (row,) = queue_baselines(store, lb_dataset, methods=["bm25"], resamples=200)
    job = store.queue.claim_job("w")
    assert store.queue.fail_job(job.id, "w", "out of memory\nTraceback ...")
    said: list[str] = []
    (again,) = queue_baselines(store, lb_dataset, methods=["bm25"], resamples=200, say=said.append)
    assert (again.system_id, again.created, again.status) == (row.system_id, False, "queued")
    assert said == [f"baselines: queued BM25 again (system #{row.system_id} was failed: out of memory)"]
    first, second = store.queue.list_jobs(system_id=row.system_id)
    assert (first.state, second.state) == ("failed", "queued") and second.payload == first.payload
    assert store.get_system(row.system_id).status == "queued"


def test_two_apps_starting_together_queue_a_row_once(store):
    system, _ = store.add_system(name="BM25", kind="baseline", content_hash="baseline:x")
    barrier = threading.Barrier(6)

    def start(_: int) -> bool:
        barrier.wait()
        return store.queue.enqueue_unless_pending(system.id, BASELINE_JOB_KIND, {"method": "bm25"}) is not None

    with ThreadPoolExecutor(6) as pool:
        assert sorted(pool.map(start, range(6))) == [False] * 5 + [True]
    assert len(store.queue.list_jobs()) == 1 and store.queue.live_jobs([BASELINE_JOB_KIND]) == 1
    assert store.queue.live_jobs(["model"]) == 0


def test_a_worker_limited_to_some_kinds_claims_only_those(store):
    model, _ = store.add_system(name="m", kind="model", content_hash="m", job=("model", {"model": "x"}))
    base, _ = store.add_system(name="b", kind="baseline", content_hash="b", job=(BASELINE_JOB_KIND, {}))
    assert store.queue.claim_job("w", kinds=["answers_baseline"]) is None
    job = store.queue.claim_job("w", kinds=BASELINE_JOB_KINDS)
    assert job is not None and job.system_id == base.id  # the older model job was passed over
    assert store.queue.list_jobs(system_id=model.id)[0].state == "queued"
    assert store.queue.claim_job("w2").system_id == model.id  # an unlimited worker takes every kind


def test_a_follow_up_job_is_queued_with_the_results_it_follows(store):
    system, _ = store.add_system(name="s", kind="answers", content_hash="s", job=("answers_baseline", {}))
    job = store.queue.claim_job("w")
    follow_up = ("answers_judge", {"answers_sha256": "0" * 64})
    assert not store.queue.finish_job(job.id, "zombie", {"t": topic_scores(0.5)}, META, follow_up=follow_up)
    assert store.queue.list_jobs(state="queued") == []  # a lost lease queues nothing
    assert store.queue.finish_job(job.id, "w", {"t": topic_scores(0.5)}, META, follow_up=follow_up)
    (judge,) = store.queue.list_jobs(state="queued")
    assert (judge.kind, judge.payload, judge.system_id) == ("answers_judge", follow_up[1], system.id)
    assert store.get_system(system.id).status == "queued" and store.results_for(system.id)  # scores kept


def test_the_computing_line_names_running_rows_first_and_counts_the_rest(store):
    ids = []
    for n in range(8):
        name = "Dense *model*" if n == 0 else f"row {n}"
        system, _ = store.add_system(name=name, kind="baseline", content_hash=f"h{n}", job=(BASELINE_JOB_KIND, {}))
        ids.append(system.id)
    store.add_system(name="done", kind="run", content_hash="done", results={"t": topic_scores(0.1)}, meta=META)
    claimed = store.queue.claim_job("w")  # the oldest: row 0 is running
    assert claimed.system_id == ids[0]
    store.queue.claim_job("w")  # row 1 too
    items = in_progress(store)
    assert [i["system_id"] for i in items] == ids  # running (0, 1) then queued, oldest first; the scored run not
    assert [i["state"] for i in items[:3]] == ["running", "running", "queued"]
    line = status_line(items)
    assert line.startswith(r"**Computing:** Dense \*model\* — running; row 1 — running; row 2 — queued")
    assert line.count(" — ") == 6 and "; and 2 more" in line


def test_a_baseline_job_is_refused_for_other_data_or_model_files(lb_dataset):
    options = JobOptions(dataset=str(lb_dataset.folder))
    with pytest.raises(FreshStackError, match="without a 'content_hash' and a method of bm25, dense"):
        evaluate_baseline({"method": "tfidf", "content_hash": "x"}, options)
    base = {"method": "bm25", "dataset": str(lb_dataset.folder), "content_hash": "baseline:other"}
    with pytest.raises(FreshStackError, match="but the row was queued for local-000000000000: give the worker"):
        evaluate_baseline({**base, "dataset_revision": "local-000000000000"}, options)
    with pytest.raises(FreshStackError, match="queued for other model files than this worker has"):
        evaluate_baseline({**base, "dataset_revision": lb_dataset.revision}, options)


@pytest.mark.slow  # the real MiniLM, on a two-process pool
def test_a_dense_baseline_job_on_two_devices_stores_the_one_process_numbers(tmp_path, monkeypatch):
    """`freshstack-hf worker --devices cpu,cpu`: the job encodes on sentence-transformers' pool (two CPU processes
    standing in for two GPUs), one pool for the whole job, and its row holds the numbers `compute_baselines`
    computes on one device."""
    from synthetic_repo import build_small_repo

    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.retrieval import encoding_pool

    ctx = Dataset(build_small_repo(tmp_path / "freshstack", queries=2, docs=40, doc_chars=100))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        (row,) = queue_baselines(store, ctx, methods=["dense"], resamples=200)
        (job,) = store.queue.list_jobs()
        chosen: list = []
        real = encoding_pool.pool_devices
        monkeypatch.setattr(encoding_pool, "pool_devices", lambda *a, **k: chosen.append(real(*a, **k)) or chosen[-1])
        options = JobOptions(dataset=str(ctx.folder), cache_dir=str(tmp_path / "empty-cache"), devices=("cpu", "cpu"))
        output = evaluate_baseline(job.payload, options)
        assert chosen == [["cpu", "cpu"]]  # one pool, started once, for both topics' documents and queries
        chosen.clear()
        cache = tmp_path / "one-process-cache"
        (made,) = compute_baselines(store, ctx, methods=["dense"], cache_dir=cache, resamples=200)
        assert made.system_id == row.system_id and not made.created  # queued: left to its worker
        with Store(f"sqlite:///{tmp_path / 'one.db'}") as one:
            one.create_all()
            (single,) = compute_baselines(one, ctx, methods=["dense"], cache_dir=cache, resamples=200)
            assert set(chosen) == {None}  # one process
            expected = {(r["topic"], r["measure"]): r["value"] for r in one.results_for(single.system_id)}
    pooled = {(t, m): v for t, result in output.results.items() for m, v in result["metrics"].items()}
    assert pooled.keys() == expected.keys()
    assert pooled == pytest.approx(expected, abs=1e-6)


def test_the_dedupe_key_is_the_configuration_hash_stores_already_hold(lb_dataset):
    """A store filled by an earlier release (rows computed before serving) is found, not queued again: the key is
    the same hash of the same configuration."""
    from leaderboard.baseline_key import config_hash
    from leaderboard.tracks.retrieval.jobs.baseline_rows import plan_baselines

    bm25 = {"method": "bm25", "k": 500, "k1": 0.9, "b": 0.4}
    plan = plan_baselines(lb_dataset, ["bm25"])
    assert plan.hashes == {"bm25": config_hash(bm25, lb_dataset.revision)}
    assert plan.hashes["bm25"].startswith("baseline:") and len(plan.hashes["bm25"]) == len("baseline:") + 48


@pytest.mark.slow  # MiniLM for the hybrid, and a cross-encoder made from it
def test_a_reranked_hybrid_job_computes_its_inputs_and_matches_the_in_process_row(tmp_path):
    from synthetic_repo import build_small_repo

    from freshstack_hf.repo.dataset import Dataset

    # random one-label head: meaningless scores, real code path; it reads 128 tokens of each pair, not 512
    cross_encoder = minilm_cross_encoder(tmp_path / "cross-encoder")
    ctx = Dataset(build_small_repo(tmp_path / "freshstack", queries=2, docs=40, doc_chars=100))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store, Store(f"sqlite:///{tmp_path / 'sync.db'}") as sync:
        store.create_all()
        sync.create_all()
        rows = queue_baselines(store, ctx, methods=["bm25"], cross_encoder=str(cross_encoder), resamples=200)
        assert [(r.method, r.status) for r in rows] == [("bm25", "queued"), ("rerank", "queued")]
        evaluate = functools.partial(evaluate_job, dataset=str(ctx.folder), device="cpu")
        stats = run_worker(store, evaluate, isolate=False, kinds=BASELINE_JOB_KINDS, max_idle_seconds=0.1)
        assert stats.done == 2, store.queue.list_jobs()
        made = compute_baselines(sync, ctx, methods=["bm25"], cross_encoder=str(cross_encoder), resamples=200)
        assert [r.name for r in made] == ["BM25", "Reranked hybrid (cross-encoder)"] == [r.name for r in rows]
        for queued, computed in zip(rows, made, strict=True):
            assert _values(store, queued.system_id) == _values(sync, computed.system_id), queued.name


def test_worker_devices_flag_reaches_the_jobs():
    import argparse

    from leaderboard.cli import board_worker

    parser = argparse.ArgumentParser()
    board_worker.add_arguments(parser)
    evaluate = board_worker._evaluator(parser.parse_args(["--devices", "cuda:0, cuda:1"]))
    assert evaluate.keywords["devices"] == ("cuda:0", "cuda:1")
    assert JobOptions(**evaluate.keywords).devices == ("cuda:0", "cuda:1")
    assert board_worker._evaluator(parser.parse_args([])).keywords["devices"] is None  # every GPU when several
    with pytest.raises(FreshStackError, match=r"--devices ',' names no device: give e\.g\. cuda:0,cuda:1"):
        board_worker.parse_devices(",")
