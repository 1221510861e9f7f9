"""The Plots tab: a measure's average against model size and against encoding speed (documents/s, log scale,
by hardware), and the chosen systems topic by topic (data from `plots`, the speed chart from `speed_chart`); drawn
once the pickers are filled, in the page's load chain, then on every choice. The speed chart has its own event
(`/speed`), so `/plots` answers what it always has."""

from __future__ import annotations

from typing import Any

import gradio as gr

from freshstack_hf.metrics import HEADLINE
from leaderboard.page.page import READ, Page, PageTab
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.views import plots
from leaderboard.tracks.retrieval.views.speed_chart import speed_chart


class PlotsTab(PageTab):
    label, id = "Plots", "plots"

    def layout(self, page: Page) -> None:
        board = retrieval_page.board(page)
        measure = gr.Dropdown(plots.measure_choices(), value=HEADLINE[0].id, label="Measure")
        scatter = gr.ScatterPlot(
            x="parameters",
            y="value",
            color="type",
            x_title="parameters (smallest first)",  # a longer title is cut off by the plot
            y_title=plots.axis_title(HEADLINE[0]),
            y_axis_format=plots.AXIS_FORMAT,
            label="Average vs model size",
            tooltip=["system", "parameters", "value"],
            elem_id="size-scatter",
        )
        speed = gr.Plot(label="Average vs encoding speed (model rows, as their worker measured them)", elem_id="speed")
        speed_caption = gr.Markdown(elem_id="speed-caption")
        chosen = gr.Dropdown(label="Systems to compare", multiselect=True, choices=[], allow_custom_value=True)
        bars = gr.BarPlot(
            x="bar",
            y="value",
            color="system",
            label="Per topic",
            x_label_angle=-40,
            x_title="topic | system",
            y_title=HEADLINE[0].name,
            y_axis_format=plots.AXIS_FORMAT,
            tooltip=["topic", "system", "value"],
        )

        def fill(frame: Any, keys: list[tuple[str, str]]) -> Any:  # the top systems chosen: never an empty plot
            return gr.update(choices=keys, value=plots.default_selection(frame))

        retrieval_page.pickers(page).append((chosen, fill))

        def draw(measure: str, keys: list[str] | None) -> Any:
            frame = board.frame()
            points, caption = plots.size_scatter(frame, measure)
            bars = plots.topic_bars(frame, keys or [], measure)
            title = plots.axis_title(measure)
            scatter_update = gr.update(value=points, caption=caption, sort=plots.size_order(points), y_title=title)
            return scatter_update, gr.update(value=bars, sort=bars["bar"].tolist(), y_title=plots.measure_name(measure))

        def draw_speed(measure: str) -> Any:
            points, caption = plots.speed_scatter(board.frame(), measure)
            return speed_chart(points, plots.axis_title(measure)), caption

        page.on_load(draw, [measure, chosen], [scatter, bars])  # after the pickers: its API name is "draw"
        page.on_load(draw_speed, [measure], [speed, speed_caption], api_name="speed")
        self.parts = measure, chosen, scatter, bars, draw, speed, speed_caption, draw_speed

    def wire(self, page: Page) -> None:
        measure, chosen, scatter, bars, draw, speed, speed_caption, draw_speed = self.parts
        measure.input(draw, [measure, chosen], [scatter, bars], api_name="plots", **READ).then(
            draw_speed, [measure], [speed, speed_caption], api_name=False, **READ
        )
        chosen.input(draw, [measure, chosen], [scatter, bars], api_name=False, **READ)
