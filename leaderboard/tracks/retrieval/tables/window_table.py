"""The After-cutoff table: every system scored only on the questions asked after its own cutoff date.

A model may have been trained on the Stack Overflow questions asked before its release or training cutoff, so
this view scores each system with a cutoff (`systems.cutoff`, from the Submit tab, the submit API or a model
card) on the questions of each topic asked strictly after that day (`freshstack_hf.windows` has the rule), and
says on how many questions, per topic and in all. Nothing is re-scored: every measure is a mean of per-query
values, so the window's value is the mean of the stored per-query scores of the questions in it
(`window_result`). Systems without a cutoff keep their scores on all questions, marked as such. The average is
the plain mean of the topics, as on the main board (none where a topic has no value, e.g. no question in the
window); rows scored on another dataset revision, or not computed here, are left out as there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

import pandas as pd

from freshstack_hf.metrics import HEADLINE, topic_averages
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.windows import Window, window_result
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.records import SystemRecord, SystemState
from leaderboard.tracks.retrieval.tables.table_columns import TYPES, column

ALL_QUESTIONS = "none: all questions"  # the cutoff cell of a system without one
TOTAL = "questions (all topics)"
INFO = ["id", "system", "type", "cutoff"]


def questions_column(topic: str) -> str:
    return f"{topic} questions"


def window_columns(topics: Sequence[str]) -> list[str]:
    """The average's measures and question total, then each topic's measures and question count."""
    cols = [*(column(AVERAGE, m) for m in HEADLINE), TOTAL]
    for t in topics:
        cols += [*(column(t, m) for m in HEADLINE), questions_column(t)]
    return cols


def build_window_frame(
    systems: Sequence[SystemRecord],
    scores: Sequence[tuple[int, str, str, str, float, Any]],
    topics: Sequence[str],
    windows: Callable[[str, date], Window],
    judged: Callable[[str], int],
    *,
    revision: str | None = None,
) -> pd.DataFrame:
    """One row per scored system: `scores` are `Store.per_query_scores` rows, `windows(topic, day)` a topic's
    window (`Dataset.window`), `judged(topic)` its judged-question count (a row without a cutoff's count)."""
    by_system: dict[int, dict[str, dict[str, tuple[float, Any]]]] = {}
    for sid, topic, measure, rev, value, per_query in scores:
        if revision is None or rev == revision:
            by_system.setdefault(sid, {}).setdefault(topic, {})[measure] = (value, per_query)
    records = []
    for system in systems:
        stored = by_system.get(system.id)
        if system.kind not in TYPES or system.status != SystemState.SCORED or not stored:
            continue
        day = date.fromisoformat(system.cutoff) if system.cutoff else None
        record: dict[str, Any] = {
            "id": str(system.id),
            "system": system.name,
            "type": TYPES[system.kind],
            "cutoff": system.cutoff or ALL_QUESTIONS,
        }
        for topic in topics:
            values, count = _topic_values(stored.get(topic), day, lambda d, t=topic: windows(t, d), judged(topic))
            record[questions_column(topic)] = count
            record.update({column(topic, m): values.get(m.id) for m in HEADLINE})
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=[*INFO, *window_columns(topics)])
    counts = [questions_column(t) for t in topics]
    frame[counts] = frame[counts].astype("Int64")
    frame[TOTAL] = frame[counts].sum(axis=1, min_count=1).astype("Int64") if topics else pd.NA
    for m in HEADLINE:
        for t in topics:
            frame[column(t, m)] = frame[column(t, m)].astype("float64")
        frame[column(AVERAGE, m)] = topic_averages(frame[[column(t, m) for t in topics]].to_numpy(dtype="float64"))
    frame.attrs["topics"] = list(topics)
    return frame.sort_values([column(AVERAGE, HEADLINE[0]), "id"], ascending=[False, True], na_position="last")


def _topic_values(
    stored: dict[str, tuple[float, Any]] | None, day: date | None, window: Callable[[date], Window], judged: int
) -> tuple[dict[str, float], int | None]:
    """A topic's headline values and question count: all questions without a cutoff, else the window's."""
    if not stored:
        return {}, None
    if day is None:
        return {m: value for m, (value, _) in stored.items()}, judged
    per_query: dict[str, dict[str, float]] = {}
    for measure, (_, by_query) in stored.items():
        for qid, value in (by_query or {}).items():
            per_query.setdefault(qid, {})[measure] = value
    if not per_query:  # stored without per-query scores: no window can be taken
        return {}, None
    result = window_result(per_query, window(day).query_ids)
    return result.metrics, len(result.per_query)


class WindowSource(StoreFrame):
    """The After-cutoff frame for one dataset (its windows and revision), rebuilt when the store changes."""

    def __init__(self, store: Any, dataset: Any):
        measures = tuple(m.id for m in HEADLINE)

        def build(s: Any) -> pd.DataFrame:
            systems = [row.system for row in s.leaderboard_rows(measures=measures)]
            judged = {t: len(dataset.qrels(t)) for t in dataset.topics}
            return build_window_frame(
                systems,
                s.per_query_scores(measures),
                dataset.topics,
                dataset.window,
                judged.__getitem__,
                revision=dataset.revision,
            )

        super().__init__(store, build)
