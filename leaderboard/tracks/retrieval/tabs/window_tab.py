"""The After cutoff tab: every system scored only on the questions asked after its own cutoff date, with how many
questions that leaves per topic and in all (numbers from `window_table`, which re-averages stored per-query scores;
this module only lays the table out). A row without a cutoff keeps its scores on all questions, marked as such."""

from __future__ import annotations

from typing import Any

import gradio as gr

from leaderboard.page.display import datatypes, display
from leaderboard.page.page import Page, PageTab
from leaderboard.tracks.retrieval.tables import window_table
from leaderboard.tracks.retrieval.tabs.leaderboard_tab import legend

EXPLAINED = (
    "Each system is scored only on the questions asked **strictly after** its cutoff date (a model's release or "
    "training cutoff, given on the Submit tab or in the model card), so questions it may have been trained on do "
    "not count. The question columns say how many questions each value is a mean over. Cutoff "
    f"*{window_table.ALL_QUESTIONS}*: no date was given, so the row is scored on every question. Rows with "
    "different cutoffs are scored on different questions: compare them with that in mind."
)


class WindowTab(PageTab):
    label, id = "After cutoff", "after-cutoff"

    def layout(self, page: Page) -> None:
        source = page.shared("retrieval.window", lambda: window_table.WindowSource(page.store, page.dataset))
        gr.Markdown(EXPLAINED)
        table = gr.Dataframe(interactive=False, elem_id="window-table", max_height=640, wrap=False, pinned_columns=2)
        gr.Markdown(f"{legend()}. Bold: best value of each column among the rows shown.")

        def render() -> Any:
            """The table, formatted once per store state, however many pages load at once."""
            value, kinds = source.view("display", lambda shown: (display(shown), datatypes(shown)))
            return gr.update(value=value, datatype=kinds)

        page.on_load(render, None, table, api_name="after_cutoff")
