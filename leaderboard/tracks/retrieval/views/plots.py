"""Data for the plots: a measure against model size, against encoding speed, and the selected systems topic by topic.

Both return long-format DataFrames that Gradio's native plots (`gr.ScatterPlot`, `gr.BarPlot`) draw as
they are, so the plotting library is the browser's and nothing here needs matplotlib. Sizes span four orders
of magnitude (22.7M to 27B), and Gradio's scatter has no log scale: a linear axis would squeeze every model
under 1B into one column, and a log10 axis reads `7.356`. So the x axis is the parameter count as people
write it (`22.7M`, `110M`, `1.3B`), one column per size in increasing order (`size_order`). Systems of unknown
size (BM25, API models) cannot be placed and are listed in the caption instead of being dropped silently.
Values are rounded to 3 decimals: the plots and their tooltips show them as the tables do.

Speed (`speed_scatter`) is the documents/s a worker measured for a model row (`table_efficiency.EFFICIENCY`),
so only rows with that figure are placed, each with the hardware it was measured on: a GPU row and a CPU row
differ by the machine as much as by the model. Its chart (`speed_chart`) has the log axis this needs.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from freshstack_hf.metrics import HEADLINE, Measure, parse_measure
from leaderboard.page.display import format_size
from leaderboard.tracks.retrieval.tables.table_columns import AVERAGE, column
from leaderboard.tracks.retrieval.tables.table_efficiency import HARDWARE

SCATTER_COLUMNS = ["system", "type", "parameters", "value"]
SPEED = "docs/s"  # the board's documents/s column
SPEED_COLUMNS = ["system", "type", "hardware", "docs_per_second", "query_ms", "value"]
DECIMALS = 3
AXIS_FORMAT = ".3~f"  # d3 format of the value axes: at most 3 decimals, trailing zeros dropped (0.2, 0.324)
BAR_COLUMNS = ["topic", "system", "value", "bar"]


def measure_choices() -> list[tuple[str, str]]:
    return [(m.name, m.id) for m in HEADLINE]


def axis_title(measure: str | Measure) -> str:
    """The scatter's value axis: `average α-nDCG@10`."""
    return column(AVERAGE, _measure(measure))


def measure_name(measure: str | Measure) -> str:
    """The bars' value axis: `α-nDCG@10`."""
    return _measure(measure).name


def _measure(measure: str | Measure) -> Measure:
    found = parse_measure(measure)
    if found not in HEADLINE:
        raise ValueError(f"{found.id} is not shown in the table; use one of {[m.id for m in HEADLINE]}")
    return found


def size_scatter(frame: pd.DataFrame, measure: str | Measure = HEADLINE[0]) -> tuple[pd.DataFrame, str]:
    """(points, caption): each system of known size at (its size as text, average of `measure`), smallest first."""
    col = column(AVERAGE, _measure(measure))
    scored = frame[frame[col].notna()]
    sized = scored[scored["size"].notna() & (scored["size"] > 0)].sort_values("size", kind="stable")
    points = pd.DataFrame(
        {
            "system": sized["system"].astype(str),
            "type": sized["type"].astype(str),
            "parameters": [format_size(s) for s in sized["size"]],
            "value": sized[col].astype(float).round(DECIMALS),
        },
        columns=SCATTER_COLUMNS,
    )
    unsized = scored[~scored.index.isin(sized.index)]["system"].tolist()
    caption = f"{len(points)} systems of known size"
    if unsized:
        shown = ", ".join(unsized[:8]) + (f" and {len(unsized) - 8} more" if len(unsized) > 8 else "")
        caption += f"; not placed (size unknown): {shown}"
    return points, caption


def speed_scatter(frame: pd.DataFrame, measure: str | Measure = HEADLINE[0]) -> tuple[pd.DataFrame, str]:
    """(points, caption): each row with a measured documents/s and an average of `measure`, slowest first."""
    col = column(AVERAGE, _measure(measure))
    if SPEED not in frame.columns:
        return pd.DataFrame(columns=SPEED_COLUMNS), "no row records its encoding speed"
    measured = frame[frame[SPEED].notna() & (frame[SPEED] > 0)]
    placed = measured[measured[col].notna()].sort_values(SPEED, kind="stable")
    points = pd.DataFrame(
        {
            "system": placed["system"].astype(str),
            "type": placed["type"].astype(str),
            "hardware": placed[HARDWARE].fillna("unknown hardware").astype(str),
            "docs_per_second": placed[SPEED].astype(float).round(1),
            "query_ms": placed["query ms"].astype(float).round(1),
            "value": placed[col].astype(float).round(DECIMALS),
        },
        columns=SPEED_COLUMNS,
    )
    caption = f"{len(points)} model rows with the speed their worker measured (documents encoded per second)"
    unplaced = measured[~measured.index.isin(placed.index)]["system"].tolist()
    if unplaced:
        caption += f"; not placed (no {col}): {', '.join(unplaced[:8])}" + (" and more" if len(unplaced) > 8 else "")
    return points, caption + "; rows nobody measured (runs, baselines) have no speed"


def size_order(points: pd.DataFrame) -> list[str]:
    """The x axis's categories, smallest size first (the order `size_scatter` gives its points)."""
    return list(dict.fromkeys(points["parameters"]))


def topic_bars(
    frame: pd.DataFrame, keys: Sequence[str], measure: str | Measure = HEADLINE[0], *, with_average: bool = True
) -> pd.DataFrame:
    """One bar per (topic, selected system); `bar` orders bars topic by topic so systems sit side by side."""
    m = _measure(measure)
    topics = [*frame.attrs.get("topics", []), *([AVERAGE] if with_average else [])]
    chosen = frame[frame["id"].isin(list(keys))].set_index("id")
    rows = []
    for topic in topics:
        for key in keys:
            if key not in chosen.index:
                continue
            value = chosen.at[key, column(topic, m)]
            if pd.notna(value):
                label = f"{chosen.at[key, 'system']} (#{key})"
                rows.append([topic, label, round(float(value), DECIMALS), f"{topic} | {label}"])
    return pd.DataFrame(rows, columns=BAR_COLUMNS)


def default_selection(frame: pd.DataFrame, count: int = 4) -> list[str]:
    """The top `count` rows by average α-nDCG@10, so the comparison plot is never empty on first view."""
    col = column(AVERAGE, HEADLINE[0])
    ranked = frame[frame[col].notna()].sort_values(col, ascending=False, kind="stable")
    return ranked["id"].head(count).tolist()
