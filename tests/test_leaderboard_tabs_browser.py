"""A tab added through the registry, in a real headless Chromium (Debian's, driven by Playwright): a toy tab module
(defined in `test_leaderboard_tabs`, registered in `leaderboard.page.tabs.TABS` alone) shows up on the page beside the
others, its text drawn and its button's event answered. Skips, saying why, where /usr/bin/chromium is absent."""

from __future__ import annotations

import os

import pytest
from browser_checks import assert_reads_well, headless_chromium, require_chromium
from ports import free_port
from toy_tab import ToyTab

pytestmark = pytest.mark.slow


@pytest.fixture
def toy_page(tmp_path, lb_dataset, monkeypatch):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page import tabs
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.store import Store

    monkeypatch.setattr(tabs, "TABS", (*tabs.TABS, ToyTab))  # the one place a tab is registered
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        demo = build_app(lb_dataset, store, resamples=200)
        port = free_port()
        launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            yield page
        demo.close()


def test_a_registered_toy_tab_is_rendered_and_wired(toy_page, lb_dataset):
    from playwright.sync_api import expect

    tab = toy_page.get_by_role("tab", name="Toy")
    expect(tab).to_be_visible(timeout=60_000)
    expect(toy_page.get_by_role("tab", name="Leaderboard")).to_be_visible()  # beside the registered ones
    expect(toy_page.locator("#toy-text")).to_be_hidden()  # another tab is open first
    tab.click()
    expect(toy_page.locator("#toy-text")).to_contain_text(f"A toy tab over {len(lb_dataset.topics)} topics.")
    toy_page.locator("#toy-button").click()
    expect(toy_page.locator("#toy-count")).to_contain_text("0 systems stored", timeout=30_000)
    assert_reads_well(toy_page, "Toy tab")
