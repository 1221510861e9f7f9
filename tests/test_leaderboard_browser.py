"""A real headless Chromium (Debian's, driven by Playwright; never a downloaded browser) on the running app.

It loads the page, finds the BM25 row, types into the search box and sees the table filter, follows a deep
link, checks that a submitter's markup is shown as text and never run, and saves a screenshot that must not
be blank. With the real official figures
(`../shared/data`) it opens the "Reference (published)" tab and finds a published row there, never in the
main table. Skips, saying why, where /usr/bin/chromium is not installed (CI installs it).

Every tab is screenshotted as a visitor sees it (Leaderboard, Detail before and after a choice, Plots, Submit
after a submission, the reference view) and its visible text is read like a newcomer would: no HTML entity,
no table headed by nothing or by "1 2 3", no 16-digit float, and not one request off the loopback address
(no web font, no CDN).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser_checks import (
    CLIPPED_CELLS,
    TABLE_TEXT,
    VISIBLE_HEADERS,
    assert_reads_well,
    assert_stayed_local,
    headless_chromium,
    require_chromium,
    screenshot,
)
from ports import free_port
from shared_paths import OFFICIAL_LEADERBOARD
from submission_files import merged, write_trec

pytestmark = pytest.mark.slow
SCRIPT_NAME = "<img src=x onerror=window.__pwned=1>Evil & <b>bold</b> run"
PUBLISHED_ROW = "Qwen3-8B (Emb)"  # a published system, among the reference table's top rows
SIZED = [("small model", 22_700_000, 4), ("large model", 1_300_000_000, 12)]  # name, parameters, run depth
NUMBER = re.compile(r"\d+\.\d+")


@pytest.fixture(scope="module")
def page_url(tmp_path_factory, lb_dataset, bm25_runs):
    require_chromium()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.scoring import score_for_store
    from leaderboard.store.records import ResultMeta
    from leaderboard.store.store import Store
    from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
    from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

    root = tmp_path_factory.mktemp("browser")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    compute_baselines(store, lb_dataset, methods=["bm25"], resamples=200)
    run = write_trec(root / "evil.trec", merged(bm25_runs), depth=5)
    # Stored text is already plain (tags stripped); what is left of the name must still reach the page as text.
    outcome = RunSubmitter(store, lb_dataset, resamples=200).submit(run, name=SCRIPT_NAME, identity="ip:x")
    assert outcome.status == "scored"
    for name, size, depth in SIZED:  # models of known size, so the scatter has points to place
        top = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:depth]) for q, docs in merged(bm25_runs).items()}
        scored = score_for_store(lb_dataset, top, lb_dataset.topics, resamples=200)
        meta = ResultMeta(lb_dataset.revision, parameters={"job": "model"})
        store.add_system(name=name, kind="model", content_hash=name, size=size, results=scored.results, meta=meta)
    reported = OFFICIAL_LEADERBOARD if OFFICIAL_LEADERBOARD.is_file() else None
    demo = build_app(lb_dataset, store, reported_path=reported)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()
    store.close()


@pytest.fixture(scope="module")
def browser(page_url):
    with headless_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Each tab's screenshot, kept for a person to look at (the folder is under pytest's basetemp)."""
    return tmp_path_factory.mktemp("screenshots")


