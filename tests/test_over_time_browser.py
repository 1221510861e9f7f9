"""The Over time tab in a real headless Chromium (Debian's, driven by Playwright), on a board over three snapshots
with two runs re-scored by a real worker: the tab shows every snapshot's column with the stored values, the line
chart, Kendall's tau and the freshness gap, and reads well. Skips, saying why, where /usr/bin/chromium is absent."""

from __future__ import annotations

import os

import pytest
from browser_checks import TABLE_TEXT, assert_reads_well, headless_chromium, require_chromium, screenshot
from over_time_board import DATES, three_snapshot_board
from ports import free_port

from leaderboard.tracks.retrieval.over_time import over_time, snapshots_of

pytestmark = pytest.mark.slow


def test_the_over_time_tab_shows_every_snapshot(store, tmp_path):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from playwright.sync_api import expect

    from leaderboard.page.app import build_app, launch_app

    board = three_snapshot_board(store, tmp_path)
    served = board["datasets"][-1]
    expected = over_time(store, snapshots_of(served)).table.set_index("system")
    demo = build_app(served, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    try:
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("tab", name="Over time").click()
            summary = page.locator("#over-time-summary")
            expect(summary).to_contain_text("Kendall", timeout=60_000)
            expect(summary).to_contain_text(f"Snapshots: {', '.join(DATES)}")
            expect(summary).to_contain_text("Lost the most")
            table = page.locator("#over-time-table")
            expect(table).to_contain_text("early run", timeout=30_000)
            headers, *rows = page.evaluate(TABLE_TEXT, "#over-time-table")
            assert headers[:5] == ["system", "type", *DATES]
            shown = {row[0]: dict(zip(headers, row, strict=True)) for row in rows}
            assert set(shown) == {"early run", "later run"}
            for name, cells in shown.items():
                for date in DATES:
                    assert cells[date] == f"{expected.loc[name, date]:.3f}", (name, date)
            expect(page.locator("#over-time-plot")).to_be_visible()
            assert_reads_well(page, "Over time tab")
            screenshot(page, tmp_path / "over-time.png")
    finally:
        demo.close()
