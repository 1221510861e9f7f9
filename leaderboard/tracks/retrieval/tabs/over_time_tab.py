"""The Over time tab: each system's headline score on every published snapshot (a line chart and a table with its
rank on each), Kendall's tau between consecutive snapshots, the systems that lost the most (the freshness gap), and
the score on the questions asked after a system's cutoff where it is known (content from `over_time`). Drawn in the
page's load chain and on every choice of measure, over the snapshots the board lists at that moment (a snapshot
published while the board is up is drawn from the next reload, and the summary says when the board last looked);
computed once per store state, measure and list of snapshots.

The chart is a Vega-Lite line chart with a point at every value, drawn by `gr.Plot` as the Plots tab's speed chart
is (`speed_chart`): Gradio's own line plot draws only lines, so a system on one snapshot, and every system while
the board has one snapshot, drew nothing. The snapshots sit on an ordinal axis in the view's order (dated ones
oldest first, the served revision last when it is not dated), each shown even before any system has a value on it.
It is drawn as SVG, each point labelled for assistive technology ("snapshot: ...; system: ..."), which is also how a
browser test finds what was drawn.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import gradio as gr
import pandas as pd
from gradio.components.plot import AltairPlotData

from freshstack_hf.metrics import HEADLINE, parse_measure
from leaderboard.page.page import READ, Page, PageTab
from leaderboard.page.store_frame import StoreFrame
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.views.over_time import OverTime, over_time
from leaderboard.tracks.retrieval.views.speed_chart import PALETTE

SHOWN_GAP = 5  # systems listed under "lost the most"
HEIGHT = 360


def summary(view: OverTime, as_of: str = "") -> str:
    """The view's text: the snapshots (listed `as_of`: when the board last looked for them), tau between
    consecutive ones, the freshness gap, how rows were measured."""
    systems = len(view.table)
    listed = f" ({as_of})" if as_of else ""
    lines = [f"**Snapshots**: {', '.join(view.snapshots)}{listed} · {systems} system{'s' if systems != 1 else ''}"]
    if len(view.snapshots) < 2:
        lines.append("One snapshot so far: the next `freshstack-hf refresh` adds the second.")
    taus = [f"{a} → {b}: {'n/a' if tau is None else f'{tau:+.3f}'} ({n} systems)" for a, b, tau, n in view.taus]
    if taus:
        lines.append("**Kendall's τ** between consecutive snapshots (systems on both): " + " · ".join(taus))
    if not view.gap.empty:
        lost = [f"{row.system} {row.change:+.3f}" for row in view.gap.head(SHOWN_GAP).itertuples()]
        lines.append("**Lost the most** (last snapshot minus first, of systems on two or more): " + " · ".join(lost))
    if view.stopped:
        lines.append("**Not measured again**: " + " · ".join(view.stopped))
    if view.live:
        lines.append(
            f"**Live** on {', '.join(view.live)}: the score on the snapshot's embargoed questions (private when it was "
            "measured, rounded to two decimals) and its gap to the public one, in the table's `live` columns and as "
            "each system's `(live)` series in the chart"
        )
    lines.append(
        "Models and rerankers are measured again by the workers on each new snapshot; an uploaded run cannot be "
        "re-run, so its archived ranking is re-scored as it is (*re-scored on*: documents that changed read as "
        "unjudged). *after cutoff*: the score on the questions asked after the system's cutoff date, where known."
    )
    return "\n\n".join(lines)


def chart_spec(view: OverTime, y_title: str) -> dict[str, Any]:
    """The Vega-Lite specification: a line per system through its values, a point on each, snapshots on x."""
    systems = view.long["system"].nunique()
    tooltip = [
        {"field": "system", "type": "nominal"},
        {"field": "snapshot", "type": "ordinal"},
        {"field": "value", "type": "quantitative", "title": y_title, "format": ".3f"},
    ]
    encoding = {
        "x": {
            "field": "snapshot",
            "type": "ordinal",
            "scale": {"domain": list(view.snapshots)},
            "title": "snapshot",
            "axis": {"labelAngle": 0},
        },
        "y": {"field": "value", "type": "quantitative", "title": y_title, "scale": {"zero": False}},
        "color": {
            "field": "system",
            "type": "nominal",
            "scale": {"range": [PALETTE[i % len(PALETTE)] for i in range(max(systems, 1))]},
            "legend": {"orient": "bottom", "title": "system", "labelLimit": 400},
        },
        "tooltip": tooltip,
    }
    mark = {"type": "line", "point": {"filled": True, "size": 80, "strokeWidth": 0}, "tooltip": True}
    return {
        "data": {"values": json.loads(view.long.to_json(orient="records", double_precision=15))},
        "layer": [{"mark": mark, "encoding": encoding}],  # Gradio themes a "line" chart's layers
        "height": HEIGHT,
        "usermeta": {"embedOptions": {"renderer": "svg"}},  # vega-embed's options, read from the spec
    }


def chart(view: OverTime, y_title: str) -> AltairPlotData | None:
    """What `gr.Plot` draws for the view; None (an empty plot) when no system has a value on any snapshot."""
    if view.long.empty:
        return None
    return AltairPlotData(plot=json.dumps(chart_spec(view, y_title)), chart="line")


def shown_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the page shows it: scores with 3 decimals, live values with the two they are stored with (a
    gap signed), blanks for what a system has no value of."""
    shown = table.copy()
    for name in shown.columns:
        if shown[name].dtype == "float64":
            shape = "{:+.2f}" if name.endswith(" live gap") else "{:.2f}" if name.endswith(" live") else "{:.3f}"
            shown[name] = [("" if pd.isna(v) else shape.format(v)) for v in shown[name]]
        elif str(shown[name].dtype) == "Int64":
            shown[name] = [("" if pd.isna(v) else str(int(v))) for v in shown[name]]
    return shown


class OverTimeTab(PageTab):
    label, id = "Over time", "over-time"

    def layout(self, page: Page) -> None:
        listed = retrieval_page.snapshot_list(page)  # the snapshots as the board lists them at each draw
        live_of = functools.partial(retrieval_page.live, page)  # each snapshot's live values, as the board shows them
        # its views: one per store state, day and measure (a held live value is shown from the day its embargo ends)
        cache = StoreFrame(page.store, lambda _store: pd.DataFrame(), depends=retrieval_page.release(page).marker)
        picker = gr.Dropdown([(m.name, m.id) for m in HEADLINE], value=HEADLINE[0].id, label="Measure")
        plot = gr.Plot(label="Average over the snapshot's topics", elem_id="over-time-plot")
        table = gr.Dataframe(interactive=False, wrap=False, max_height=480, elem_id="over-time-table")
        text = gr.Markdown(elem_id="over-time-summary")

        def draw(measure: str) -> Any:
            listing = listed.current()
            snapshots = list(listing.snapshots)
            key = (measure, *listing.labels)
            view = cache.view(key, lambda _frame: over_time(page.store, snapshots, measure, live_of))
            return chart(view, parse_measure(measure).name), shown_table(view.table), summary(view, listing.as_of())

        page.on_load(draw, [picker], [plot, table, text], api_name="over_time")
        self.parts = picker, plot, table, text, draw

    def wire(self, page: Page) -> None:
        measure, plot, table, text, draw = self.parts
        measure.input(draw, [measure], [plot, table, text], api_name=False, **READ)
