"""The board over time (`tracks.retrieval.views.over_time`) on three real snapshots of one topic: two uploaded runs,
each re-scored on the snapshots it was not submitted on by a real worker (`tracks.retrieval.jobs.remeasure`), are one
line each; every value equals `freshstack-hf evaluate --revision` on that snapshot; ranks, Kendall's tau between
consecutive snapshots, the freshness gap and the after-cutoff values are those of the stored numbers."""

from __future__ import annotations

import itertools
import json
import shutil
from types import SimpleNamespace

import pytest
from drift_repos import new_topic, old_topic, write_snapshot
from over_time_board import DATES, QUALITY, three_snapshot_board

from freshstack_hf.cli.main import main
from freshstack_hf.drift.rank_agreement import kendall_tau_b
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from leaderboard.tracks.retrieval.views.over_time import after_column, over_time, rank_column, snapshots_of


@pytest.fixture
def board(store, tmp_path):
    return three_snapshot_board(store, tmp_path)


def evaluated(board, run, date, *after: str) -> float:
    out = board["tmp"] / f"eval-{date}.json"
    command = ["evaluate", str(board["base"]), "--revision", date, "--run", str(run), "--json", str(out), *after]
    assert main(command) == 0
    return json.loads(out.read_text())["average"]["metrics"][HEADLINE[0].id]


@pytest.mark.slow
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


def test_a_hub_datasets_dated_tags_are_its_snapshots(tmp_path, monkeypatch):
    """A board serving a Hub dataset lists its dated tags (what `refresh` publishes) through `huggingface_hub`'s
    `HfApi.list_repo_refs` (answered here, as no Hub is reachable) and fetches each through the real
    `snapshot_download`, served offline from the Hub cache's layout; a tag it cannot fetch is left out."""
    import huggingface_hub
    import huggingface_hub.constants as constants

    cache, repo = tmp_path / "hub", "datasets--me--freshstack"
    commits = {date: f"{i + 1:040x}" for i, date in enumerate(DATES)}
    for (date, commit), topic in zip(commits.items(), (old_topic(), new_topic(), old_topic()), strict=True):
        folder = write_snapshot(tmp_path / f"build@{date}", topic, QUALITY)
        if date != DATES[2]:
            shutil.copytree(folder, cache / repo / "snapshots" / commit)
        (cache / repo / "refs").mkdir(parents=True, exist_ok=True)
        (cache / repo / "refs" / date).write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    tags = [*DATES, "v1", "2025-10-31.fill1"]
    refs = SimpleNamespace(tags=[SimpleNamespace(name=t) for t in tags])
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", lambda self, repo_id, **_: refs)

    served = Dataset("me/freshstack", DATES[1])
    assert served.revision == commits[DATES[1]]
    snapshots = snapshots_of(served)
    assert [s.label for s in snapshots] == DATES[:2]  # the third tag's files are not in this offline cache
    assert [s.dataset.revision for s in snapshots] == [commits[DATES[0]], commits[DATES[1]]]

    def unreachable(self, repo_id, **_):
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", unreachable)
    assert [s.label for s in snapshots_of(served)] == [DATES[1]]  # the served revision alone


class WithLive:
    """The board's store, its live read answering `records` ({dataset revision: {system id: live record}}): the
    records a worker stores for models (`tests/test_live_scores.py` proves that read against a real worker); this
    board's rows are uploaded runs, which the store says cannot be scored live."""

    def __init__(self, store, records):
        self.store, self.records = store, records

    def __getattr__(self, name):
        return getattr(self.store, name)

    def live_scores(self, revision=None):
        return self.records.get(revision, {})


def test_a_live_value_and_its_gap_sit_beside_the_public_one_on_the_snapshot_scored_live(board):
    from leaderboard.live_release import HOLD, OPEN, LiveRelease
    from leaderboard.live_scores import NO_ACCESS, status
    from leaderboard.tracks.retrieval.jobs.remeasure import RESCORED_MARK
    from leaderboard.tracks.retrieval.tabs.over_time_tab import shown_table, summary
    from leaderboard.tracks.retrieval.views.over_time import LIVE_SERIES, live_column, live_gap_column

    snapshots = snapshots_of(board["datasets"][-1])
    middle = snapshots[1]
    found = {
        row.system.name.removesuffix(RESCORED_MARK): row.system.id
        for row in board["store"].leaderboard_rows()
        if row.dataset_revision == middle.dataset.revision
    }
    measured = {"status": "measured", "questions": 12, "measures": {HEADLINE[0].id: {"value": 0.42}}}
    records = {middle.dataset.revision: {found["early run"]: measured, found["later run"]: status(NO_ACCESS)}}
    held = over_time(WithLive(board["store"], records), snapshots, live_of=lambda _: LiveRelease(HOLD))
    assert held.live == []  # a record without the end of its embargo stays held under the default rule
    view = over_time(WithLive(board["store"], records), snapshots, live_of=lambda _: LiveRelease(OPEN))
    table = view.table.set_index("system")
    assert view.live == [middle.label]
    assert table.loc["early run", live_column(middle.label)] == 0.42
    gap = table.loc["early run", live_gap_column(middle.label)]
    assert gap == round(0.42 - table.loc["early run", middle.label], 2)
    assert table[live_column(middle.label)].isna()["later run"]  # no access: no number
    assert all(live_column(s.label) not in table for s in (snapshots[0], snapshots[2]))
    live_rows = view.long[view.long["system"] == "early run" + LIVE_SERIES]
    assert live_rows[["snapshot", "value"]].values.tolist() == [[middle.label, 0.42]] and len(view.long) == 7
    shown = shown_table(view.table).set_index("system")
    assert shown.loc["early run", live_column(middle.label)] == "0.42"
    assert shown.loc["early run", live_gap_column(middle.label)] == f"{gap:+.2f}"
    assert f"**Live** on {middle.label}" in summary(view)
    plain = over_time(WithLive(board["store"], {}), snapshots)
    assert (
        plain.live == []
        and "**Live**" not in summary(plain)
        and list(plain.table.columns) == [c for c in view.table.columns if " live" not in c]
    )
