"""The Leaderboard table one page at a time, as plain functions: which rows a page shows (boundaries, the last
partial page, a page beyond the end), its caption, the page in the deep link and in the first paint, and bold
judged over every row of the view, not the page. The app's paging is in test_leaderboard_paging_app.py."""

from __future__ import annotations

import pytest
from board_rows import TOPICS, row

from leaderboard.page import display, first_paint
from leaderboard.page.paging import PAGE_ROWS, page_number, page_slice
from leaderboard.tracks.retrieval.tables import deep_links, leaderboard_table, table_filters


def test_page_boundaries_and_the_last_partial_page():
    first, second, last = (page_slice(120, p, 50) for p in (1, 2, 3))
    assert (first.start, first.stop, first.rows, first.pages) == (0, 50, 50, 3)
    assert (second.start, second.stop) == (50, 100)
    assert (last.page, last.start, last.stop, last.rows) == (3, 100, 120, 20)  # the last page holds the rest
    exact = page_slice(100, 2, 50)
    assert (exact.pages, exact.start, exact.stop) == (2, 50, 100)  # no empty third page
    assert page_slice(101, 3, 50).rows == 1
    assert first.caption() == "rows 1–50 of 120 · page 1 of 3"
    assert page_slice(1_001, 21, 50).caption() == "rows 1,001–1,001 of 1,001 · page 21 of 21"


@pytest.mark.parametrize("asked", [4, 99, "1000", 3.7e9])
def test_a_page_beyond_the_end_is_the_last_page(asked):
    part = page_slice(120, asked, 50)
    assert (part.page, part.start, part.stop) == (3, 100, 120)


@pytest.mark.parametrize("asked", [0, -3, None, "", "two", float("nan"), float("inf"), "-1"])
def test_a_page_that_is_no_page_number_is_the_first(asked):
    assert page_number(asked) == 1
    assert (page_slice(120, asked, 50).page, page_slice(120, asked, 50).start) == (1, 0)


def test_an_empty_view_is_one_empty_page_and_a_page_holds_rows():
    empty = page_slice(0, 5)
    assert (empty.page, empty.pages, empty.rows) == (1, 1, 0) and empty.caption() == "no rows match"
    assert page_slice(10, 1).rows == 10 and PAGE_ROWS >= 25  # a page fills more than one screen of the table
    with pytest.raises(ValueError, match="at least one row"):
        page_slice(10, 1, 0)
    assert [page_number(v) for v in ("3", " 7 ", 2.9, "12.0")] == [3, 7, 2, 12]


@pytest.mark.parametrize(
    ("params", "page", "notice"),
    [
        ({}, 1, ""),
        ({"page": "3"}, 3, ""),
        ({"page": "03", "topic": "beta", "sort": "coverage@20"}, 3, ""),
        ({"page": "0"}, 1, "page '0' is not a page number; showing page 1"),
        ({"page": "two"}, 1, "page 'two' is not a page number; showing page 1"),
        ({"page": "2.5"}, 2, "page '2.5' is not a page number; showing page 2"),
        ({"page": "400"}, 400, ""),  # beyond the end: the page shows the last one (the table knows how many)
    ],
)
def test_the_page_is_kept_in_the_deep_link(params, page, notice):
    view = deep_links.parse_view(params, TOPICS)
    assert (view.page, view.notice) == (page, notice)
    if "topic" in params:  # beside the other deep-link parameters, which keep their meaning
        assert (view.topic, view.sort) == ("beta", "beta Coverage@20")


def test_the_address_script_writes_the_view_back_without_defaults():
    script = deep_links.address_script("all topics")
    assert script.startswith("(topic, sort, order, page, snapshot, newest) =>") and "history.replaceState" in script
    assert '"all topics"' in script and '"α-nDCG@10"' in script and '"average"' in script
    # the newest, the default, left out: named by the page as the board lists it, not fixed in the script
    assert 'snapshot === newest ? ""' in script and 'keep("snapshot"' in script
    assert "%(" not in script  # every placeholder filled


@pytest.fixture
def board():
    """25 runs with distinct averages (run 00 best), so every page's rows are known."""
    rows = [row(i + 1, f"run {i:02d}", {"alpha": 1 - i / 50, "beta": 0.5}) for i in range(25)]
    return table_filters.shown_rows(leaderboard_table.build_frame(rows, TOPICS, revision="rev1"))


def test_a_page_of_the_display_is_the_slice_of_the_view_and_bold_is_judged_on_every_row(board):
    part = page_slice(len(board), 3, 10)
    value = display.display(board, rows=part.rows, start=part.start)
    assert [r[1] for r in value["data"]] == [f"run {i:02d}" for i in range(20, 25)]
    column = value["headers"].index("alpha α-nDCG@10")
    assert [r[column] for r in value["metadata"]["styling"]] == [""] * 5  # the best (run 00) is on page 1
    top = display.display(board, rows=10)
    assert top["metadata"]["styling"][0][column] == "font-weight: bold"
    assert display.display(board, rows=10, start=30)["data"] == []


def test_the_first_paint_draws_the_page_the_address_asks_for(board):
    part = page_slice(len(board), 2, 10)
    answer = first_paint.payload(board, 40, part.rows, part.start)
    assert [r[1] for r in answer["rows"]] == [f"run {i:02d}" for i in range(10, 20)]
    assert answer["caption"].startswith("Rows 11–20 of 40 systems")
    assert first_paint.payload(board, 40, 10)["caption"].startswith("Top 10 of 40 systems")
