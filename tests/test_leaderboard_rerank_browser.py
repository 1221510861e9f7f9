"""The Reranking tab in a real headless Chromium (Debian's, driven by Playwright): the table opens with the first-stage
reference line, labelled; a reranked run with a document outside its query's candidates is refused on the page
with its line and adds no row; the corrected run gets its row here and never in the Leaderboard table. Skips,
saying why, where /usr/bin/chromium is not installed."""

from __future__ import annotations

import os

import pytest
from browser_checks import assert_reads_well, headless_chromium, require_chromium, screenshot
from ports import free_port

from leaderboard.tracks.reranking import SYSTEM_KINDS as RERANK_KINDS
from leaderboard.tracks.reranking.rerank_table import REFERENCE_NAME, REFERENCE_TYPE

pytestmark = pytest.mark.slow
NAME = "Page-uploaded reranked run"


@pytest.fixture(scope="module")
def rerank_page(tmp_path_factory, lb_dataset):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.store import Store

    root = tmp_path_factory.mktemp("rerank_browser")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    (qid, ids), (_, other) = list(lb_dataset.candidates("alpha").items())[:2]
    good = root / "reversed.trec"
    good.write_text("".join(f"{qid} Q0 {d} {r} {100 - r} rr\n" for r, d in enumerate(reversed(ids), 1)))
    lines = good.read_text().splitlines()
    lines[2] = f"{qid} Q0 {next(d for d in other if d not in ids)} 3 97 rr"
    bad = root / "outsider.trec"
    bad.write_text("\n".join(lines) + "\n")
    demo = build_app(lb_dataset, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    with headless_chromium() as browser:
        yield {"browser": browser, "url": f"http://127.0.0.1:{port}/", "good": good, "bad": bad, "store": store}
    demo.close()
    store.close()


def test_a_reranked_run_uploaded_in_the_reranking_tab_gets_its_row_there_only(rerank_page, tmp_path):
    from playwright.sync_api import expect

    page = rerank_page["browser"].new_page(viewport={"width": 1400, "height": 900})
    page.goto(rerank_page["url"])
    page.get_by_role("tab", name="Reranking").click()
    table = page.locator("#rerank-table")
    expect(table.get_by_text(REFERENCE_NAME, exact=True).first).to_be_attached(timeout=60_000)
    expect(table.get_by_text(REFERENCE_TYPE, exact=True).first).to_be_attached()

    page.locator("#rerank-run-file input[type=file]").set_input_files(str(rerank_page["bad"]))
    page.locator("#rerank-run-name textarea, #rerank-run-name input").first.fill("outsider")
    page.locator("#rerank-run-submit").click()
    outcome = page.locator("#rerank-outcome")
    expect(outcome).to_contain_text("refused", timeout=60_000)
    expect(outcome).to_contain_text("outsider.trec line 3")
    assert rerank_page["store"].leaderboard_rows(kinds=RERANK_KINDS) == []

    page.locator("#rerank-run-file button[aria-label='Clear'], #rerank-run-file button[title='Clear']").first.click()
    page.locator("#rerank-run-file input[type=file]").set_input_files(str(rerank_page["good"]))
    page.locator("#rerank-run-name textarea, #rerank-run-name input").first.fill(NAME)
    page.locator("#rerank-run-submit").click()
    expect(outcome).to_contain_text("scored", timeout=60_000)
    expect(table.get_by_text(NAME, exact=True).first).to_be_attached(timeout=30_000)
    (row,) = rerank_page["store"].leaderboard_rows(kinds=RERANK_KINDS)
    value = row.scores["alpha"]["alpha_ndcg@10"].value
    expect(table.get_by_text(f"{value:.3f}").first).to_be_attached()  # the stored number, with 3 decimals
    assert_reads_well(page, "Reranking tab")
    screenshot(page, tmp_path / "reranking.png")

    page.get_by_role("tab", name="Leaderboard").click()
    board = page.locator("#leaderboard-table")
    expect(board).to_be_visible(timeout=30_000)
    expect(board.get_by_text(NAME, exact=True)).to_have_count(0)
    page.close()
