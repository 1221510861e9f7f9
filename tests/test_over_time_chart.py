"""The Over time tab's chart (`over_time_tab.chart`) draws a point at every value, so a board with one snapshot (and
a system on one snapshot) shows its values: a line needs two points, and Gradio's line plot drew nothing for one.
Checked on the Vega-Lite specification of a real view, and in a real headless Chromium, where each drawn point
carries its snapshot and system in its label. The browser test skips, saying why, where /usr/bin/chromium is absent.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from browser_checks import assert_reads_well, headless_chromium, require_chromium, screenshot
from drift_repos import old_topic, write_snapshot
from over_time_board import QUALITY, dated
from ports import free_port

from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tabs.over_time_tab import chart, chart_spec
from leaderboard.tracks.retrieval.views.over_time import over_time, snapshots_of

DATE = "2024-10-31"
RUNS = ("first run", "second run")
POINT_LABELS = """(selector) => [...document.querySelectorAll(selector + ' svg [aria-roledescription="point"]')]
    .map(point => point.getAttribute('aria-label'))"""


def one_snapshot_board(store, tmp_path) -> Dataset:
    """One dated snapshot, served, with two uploaded runs scored on it."""
    write_snapshot(tmp_path / f"freshstack@{DATE}", dated(old_topic()), QUALITY)
    served = Dataset(tmp_path / "freshstack", DATE)
    topic = served.topic("drifty")
    docs = sorted(d.doc_id for d in topic.docs)
    for seed, name in enumerate(RUNS):
        rng, path = random.Random(seed), tmp_path / f"run-{seed}.trec"
        write_run({q: {d: float(rng.randrange(1, 10**6)) for d in docs} for q in topic.query_ids}, path, tag="run")
        assert RunSubmitter(store, served, rate_limit=None).submit(path, name=name).status == "scored"
    return served


def test_one_snapshot_is_drawn_as_points(store, tmp_path):
    served = one_snapshot_board(store, tmp_path)
    view = over_time(store, snapshots_of(served))
    assert view.snapshots == [DATE] and len(view.long) == len(RUNS)
    spec = chart_spec(view, "α-nDCG@10")
    (layer,) = spec["layer"]
    assert layer["mark"]["type"] == "line" and layer["mark"]["point"]["filled"] is True  # a point on every value
    assert layer["encoding"]["x"]["scale"]["domain"] == [DATE]
    drawn = {(row["system"], row["snapshot"]): row["value"] for row in spec["data"]["values"]}
    table = view.table.set_index("system")
    assert drawn == {(name, DATE): pytest.approx(table.loc[name, DATE], abs=1e-14) for name in RUNS}
    assert len(layer["encoding"]["color"]["scale"]["range"]) == len(RUNS)
    plot = chart(view, "α-nDCG@10")
    assert plot.chart == "line" and json.loads(plot.plot) == spec


def test_no_value_is_no_chart(store, tmp_path):
    write_snapshot(tmp_path / f"freshstack@{DATE}", dated(old_topic()), QUALITY)
    view = over_time(store, snapshots_of(Dataset(tmp_path / "freshstack", DATE)))
    assert view.snapshots == [DATE] and view.long.empty
    assert chart(view, "α-nDCG@10") is None  # an empty plot, not a chart without data


@pytest.mark.slow
def test_the_tab_draws_one_snapshots_points_in_a_browser(store, tmp_path):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from playwright.sync_api import expect

    from leaderboard.page.app import build_app, launch_app

    served = one_snapshot_board(store, tmp_path)
    values = over_time(store, snapshots_of(served)).table.set_index("system")[DATE]
    demo = build_app(served, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    try:
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("tab", name="Over time").click()
            expect(page.locator("#over-time-summary")).to_contain_text("One snapshot so far", timeout=60_000)
            points = page.locator('#over-time-plot svg [aria-roledescription="point"]')
            expect(points).to_have_count(len(RUNS), timeout=60_000)
            drawn = {}
            for label in page.evaluate(POINT_LABELS, "#over-time-plot"):  # "snapshot: D; α-nDCG@10: V; system: S",
                # V with the 12 significant digits Vega writes in a label
                fields = dict(part.split(": ", 1) for part in label.split("; "))
                drawn[fields["system"], fields["snapshot"]] = float(fields["α-nDCG@10"])
            assert drawn == {(name, DATE): pytest.approx(values[name], abs=1e-11) for name in RUNS}
            assert_reads_well(page, "Over time tab, one snapshot")
            screenshot(page, tmp_path / "over-time-one-snapshot.png")
    finally:
        demo.close()
