"""The Reference tab: numbers computed elsewhere, never mixed with the rows computed here. Figures published elsewhere
(`published`, given with `--reported`), under a heading naming their source; and what model repos report on the
benchmark's Hub dataset (`hub_reported`, on a board that knows its Hub id), beside the board's own value of each, read
in the background and shown as the page loads. Only on a page with either."""

from __future__ import annotations

from typing import Any

import gradio as gr

from leaderboard.page.display import datatypes, display
from leaderboard.page.page import Page, PageTab, Settings
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.leaderboard_tab import legend
from leaderboard.tracks.retrieval.views import hub_reported
from leaderboard.tracks.retrieval.views import published as reference


class ReferenceTab(PageTab):
    label, id = reference.REFERENCE_TAB, "reference"

    @classmethod
    def check_inputs(cls, settings: Settings) -> list[str]:
        path = settings.reported_path
        return [f"reported: {len(reference.load_reported(path))} published rows from {path}"] if path else []

    def shown(self, page: Page) -> bool:
        return retrieval_page.published(page) is not None or bool(page.settings.dataset_id)

    def layout(self, page: Page) -> None:
        published = retrieval_page.published(page)
        if published is not None:
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
        if page.settings.dataset_id:
            self.hub_reports(page)

    def hub_reports(self, page: Page) -> None:
        """The reported values, filled as the page loads from the last reading (never waiting for the Hub)."""
        hub_reported.reader(page)  # starts reading now, while the rest of the page is built
        gr.Markdown(hub_reported.explained(page.settings.dataset_id), elem_id="hub-reported-heading")
        note = gr.Markdown(elem_id="hub-reported-note")
        table = gr.Dataframe(interactive=False, elem_id="hub-reported-table", max_height=520, wrap=True)

        def listed() -> dict[str, str]:
            """{revision: snapshot name} of the snapshots the board lists now."""
            listing = retrieval_page.snapshot_list(page).current()
            return {snap.dataset.revision: snap.label for snap in listing.snapshots}

        def shown() -> tuple[str, Any]:
            line, frame = hub_reported.reported_view(page, listed)
            update = gr.update(value=display(frame), datatype=datatypes(frame), visible=not frame.empty)
            return f"The Hub's reports: {line}", update

        page.on_load(shown, None, [note, table], api_name="hub_reported")
