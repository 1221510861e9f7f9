"""The paged Leaderboard table on the running app: through its API (gradio_client), its first paint (HTTP) and a
real headless Chromium (Debian's, driven by Playwright).

The board holds 120 submitted systems with distinct averages ("system 0000" best), per-query scores (so the rank
column is computed) and, for every tenth, the efficiency a worker records, so the pages' rows, the ranks over the
whole board and the speed chart are all known in advance. Pages hold `PAGE_ROWS` (50) rows: 50, 50 and 20.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from app_client import ALL_SIZES, ALL_TYPES
from browser_checks import assert_reads_well, headless_chromium, screenshot
from ports import free_port

from leaderboard.page.paging import PAGE_ROWS

pytestmark = pytest.mark.slow
SYSTEMS = 120
ALL = ("", ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc")
HARDWARE = "CPU: Test CPU 2.0GHz"


def name(i: int) -> str:
    return f"system {i:04d}"


@pytest.fixture(scope="module")
def app(tmp_path_factory, lb_dataset):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.records import ResultMeta
    from leaderboard.store.store import Store

    assert PAGE_ROWS == 50  # the expected pages below
    root = tmp_path_factory.mktemp("paged")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    for i in range(SYSTEMS):
        quality = 0.95 - i * 0.007  # every query's score: system i is strictly ahead of system i + 1 everywhere
        results = {}
        for topic in lb_dataset.topics:
            per_query = {
                q: {m: quality for m in ("alpha_ndcg@10", "coverage@20", "recall@50")}
                for q in _queries(lb_dataset, topic)
            }
            results[topic] = {"metrics": dict(per_query[next(iter(per_query))]), "per_query": per_query}
        cost = {"docs_per_second": 10.0 * (i + 1), "query_latency_ms": 3.5, "embedding_dim": 384, "hardware": HARDWARE}
        params = {"job": "model", "efficiency": cost} if i % 10 == 0 else {"job": "run"}
        store.add_system(
            name=name(i),
            kind="model" if i % 10 == 0 else "run",
            content_hash=f"paged-{i}",
            results=results,
            meta=ResultMeta(lb_dataset.revision, parameters=params),
        )
    demo = build_app(lb_dataset, store, resamples=200)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    yield SimpleNamespace(url=url, client=Client(url, verbose=False), store=store)
    demo.close()
    store.close()


def _queries(dataset, topic: str) -> list[str]:
    return sorted(dataset.qrels(topic).query_ids)


def page_of(client, page: int | None = None, search: str = "") -> tuple[str, list[dict]]:
    """(the caption, the rows as {header: shown text}) of one page of the `/table` API."""
    args = (search, *ALL[1:]) if page is None else (search, *ALL[1:], page)
    answer = client.predict(*args, api_name="/table")
    value = answer["value"]
    rows = [dict(zip(value["headers"], r, strict=True)) for r in value["metadata"]["display_value"]]
    return answer["label"], rows


def test_the_table_api_answers_one_page_and_old_callers_get_the_first(app):
    caption, first = page_of(app.client)  # six arguments, as every caller before paging
    assert caption == "rows 1–50 of 120 · page 1 of 3"
    assert [r["system"] for r in first] == [name(i) for i in range(50)]
    _, again = page_of(app.client, 1)
    assert again == first
    caption, second = page_of(app.client, 2)
    assert caption == "rows 51–100 of 120 · page 2 of 3"
    assert [r["system"] for r in second] == [name(i) for i in range(50, 100)]
    caption, last = page_of(app.client, 3)
    assert caption == "rows 101–120 of 120 · page 3 of 3" and len(last) == 20  # the last, partial page
    assert page_of(app.client, 99) == (caption, last)  # beyond the end: the last page
    assert page_of(app.client, 0)[1] == first


def test_ranks_are_over_the_whole_board_not_the_page(app):
    _, second = page_of(app.client, 2)
    ranks = [r["rank (95% CI)"] for r in second]
    assert [int(cell.split(" ", 1)[0]) for cell in ranks] == list(range(51, 101))


def test_search_and_filters_stay_on_the_server_and_exports_hold_every_row(app):
    caption, found = page_of(app.client, 2, search="system 01")  # 0100 to 0119: one page, so page 2 is page 1
    assert caption == "rows 1–20 of 20 · page 1 of 1" and [r["system"] for r in found] == [
        name(i) for i in range(100, 120)
    ]
    csv_path, json_path = app.client.predict(*ALL, api_name="/export")
    exported = json.loads(Path(json_path).read_text(encoding="utf-8"))["rows"]
    pages = [r["system"] for p in (1, 2, 3) for r in page_of(app.client, p)[1]]
    assert [r["system"] for r in exported] == pages == [name(i) for i in range(SYSTEMS)]  # all, in the same order
    assert Path(csv_path).read_text(encoding="utf-8").count("\n") == SYSTEMS + 1


def test_the_first_paint_draws_the_page_of_the_address(app):
    answer = httpx.get(app.url + "first-paint.json", params={"page": "2"}, timeout=30).json()
    _, second = page_of(app.client, 2)
    at = answer["headers"].index("system")
    assert [r[at] for r in answer["rows"]] == [r["system"] for r in second]
    assert answer["caption"].startswith("Rows 51–100 of 120 systems")
    beyond = httpx.get(app.url + "first-paint.json", params={"page": "40"}, timeout=30).json()
    assert [r[at] for r in beyond["rows"]] == [name(i) for i in range(100, 120)]


# ---- in the browser ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser(app):
    with headless_chromium() as chromium:
        yield chromium


def _open(browser, url: str):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    expect(page.locator("#leaderboard-table [role=grid]")).to_have_attribute(
        "aria-rowcount", re.compile(r"^[1-9]\d+$"), timeout=60_000
    )
    return page


def _shown(page) -> tuple[str, str, str]:
    """(the table's caption, its first visible system, the page box's value)."""
    table = page.locator("#leaderboard-table")
    first = table.get_by_text(re.compile(r"^system \d{4}$")).filter(visible=True).first.inner_text()
    caption = table.get_by_text(re.compile(r"^rows \d")).first.inner_text()
    return caption, first, page.locator("#page-number input").input_value()


def _address(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_a_deep_link_opens_its_page_and_the_pager_walks_the_board(browser, app, tmp_path):
    from playwright.sync_api import expect

    page = _open(browser, app.url + "?page=2")
    caption = page.locator("#leaderboard-table").get_by_text(re.compile(r"^rows \d")).first
    expect(caption).to_have_text("rows 51–100 of 120 · page 2 of 3", timeout=30_000)
    assert _shown(page) == ("rows 51–100 of 120 · page 2 of 3", name(50), "2")
    assert_reads_well(page, "Leaderboard, page 2")
    screenshot(page, tmp_path / "page-2.png")

    page.locator("#page-next").click()
    expect(caption).to_have_text("rows 101–120 of 120 · page 3 of 3", timeout=30_000)
    assert _shown(page)[1:] == (name(100), "3")
    expect(page).to_have_url(re.compile(r"[?&]page=3\b"))
    page.locator("#page-next").click()  # already the last page: it stays
    page.wait_for_timeout(1000)
    assert _shown(page) == ("rows 101–120 of 120 · page 3 of 3", name(100), "3")

    page.locator("#page-previous").click()
    expect(caption).to_have_text("rows 51–100 of 120 · page 2 of 3", timeout=30_000)
    expect(page).to_have_url(re.compile(r"[?&]page=2\b"))

    box = page.locator("#page-number input")
    box.fill("99")
    box.press("Enter")
    expect(caption).to_have_text("rows 101–120 of 120 · page 3 of 3", timeout=30_000)
    expect(box).to_have_value("3")  # beyond the end: the last page, and the box says so

    page.locator("#search textarea").fill("system 00")  # a new search starts again at page 1
    expect(caption).to_have_text("rows 1–50 of 100 · page 1 of 2", timeout=30_000)
    expect(box).to_have_value("1")
    expect(page).not_to_have_url(re.compile(r"[?&]page="))
    page.close()


def test_the_address_keeps_the_sort_with_the_page(browser, app):
    from playwright.sync_api import expect

    page = _open(browser, app.url)
    page.get_by_label("asc").check()  # the Order radio: the worst system first
    caption = page.locator("#leaderboard-table").get_by_text(re.compile(r"^rows \d")).first
    expect(caption).to_have_text("rows 1–50 of 120 · page 1 of 3", timeout=30_000)
    expect(page.locator("#leaderboard-table").get_by_text(name(119)).filter(visible=True).first).to_be_visible()
    page.locator("#page-next").click()
    expect(page).to_have_url(re.compile(r"[?&]page=2\b"), timeout=30_000)
    address = _address(page)
    assert address["order"] == ["asc"] and address["page"] == ["2"] and "sort" not in address  # default sort
    again = _open(browser, page.url)  # the address opens what was on screen
    expect(again.locator("#leaderboard-table").get_by_text(name(69)).filter(visible=True).first).to_be_visible(
        timeout=30_000
    )
    assert _shown(again)[1:] == (name(69), "2")
    again.close()
    page.close()


def test_the_plots_tab_draws_quality_against_speed(browser, app, tmp_path):
    from playwright.sync_api import expect

    page = _open(browser, app.url)
    page.get_by_role("tab", name="Plots").click()
    expect(page.locator("#speed-caption")).to_contain_text("12 model rows", timeout=30_000)
    chart = page.locator("#speed .vega-embed canvas, #speed .vega-embed svg").first
    expect(chart).to_be_visible(timeout=30_000)
    assert chart.bounding_box()["width"] > 300  # drawn at the tab's width, not the zero width of a hidden tab
    screenshot(page, tmp_path / "plots.png")
    assert_reads_well(page, "Plots")
    page.close()
