"""The page is assembled from its tabs: each tab one module with its layout and its wiring, registered in one place
(`leaderboard.page.tabs.TABS`). Without a browser: the page's API and components are what they have always been, and a
tab added to the registry (a toy one, defined here) is laid out and wired, or left out when it says so."""

from __future__ import annotations

import gradio as gr
import pytest
from toy_tab import ToyTab

from leaderboard.page import tabs
from leaderboard.page.app import build_app
from leaderboard.page.page import Page

FILTERS = ["search", "types", "sizes", "topic", "sort", "order"]
API = {  # api name -> the parameters clients pass (the page's API, as `gradio_client` sees it)
    "load": [],
    "holes": [],
    "nuggets_uncovered": ["name"],
    "nuggets_by_query": ["name", "qid"],
    "table": [*FILTERS, "page", "snapshot"],  # the page, then the snapshot, last: older clients get page 1, newest
    "export": [*FILTERS, "snapshot"],  # the snapshot last: older clients get the newest
    "computing": [],  # the rows a worker still computes (the Leaderboard tab's "Computing" line)
    "detail": ["key"],
    "plots": ["measure", "keys"],
    "draw": ["measure", "keys"],
    "speed": ["measure"],
    "submit_run": ["file", "scope", "name", "desc", "link", "cutoff"],  # cutoff last: older clients still work
    # the model-page opt-in last: older clients still work (`leaderboard.model_pages`)
    "submit_model": ["model", "revision", "track", "name", "desc", "link", "cutoff", "propose"],
    "after_cutoff": [],
    "over_time": ["measure"],
    "rerank_table": [],
    "submit_rerank_run": ["file", "scope", "name", "desc", "link"],
    "submit_reranker": ["model", "revision", "name", "desc", "link", "propose"],
    "answers_table": [],
    "submit_answers": ["file", "name", "desc", "link"],
}
ELEM_IDS = {
    "search", "leaderboard-table", "page-previous", "page-number", "page-next", "speed", "speed-caption",
    "holes-served", "holes-table", "nuggets-topic", "nuggets-query",
    "nuggets-matrix", "nuggets-uncovered", "answers-table", "answers-file", "answers-name",
    "answers-submit",
    "answers-outcome", "detail-system", "detail-header", "detail-metrics", "detail-tests", "detail-holes",
    "detail-uncovered", "detail-per-query", "detail-parameters", "detail-ranks", "size-scatter", "run-file", "run-name",
    "run-submit", "submit-outcome", "run-cutoff", "window-table", "rerank-table", "rerank-run-file",
    "rerank-run-name", "rerank-run-submit", "rerank-model", "rerank-model-submit", "rerank-outcome", "computing",
    "over-time-plot", "over-time-table", "over-time-summary", "snapshot", "snapshot-note", "model-id",
    "model-revision", "model-propose", "rerank-propose",
}  # fmt: skip
LABELS = ["Leaderboard", "Reranking", "After cutoff", "Over time", "Answers", "Detail", "Plots", "Holes", "Submit"]
LABELS += ["About"]


class HiddenTab(ToyTab):
    label, id = "Hidden", "hidden"

    def shown(self, page: Page) -> bool:
        return False


def page_of(demo: gr.Blocks) -> tuple[dict[str, list[str]], set[str], list[str]]:
    """(public API: name -> parameters, elem ids, tab labels) of a built page."""
    api = {f.api_name: f.input_parameter_names for f in demo.fns.values() if f.api_visibility == "public"}
    blocks = demo.blocks.values()
    return api, {b.elem_id for b in blocks if b.elem_id}, [b.label for b in blocks if isinstance(b, gr.Tab)]


@pytest.mark.slow
def test_the_page_keeps_its_api_and_components(store, lb_dataset, tmp_path):
    api, elem_ids, labels = page_of(build_app(lb_dataset, store))
    assert api == API
    assert elem_ids == ELEM_IDS
    assert labels == LABELS  # no Reference tab without published figures


def test_a_tab_registered_in_the_registry_is_laid_out_and_wired(store, lb_dataset, tmp_path, monkeypatch):
    monkeypatch.setattr(tabs, "TABS", (*tabs.TABS, ToyTab, HiddenTab))
    demo = build_app(lb_dataset, store)
    api, elem_ids, labels = page_of(demo)
    assert labels == [*LABELS, "Toy"]  # after the others, as registered; the hidden one left out
    assert api == {**API, "toy_count": []} and elem_ids == ELEM_IDS | {"toy-text", "toy-button", "toy-count"}
    (count,) = [f.fn for f in demo.fns.values() if f.api_name == "toy_count"]
    assert count() == "0 systems stored"


def test_an_event_of_the_leaderboard_tab_takes_the_six_filters_as_one_object():
    """`takes_filters`: the values of the six filter controls become one `Filters`, the rest follow; the signature
    (what Gradio reads an API's parameters and defaults from) is the filters' names then the answer's own."""
    import inspect

    from leaderboard.tracks.retrieval.tables.table_filters import Filters
    from leaderboard.tracks.retrieval.tabs.snapshot_tables import takes_filters

    seen = []

    def answer(filters: Filters, page: int = 1, snapshot: str | None = None) -> str:
        seen.append((filters, page, snapshot))
        return "answered"

    event = takes_filters(answer)
    assert str(inspect.signature(event)) == "(search, types, sizes, topic, sort, order, page=1, snapshot=None)"
    assert list(inspect.signature(event).parameters) == [*FILTERS, "page", "snapshot"]
    assert event("x", ["run"], None, "all topics", "size", "asc", 3) == "answered"
    assert seen == [(Filters("x", ("run",), None, "all topics", "size", "asc"), 3, None)]
