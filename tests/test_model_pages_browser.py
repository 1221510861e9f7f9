"""Model pages on the board, in a real headless Chromium (Debian's, driven by Playwright): the Submit tab's opt-in
"propose these results to my model's page" (ticked, submitted, stored in the row's job and answered with what becomes
of it), the Reranking tab's, an entry's source link opening its row's Detail view (`?system=ID`), and the Hub's
reports beside the board's verified value in the Reference tab, read from the local fake Hub server in the
background. Skips, saying why, where /usr/bin/chromium is absent."""

from __future__ import annotations

import os
import time

import pytest
import yaml
from browser_checks import TABLE_TEXT, assert_reads_well, headless_chromium, require_chromium, screenshot
from fake_hub_repos import FakeHubRepos
from model_page_rows import DATASET_COMMIT, DATASET_ID, SNAPSHOT, measured, stored_values
from ports import free_port

from freshstack_hf.repo.eval_results import results_path
from leaderboard.model_pages.verified import PROPOSE

pytestmark = pytest.mark.slow
BOARD = "https://board.example"


@pytest.fixture
def board(tmp_path, lb_dataset, monkeypatch):
    """A board serving `lb_dataset`, knowing its benchmark's Hub id and address, with one verified model row; the
    Hub (a local fake) holds that model's repo with a report of its own and lists it in the dataset's leaderboard."""
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.store import Store

    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store, FakeHubRepos() as hub:
        store.create_all()
        mine = measured(store, "org/model-a", "a" * 40, 0.4)
        path = results_path(SNAPSHOT)
        report = [{"dataset": {"id": DATASET_ID, "task_id": "alpha-alpha_ndcg_10", "revision": DATASET_COMMIT},
                   "value": 0.5, "source": {"url": "https://paper.example/a", "name": "Their paper"}}]  # fmt: skip
        hub.add_repo("org/model-a", {path: yaml.safe_dump(report).encode()})
        hub.add_repo("org/model-new")
        hub.leaderboards[DATASET_ID] = [
            {"rank": 1, "modelId": "org/model-a", "value": 0.5, "filename": path, "verified": False,
             "source": {"url": "https://paper.example/a"}, "author": {"name": "org", "type": "org"}}
        ]  # fmt: skip
        hub.point_here(monkeypatch)
        demo = build_app(lb_dataset, store, resamples=200, dataset_id=DATASET_ID, board_url=BOARD)
        port = free_port()
        launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
        deadline = time.monotonic() + 60
        while ("GET", f"/org/model-a/resolve/main/{path}") not in hub.requests and time.monotonic() < deadline:
            time.sleep(0.2)  # the board reads the Hub's reports in the background, from its start
        time.sleep(0.5)
        yield {"store": store, "url": f"http://127.0.0.1:{port}", "mine": mine}
        demo.close()


def test_reported_rows_stand_beside_the_verified_row_and_a_source_link_opens_its_detail(board, tmp_path):
    from playwright.sync_api import expect

    mine, store = board["mine"], board["store"]
    difference = 0.5 - stored_values(store, mine)["alpha"]["alpha_ndcg@10"]
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{board['url']}/?snapshot={SNAPSHOT}&system={mine}")  # the source an entry links
        expect(page.locator("#detail-header")).to_contain_text(f"model-a (#{mine})", timeout=60_000)
        expect(page.get_by_role("tab", name="Detail", selected=True)).to_be_visible()

        page.get_by_role("tab", name="Reference (published)").click()
        note = page.locator("#hub-reported-note")
        expect(note).to_contain_text("1 reported value from 1 file of model repos", timeout=30_000)
        table = page.locator("#hub-reported-table")
        expect(table).to_contain_text("verified by this board")
        headers, *rows = page.evaluate(TABLE_TEXT, "#hub-reported-table")
        assert headers[:6] == ["model", "task", "reported", "board", "difference", "snapshot"]
        (row,) = rows
        assert row[:5] == [
            "org/model-a",
            "α-nDCG@10 on alpha",
            "0.500",
            f"{0.5 - difference:.3f}",
            f"{difference:+.3f}",
        ]
        assert row[5:7] == [SNAPSHOT, f"#{mine}"]
        assert_reads_well(page, "Reference tab, reported on the Hub")
        screenshot(page, tmp_path / "reported.png")


def test_the_submit_opt_in_is_stored_and_answered(board, tmp_path):
    from playwright.sync_api import expect

    store = board["store"]
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(board["url"])
        page.get_by_role("tab", name="Reranking").click()
        expect(page.get_by_label("Propose these results to my model's page", exact=False).first).to_be_visible()
        page.get_by_role("tab", name="Submit").click()
        page.locator("#model-id textarea").fill("org/model-new")
        page.locator("#model-revision textarea").fill("b" * 40)
        box = page.locator("#model-propose input[type=checkbox]")
        expect(box).not_to_be_checked()
        box.check()
        page.get_by_role("button", name="Submit model").click()
        outcome = page.locator("#submit-outcome")
        expect(outcome).to_contain_text("queued: system #", timeout=60_000)
        # this board serves a local folder: the submitter learns now that nothing will be proposed, and why
        expect(outcome).to_contain_text("Not proposed to org/model-new's page")
        expect(outcome).to_contain_text("no Hub commit")
        assert_reads_well(page, "Submit tab, opt-in answered")
        screenshot(page, tmp_path / "submit.png")
    payloads = store.queue.first_payloads()
    (new,) = [p for p in payloads.values() if p["model"] == "org/model-new"]
    assert new[PROPOSE] is True and new["revision"] == "b" * 40
