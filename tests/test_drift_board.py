"""`freshstack-hf drift-board`: the drift report with the leaderboard's stored systems, each archived ranking
re-scored on both snapshots exactly as `drift --run` scores the same file."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from snapshot_topic import NEW, OLD, make_history, write_definition
from store_rows import META, topic_scores

from freshstack_hf.cli.main import main

# Builds real topics and refreshes per module: `make test` runs it, `make check` does not.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("board-drift")
    make_history(root)
    assert main(["build", str(write_definition(root, snapshots=[OLD, NEW])), "--out", str(root / "fs"), "--quiet"]) == 0
    return root / "fs"


def test_stored_rankings_join_the_drift_report(snapshots, tmp_path, capsys):
    from freshstack_hf.repo.dataset import Dataset
    from leaderboard.store.archive import legacy_ranking_path
    from leaderboard.store.store import Store

    new = Dataset(snapshots, NEW).topic("laravel")
    ranking = {q.query_id: {d.doc_id: float(len(new.docs) - i) for i, d in enumerate(new.docs)} for q in new.queries}
    run_file = tmp_path / "mine.json"
    run_file.write_text(json.dumps(ranking))
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        store.add_system(name="mine", kind="run", content_hash="h1", results={"laravel": topic_scores()}, meta=META)
        store.add_system(
            name="no ranking", kind="run", content_hash="h2", results={"laravel": topic_scores()}, meta=META
        )
    # h1's ranking lies in a runs archive as an older release wrote it (imported into the store when drift-board
    # opens it); h2's ranking is not archived anywhere: left out.
    legacy = legacy_ranking_path(tmp_path / "runs", "h1")
    legacy.parent.mkdir()
    legacy.write_bytes(gzip.compress(json.dumps({"laravel": ranking}).encode()))

    old, new_folder = f"{snapshots}@{OLD}", f"{snapshots}@{NEW}"
    common = ["--json", "-", "--resamples", "50", "--no-baselines"]
    board = ["drift-board", old, new_folder, "--store", url, "--runs-dir", str(tmp_path / "runs"), *common]
    assert main(board) == 0
    stored = json.loads(capsys.readouterr().out)["topics"]["laravel"]["systems"]
    assert list(stored) == ["mine (#1)"] and stored["mine (#1)"]["source"] == "leaderboard:run"
    assert main(["drift", old, new_folder, "--run", "mine (#1)", str(run_file), *common]) == 0
    direct = json.loads(capsys.readouterr().out)["topics"]["laravel"]["systems"]
    assert stored["mine (#1)"]["old"] == direct["mine (#1)"]["old"]
    assert stored["mine (#1)"]["new"] == direct["mine (#1)"]["new"]
    assert stored["mine (#1)"]["old"] != stored["mine (#1)"]["new"]  # the snapshots judge it differently
    shutil.rmtree(tmp_path / "runs")  # imported on the first open: the store alone has it now
    assert main(["drift-board", old, new_folder, "--store", url, *common]) == 0
    assert json.loads(capsys.readouterr().out)["topics"]["laravel"]["systems"] == stored
