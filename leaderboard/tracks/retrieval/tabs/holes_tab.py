"""The Holes tab: the qrels revision the board serves, and for each fill made from it, every stored system's
Judged@10 and headline scores old -> new (content from `holes`)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from leaderboard.page.page import Page, PageTab
from leaderboard.tracks.retrieval.views import holes

EXPLAINED = (
    "Pooled judgments age: a system that ranks documents nobody judged is scored as if they were irrelevant. A "
    "**fill** judges a stored system's unjudged top-10 documents with the board's judge and writes the verdicts "
    "as a new qrels revision beside the served one (`freshstack-hf fill-board --system ID --topic T`, run by a "
    "worker). The served revision is never rewritten; below, every stored system is re-scored on each fill: "
    "Judged@10 (the share of its top 10 that is judged) and the headline measures, served -> filled."
)


class HolesTab(PageTab):
    label, id = "Holes", "holes"

    def layout(self, page: Page) -> None:
        source = page.shared("retrieval.holes", lambda: holes.HolesSource(page.store, page.dataset))
        gr.Markdown(EXPLAINED)
        note = gr.Markdown(elem_id="holes-served")
        table = gr.Dataframe(headers=holes.COLUMNS, interactive=False, elem_id="holes-table", wrap=False)

        def render() -> tuple[Any, Any]:
            sections = source.sections()
            text = holes.served_note(page.dataset)
            if not sections:
                return text + " No fill of it yet.", gr.update(value=[])
            rows = [row for _title, section in sections for row in section]
            titles = "\n".join(f"- {title}" for title, _ in sections)
            return f"{text}\n\nFills of it:\n{titles}", gr.update(value=[[r[c] for c in holes.COLUMNS] for r in rows])

        page.on_load(render, None, [note, table], api_name="holes")
