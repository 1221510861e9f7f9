"""A model row's efficiency columns in the Leaderboard table (`EFFICIENCY`, then `HARDWARE`), after the measures, as
the worker that scored it measured them (`tracks.retrieval.jobs.efficiency`).

They are blank for rows nobody measured (runs, most baselines), and never bold: faster is not better on its own, it
is the trade-off the Plots tab shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# Efficiency columns: name -> (key in the recorded `efficiency`, scale, how the page shows it). Short names,
# explained under the table (`EFFICIENCY_LEGEND`): the table already has 3 + 15 measure columns.
EFFICIENCY = {
    "docs/s": ("docs_per_second", 1.0, "{:,.1f}"),
    "query ms": ("query_latency_ms", 1.0, "{:,.1f}"),
    "dim": ("embedding_dim", 1.0, "{:,.0f}"),
    "index MB": ("index_bytes", 1e-6, "{:,.1f}"),
}
HARDWARE = "hardware"
EFFICIENCY_COLUMNS = [*EFFICIENCY, HARDWARE]
EFFICIENCY_LEGEND = (
    "**docs/s**: corpus documents encoded per second; **query ms**: median time to encode one query; **dim**: "
    "embedding dimension; **index MB**: the float32 vectors of every document; **hardware**: where the worker "
    "measured them (model rows only)"
)


def efficiency_cells(cost: Mapping[str, Any] | None) -> dict[str, Any]:
    """The efficiency columns of one row from its recorded `efficiency` (none: no cells, i.e. blanks)."""
    if not cost:
        return {}
    cells: dict[str, Any] = {}
    for name, (key, scale, _) in EFFICIENCY.items():
        value = cost.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            cells[name] = value * scale
    if isinstance(cost.get("hardware"), str) and cost["hardware"].strip():
        cells[HARDWARE] = cost["hardware"].strip()
    return cells
