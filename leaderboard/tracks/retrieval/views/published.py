"""Figures published elsewhere (the official FreshStack leaderboard): read from their file, shown in their own view.

These numbers were not computed here: they come from a file the operator passes with `--reported PATH`
(the FreshStack leaderboard's JSON, e.g. its oct-2024 figures) and are kept in memory only, never written to
the store, so they can never be mistaken for, or deduplicated against, a submission. They were computed by
others on another release of the dataset, so they are not comparable row by row with the systems scored here:
the page shows them only in their own tab (`REFERENCE_TAB`), under a heading that names `SOURCE` and says so.

`load_reported` reads the file's systems (sizes such as "9B", "434M" or "-" become parameter counts through
`parse_size`, so they sort with the computed rows); `reference_frame` makes the tab's table: one row per
published system, the average (the file's own published average where it gives one, else the plain mean of the
file's topics, and the `average from` column says which), each of the file's topics, size, date and link.
Plain pandas, shown with the page's `display` (three decimals, best of each column in bold), tested without Gradio.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, parse_measure, topic_average
from leaderboard.page.display import link_cell, sort_frame
from leaderboard.sanitize import MAX_NAME, sanitize_link, sanitize_text
from leaderboard.tracks.retrieval.tables.table_columns import AVERAGE, column, metric_columns

REFERENCE_TAB = "Reference (published)"
SOURCE = "FreshStack paper (Thakur et al., 2025, arXiv:2504.13128) / https://fresh-stack.github.io"
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_KEY_RE = re.compile(r"^(.+?)_(\d+)$")  # the file's measure keys: alpha_ndcg_10, coverage_20, recall_50
PUBLISHED = "published"  # an average cell is the file's own figure ...
MEAN_OF_TOPICS = "mean of topics"  # ... or the plain mean of the file's topics
AVERAGE_FROM = "average from"  # the column saying which


def parse_size(text: str | int | float | None) -> int | None:
    """Parameters from "9B", "434M", "1.5B" or a number; None for "-", "" or anything unreadable."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return int(text) if text > 0 else None
    match = _SIZE_RE.match(text)
    if not match:
        return None
    return int(float(match.group(1)) * _SCALE[match.group(2).lower()]) or None


@dataclass(frozen=True, slots=True)
class ReportedSystem:
    """One published row: its figures per topic (`scores[topic][measure id]`) and the info the file gives."""

    key: str  # "r1", "r2", ... in file order: ids that cannot collide with the store's integer ids
    name: str
    size: int | None
    size_text: str
    category: str  # the file's own type: open_source, proprietary, upper_baseline
    date: str
    link: str | None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


def _measure_id(key: str) -> str:
    match = _KEY_RE.match(key)
    return parse_measure(f"{match.group(1)}@{match.group(2)}" if match else key).id


def load_reported(path: str | Path) -> list[ReportedSystem]:
    """Read the official leaderboard JSON (`{"leaderboardData": [{"info": ..., "datasets": ...}]}`).

    The file's own "average" entry is not among the topics' scores: `published_averages` reads it for the
    reference view.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FreshStackError(f"--reported {path}: file not found") from None
    except (OSError, ValueError) as exc:
        raise FreshStackError(f"--reported {path}: not a readable JSON file ({exc})") from None
    entries = data.get("leaderboardData") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise FreshStackError(f"{path}: expected a list under 'leaderboardData' (the official leaderboard JSON)")
    systems = []
    for i, entry in enumerate(entries):
        where = f"{path} entry {i}"
        try:
            info, datasets = entry["info"], entry["datasets"]
            scores = {
                str(topic).lower(): {_measure_id(k): float(v) for k, v in values.items()}
                for topic, values in datasets.items()
                if topic != "average"
            }
            link = info.get("link") or None
            systems.append(
                ReportedSystem(
                    key=f"r{i + 1}",
                    name=sanitize_text(info["name"], MAX_NAME),
                    size=parse_size(str(info.get("size", ""))),
                    size_text=str(info.get("size", "")),
                    category=sanitize_text(info.get("type", ""), 40),
                    date=sanitize_text(info.get("date", ""), 20),
                    link=sanitize_link(link) if link else None,
                    scores=scores,
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError, FreshStackError) as exc:
            raise FreshStackError(f"{where}: {exc!s}; expected info{{name,size,type,date,link}} and datasets") from exc
    return systems


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
        record.update(size=r.size, date=r.date, link=link_cell(r.link))
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