@dataclass
class Visit:
    """One page on the app and every URL it requested."""

    page: Any
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def visit(browser, page_url):
    """A fresh page, loaded, with the main table drawn; its requests are recorded from the first."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    seen = Visit(page)
    page.on("request", lambda request: seen.requests.append(request.url))
    page.goto(page_url)
    expect(page.locator("#leaderboard-table").get_by_text("BM25", exact=True).first).to_be_attached(timeout=60_000)
    yield seen
    page.close()


def test_page_table_search_and_screenshot(visit, shots):
    from playwright.sync_api import expect

    page = visit.page
    table = page.locator("#leaderboard-table")
    expect(table.get_by_text("Evil & bold run", exact=True).first).to_be_attached()
    assert page.evaluate("window.__pwned") is None  # the name's markup was never turned into HTML

    page.locator("#search textarea").fill("evil")
    expect(table.get_by_text("BM25", exact=True)).to_have_count(0, timeout=15_000)
    expect(table.get_by_text("Evil & bold run", exact=True).first).to_be_attached()
    page.locator("#search textarea").fill("")
    expect(table.get_by_text("BM25", exact=True).first).to_be_attached(timeout=15_000)

    expect(table.get_by_text(PUBLISHED_ROW, exact=True)).to_have_count(0)  # published rows are never mixed in

    screenshot(page, shots / "leaderboard.png")
    assert_reads_well(page, "Leaderboard")
    headers, *rows = page.evaluate(TABLE_TEXT, "#leaderboard-table")
    column = headers.index("average α-nDCG@10")
    assert rows and all(re.fullmatch(r"\d\.\d{3}", row[column]) for row in rows)
    assert_stayed_local(visit.requests)


def test_the_reference_tab_shows_the_published_figures_apart(visit, shots):
    from playwright.sync_api import expect

    if not OFFICIAL_LEADERBOARD.is_file():
        pytest.skip(f"the official figures are not at {OFFICIAL_LEADERBOARD}")
    page = visit.page
    page.get_by_role("tab", name="Reference (published)").click()
    published = page.locator("#reference-table")
    expect(published.get_by_text(PUBLISHED_ROW, exact=True).first).to_be_visible(timeout=30_000)
    expect(published.get_by_text("langchain α-nDCG@10").first).to_be_attached()
    expect(page.get_by_text("not computed here", exact=False).first).to_be_visible()
    screenshot(page, shots / "reference.png")
    assert_reads_well(page, "Reference (published)")
    headers, *rows = page.evaluate(TABLE_TEXT, "#reference-table")
    column = headers.index("average α-nDCG@10")
    assert rows and all(re.fullmatch(r"\d\.\d{3}", row[column]) for row in rows)  # every published average
    assert_stayed_local(visit.requests)


def test_a_published_topic_deep_link_points_to_the_reference_tab(browser, page_url):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{page_url}?topic=langchain")
    expected = "in the Reference (published) tab" if OFFICIAL_LEADERBOARD.is_file() else "unknown topic 'langchain'"
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


def test_detail_shows_a_hint_then_tables_with_three_decimals(visit, shots):
    from playwright.sync_api import expect

    page = visit.page
    page.get_by_role("tab", name="Detail").click()
    expect(page.locator("#detail-header")).to_contain_text("Pick a system", timeout=15_000)
    expect(page.locator("#detail-tests")).to_be_hidden()
    screenshot(page, shots / "detail-before.png", min_ink=0.01)  # a hint on a mostly white page
    assert_reads_well(page, "Detail before a choice")
    assert page.evaluate(VISIBLE_HEADERS) == []  # no table at all, not five empty ones

    page.get_by_role("tab", name="Leaderboard").click()
    page.locator("#leaderboard-table").get_by_text("BM25", exact=True).filter(visible=True).first.click()
    expect(page.locator("#detail-header")).to_contain_text("BM25 (#1)", timeout=30_000)
    expect(page.locator("#detail-tests").get_by_text("α-nDCG@10").first).to_be_visible(timeout=30_000)
    expect(page.locator("#detail-header")).not_to_contain_text("Pick a system")
    screenshot(page, shots / "detail-chosen.png")
    assert_reads_well(page, "Detail after a choice")

    headers, *rows = page.evaluate(TABLE_TEXT, "#detail-tests")
    assert headers[0] == "versus" and rows
    for row in rows:  # measures and differences with 3 decimals; p-values too, or "<0.001"
        cells = dict(zip(headers, row, strict=True))
        assert all(re.fullmatch(r"-?\d\.\d{3}", cells[h]) for h in ("this", "other", "difference", "95% low")), row
        assert re.fullmatch(r"<0\.001|[01]\.\d{3}", cells["p"]), row
    assert page.evaluate(CLIPPED_CELLS, "#detail-tests") == []  # every label and number fully on screen
    page.set_viewport_size({"width": 1100, "height": 900})  # a small laptop: still no column cut off
    page.wait_for_timeout(300)
    assert page.evaluate(CLIPPED_CELLS, "#detail-tests") == []
    numbers = [n for t in ("#detail-tests", "#detail-header ~ div") for n in NUMBER.findall(page.inner_text(t))]
    assert numbers and {len(n.split(".")[1]) for n in numbers} == {3}  # no 0.55, no 0.4623
    assert_stayed_local(visit.requests)


def test_plots_label_sizes_in_parameters(visit, shots):
    from playwright.sync_api import expect

    page = visit.page
    page.get_by_role("tab", name="Plots").click()
    scatter = page.locator("#size-scatter")
    expect(scatter.locator("svg text", has_text="22.7M").first).to_be_visible(timeout=30_000)
    screenshot(page, shots / "plots.png")
    assert_reads_well(page, "Plots")
    labels = [t.strip() for t in scatter.locator("svg text").all_text_contents()]
    assert "22.7M" in labels and "1.3B" in labels
    assert not [t for t in labels if re.fullmatch(r"\d+\.\d{4,}", t)]  # no log10 units, no 6-decimal ticks
    small, large = (scatter.locator("svg text", has_text=size).first.bounding_box() for size in ("22.7M", "1.3B"))
    assert small["x"] < large["x"]  # smallest size first
    assert_stayed_local(visit.requests)


def test_a_submission_reads_as_a_message_with_three_decimals(visit, shots, tmp_path, bm25_runs):
    from playwright.sync_api import expect

    from freshstack_hf.metrics import MEASURES

    page = visit.page
    run = write_trec(tmp_path / "mine.trec", merged(bm25_runs), depth=30)
    page.get_by_role("tab", name="Submit").click()
    page.locator("#run-file input[type=file]").set_input_files(str(run))
    # uploaded: the file's cell, named as a reader hears it (its drawn text splits the name in two spans, and the
    # text between them depends on the layout: "mine .trec" was seen)
    expect(page.locator("#run-file").get_by_role("cell", name="mine.trec")).to_be_visible(timeout=30_000)
    page.locator("#run-name input, #run-name textarea").first.fill("my BM25 run")
    page.locator("#run-submit").click()
    outcome = page.locator("#submit-outcome")
    expect(outcome).to_contain_text("scored", timeout=120_000)
    screenshot(page, shots / "submit.png")
    assert_reads_well(page, "Submit after a submission")
    expect(outcome).to_contain_text("'my BM25 run'")  # the name as typed, quotes and all
    rows = [r.split("\t") for r in outcome.locator("tbody tr").all_inner_texts()]
    assert len(rows) == len(MEASURES)
    assert all(re.fullmatch(r"\d\.\d{3}", value.strip()) for _, value in rows), rows
    expect(page.get_by_text("Submission status")).to_have_count(0)  # no raw JSON box on the page
    assert_stayed_local(visit.requests)


def test_the_first_paint_shows_the_top_rows_before_gradio_starts_then_gives_way(browser, page_url, shots):
    """Gradio's scripts are held back: only the plain first paint can draw, and it must show the ranking the
    interactive table then shows (same three-decimal cells), and leave once that table holds rows."""
    import httpx
    from playwright.sync_api import expect

    answer = httpx.get(page_url + "first-paint.json", params={"topic": "beta"}, timeout=30).json()
    assert answer["headers"][:3] == ["id", "system", "type"] and "beta α-nDCG@10" in answer["headers"]
    assert not any(h.startswith("alpha ") for h in answer["headers"])  # the deep link's topic only
    assert "<script>" in httpx.get(page_url, timeout=30).text.split("</head>")[0]

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    held: list[Any] = []
    released = False
    scripts = re.compile(r"\.m?js(\?.*)?$")

    def hold(route: Any) -> None:
        if released:
            route.continue_()
        else:
            held.append(route)

    page.route(scripts, hold)
    page.goto(page_url, wait_until="commit")
    box = page.locator("#first-paint")
    expect(box.get_by_text("BM25", exact=True)).to_be_visible(timeout=30_000)
    assert held, "Gradio's scripts were not held back, so this proves nothing"
    assert page.locator("#leaderboard-table").count() == 0
    text = assert_reads_well(page, "first paint")
    assert "interactive table is loading" in text
    headers, *rows = page.evaluate(
        "() => [...document.querySelectorAll('#first-paint tr')].map(r => [...r.children].map(c => c.innerText))"
    )
    average = headers.index("average α-nDCG@10")
    assert rows and all(re.fullmatch(r"\d\.\d{3}|", row[average]) for row in rows)
    screenshot(page, shots / "first-paint.png")
    released = True
    for route in held:
        route.continue_()
    expect(page.locator("#leaderboard-table").get_by_text("BM25", exact=True).first).to_be_attached(timeout=60_000)
    expect(box).to_have_count(0, timeout=30_000)
    page.close()


def test_a_page_with_nothing_computing_settles(browser, page_url):
    """Once its load steps are done, a page holds no connection open: no event stream waits on a session state
    or a timer. A page that never settles costs the server one open stream per visitor for as long as the tab
    is open (and made the browser benchmark wait forever)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(page_url, wait_until="commit")
    page.wait_for_load_state("networkidle", timeout=30_000)  # raises when a request is still open after 30 s
    assert page.locator("#computing").is_hidden()  # nothing is being computed on this board
    page.close()
