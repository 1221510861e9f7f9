"""The board over time (`tracks.retrieval.over_time`) on three real snapshots of one topic: two uploaded runs, each
re-scored on the snapshots it was not submitted on by a real worker (`leaderboard.remeasure`), are one line each;
every value equals `freshstack-hf evaluate --revision` on that snapshot; ranks, Kendall's tau between consecutive
snapshots, the freshness gap and the after-cutoff values are those of the stored numbers."""

from __future__ import annotations

import itertools
import json

import pytest
from drift_repos import new_topic, old_topic, write_snapshot
from over_time_board import DATES, QUALITY, three_snapshot_board

from freshstack_hf.cli.main import main
from freshstack_hf.drift.rank_agreement import kendall_tau_b
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from leaderboard.tracks.retrieval.over_time import after_column, over_time, rank_column, snapshots_of


@pytest.fixture
def board(store, tmp_path):
    return three_snapshot_board(store, tmp_path)


def evaluated(board, run, date, *after: str) -> float:
    out = board["tmp"] / f"eval-{date}.json"
    command = ["evaluate", str(board["base"]), "--revision", date, "--run", str(run), "--json", str(out), *after]
    assert main(command) == 0
    return json.loads(out.read_text())["average"]["metrics"][HEADLINE[0].id]


def test_every_system_is_one_line_with_evaluates_numbers_on_each_snapshot(board):
    snapshots = snapshots_of(board["datasets"][-1])
    assert [s.label for s in snapshots] == DATES
    view = over_time(board["store"], snapshots)
    table = view.table.set_index("system")
    assert sorted(table.index) == ["early run", "later run"] and len(view.long) == 6
    for name, run in board["runs"].items():
        for date in DATES:
            assert table.loc[name, date] == pytest.approx(evaluated(board, run, date), abs=1e-12), (name, date)
            after = evaluated(board, run, date, "--after", "2024-06-30")  # the contamination window's split
            assert table.loc[name, after_column(date)] == pytest.approx(after, abs=1e-12), (name, date)
    assert table.loc["early run", "re-scored on"] == ", ".join(DATES[1:])
    assert table.loc["later run", "re-scored on"] == f"{DATES[0]}, {DATES[2]}"
    for date in DATES:
        better = table[date].idxmax()
        assert table.loc[better, rank_column(date)] == 1 and table[rank_column(date)].max() == 2
    for (a, b, tau, n), (x, y) in zip(view.taus, itertools.pairwise(DATES), strict=True):
        assert (a, b, n) == (x, y, 2) and tau == kendall_tau_b(table[a].tolist(), table[b].tolist())
    change = table[DATES[-1]] - table[DATES[0]]
    assert view.gap["system"].tolist() == change.sort_values().index.tolist()
    assert view.gap["change"].tolist() == pytest.approx(change.sort_values().tolist())


def test_a_snapshot_without_rows_is_a_column_of_blanks(store, tmp_path):
    write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY)
    write_snapshot(tmp_path / "freshstack@2025-10-31", new_topic(), QUALITY)
    snapshots = snapshots_of(Dataset(tmp_path / "freshstack", "2025-10-31"))
    view = over_time(store, snapshots)
    assert view.snapshots == ["2024-10-31", "2025-10-31"] and view.table.empty and view.gap.empty
    assert view.taus == [("2024-10-31", "2025-10-31", None, 0)]
