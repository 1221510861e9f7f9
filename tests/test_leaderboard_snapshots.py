"""The Leaderboard tab serves every published snapshot: `?snapshot=D` read into one of the board's snapshots (the
newest by default; an unknown one falls back to the newest with a notice), a row not scored yet shown only on the
revision its job was queued for, exports naming their snapshot, and, on the running app over three real snapshots
(`over_time_board`), `/table`, `/export` and the first paint of each snapshot holding that snapshot's stored
numbers (the browser test, `test_over_time_browser`, opens `?snapshot=` and picks one in the selector)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import httpx
import pandas as pd
import pytest
from app_client import ALL_SIZES, ALL_TYPES
from over_time_board import DATES, three_snapshot_board
from ports import free_port

from freshstack_hf.metrics import HEADLINE
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval.tables import deep_links, leaderboard_table, table_exports, table_filters

TOPICS = ["alpha", "beta"]
FILTERS = ("", ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ("2025-10-31", "")),  # the default: the newest
        ({"snapshot": "2024-10-31"}, ("2024-10-31", "")),
        ({"snapshot": " 2025-04-30 "}, ("2025-04-30", "")),
        (
            {"snapshot": "2023-01-01"},
            (
                "2025-10-31",
                "unknown snapshot '2023-01-01' (this board has 2024-10-31, 2025-04-30, 2025-10-31); showing the "
                "newest, 2025-10-31",
            ),
        ),
    ],
)
def test_the_address_names_a_snapshot_or_gets_the_newest(params, expected):
    assert deep_links.parse_snapshot(params, DATES) == expected


def test_a_board_of_one_snapshot_reads_no_snapshot_from_the_address():
    assert deep_links.parse_snapshot({}, ["abc123"]) == ("abc123", "")
    assert deep_links.parse_snapshot({"snapshot": "x"}, ["abc123"])[0] == "abc123"


def _results(value: float) -> dict:
    return {t: {"metrics": {m.id: value for m in HEADLINE}} for t in TOPICS}


def test_a_row_not_scored_yet_shows_on_the_revision_its_job_names_only(store):
    """A model queued again on a newer revision (as `remeasure` does) is no row of the older one's table; a queued
    row whose job names no revision, and every scored row of the revision, keep showing as before."""
    store.add_system(name="scored", kind="run", content_hash="s", results=_results(0.5), meta=ResultMeta("rev1"))
    store.add_system(name="scored later", kind="run", content_hash="s2", results=_results(0.4), meta=ResultMeta("rev2"))
    store.add_system(
        name="queued on rev2",
        kind="model",
        content_hash="q2",
        job=("model", {"model": "o/m", "dataset_revision": "rev2"}),
    )
    store.add_system(
        name="queued on rev1",
        kind="model",
        content_hash="q1",
        job=("model", {"model": "o/n", "dataset_revision": "rev1"}),
    )
    store.add_system(name="queued anywhere", kind="model", content_hash="q0", job=("model", {"model": "o/o"}))

    def names(revision):
        return sorted(leaderboard_table.BoardSource(store, TOPICS, revision).frame()["system"])

    assert names("rev1") == ["queued anywhere", "queued on rev1", "scored"]
    assert names("rev2") == ["queued anywhere", "queued on rev2", "scored later"]
    assert len(names(None)) == 5  # no revision asked: every row, as before
    rev2 = leaderboard_table.BoardSource(store, TOPICS, "rev2").frame().set_index("system")
    assert rev2.loc["queued on rev2", "type"] == "submitted model (queued)"
    claimed = store.queue.claim_job("w1")  # running is not scored either: still its job's revision only
    assert claimed is not None and claimed.payload["dataset_revision"] == "rev2"
    assert names("rev1") == ["queued anywhere", "queued on rev1", "scored"]


def test_exports_name_their_snapshot_on_every_row_and_in_the_file(store, tmp_path):
    store.add_system(name="a run", kind="run", content_hash="s", results=_results(0.25), meta=ResultMeta("rev1"))
    view = table_filters.view_frame(leaderboard_table.BoardSource(store, TOPICS, "rev1").frame())
    csv_path, json_path = table_exports.export_files(view, tmp_path, snapshot="2025-04-30", dataset_revision="rev1")
    back = pd.read_csv(csv_path)
    assert list(back.columns)[-1] == "snapshot" and back["snapshot"].tolist() == ["2025-04-30"]
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert (data["snapshot"], data["dataset_revision"]) == ("2025-04-30", "rev1")
    assert [r["snapshot"] for r in data["rows"]] == ["2025-04-30"]
    other = table_exports.export_files(view, tmp_path, snapshot="2025-10-31", dataset_revision="rev1")
    assert other[0] != csv_path  # another snapshot's file, never the first one's reused


# ---- on the running app -------------------------------------------------------------------------------------
@pytest.fixture
def app(store, tmp_path):
    """The app serving the newest of three snapshots, with two runs each scored (or re-scored) on all three."""
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app

    board = three_snapshot_board(store, tmp_path)
    demo = build_app(board["datasets"][-1], store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        yield SimpleNamespace(url=url, client=Client(url, verbose=False), **board)
    finally:
        demo.close()


def stored(store, dataset) -> dict[str, dict[str, float]]:
    """{system name: {table column: value}} of the stored results of the rows scored on `dataset`'s revision."""
    rows = [r for r in store.leaderboard_rows() if r.dataset_revision == dataset.revision]
    assert rows and all(r.system.status == "scored" for r in rows)
    return {r.system.name: leaderboard_table.score_cells(r.scores) for r in rows}


