"""The Reference (published) tab: figures published elsewhere (`published`), under a heading naming their source,
never mixed with the rows computed here; only on a page given `--reported`."""

from __future__ import annotations

import gradio as gr

from leaderboard.page.display import datatypes, display
from leaderboard.page.page import Page, PageTab, Settings
from leaderboard.tracks.retrieval import published as reference
from leaderboard.tracks.retrieval import retrieval_page
from leaderboard.tracks.retrieval.leaderboard_tab import legend


class ReferenceTab(PageTab):
    label, id = reference.REFERENCE_TAB, "reference"

    @classmethod
    def check_inputs(cls, settings: Settings) -> list[str]:
        path = settings.reported_path
        return [f"reported: {len(reference.load_reported(path))} published rows from {path}"] if path else []

    def shown(self, page: Page) -> bool:
        return retrieval_page.published(page) is not None

    def layout(self, page: Page) -> None:
        published = retrieval_page.published(page)
        gr.Markdown(reference.heading(), elem_id="reference-heading")
        gr.Dataframe(
            value=display(published),
            datatype=datatypes(published),
            interactive=False,
            elem_id="reference-table",
            max_height=640,
            wrap=False,
            pinned_columns=1,
        )
        gr.Markdown(
            f"{legend()}. Average: {reference.PUBLISHED} = the file's own figure; {reference.MEAN_OF_TOPICS}"
            " = plain mean of its topics. Bold: best value of each column."
        )
