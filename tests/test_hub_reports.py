"""The Hub's reports on the benchmark (`leaderboard.model_pages.reports`, the Reference tab's `hub_reported` table):
read from a fake `get_dataset_leaderboard` answer and the files it names, on the local fake Hub server, through the
real `HfApi`; set beside the board's verified value of the same model, task and snapshot."""

from __future__ import annotations

import pytest
import yaml
from fake_hub_repos import TOKEN, FakeHubRepos
from huggingface_hub import HfApi
from model_page_rows import DATASET_COMMIT, DATASET_ID, SNAPSHOT, measured, stored_values

from freshstack_hf.repo.eval_results import results_path
from leaderboard.model_pages.pull_requests import propose
from leaderboard.model_pages.reports import READING, ReportReader, Reports, compare, read_reports
from leaderboard.model_pages.verified import Target, plan
from leaderboard.page.display import link_cell
from leaderboard.tracks.retrieval.views.hub_reported import COLUMNS, reported_frame

BOARD = "https://board.example"
PATH = results_path(SNAPSHOT)
OTHER_COMMIT = "7" * 40


def entry_file(*entries: tuple[str, object, str | None], dataset: str = DATASET_ID) -> bytes:
    """A `.eval_results` file as someone writes one by hand: (task id, value, dataset revision) each."""
    rows = []
    for task, value, revision in entries:
        item = {"dataset": {"id": dataset, "task_id": task, **({"revision": revision} if revision else {})}}
        rows.append({**item, "value": value, "source": {"url": "https://paper.example/x", "name": "Their paper"}})
    return yaml.safe_dump(rows).encode()


def listed(model: str, value: object, filename: str = PATH, pull: int | None = None) -> dict:
    """One entry of the Hub's dataset leaderboard answer, as the Hub writes it."""
    return {
        "rank": 1,
        "modelId": model,
        "value": value,
        "filename": filename,
        "verified": False,
        "source": {"url": "https://paper.example/x", "name": "Their paper", "isExternal": True},
        "author": {"name": model.split("/")[0], "type": "user", "fullname": "Someone"},
        "pullRequest": pull,
    }


@pytest.mark.slow
def test_reports_are_read_from_their_files_and_set_beside_the_boards_values(store, monkeypatch):
    mine = measured(store, "org/model-a", "a" * 40, 0.4)
    board_value = stored_values(store, mine)["alpha"]["alpha_ndcg@10"]
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        hub.add_repo("org/model-a")
        hub.repos["org/model-a"].files[PATH] = entry_file(
            ("alpha-alpha_ndcg_10", 0.5, DATASET_COMMIT), ("coverage_20", 0.3, OTHER_COMMIT), ("recall_50", 0.2, None)
        ) + entry_file(("recall_50", 0.9, DATASET_COMMIT), dataset="someone/else")  # another benchmark's entry
        hub.add_repo("org/never-measured", {PATH: entry_file(("alpha_ndcg_10", 0.61, DATASET_COMMIT))})
        hub.add_repo("org/bad-task", {PATH: entry_file(("ndcg_10", 0.7, DATASET_COMMIT))})
        hub.add_repo("org/bad-value", {PATH: entry_file(("alpha_ndcg_10", "high", DATASET_COMMIT))})
        hub.add_repo("org/bad-file", {PATH: b"dataset: not a list\n"})
        hub.add_repo("org/gone-file")
        api = HfApi(hub.url, token=TOKEN)
        target = Target(DATASET_ID, BOARD)
        propose(store, plan(store, target), target, by="local:op", group="admin", api=api)  # the board's own, a PR
        hub.leaderboards[DATASET_ID] = [
            listed("org/model-a", 0.5),
            listed("org/model-a", 0.41, pull=1),
            listed("org/never-measured", 0.61),
            listed("org/bad-task", 0.7),
            listed("org/bad-value", "high"),
            listed("org/bad-file", 0.1),
            listed("org/gone-file", 0.2),
        ]
        found = read_reports(DATASET_ID, api)

    assert "reported values from 7 files of model repos" in found.note
    rows = compare(found, plan(store, Target(DATASET_ID)), {DATASET_COMMIT: SNAPSHOT}, BOARD)
    by = {(c.report.model_id, c.report.task_id, c.report.where): c for c in rows}
    theirs = by[("org/model-a", "alpha-alpha_ndcg_10", PATH)]
    assert theirs.note == "verified by this board" and theirs.snapshot == SNAPSHOT and theirs.system_id == mine
    assert theirs.verified == board_value and theirs.difference == pytest.approx(0.5 - board_value, abs=0)
    assert by[("org/model-a", "coverage_20", PATH)].note.endswith("is not a snapshot this board knows: unmatched")
    assert by[("org/model-a", "coverage_20", PATH)].verified is None
    assert by[("org/model-a", "recall_50", PATH)].note == "names no dataset revision: not compared"
    own = by[("org/model-a", "alpha_ndcg_10", f"{PATH} (pull request #1)")]
    assert own.note == "verified by this board (this board's own entry)" and own.difference == 0.0
    assert by[("org/never-measured", "alpha_ndcg_10", PATH)].note == "not measured by this board"
    assert "task id 'ndcg_10' is not one of this benchmark's" in by[("org/bad-task", "ndcg_10", PATH)].note
    assert by[("org/bad-value", "alpha_ndcg_10", PATH)].note == "cannot be read: value 'high' is not a number"
    assert "not a readable .eval_results file" in by[("org/bad-file", "", PATH)].note
    assert by[("org/gone-file", "", PATH)].note == f"cannot be read: its file {PATH} is not in the repo any more"
    assert not any(c.report.value == 0.9 for c in rows)  # another benchmark's entry is not this benchmark's report

    frame = reported_frame(rows)
    assert list(frame.columns) == COLUMNS
    first = frame.iloc[0]
    assert (first["model"], first["task"], first["reported"], first["board row"]) == (
        "org/model-a", "α-nDCG@10 on alpha", 0.5, f"#{mine}"
    )  # fmt: skip
    assert first["difference"] == pytest.approx(0.5 - board_value, abs=0)
    assert "value 'high' is not a number" in frame[frame["model"] == "org/bad-value"].iloc[0]["note"]
    assert frame[frame["model"] == "org/bad-value"]["reported"].isna().all()
    assert frame.iloc[0]["link"] == link_cell("https://paper.example/x")  # the page's one way to link


def test_no_leaderboard_and_no_hub_are_said_not_failed(monkeypatch):
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        none = read_reports(DATASET_ID, HfApi(hub.url, token=TOKEN))
    assert none == Reports((), f"none: the Hub has no leaderboard of {DATASET_ID} (no model reports results on it yet)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = read_reports(DATASET_ID)
    assert offline.reports == () and "HF_HUB_OFFLINE is set" in offline.note
    reader = ReportReader(DATASET_ID, read=lambda _: pytest.fail("read offline")).start()
    assert "HF_HUB_OFFLINE is set" in reader.current().note


def test_the_reader_answers_at_once_and_keeps_its_last_reading():
    calls = []

    def slow_then_fails(dataset_id: str) -> Reports:
        calls.append(dataset_id)
        if len(calls) > 1:
            raise RuntimeError("an answer nobody foresaw")
        return Reports((), "read")

    reader = ReportReader(DATASET_ID, read=slow_then_fails)
    assert reader.current().note == READING  # before any reading: says it is under way
    assert reader.read_now().note == "read" and reader.current().note == "read"
    assert "reading the Hub's reports failed (RuntimeError" in reader.read_now().note
