"""The Leaderboard table as plain pandas: build, filter, sort and export (deep links: `deep_links`). `Filters` is
one state of the page's six filters (search, types, sizes, topic, sort, order), the one spelling of them that the
Leaderboard tab, its `/table` API and the deep links share.

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

After the measures come a model row's efficiency columns (`EFFICIENCY`, then `HARDWARE`), as the worker that
scored it measured them (`efficiency`); they are blank for rows nobody measured (runs, most baselines), and
never bold: faster is not better on its own, it is the trade-off the Plots tab shows.

Between the measures and the efficiency columns, a board whose snapshot holds embargoed questions shows each row's
live score (`leaderboard.live_scores`, read once per build with `Store.live_scores`): per headline measure the live
value (`live_column`) and its gap to the row's public average (`gap_column`, live minus public, so a model that does
worse on questions nobody could have trained on has a negative gap), both with two decimals as they are stored,
and a `LIVE_NOTE` with the intervals and the question count, or why there is no number (no access, too few
questions, an uploaded run ...). A board where no worker recorded a live score has none of these columns.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.atomic import atomic_path
from freshstack_hf.metrics import HEADLINE, Measure, topic_averages
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.pipeline.embargo import MIN_QUESTIONS
from leaderboard.live_release import HELD, LiveRelease
from leaderboard.live_scores import MEASURED, UPLOADED_RUN
from leaderboard.page.display import link_cell, sort_frame
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.records import LeaderboardRow, Score, SystemState

TYPES = {"baseline": "baseline", "run": "submitted run", "model": "submitted model"}
TRACK_LABELS = {"nano": " · nano"}  # the type of a row scored on the candidate pools says so (`systems.track`)
SIZE_BUCKETS = {"< 100M": (0, 1e8), "100M–1B": (1e8, 1e9), "1B–10B": (1e9, 1e10), "≥ 10B": (1e10, math.inf)}
UNKNOWN_SIZE = "unknown"
INFO = ["id", "system", "type"]
TAIL = ["size", "date", "link"]
RANK = "rank (95% CI)"  # the page's rank column (`rank_column`), after `INFO`, for the sorted measure
TOPIC_ALL = "all topics"  # the topic filter's value for the average and every topic's columns
_INTERNAL = ["_kind", "_params"]  # filter keys, dropped before display
# (id, name) of each headline measure, made once: a measure formats its name on every access, and a table of 1,000
# rows reads 30,000 cells.
_HEADLINE_NAMES = [(m.id, m.name) for m in HEADLINE]
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


def column(scope: str, measure: Measure) -> str:
    return f"{scope} {measure.name}"


def metric_columns(topics: Sequence[str], scope: str | None = None) -> list[str]:
    """The average's columns then each topic's; with `scope`, only that topic's (or the average's)."""
    scopes = [scope] if scope else [AVERAGE, *topics]
    return [column(s, m) for s in scopes for m in HEADLINE]


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


def _of_revision(row: LeaderboardRow, revision: str, jobs: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether `row` belongs on `revision`'s table: a scored row by the revision of its scores, one not scored yet
    by the revision its job was queued for; a row with neither on every revision's (what it is computed on is not
    known, and hiding a visitor's own submission would be worse)."""
    if row.scores:
        return row.dataset_revision in (None, revision)
    queued_for = (jobs.get(row.system.id) or {}).get("dataset_revision")
    return queued_for in (None, "", revision)


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


def size_bucket(params: float | None) -> str:
    if params is None or params != params:
        return UNKNOWN_SIZE
    return next((name for name, (low, high) in SIZE_BUCKETS.items() if low <= params < high), UNKNOWN_SIZE)


