"""The Leaderboard table as plain pandas: every row and column, built once per store state (`build_frame`,
`BoardSource`); what the page shows of it is `table_filters`', its downloads `table_exports`', its columns' names
`table_columns`'.

One row per system computed on the served dataset: stored systems (baselines, submitted runs and models,
whatever their state). Figures published elsewhere never enter this table: `published` gives them
their own view. Columns are the headline measures for the average and for each topic, named from the one
measure table (`freshstack_hf.metrics.HEADLINE`). The average is the plain mean of the dataset's topics, and
only a row scored on every one of them has one: an average over fewer topics would not be comparable.
Rows scored on another dataset revision are left out, since their numbers describe other data; a row not scored yet
(queued, running, failed) belongs to the revision its job names (a model submitted again on a newer snapshot by
`tracks.retrieval.jobs.remeasure` shows on that snapshot's table only), and one without a job everywhere, as before.

Values stay floats at full precision (exports, sorting); the page shows them with 3 decimals and the best of
each column in bold (`leaderboard.page.display`), so no markup is ever built from stored text. Names stay plain
text cells; the only Markdown cell is the link, built from an already validated http(s) URL.

After the measures come a model row's efficiency columns (`table_efficiency`), and on a board whose snapshot holds
embargoed questions, before them, each row's live score (`table_live`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from freshstack_hf.metrics import HEADLINE, topic_averages
from freshstack_hf.metrics.score_table import AVERAGE
from leaderboard.live_release import LiveRelease
from leaderboard.page.display import link_cell
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.records import LeaderboardRow, Score, SystemState
from leaderboard.tracks.retrieval.tables.table_columns import INFO, TAIL, TRACK_LABELS, TYPES, column, metric_columns
from leaderboard.tracks.retrieval.tables.table_efficiency import EFFICIENCY, EFFICIENCY_COLUMNS, efficiency_cells
from leaderboard.tracks.retrieval.tables.table_live import add_live_columns

_INTERNAL = ["_kind", "_params"]  # filter keys, dropped before display
# (id, name) of each headline measure, made once: a measure formats its name on every access, and a table of 1,000
# rows reads 30,000 cells.
_HEADLINE_NAMES = [(m.id, m.name) for m in HEADLINE]


def build_frame(
    rows: Sequence[LeaderboardRow],
    topics: Sequence[str],
    *,
    revision: str | None = None,
    types: Mapping[str, str] = TYPES,
    extra: Sequence[dict[str, Any]] = (),
    jobs: Mapping[int, Mapping[str, Any]] | None = None,
    live: Mapping[int, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Every row and column, unfiltered and unsorted; the topic columns are the dataset's `topics` only.

    `types` (kind -> shown type) are the kinds of this table: the Reranking tab builds its own table of the
    reranking kinds the same way; `extra` are rows that are no stored system (`row_record`s: its reference line).
    `jobs` (system id -> its first job's payload, `Queue.first_payloads`) place the rows not scored yet on their
    job's revision (see the module docstring). `live` (system id -> its live record, `Store.live_scores`) adds the
    live columns when a worker recorded any (`add_live_columns`).
    """
    records: list[dict[str, Any]] = list(extra)
    for row in rows:
        system = row.system
        if revision is not None and not _of_revision(row, revision, jobs or {}):
            continue
        if system.kind not in types:  # only what was computed here (a "reported" kind never reaches the store)
            continue
        label = types[system.kind]
        if system.track in TRACK_LABELS:
            label += TRACK_LABELS[system.track]
        if system.status != SystemState.SCORED:
            label += f" ({system.status})"
        scores = score_cells(row.scores)
        date = system.created_at.strftime("%Y-%m-%d") if system.created_at else ""
        record = row_record(str(system.id), system.name, system.kind, label, scores, system.size, date, system.link)
        records.append(record | efficiency_cells(row.efficiency))
    columns = [*INFO, *metric_columns(topics), *EFFICIENCY_COLUMNS, *TAIL, *_INTERNAL]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for name in [*metric_columns(topics), *EFFICIENCY]:
        frame[name] = frame[name].astype("float64")
    frame["size"] = frame["size"].astype("float64")
    # The average over the dataset's topics, NaN unless the row has every one of them (the module's rule).
    for m in HEADLINE:
        matrix = frame[[column(t, m) for t in topics]].to_numpy(dtype="float64")
        frame[column(AVERAGE, m)] = topic_averages(matrix)
    frame.attrs["topics"] = list(topics)
    frame.attrs["formats"] = {name: fmt for name, (_, _, fmt) in EFFICIENCY.items()}  # `leaderboard.page.display`
    return add_live_columns(frame, live or {})


def _of_revision(row: LeaderboardRow, revision: str, jobs: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether `row` belongs on `revision`'s table: a scored row by the revision of its scores, one not scored yet
    by the revision its job was queued for; a row with neither on every revision's (what it is computed on is not
    known, and hiding a visitor's own submission would be worse)."""
    if row.scores:
        return row.dataset_revision in (None, revision)
    queued_for = (jobs.get(row.system.id) or {}).get("dataset_revision")
    return queued_for in (None, "", revision)


def score_cells(scores: Mapping[str, Mapping[str, float | Score]]) -> dict[str, float]:
    """`{topic: {measure id: value or stored Score}}` as the table's cells (`{column: value}`, named as `column`
    names them), the headline measures kept."""
    return {
        f"{topic} {name}": getattr(by[key], "value", by[key])
        for topic, by in scores.items()
        for key, name in _HEADLINE_NAMES
        if key in by
    }


def row_record(
    key: str,
    name: str,
    kind: str,
    label: str,
    scores: Mapping[str, float],
    size: float | None,
    date: str,
    link: str | None,
) -> dict[str, Any]:
    """One row of the table before its averages; `scores` are its measure cells (`{column: value}`, see
    `score_cells`)."""
    record = {
        "id": key,
        "system": name,
        "type": label,
        "size": size,
        "date": date,
        "link": link_cell(link),
        "_kind": kind,
        "_params": size,
    }
    return record | dict(scores)  # {column: value} of the measures the row has


class BoardSource(StoreFrame):
    """The full retrieval board (`build_frame` of the headline measures) for one dataset revision; its live columns
    as `live` releases them (`leaderboard.live_release`; None: the snapshot has no embargo, so no live column)."""

    def __init__(self, store: Any, topics: Sequence[str], revision: str | None, live: LiveRelease | None = None):
        measures = tuple(m.id for m in HEADLINE)

        def build(s: Any) -> pd.DataFrame:
            rows = s.leaderboard_rows(measures=measures, efficiency=True)
            # The jobs' payloads only place rows not scored yet: one query saved on a board where every row is done.
            pending = revision is not None and any(not row.scores for row in rows)
            jobs = s.queue.first_payloads() if pending else None
            records = live.records(s, revision) if live is not None else None
            return build_frame(rows, topics, revision=revision, jobs=jobs, live=records)

        super().__init__(store, build, depends=live.marker if live is not None else None)
