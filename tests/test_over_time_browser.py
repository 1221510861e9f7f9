"""The Over time tab in a real headless Chromium (Debian's, driven by Playwright), on a board over three snapshots
with two runs re-scored by a real worker: the tab shows every snapshot's column with the stored values, the line
chart, Kendall's tau and the freshness gap, and reads well; the Leaderboard tab opens the snapshot its address names
and follows its selector, the address with it. Skips, saying why, where /usr/bin/chromium is absent."""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from browser_checks import TABLE_TEXT, assert_reads_well, headless_chromium, require_chromium, screenshot
from over_time_board import DATES, three_snapshot_board
from ports import free_port

from leaderboard.tracks.retrieval.views.over_time import over_time, snapshots_of

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


def test_the_leaderboard_serves_the_snapshot_its_address_and_selector_name(store, tmp_path):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from playwright.sync_api import expect

    from leaderboard.page.app import build_app, launch_app

    board = three_snapshot_board(store, tmp_path)
    served = board["datasets"][-1]
    column = "drifty α-nDCG@10"
    expected = {  # snapshot -> {system: the stored value as the table shows it}
        date: {
            r.system.name: f"{r.scores['drifty']['alpha_ndcg@10'].value:.3f}"
            for r in store.leaderboard_rows()
            if r.dataset_revision == dataset.revision
        }
        for date, dataset in zip(DATES, board["datasets"], strict=True)
    }
    assert len({tuple(sorted(v.values())) for v in expected.values()}) == 3  # each snapshot's numbers its own
    demo = build_app(served, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)

    def table_of(page) -> dict[str, str]:
        headers, *rows = page.evaluate(TABLE_TEXT, "#leaderboard-table")
        return {row[headers.index("system")]: row[headers.index(column)] for row in rows}

    def shows(page, date: str) -> None:
        caption = page.locator("#leaderboard-table").get_by_text(re.compile(r"^rows \d"))
        expect(caption.first).to_have_text(f"rows 1–2 of 2 · page 1 of 1 · snapshot {date}", timeout=30_000)
        expect(page.locator("#snapshot input")).to_have_value(date)
        page.wait_for_function(
            "([sel, names]) => names.every(n => document.querySelector(sel).innerText.includes(n))",
            arg=["#leaderboard-table", list(expected[date])],
            timeout=30_000,
        )
        assert table_of(page) == expected[date], date

    try:
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/?snapshot={DATES[0]}")
            shows(page, DATES[0])
            expect(page.locator("#snapshot-note")).to_contain_text(f"served snapshot, {DATES[-1]}")
            assert_reads_well(page, f"Leaderboard of {DATES[0]}")
            screenshot(page, tmp_path / "leaderboard-oldest.png")

            page.locator("#snapshot input").click()
            page.get_by_role("option", name=DATES[1]).click()
            shows(page, DATES[1])
            expect(page).to_have_url(re.compile(rf"[?&]snapshot={DATES[1]}\b"), timeout=30_000)
            again = browser.new_page(viewport={"width": 1400, "height": 900})
            again.goto(page.url)  # the address opens what was on screen
            shows(again, DATES[1])
            again.close()

            page.locator("#snapshot input").click()
            page.get_by_role("option", name=DATES[-1]).click()  # the newest, the default: a plain address
            shows(page, DATES[-1])
            expect(page).not_to_have_url(re.compile(r"[?&]snapshot="), timeout=30_000)
            assert "snapshot" not in parse_qs(urlsplit(page.url).query)

            plain = browser.new_page(viewport={"width": 1400, "height": 900})
            plain.goto(f"http://127.0.0.1:{port}/?snapshot=1999-01-01")  # unknown: the newest, and a note says so
            shows(plain, DATES[-1])
            expect(plain.get_by_text("unknown snapshot '1999-01-01'")).to_be_visible(timeout=30_000)
            plain.close()
    finally:
        demo.close()
