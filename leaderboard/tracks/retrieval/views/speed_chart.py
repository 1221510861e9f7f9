"""The Plots tab's quality-against-speed chart as a Vega-Lite specification, drawn by Gradio's own `gr.Plot`.

Encoding speeds span orders of magnitude (a few documents/s for a large model on a CPU, thousands for a small
one on a GPU), so the x axis must be logarithmic, which Gradio's native scatter cannot do. `gr.Plot` draws any
Vega-Lite specification with the vega-embed it ships (the frontend of its Altair support), so the chart is
written here as plain JSON: no plotting package, nothing fetched by the browser. Sent as a "scatter" (Gradio's
`AltairPlotData`), it gets the page's fonts and colours and follows the width of its tab (a chart drawn while
its tab is hidden would otherwise stay zero pixels wide); Gradio recolours the colour scale's `range` from its
theme, one entry per hardware. Points are coloured by the hardware the worker measured on, and the hover names
the system, its hardware and its figures.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from gradio.components.plot import AltairPlotData

HEIGHT = 360
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def spec(points: pd.DataFrame, y_title: str) -> dict[str, Any]:
    """The Vega-Lite specification: `points` from `plots.speed_scatter`, log x, the measure on y."""
    tooltip = [
        {"field": "system", "type": "nominal"},
        {"field": "hardware", "type": "nominal"},
        {"field": "docs_per_second", "type": "quantitative", "title": "documents/s", "format": ",.1f"},
        {"field": "query_ms", "type": "quantitative", "title": "query latency (ms)", "format": ",.1f"},
        {"field": "value", "type": "quantitative", "title": y_title, "format": ".3f"},
    ]
    return {
        "data": {"values": json.loads(points.to_json(orient="records"))},
        "mark": {"type": "point", "filled": True, "size": 90, "strokeWidth": 0, "tooltip": True},
        "encoding": {
            "x": {
                "field": "docs_per_second",
                "type": "quantitative",
                "scale": {"type": "log"},
                "title": "documents encoded per second (log scale)",
                "axis": {"format": "~s"},
            },
            "y": {"field": "value", "type": "quantitative", "title": y_title, "axis": {"format": ".3~f"}},
            "color": {
                "field": "hardware",
                "type": "nominal",
                "scale": {"range": [PALETTE[i % len(PALETTE)] for i in range(points["hardware"].nunique())]},
                "legend": {"orient": "bottom", "title": "hardware", "labelLimit": 400},
            },
            "tooltip": tooltip,
        },
        "height": HEIGHT,
    }


def speed_chart(points: pd.DataFrame, y_title: str) -> AltairPlotData | None:
    """What `gr.Plot` draws for these points; None (an empty plot) when no row has a speed."""
    if points.empty:
        return None
    return AltairPlotData(plot=json.dumps(spec(points, y_title)), chart="scatter")
