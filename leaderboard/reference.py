"""The published figures' own view: one table of the official leaderboard's rows, never mixed with ours.

The figures passed with `--reported PATH` were computed by others on another release of the dataset, so they
are not comparable row by row with the systems scored here; the app shows them only in their own tab
(`REFERENCE_TAB`), under a heading that names the source and says so. One row per published system: the
average (the file's own published average where it gives one, else the plain mean of the file's topics,
and the `average from` column says which), each of the file's topics, size, date and link. Plain pandas,
shown with the main table's `display` (three decimals, best of each column in bold), tested without Gradio.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, topic_average
from leaderboard.reported import REFERENCE_TAB, SOURCE, ReportedSystem, _measure_id, load_reported
from leaderboard.table import AVERAGE, _link_cell, column, metric_columns, sort_frame

PUBLISHED = "published"
MEAN_OF_TOPICS = "mean of topics"
AVERAGE_FROM = "average from"


def heading() -> str:
    """The tab's Markdown heading: the source, and one line on why these rows stand apart."""
    return (
        f"### {REFERENCE_TAB}\nSource: {SOURCE}.\n\n"
        "These figures were not computed here: they were published for another release of the dataset, "
        "so they are not comparable row by row with the Leaderboard tab."
    )


def published_averages(path: str | Path) -> dict[str, dict[str, float]]:
    """The file's own "average" entry per system, keyed like `load_reported` ("r1", ...) by measure id.

    Systems without one are absent; unreadable values are skipped (the view then falls back to the mean).
    Call after `load_reported`, which has already refused a malformed file with a clear message.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    entries = data.get("leaderboardData") if isinstance(data, dict) else data
    out: dict[str, dict[str, float]] = {}
    for i, entry in enumerate(entries or []):
        average = (entry.get("datasets") or {}).get("average") if isinstance(entry, dict) else None
        if not isinstance(average, Mapping):
            continue
        values = {}
        for key, value in average.items():
            try:
                values[_measure_id(str(key))] = float(value)
            except (FreshStackError, TypeError, ValueError):  # an unknown measure key or a non-number
                continue
        if values:
            out[f"r{i + 1}"] = values
    return out


def reference_topics(systems: Sequence[ReportedSystem]) -> list[str]:
    """The file's topics, in the order they first appear."""
    return list(dict.fromkeys(t for r in systems for t in r.scores))


def reference_frame(
    systems: Sequence[ReportedSystem], averages: Mapping[str, Mapping[str, float]] | None = None
) -> pd.DataFrame:
    """One row per published system, best published average α-nDCG@10 first; full-precision floats.

    An average cell is the file's published value for that measure when it has one, else the plain mean of
    the file's topics (blank when the system lacks one of them); `average from` tells which, per row.
    """
    averages = averages or {}
    topics = reference_topics(systems)
    records: list[dict[str, Any]] = []
    for r in systems:
        record: dict[str, Any] = {"system": r.name}
        published = averages.get(r.key, {})
        sources = []
        for m in HEADLINE:
            if m.id in published:
                record[column(AVERAGE, m)] = published[m.id]
                sources.append(PUBLISHED)
            else:
                values = {t: v for t in topics if (v := r.scores.get(t, {}).get(m.id)) is not None}
                record[column(AVERAGE, m)] = topic_average(values, topics)
                sources.append(MEAN_OF_TOPICS)
        record[AVERAGE_FROM] = _label(sources)
        for t, by_measure in r.scores.items():
            for m in HEADLINE:
                if m.id in by_measure:
                    record[column(t, m)] = by_measure[m.id]
        record.update(size=r.size, date=r.date, link=_link_cell(r.link))
        records.append(record)
    metrics = metric_columns(topics)
    columns = ["system", *metrics[: len(HEADLINE)], AVERAGE_FROM, *metrics[len(HEADLINE) :], "size", "date", "link"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for name in [*metrics, "size"]:
        frame[name] = frame[name].astype("float64")
    frame = sort_frame(frame.assign(id=range(len(frame))), column(AVERAGE, HEADLINE[0])).drop(columns="id")
    frame = frame.reset_index(drop=True)
    frame.attrs["topics"] = topics
    return frame


def _label(sources: list[str]) -> str:
    if all(s == PUBLISHED for s in sources):
        return PUBLISHED
    if all(s == MEAN_OF_TOPICS for s in sources):
        return MEAN_OF_TOPICS
    means = [m.name for m, s in zip(HEADLINE, sources, strict=True) if s == MEAN_OF_TOPICS]
    return f"{PUBLISHED}; {MEAN_OF_TOPICS} for {', '.join(means)}"


def load_reference(path: str | Path) -> pd.DataFrame:
    """The reference frame of the official leaderboard JSON at `path` (refused with `FreshStackError` if bad)."""
    systems = load_reported(path)
    return reference_frame(systems, published_averages(path))
