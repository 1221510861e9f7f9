"""The Answers table (the RAG track): one row per answers system, one column per answer measure and scope.

Built the way the retrieval track builds the Leaderboard table, and shown through `leaderboard.page.display` (3
decimals, best of each column in bold): the view names its metric columns and the lower-is-better ones (the
unjudged share) in `attrs`, so nothing of the formatting is copied here. Columns are the answer measures
(`ANSWER_MEASURES`, names from that one table) for the average and for each topic; the average is `topic_average`
of the dataset's topics, so a system answering fewer topics has none. Judge measures stay blank until the worker
has judged the answers (the row says `queued` meanwhile). Rows scored on another dataset revision are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from freshstack_hf.answers.measures import ALL, ANSWER_MEASURES, BY_ID, CITATION_RECALL, AnswerMeasure
from freshstack_hf.metrics import topic_average
from freshstack_hf.metrics.score_table import AVERAGE
from leaderboard.page.display import datatypes, display, link_cell, sort_frame
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.records import LeaderboardRow, SystemState
from leaderboard.tracks.answers import SYSTEM_KIND
from leaderboard.tracks.answers.answer_rows import BASELINE_PREFIX, measure_key

INFO = ["id", "system", "type"]
TAIL = ["date", "link"]


def column(scope: str, measure: AnswerMeasure) -> str:
    return f"{scope} {measure.name}"


def metric_columns(topics: Sequence[str]) -> list[str]:
    return [column(s, m) for s in (AVERAGE, *topics) for m in ANSWER_MEASURES]


def build_answers_frame(
    rows: Sequence[LeaderboardRow], topics: Sequence[str], *, revision: str | None = None
) -> pd.DataFrame:
    """Every answers system, unsorted; values are floats at full precision (NaN where absent)."""
    records: list[dict[str, Any]] = []
    for row in rows:
        system = row.system
        stale = row.scores and revision is not None and row.dataset_revision not in (None, revision)
        if system.kind != SYSTEM_KIND or stale:
            continue
        label = "baseline" if system.content_hash.startswith(BASELINE_PREFIX) else "submitted answers"
        if system.status != SystemState.SCORED:
            label += f" ({system.status})"
        record: dict[str, Any] = {
            "id": str(system.id),
            "system": system.name,
            "type": label,
            "date": system.created_at.strftime("%Y-%m-%d") if system.created_at else "",
            "link": link_cell(system.link),
        }
        for m in ANSWER_MEASURES:
            by_topic = {t: s[measure_key(m.id)].value for t, s in row.scores.items() if measure_key(m.id) in s}
            for t in topics:
                record[column(t, m)] = by_topic.get(t)
            record[column(AVERAGE, m)] = topic_average(by_topic, topics)
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=[*INFO, *metric_columns(topics), *TAIL])
    for name in metric_columns(topics):
        frame[name] = frame[name].astype("float64")
    return _with_attrs(frame, topics)


def _with_attrs(frame: pd.DataFrame, topics: Sequence[str]) -> pd.DataFrame:
    """What `leaderboard.page.display` reads to format and bold the answer columns."""
    frame.attrs["topics"] = list(topics)
    frame.attrs["metric_columns"] = metric_columns(topics)
    frame.attrs["lower_is_better"] = [
        column(s, m) for s in (AVERAGE, *topics) for m in ANSWER_MEASURES if not m.higher_is_better
    ]
    return frame


def sorted_view(frame: pd.DataFrame) -> pd.DataFrame:
    """Best first: by the average All where any row has it (judged), else by the average citation recall."""
    topics = frame.attrs.get("topics", [])
    by_all, by_recall = column(AVERAGE, BY_ID[ALL]), column(AVERAGE, BY_ID[CITATION_RECALL])
    key = by_all if frame[by_all].notna().any() else by_recall
    view = sort_frame(frame, key, descending=True)
    return _with_attrs(view.copy(), topics)


def legend() -> str:
    """One line per measure, for the page (names and meanings from the measure table)."""
    return " · ".join(f"**{m.name}**: {m.description}" for m in ANSWER_MEASURES)


class AnswersSource(StoreFrame):
    """The Answers table from the store, rebuilt only when the store's change marker moves."""

    def __init__(self, store: Any, topics: Sequence[str], revision: str | None) -> None:
        keys = tuple(measure_key(m.id) for m in ANSWER_MEASURES)
        super().__init__(
            store,
            lambda s: build_answers_frame(
                s.leaderboard_rows(kinds=(SYSTEM_KIND,), measures=keys), topics, revision=revision
            ),
        )

    def display(self) -> dict[str, Any]:
        """The `gr.Dataframe` value: sorted, 3 decimals, best in bold (`leaderboard.page.display`); formatted
        once per store state, however many pages load at once."""
        return self.view("display", lambda frame: display(sorted_view(frame)))

    def datatypes(self) -> list[str]:
        return self.view("datatypes", lambda frame: datatypes(sorted_view(frame)))
