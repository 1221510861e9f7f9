"""The Drift tab: drift reports given with `--drift REPORT.json` (content from `drift`), each as its Markdown, its
plot and a table of every system's scores and ranks on both snapshots; only on a page given a report."""

from __future__ import annotations

import gradio as gr

from leaderboard.page.page import Page, PageTab, Settings
from leaderboard.tracks.retrieval.views import drift


class DriftTab(PageTab):
    label, id = "Drift", "drift"

    @classmethod
    def check_inputs(cls, settings: Settings) -> list[str]:
        return [f"drift: {drift.title(drift.load_report(path))} from {path}" for path in settings.drift_reports]

    def shown(self, page: Page) -> bool:
        return bool(page.settings.drift_reports)

    def layout(self, page: Page) -> None:
        reports = [drift.load_report(path) for path in page.settings.drift_reports]
        for i, report in enumerate(reports):
            text, svg, table = drift.content(report)
            with gr.Accordion(drift.title(report), open=i == 0):
                gr.HTML(svg, elem_id=f"drift-plot-{i}")
                gr.Dataframe(
                    value=table,
                    headers=drift.COLUMNS,
                    interactive=False,
                    elem_id=f"drift-table-{i}",
                    max_height=480,
                    wrap=False,
                )
                gr.Markdown(text, elem_id=f"drift-report-{i}")
