"""How every table of the page is shown: cells with three decimals, the best of each column in bold, links, sizes.

Shared by the Leaderboard table (`tracks.retrieval.tables.leaderboard_table`), the Answers table, the published figures'
table and the first paint. Values stay floats at full precision (exports, sorting); `display` builds the
`gr.Dataframe` value with the text shown and the styles beside the raw cells, so no markup is ever built from
stored text. Which columns hold measures is read from the headline measures' names, plus the columns a view names
in `attrs["metric_columns"]`; `attrs["lower_is_better"]` names the columns whose best value is the lowest;
`attrs["formats"]` gives other number columns their text (`{column: "{:,.1f}"}`, never bold).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.metrics import HEADLINE
from leaderboard.sanitize import escape_markdown


def link_cell(url: str | None) -> str:
    """The Markdown cell of an already validated http(s) URL: its host name, linking to it."""
    if not url:
        return ""
    host = url.split("//", 1)[-1].split("/", 1)[0]
    safe = url.replace("(", "%28").replace(")", "%29")
    return f"[{escape_markdown(host)}]({safe})"


def format_size(params: int | float | None) -> str:
    """The short form tables show: 22.7M, 1.5B, 9B; empty when unknown."""
    if params is None or params != params or params <= 0:  # None, NaN or nonsense
        return ""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= scale:
            value = params / scale
            return f"{value:.1f}".rstrip("0").rstrip(".") + unit if value < 100 else f"{value:.0f}{unit}"
    return str(int(params))


def sort_frame(frame: pd.DataFrame, by: str, descending: bool = True) -> pd.DataFrame:
    """Sort on one column, blanks last whatever the direction, ties by name then id (a stable page)."""
    if by not in frame.columns:
        raise KeyError(by)
    ordered = frame.sort_values(["system", "id"], kind="stable")
    return ordered.sort_values(by, ascending=not descending, na_position="last", kind="stable")


def datatypes(view: pd.DataFrame) -> list[str]:
    """Column types for `gr.Dataframe`: numbers sort as numbers; only the link column is Markdown."""
    numbers = {"size", *_metric_set(view), *view.attrs.get("formats", {})}
    return ["markdown" if c == "link" else "number" if c in numbers else "str" for c in view]


def _metric_set(view: pd.DataFrame) -> set[str]:
    """The headline measures' columns, plus any a view names in `attrs["metric_columns"]` (the Answers table)."""
    names = {m.name for m in HEADLINE}
    extra = set(view.attrs.get("metric_columns", ()))
    return {c for c in view.columns if c.rsplit(" ", 1)[-1] in names or c in extra}


def best_values(view: pd.DataFrame) -> dict[str, float]:
    """Best value of each metric column over the rows shown: the highest, or the lowest for the columns a view
    names in `attrs["lower_is_better"]`; columns with no value are skipped."""
    lower = set(view.attrs.get("lower_is_better", ()))
    columns = [c for c in view.columns if c in _metric_set(view)]
    if not columns or not len(view):
        return {}
    # One NumPy pass over the block of metric columns: a pandas reduction per column cost a visitor's page after
    # each new row 15 ms on a board of 60 systems (three reductions each on 30 columns).
    values = view[columns].to_numpy(dtype=np.float64, na_value=np.nan)
    present = ~np.isnan(values).all(axis=0)
    with np.errstate(all="ignore"):
        highest, lowest = (
            np.nanmax(np.where(present, values, 0.0), axis=0),
            np.nanmin(np.where(present, values, 0.0), axis=0),
        )
    return {c: float(lowest[i] if c in lower else highest[i]) for i, c in enumerate(columns) if present[i]}


def _column_cells(
    name: str, values: list[Any], metric: bool, top: float | None, fmt: str | None = None
) -> tuple[list, list, list]:
    """(raw values, shown text, styles) of one column; blanks are None raw and "" shown."""
    raw = [None if v is None or v != v else v for v in values]  # NaN != NaN
    if metric:
        shown = ["" if v is None else f"{v:.3f}" for v in raw]
        styles = ["font-weight: bold" if v is not None and v == top else "" for v in raw]
        return raw, shown, styles
    if fmt is not None:
        shown = ["" if v is None else fmt.format(v) for v in raw]
    elif name == "size":
        shown = [format_size(v) for v in raw]
    else:
        shown = ["" if v is None else str(v) for v in raw]
    return raw, shown, [""] * len(raw)


def display(view: pd.DataFrame, rows: int | None = None, start: int = 0) -> dict[str, Any]:
    """The `gr.Dataframe` value: raw cells (sorting, the API), shown text and styles (3 decimals, best in bold).

    With `rows` (and `start`), only the rows `start` to `start + rows` are sent (one page of the table, or its
    first paint), still bolding the best of all of `view`. Built directly rather than through a pandas Styler,
    which costs ten times more on 1,000 rows; Gradio shows `display_value` and applies `styling` cell by cell,
    and keeps the raw value for sorting.
    """
    best, metrics, formats = best_values(view), _metric_set(view), view.attrs.get("formats", {})
    if rows or start:
        view = view.iloc[start : start + rows if rows else None]
    columns = [_column_cells(c, view[c].tolist(), c in metrics, best.get(c), formats.get(c)) for c in view.columns]
    if not len(view):
        return {"headers": list(view.columns), "data": [], "metadata": None}

    def rows(part: int) -> list[list[Any]]:
        return [list(r) for r in zip(*(col[part] for col in columns), strict=True)]

    return {"headers": list(view.columns), "data": rows(0), "metadata": {"display_value": rows(1), "styling": rows(2)}}
