"""The live columns of the Leaderboard table, on a board whose snapshot holds embargoed questions.

Between the measures and the efficiency columns, each row's live score (`leaderboard.live_scores`, read once per
build with `Store.live_scores`): per headline measure the live value (`live_column`) and its gap to the row's public
average (`gap_column`, live minus public, so a model that does worse on questions nobody could have trained on has
a negative gap), both with two decimals as they are stored, and a `LIVE_NOTE` with the intervals and the question
count, or why there is no number (no access, too few questions, an uploaded run ...). A board where no worker
recorded a live score has none of these columns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.metrics import HEADLINE, Measure
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.pipeline.embargo import MIN_QUESTIONS
from leaderboard.live_release import HELD
from leaderboard.live_scores import MEASURED, UPLOADED_RUN
from leaderboard.tracks.retrieval.tables.table_columns import column

LIVE_NOTE = "live note"
LIVE_LEGEND = (
    "**… live**: the score on the snapshot's embargoed questions (private until their embargo ends, so no model "
    "was trained on them), measured by a worker, rounded to two decimals over at least 10 questions of each topic "
    "counted; **… gap**: live minus the public average; **live note**: the 95% intervals and the question count, "
    "or why there is no live score yet (held until the embargo ends, so that no crafted model can read the private "
    "questions back through it) or at all (an uploaded run cannot be scored live: its queries are private)"
)


def live_column(measure: Measure) -> str:
    """The live value's column: the measure's name first, so no reader takes it for a topic's measure column."""
    return f"{measure.name} live"


def gap_column(measure: Measure) -> str:
    return f"{measure.name} gap"


def live_columns() -> list[str]:
    return [*(live_column(m) for m in HEADLINE), *(gap_column(m) for m in HEADLINE), LIVE_NOTE]


def add_live_columns(frame: pd.DataFrame, live: Mapping[int, Mapping[str, Any]]) -> pd.DataFrame:
    """`frame` with the live columns (module docstring) when a row has a record a worker stored; unchanged when
    the only records are the uploaded runs' reason (nothing was scored live on this board)."""
    found = [live.get(int(key)) if str(key).isdigit() else None for key in frame["id"]]
    if not any(record and record.get("status") != UPLOADED_RUN[0] for record in found):
        return frame
    measured = [record if record and record.get("status") == MEASURED else None for record in found]
    for m in HEADLINE:
        values = np.array([_live_value(record, m.id, "value") for record in measured], dtype="float64")
        frame[live_column(m)] = values
        frame[gap_column(m)] = np.round(values - frame[column(AVERAGE, m)].to_numpy(dtype="float64"), 2)
    frame[LIVE_NOTE] = [live_note(record) for record in found]
    formats = {live_column(m): "{:.2f}" for m in HEADLINE} | {gap_column(m): "{:+.2f}" for m in HEADLINE}
    frame.attrs["formats"] = {**frame.attrs.get("formats", {}), **formats}
    return frame


def _live_value(record: Mapping[str, Any] | None, measure: str, key: str) -> float:
    value = ((record or {}).get("measures") or {}).get(measure, {}).get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def live_note(record: Mapping[str, Any] | None) -> str:
    """The live note of one row: a measured record's intervals (in the measures' order), question count and the
    topics it left out, or the record's own message (a held record's too); blank for a row with no record."""
    if not record:
        return ""
    if record.get("status") != MEASURED:
        held = left_out_note(record) if record.get("status") == HELD else ""  # too_few's message names its counts
        return str(record.get("message") or "") + held
    spans = []
    for m in HEADLINE:
        low, high = _live_value(record, m.id, "ci_low"), _live_value(record, m.id, "ci_high")
        spans.append("n/a" if math.isnan(low) or math.isnan(high) else f"{low:.2f}–{high:.2f}")
    note = f"95% CI {' · '.join(spans)} · {record.get('questions', 0)} questions"
    return note + left_out_note(record)


def left_out_note(record: Mapping[str, Any]) -> str:
    """What a live record left out: each topic with fewer embargoed questions than the floor (`live_scores`), so a
    reader knows the live value is not every topic's."""
    left = record.get("left_out") or {}
    if not isinstance(left, Mapping) or not left:
        return ""
    counts = ", ".join(f"{name} ({count})" for name, count in left.items())
    return f" · left out (under {MIN_QUESTIONS} questions): {counts}"
