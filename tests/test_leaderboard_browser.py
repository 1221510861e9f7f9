"""A real headless Chromium (Debian's, driven by Playwright; never a downloaded browser) on the running app.

It loads the page, finds the BM25 row, types into the search box and sees the table filter, follows a deep
link, checks that a submitter's markup is shown as text and never run, and saves a screenshot that must not
be blank (copied to $FRESHSTACK_SCREENSHOT when that is set, for the README). With the real official figures
(`../shared/data`) it opens the "Reference (published)" tab and finds a published row there, never in the
main table. Skips, saying why, where /usr/bin/chromium is not installed (CI installs it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from test_leaderboard_app import free_port
from test_leaderboard_submit import bm25_runs, lb_dataset, merged, write_trec  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCRIPT_NAME = "<img src=x onerror=window.__pwned=1>Evil & <b>bold</b> run"
REFERENCE = SHARED_DATA / "reference" / "freshstack-official-leaderboard.json"
PUBLISHED_ROW = "Qwen3-8B (Emb)"  # a published system, among the reference table's top rows


@pytest.fixture(scope="module")
def page_url(tmp_path_factory, lb_dataset, bm25_runs):  # noqa: F811
    if not CHROMIUM.is_file():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.app import build_app, launch_app
    from leaderboard.baseline_rows import RunArchive, compute_baselines
    from leaderboard.store import Store
    from leaderboard.submit import Submitter

    root = tmp_path_factory.mktemp("browser")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    compute_baselines(store, lb_dataset, methods=["bm25"], archive=RunArchive(root / "runs"), resamples=200)
    run = write_trec(root / "evil.trec", merged(bm25_runs), depth=5)
    # Stored text is already plain (tags stripped); what is left of the name must still reach the page as text.
    outcome = Submitter(store, lb_dataset, resamples=200).submit_run(run, name=SCRIPT_NAME, identity="ip:x")
    assert outcome.status == "scored"
    reported = REFERENCE if REFERENCE.is_file() else None
    demo = build_app(lb_dataset, store, archive_dir=root / "runs", reported_path=reported)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()
    store.close()


@pytest.fixture(scope="module")
def browser(page_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield chromium
        chromium.close()


def test_page_table_search_and_screenshot(browser, page_url, tmp_path):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(page_url)
    table = page.locator("#leaderboard-table")
    expect(table.get_by_text("BM25", exact=True).first).to_be_attached(timeout=60_000)
    expect(table.get_by_text("Evil & bold run", exact=True).first).to_be_attached()
    assert page.evaluate("window.__pwned") is None  # the name's markup was never turned into HTML

    page.locator("#search textarea").fill("evil")
    expect(table.get_by_text("BM25", exact=True)).to_have_count(0, timeout=15_000)
    expect(table.get_by_text("Evil & bold run", exact=True).first).to_be_attached()
    page.locator("#search textarea").fill("")
    expect(table.get_by_text("BM25", exact=True).first).to_be_attached(timeout=15_000)

    expect(table.get_by_text(PUBLISHED_ROW, exact=True)).to_have_count(0)  # published rows are never mixed in

    shot = tmp_path / "leaderboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    if os.environ.get("FRESHSTACK_SCREENSHOT"):  # for the README: the main table as a visitor first sees it
        target = Path(os.environ["FRESHSTACK_SCREENSHOT"])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)
    page.close()


def assert_not_blank(shot: Path) -> None:
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    width, height = image.size
    assert width >= 1000 and height >= 600
    small = image.resize((width // 4, height // 4))
    colours = small.getcolors(maxcolors=1 << 20)
    non_white = sum(count for count, rgb in colours if sum(rgb) < 720)
    assert len(colours) > 50 and non_white > 0.02 * small.width * small.height  # text, table, controls drawn


def test_the_reference_tab_shows_the_published_figures_apart(browser, page_url, tmp_path):
    from playwright.sync_api import expect

    if not REFERENCE.is_file():
        pytest.skip(f"the official figures are not at {REFERENCE}")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(page_url)
    expect(page.locator("#leaderboard-table").get_by_text("BM25", exact=True).first).to_be_attached(timeout=60_000)
    page.get_by_role("tab", name="Reference (published)").click()
    published = page.locator("#reference-table")
    expect(published.get_by_text(PUBLISHED_ROW, exact=True).first).to_be_visible(timeout=30_000)
    expect(published.get_by_text("langchain α-nDCG@10").first).to_be_attached()
    expect(page.get_by_text("not computed here", exact=False).first).to_be_visible()
    shot = tmp_path / "reference.png"
    page.screenshot(path=str(shot), full_page=True)
    assert_not_blank(shot)
    page.close()


def test_a_published_topic_deep_link_points_to_the_reference_tab(browser, page_url):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{page_url}?topic=langchain")
    expected = "in the Reference (published) tab" if REFERENCE.is_file() else "unknown topic 'langchain'"
    expect(page.get_by_text(expected, exact=False).first).to_be_visible(timeout=60_000)
    expect(page.locator("#leaderboard-table").get_by_text("alpha α-nDCG@10").first).to_be_attached()
    page.close()


def test_deep_link_selects_topic_and_sort(browser, page_url):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{page_url}?topic=beta&sort=coverage@20")
    table = page.locator("#leaderboard-table")
    expect(table.get_by_text("beta Coverage@20").first).to_be_attached(timeout=60_000)
    expect(table.get_by_text("alpha Coverage@20")).to_have_count(0)
    expect(page.get_by_text("beta Coverage@20").first).to_be_visible()
    page.close()