def filter_frame(
    frame: pd.DataFrame, *, search: str = "", types: Sequence[str] | None = None, sizes: Sequence[str] | None = None
) -> pd.DataFrame:
    """Name substring (case-insensitive), system kinds (keys of `TYPES`) and size buckets; None = no filter."""
    keep = pd.Series(True, index=frame.index)
    if search and search.strip():
        keep &= frame["system"].str.casefold().str.contains(search.strip().casefold(), regex=False)
    if types is not None:
        keep &= frame["_kind"].isin(list(types))
    if sizes is not None:
        keep &= frame["_params"].map(size_bucket).isin(list(sizes))
    return frame[keep]


def shown_rows(
    frame: pd.DataFrame,
    *,
    search: str = "",
    types: Sequence[str] | None = None,
    sizes: Sequence[str] | None = None,
    topic: str | None = None,
    sort: str | None = None,
    descending: bool = True,
    ranks: Callable[[str], Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """The rows and columns the page shows for one state of its controls: filtered, one scope, sorted.

    With `ranks` (`RankSource.cells`), a `RANK` column after the system's type holds each row's rank on the
    sorted column with its interval, computed over the whole board, so a filter hides rows but never re-ranks
    them; it is blank for a row without one and when the sort is not a measure.
    """
    view = view_frame(filter_frame(frame, search=search, types=types, sizes=sizes), topic)
    key = sort if sort in view.columns else default_sort(topic)
    if ranks is not None:
        cells = ranks(key)
        view = view.copy()
        view.insert(len(INFO), RANK, [cells.get(k, "") for k in view["id"]])
    return sort_frame(view, key, descending=descending)


@dataclass(frozen=True, slots=True)
class Filters:
    """One state of the table's six filters, as the page's controls hold them (in this order, `names()`): a name
    substring, the kinds and size buckets kept (None: all), the topic (`TOPIC_ALL` or empty: every topic), the sort
    column (an unknown one: the default sort) and the order (`asc`, else descending)."""

    search: str = ""
    types: tuple[str, ...] | None = None
    sizes: tuple[str, ...] | None = None
    topic: str = ""
    sort: str | None = None
    order: str = "desc"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(
        cls,
        search: str | None,
        types: Sequence[str] | None,
        sizes: Sequence[str] | None,
        topic: str | None,
        sort: Any,
        order: Any,
    ) -> Filters:
        """The filters of the controls' values, as Gradio passes them (lists, or None for a box left out)."""
        chosen = [None if picked is None else tuple(picked) for picked in (types, sizes)]
        return cls(search or "", chosen[0], chosen[1], topic or "", sort, order)

    @property
    def scope(self) -> str | None:
        """The one topic whose columns are shown, or None for the average and every topic's."""
        return None if self.topic in ("", TOPIC_ALL) else self.topic

    @property
    def descending(self) -> bool:
        return self.order != "asc"

    def key(self) -> tuple[Any, ...]:
        """The filters as a cache key (`StoreFrame.view`): the same view, however it was asked."""
        return (self.search, self.types, self.sizes, self.topic, self.sort, self.order)

    def rows(self, frame: pd.DataFrame, ranks: Callable[[str], Mapping[str, str]] | None = None) -> pd.DataFrame:
        """The rows and columns these filters show of `frame` (`shown_rows`)."""
        options = {"search": self.search, "types": self.types, "sizes": self.sizes, "topic": self.scope}
        return shown_rows(frame, **options, sort=self.sort, descending=self.descending, ranks=ranks)


def view_frame(frame: pd.DataFrame, topic: str | None = None) -> pd.DataFrame:
    """The displayed columns: all scopes, or one topic's (a `?topic=` view); internal columns dropped."""
    topics = frame.attrs.get("topics", [])
    live = [c for c in live_columns() if c in frame.columns]
    return frame[[*INFO, *metric_columns(topics, topic), *live, *EFFICIENCY_COLUMNS, *TAIL]]


def default_sort(topic: str | None = None) -> str:
    return column(topic or AVERAGE, HEADLINE[0])


def sort_choices(topics: Sequence[str], topic: str | None = None) -> list[str]:
    return [*metric_columns(topics, topic), *EFFICIENCY, "system", "size", "date"]


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
