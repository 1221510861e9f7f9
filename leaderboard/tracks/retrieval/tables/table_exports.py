"""The Leaderboard table's downloads: the CSV and JSON of the rows shown, at full precision (`export_files`).

A number read back from a download is the double the board holds: the JSON is written with each float's shortest
repr, not pandas' rounding; a name a spreadsheet would run as a formula is quoted in the CSV, and the link column
holds the plain URL.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.atomic import atomic_path
from freshstack_hf.metrics import HEADLINE


def full_precision_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """`frame`'s rows as JSON-ready dicts with every float as it is: `json` writes a float's shortest repr, which
    reads back as the same double (pandas' `to_json` rounds to 10 decimals, 15 at most); a missing cell is None,
    a timestamp its ISO text."""
    columns = [str(c) for c in frame.columns]
    return [dict(zip(columns, map(_json_value, row), strict=True)) for row in frame.itertuples(False, None)]


def _json_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def export_files(
    view: pd.DataFrame,
    directory: str | Path | None = None,
    *,
    snapshot: str | None = None,
    dataset_revision: str | None = None,
) -> tuple[Path, Path]:
    """CSV and JSON of the rows shown, full precision; names hash the content, so repeats reuse the files.

    With `snapshot` (the published snapshot's name, e.g. a date), every row names it in a last `snapshot` column
    and the JSON names it (and the content revision `dataset_revision`) at its top: a file read later, or two
    snapshots' files side by side, still say which data their numbers describe."""
    out = view.drop(columns=["link"]).assign(link=[_plain_link(v) for v in view["link"]])
    if snapshot is not None:
        out = out.assign(snapshot=snapshot)
    csv_text = out.assign(**{c: out[c].map(_no_formula) for c in ("system", "type")}).to_csv(index=False)
    records = full_precision_records(out)
    measures = {m.name: m.description for m in HEADLINE}
    named = {"snapshot": snapshot, "dataset_revision": dataset_revision} if snapshot is not None else {}
    body = {**named, "measures": measures, "average": "plain mean of topics", "rows": records}
    payload = json.dumps(body, indent=1)
    folder = Path(directory or Path(tempfile.gettempdir()) / "freshstack-leaderboard")
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(csv_text.encode()).hexdigest()[:16]
    paths = folder / f"freshstack-leaderboard-{digest}.csv", folder / f"freshstack-leaderboard-{digest}.json"
    for path, text in zip(paths, (csv_text, payload), strict=True):
        if not path.exists():
            with atomic_path(path) as tmp:
                tmp.write_text(text, encoding="utf-8")
    return paths


def _no_formula(text: str) -> str:
    """A name a spreadsheet would run as a formula (=, +, -, @ first) gets a leading quote, in CSV only."""
    return "'" + text if isinstance(text, str) and text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _plain_link(cell: str) -> str:
    """The URL back out of a `[host](url)` cell, for exports."""
    if not cell or "](" not in cell:
        return ""
    return cell.rsplit("](", 1)[1][:-1].replace("%28", "(").replace("%29", ")")
