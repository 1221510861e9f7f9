"""A board that serves many at once (issue 31): read-only events run beside each other and beside writes, and the
writes stay safe.

Shown, not timed, with the test-only pause (`leaderboard.fault_points`): a `/table` read held as it starts does
not keep a second one from starting (and, with reads limited to one at a time, it does: the hold sees what it
should), and a submission held inside its write transaction does not keep the table from answering, without the
held row. Then a crowd against a real app on a SQLite store: table reads, distinct submissions and copies of one,
all at once; every request is answered, each submission stored exactly once, and every table answered meanwhile is
a whole state of the board (its caption's count, its rows, no row twice).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_client import ALL_SIZES, ALL_TYPES, submit, table
from board_process import Board, wait_for
from ports import free_port
from submission_files import merged, write_trec

from freshstack_hf.metrics import MEASURES
from leaderboard.defaults import READ_CONCURRENCY_ENV
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines

pytestmark = pytest.mark.slow
VIEW = ("", ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc", 1)  # page 1 of the default view


@pytest.fixture
def held_board(tmp_path, lb_dataset):
    """A board process on a SQLite store holding the BM25 baseline; killed afterwards."""
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        compute_baselines(store, lb_dataset, methods=["bm25"])
    board = Board(url, lb_dataset.folder, tmp_path / "app")
    yield board
    board.stop()


@pytest.mark.parametrize("reads_at_once", [None, "1"], ids=["reads-concurrent", "control-one-read-at-a-time"])
def test_a_held_table_read_does_not_hold_the_next(held_board, tmp_path, reads_at_once):
    held = tmp_path / "table-held"
    env = {READ_CONCURRENCY_ENV: reads_at_once} if reads_at_once else {}
    held_board.start(pause=f"table={held}", env=env)
    first = held_board.client.submit(*VIEW, api_name="/table")
    wait_for(held, held_board.proc, limit=120)  # the first read is inside `/table`, and stays there
    held.unlink()
    second = held_board.client.submit(*VIEW[:-1], 2, api_name="/table")
    if reads_at_once is None:
        wait_for(held, held_board.proc, limit=120)  # the second read started while the first is still held
    else:
        time.sleep(5)  # the control: queued behind the held read, the second never starts
        assert not held.exists()
    assert not first.done() and not second.done()
    held_board.stop()


def test_the_table_answers_while_a_submission_is_held_inside_its_transaction(held_board, tmp_path, bm25_runs):
    from gradio_client import Client, handle_file

    held = tmp_path / "submission-held"
    held_board.start(pause=f"add_system={held}")
    reader = Client(held_board.address, verbose=False)
    before = table(reader)
    run = write_trec(tmp_path / "held.trec", merged(bm25_runs), depth=20)

    def submit_held() -> None:
        with contextlib.suppress(Exception):  # the app is killed under it: no answer comes, and none is awaited
            held_board.client.predict(handle_file(str(run)), "auto", "held", "", "", api_name="/submit_run")

    threading.Thread(target=submit_held, daemon=True).start()
    wait_for(held, held_board.proc, limit=120)  # its blob and scores written, the SQLite write lock taken
    assert table(reader) == before  # answered at once, and without the uncommitted row
    held_board.stop()


@pytest.fixture
def app(tmp_path, lb_dataset):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page.app import build_app, launch_app

    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.create_all()
    compute_baselines(store, lb_dataset, methods=["bm25"])
    demo = build_app(lb_dataset, store, rate_limit=None)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}/", store=store)
    demo.close()
    store.close()


def test_reads_and_submissions_at_once_lose_nothing(app, bm25_runs, tmp_path):
    from gradio_client import Client

    runs = [write_trec(tmp_path / f"crowd{i}.trec", merged(bm25_runs), depth=10 + i) for i in range(6)]
    jobs: list[tuple[str, Path | None]] = [("read", None)] * 40 + [("submit", p) for p in runs]
    jobs += [("submit", runs[0])] * 2  # copies of one run: stored once
    jobs = jobs[::2] + jobs[1::2]  # submissions among the reads, not after them
    local = threading.local()
    start = threading.Barrier(16)

    def one(job: tuple[str, Path | None]) -> dict:
        if not hasattr(local, "client"):
            local.client = Client(app.url, verbose=False)
            start.wait()  # every worker connected: the requests go together
        kind, path = job
        if kind == "submit":
            return {"submitted": submit(local.client, path, path.stem)[1]}
        value = local.client.predict(*VIEW, api_name="/table")
        return {"read": value}

    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(one, jobs))

    statuses = sorted(a["submitted"]["status"] for a in answers if "submitted" in a)
    assert statuses == ["duplicate"] * 2 + ["scored"] * 6
    stored = [r.system for r in app.store.leaderboard_rows() if r.system.name.startswith("crowd")]
    assert sorted(s.name for s in stored) == [f"crowd{i}" for i in range(6)]
    assert all(len(app.store.results_for(s.id)) == len(MEASURES) * 2 for s in stored)
    reads = [a["read"] for a in answers if "read" in a]
    assert len(reads) == 40
    for value in reads:  # each a whole state of the board: between the baseline alone and every row stored
        found = re.fullmatch(r"rows 1–(\d+) of (\d+) · page 1 of 1", value["label"])
        assert found and found[1] == found[2], value["label"]
        ids = [row[0] for row in value["value"]["data"]]
        assert len(ids) == len(set(ids)) == int(found[2]) and 1 <= len(ids) <= 7
    after = table(Client(app.url, verbose=False))
    assert sorted(after) == sorted(str(r.system.id) for r in app.store.leaderboard_rows())
    assert len(after) == 7
