"""The Answers tab in a real headless Chromium (Debian's, driven by Playwright): a visitor uploads an answer file
through the page and finds its row, scored by citation, in the Answers table; a malformed file is refused on the
page with its line numbers and adds no row. Skips, saying why, where /usr/bin/chromium is not installed."""

from __future__ import annotations

import os

import pytest
from browser_checks import assert_reads_well, headless_chromium, require_chromium, screenshot
from ports import free_port
from submission_files import answers_text

pytestmark = pytest.mark.slow
NAME = "Page-uploaded answers"


@pytest.fixture(scope="module")
def answers_page(tmp_path_factory, lb_dataset, bm25_runs):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.store import Store

    root = tmp_path_factory.mktemp("answers_browser")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    good = root / "answers.jsonl"
    good.write_text(answers_text(lb_dataset, bm25_runs))
    bad = root / "broken.jsonl"
    bad.write_text(good.read_text().splitlines()[0] + "\n{not json\n")
    demo = build_app(lb_dataset, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    with headless_chromium() as browser:
        yield {"browser": browser, "url": f"http://127.0.0.1:{port}/", "good": good, "bad": bad, "store": store}
    demo.close()
    store.close()


def test_an_answer_file_uploaded_through_the_page_gets_its_row(answers_page, tmp_path):
    from playwright.sync_api import expect

    page = answers_page["browser"].new_page(viewport={"width": 1400, "height": 900})
    page.goto(answers_page["url"])
    page.get_by_role("tab", name="Answers").click()
    table = page.locator("#answers-table")
    expect(table).to_be_visible(timeout=60_000)
    expect(table.get_by_text(NAME, exact=True)).to_have_count(0)

    page.locator("#answers-file input[type=file]").set_input_files(str(answers_page["bad"]))
    page.locator("#answers-name textarea, #answers-name input").first.fill("broken file")
    page.locator("#answers-submit").click()
    outcome = page.locator("#answers-outcome")
    expect(outcome).to_contain_text("refused", timeout=60_000)
    expect(outcome).to_contain_text("line 2")
    assert answers_page["store"].leaderboard_rows(kinds=("answers",)) == []

    page.locator("#answers-file button[aria-label='Clear'], #answers-file button[title='Clear']").first.click()
    page.locator("#answers-file input[type=file]").set_input_files(str(answers_page["good"]))
    page.locator("#answers-name textarea, #answers-name input").first.fill(NAME)
    page.locator("#answers-submit").click()
    expect(outcome).to_contain_text("scored", timeout=60_000)
    expect(table.get_by_text(NAME, exact=True).first).to_be_attached(timeout=30_000)
    (row,) = answers_page["store"].leaderboard_rows(kinds=("answers",))
    value = row.scores[sorted(row.scores)[0]]["answers:citation_recall"].value
    expect(table.get_by_text(f"{value:.3f}").first).to_be_attached()  # the stored number, with 3 decimals
    assert_reads_well(page, "Answers tab")
    screenshot(page, tmp_path / "answers.png")
    page.close()
