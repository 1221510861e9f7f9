"""A toy leaderboard tab, as a maintainer would write one: one module with its layout and its wiring, registered by
adding it to `leaderboard.page.tabs.TABS` (the tests do that with monkeypatch)."""

from __future__ import annotations

import gradio as gr

from leaderboard.page.page import Page, PageTab


class ToyTab(PageTab):
    """A tab of a track that does not exist: a text, and a button counting the store's systems."""

    label, id = "Toy", "toy"

    def layout(self, page: Page) -> None:
        gr.Markdown(f"A toy tab over {len(page.dataset.topics)} topics.", elem_id="toy-text")
        self.button = gr.Button("Count the systems", elem_id="toy-button")
        self.count = gr.Markdown(elem_id="toy-count")

    def wire(self, page: Page) -> None:
        def count_systems() -> str:
            return f"{len(page.store.leaderboard_rows())} systems stored"

        self.button.click(count_systems, None, self.count, api_name="toy_count")