def shown(answer: dict) -> dict[str, dict[str, object]]:
    """{system: {header: raw cell}} of a `/table` answer."""
    value = answer["value"]
    return {row[1]: dict(zip(value["headers"], row, strict=True)) for row in value["data"]}


@pytest.mark.slow
def test_table_export_and_load_serve_each_snapshot(app):
    columns = [f"drifty {m.name}" for m in HEADLINE]
    seen = {}
    for date, dataset in zip(DATES, app.datasets, strict=True):
        answer = app.client.predict(*FILTERS, 1, date, api_name="/table")
        assert answer["label"] == f"rows 1–2 of 2 · page 1 of 1 · snapshot {date}"  # the table names its snapshot
        rows, expected = shown(answer), stored(app.store, dataset)
        assert set(rows) == set(expected) and len(rows) == 2, date
        for name, cells in expected.items():
            assert [rows[name][c] for c in columns] == [cells[c] for c in columns], (date, name)
            assert rows[name]["average α-nDCG@10"] == cells["drifty α-nDCG@10"]  # one topic: its average
        seen[date] = rows
        csv_path, json_path = app.client.predict(*FILTERS, date, api_name="/export")
        data = json.loads(Path(json_path).read_text(encoding="utf-8"))
        assert (data["snapshot"], data["dataset_revision"]) == (date, dataset.revision)
        exported = {r["system"]: r["drifty α-nDCG@10"] for r in data["rows"]}  # pandas writes 10 decimals in JSON
        assert exported == pytest.approx({n: c["drifty α-nDCG@10"] for n, c in expected.items()}, abs=1e-10)
        back = pd.read_csv(csv_path).set_index("system")  # the CSV keeps every digit
        assert set(back["snapshot"]) == {date}
        assert back["drifty α-nDCG@10"].to_dict() == {n: c["drifty α-nDCG@10"] for n, c in expected.items()}
    names = {date: {n.removesuffix(" (re-scored)") for n in rows} for date, rows in seen.items()}
    assert names == {date: {"early run", "later run"} for date in DATES}
    values = [[rows[n]["drifty α-nDCG@10"] for n in sorted(rows)] for rows in seen.values()]
    assert len({tuple(v) for v in values}) == 3  # three snapshots, three sets of numbers: no table is another's

    newest = app.client.predict(*FILTERS, api_name="/table")  # an older client, six values: page 1 of the newest
    assert newest["label"].endswith(f"snapshot {DATES[-1]}") and shown(newest) == seen[DATES[-1]]
    csv_path, _ = app.client.predict(*FILTERS, api_name="/export")
    assert set(pd.read_csv(csv_path)["snapshot"]) == {DATES[-1]}

    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=r"unknown snapshot '2023-01-01': this board has 2024-10-31, 2025-04-30"):
        app.client.predict(*FILTERS, 1, "2023-01-01", api_name="/table")
    with pytest.raises(AppError, match="unknown snapshot"):
        app.client.predict(*FILTERS, "2023-01-01", api_name="/export")

    oldest = httpx.get(app.url + "first-paint.json", params={"snapshot": DATES[0]}, timeout=30).json()
    at = oldest["headers"].index("system")
    assert sorted(r[at] for r in oldest["rows"]) == sorted(seen[DATES[0]])
    column = oldest["headers"].index("drifty α-nDCG@10")
    assert {r[at]: r[column] for r in oldest["rows"]} == {
        n: f"{c['drifty α-nDCG@10']:.3f}" for n, c in seen[DATES[0]].items()
    }
    fallback = httpx.get(app.url + "first-paint.json", params={"snapshot": "nope"}, timeout=30).json()
    assert sorted(r[at] for r in fallback["rows"]) == sorted(seen[DATES[-1]])
