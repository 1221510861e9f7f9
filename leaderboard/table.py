"""The leaderboard table as plain pandas: build, filter, sort, mark the best values, export, read deep links.

One row per system computed on the served dataset: stored systems (baselines, submitted runs and models,
whatever their state). Figures published elsewhere never enter this table: `leaderboard.reference` gives them
their own view. Columns are the headline measures for the average and for each topic, named from the one
measure table (`freshstack_hf.metrics.HEADLINE`). The average is the plain mean of the dataset's topics, and
only a row scored on every one of them has one: an average over fewer topics would not be comparable.
Rows scored on another dataset revision are left out, since their numbers describe other data.

Values stay floats at full precision (exports, sorting); the page shows them with 3 decimals and the best of
each column in bold through a pandas Styler, so no markup is ever built from stored text. Names stay plain
text cells; the only Markdown cell is the link, built from an already validated http(s) URL.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, Measure, parse_measure, topic_averages
from leaderboard.reported import REFERENCE_TAB, format_size
from leaderboard.sanitize import escape_markdown
from leaderboard.schema import LeaderboardRow

AVERAGE = "average"
TYPES = {"baseline": "baseline", "run": "submitted run", "model": "submitted model"}
SIZE_BUCKETS = {"< 100M": (0, 1e8), "100M–1B": (1e8, 1e9), "1B–10B": (1e9, 1e10), "≥ 10B": (1e10, math.inf)}
UNKNOWN_SIZE = "unknown"
INFO = ["id", "system", "type"]
TAIL = ["size", "date", "link"]
_INTERNAL = ["_kind", "_params"]  # filter keys, dropped before display


def column(scope: str, measure: Measure) -> str:
    return f"{scope} {measure.name}"


def metric_columns(topics: Sequence[str], scope: str | None = None) -> list[str]:
    """The average's columns then each topic's; with `scope`, only that topic's (or the average's)."""
    scopes = [scope] if scope else [AVERAGE, *topics]
    return [column(s, m) for s in scopes for m in HEADLINE]


def _link_cell(url: str | None) -> str:
    if not url:
        return ""
    host = url.split("//", 1)[-1].split("/", 1)[0]
    safe = url.replace("(", "%28").replace(")", "%29")
    return f"[{escape_markdown(host)}]({safe})"


def build_frame(
    rows: Sequence[LeaderboardRow],
    topics: Sequence[str],
    *,
    revision: str | None = None,
) -> pd.DataFrame:
    """Every row and column, unfiltered and unsorted; the topic columns are the dataset's `topics` only."""
    records: list[dict[str, Any]] = []
    for row in rows:
        system = row.system
        if row.scores and revision is not None and row.dataset_revision not in (None, revision):
            continue
        if system.kind not in TYPES:  # only what was computed here (a "reported" kind never reaches the store)
            continue
        label = TYPES[system.kind]
        if system.kind == "model" and system.content_hash.startswith("model:nano:"):
            label += " · nano"
        if system.status != "scored":
            label += f" ({system.status})"
        scores = {t: {m: s.value for m, s in ms.items()} for t, ms in row.scores.items()}
        date = system.created_at.strftime("%Y-%m-%d") if system.created_at else ""
        records.append(_record(str(system.id), system.name, system.kind, label, scores, system.size, date, system.link))
    frame = pd.DataFrame.from_records(records, columns=[*INFO, *metric_columns(topics), *TAIL, *_INTERNAL])
    for name in metric_columns(topics):
        frame[name] = frame[name].astype("float64")
    frame["size"] = frame["size"].astype("float64")
    # The average over the dataset's topics, NaN unless the row has every one of them (the module's rule).
    for m in HEADLINE:
        matrix = frame[[column(t, m) for t in topics]].to_numpy(dtype="float64")
        frame[column(AVERAGE, m)] = topic_averages(matrix)
    frame.attrs["topics"] = list(topics)
    return frame


def _record(
    key: str,
    name: str,
    kind: str,
    label: str,
    scores: Mapping[str, Mapping[str, float]],
    size: float | None,
    date: str,
    link: str | None,
) -> dict[str, Any]:
    record = {
        "id": key,
        "system": name,
        "type": label,
        "size": size,
        "date": date,
        "link": _link_cell(link),
        "_kind": kind,
        "_params": size,
    }
    for topic, by_measure in scores.items():
        for m in HEADLINE:
            if m.id in by_measure:
                record[column(topic, m)] = by_measure[m.id]
    return record


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


def sort_frame(frame: pd.DataFrame, by: str, descending: bool = True) -> pd.DataFrame:
    """Sort on one column, blanks last whatever the direction, ties by name then id (a stable page)."""
    if by not in frame.columns:
        raise KeyError(by)
    ordered = frame.sort_values(["system", "id"], kind="stable")
    return ordered.sort_values(by, ascending=not descending, na_position="last", kind="stable")


def shown_rows(
    frame: pd.DataFrame,
    *,
    search: str = "",
    types: Sequence[str] | None = None,
    sizes: Sequence[str] | None = None,
    topic: str | None = None,
    sort: str | None = None,
    descending: bool = True,
) -> pd.DataFrame:
    """The rows and columns the page shows for one state of its controls: filtered, one scope, sorted."""
    view = view_frame(filter_frame(frame, search=search, types=types, sizes=sizes), topic)
    key = sort if sort in view.columns else default_sort(topic)
    return sort_frame(view, key, descending=descending)


def view_frame(frame: pd.DataFrame, topic: str | None = None) -> pd.DataFrame:
    """The displayed columns: all scopes, or one topic's (a `?topic=` view); internal columns dropped."""
    topics = frame.attrs.get("topics", [])
    return frame[[*INFO, *metric_columns(topics, topic), *TAIL]]


def datatypes(view: pd.DataFrame) -> list[str]:
    """Column types for `gr.Dataframe`: numbers sort as numbers; only the link column is Markdown."""
    return ["markdown" if c == "link" else "number" if c == "size" or c in _metric_set(view) else "str" for c in view]


def _metric_set(view: pd.DataFrame) -> set[str]:
    """The headline measures' columns, plus any a view names in `attrs["metric_columns"]` (the Answers table)."""
    names = {m.name for m in HEADLINE}
    extra = set(view.attrs.get("metric_columns", ()))
    return {c for c in view.columns if c.rsplit(" ", 1)[-1] in names or c in extra}


def best_values(view: pd.DataFrame) -> dict[str, float]:
    """Best value of each metric column over the rows shown: the highest, or the lowest for the columns a view
    names in `attrs["lower_is_better"]`; columns with no value are skipped."""
    lower = set(view.attrs.get("lower_is_better", ()))
    return {
        c: float(view[c].min() if c in lower else view[c].max()) for c in _metric_set(view) if view[c].notna().any()
    }


def _column_cells(name: str, values: list[Any], metric: bool, top: float | None) -> tuple[list, list, list]:
    """(raw values, shown text, styles) of one column; blanks are None raw and "" shown."""
    raw = [None if v is None or v != v else v for v in values]  # NaN != NaN
    if metric:
        shown = ["" if v is None else f"{v:.3f}" for v in raw]
        styles = ["font-weight: bold" if v is not None and v == top else "" for v in raw]
        return raw, shown, styles
    shown = [format_size(v) for v in raw] if name == "size" else ["" if v is None else str(v) for v in raw]
    return raw, shown, [""] * len(raw)


def display(view: pd.DataFrame, rows: int | None = None) -> dict[str, Any]:
    """The `gr.Dataframe` value: raw cells (sorting, the API), shown text and styles (3 decimals, best in bold).

    With `rows`, only the top `rows` rows are sent (a page's first paint), still bolding the best of all of
    `view`. Built directly rather than through a pandas Styler, which costs ten times more on 1,000 rows;
    Gradio shows `display_value` and applies `styling` cell by cell, and keeps the raw value for sorting.
    """
    best, metrics = best_values(view), _metric_set(view)
    view = view.head(rows) if rows else view
    columns = [_column_cells(c, view[c].tolist(), c in metrics, best.get(c)) for c in view.columns]
    if not len(view):
        return {"headers": list(view.columns), "data": [], "metadata": None}

    def rows(part: int) -> list[list[Any]]:
        return [list(r) for r in zip(*(col[part] for col in columns), strict=True)]

    return {"headers": list(view.columns), "data": rows(0), "metadata": {"display_value": rows(1), "styling": rows(2)}}


@dataclass(frozen=True, slots=True)
class View:
    """What a deep link asks for: one topic (or all), a sort column and direction; `notice` explains fallbacks."""

    topic: str | None
    sort: str
    descending: bool = True
    notice: str = ""


def default_sort(topic: str | None = None) -> str:
    return column(topic or AVERAGE, HEADLINE[0])


def parse_view(params: Mapping[str, str], topics: Sequence[str], reference_topics: Sequence[str] = ()) -> View:
    """Read `?topic=T&sort=S&order=asc|desc`; unknown values fall back to the defaults, with a notice.

    A topic that is not the dataset's but is one of the published figures' (`reference_topics`) gets a notice
    pointing to the reference tab, where those figures are; the table itself shows all of its topics.

    `sort` takes a measure (`coverage@20`, `Coverage@20`, `alpha-nDCG@10`, applied to the chosen topic or
    the average), `topic:measure`, a column name, or `name`, `size`, `date`.
    """
    notes = []
    raw_topic = (params.get("topic") or "").strip().lower()
    topic = None
    if raw_topic and raw_topic not in ("all", AVERAGE):
        if raw_topic in topics:
            topic = raw_topic
        elif raw_topic in reference_topics:
            notes.append(
                f"topic {raw_topic[:40]!r} is not in this dataset; its published figures are in the "
                f"{REFERENCE_TAB} tab; showing all topics"
            )
        else:
            notes.append(f"unknown topic {raw_topic[:40]!r}; showing all topics")
    raw_sort = (params.get("sort") or "").strip()
    sort, descending = default_sort(topic), True
    if raw_sort:
        found = _sort_column(raw_sort, topic, topics)
        if found is None:
            notes.append(f"unknown sort {raw_sort[:40]!r}; sorted by {sort}")
        else:
            sort, descending = found, found not in ("system", "id")
    order = (params.get("order") or "").strip().lower()
    if order in ("asc", "desc"):
        descending = order == "desc"
    return View(topic, sort, descending, "; ".join(notes))


def _sort_column(text: str, topic: str | None, topics: Sequence[str]) -> str | None:
    aliases = {"name": "system", "system": "system", "size": "size", "date": "date", "id": "id"}
    if text.lower() in aliases:
        return aliases[text.lower()]
    if text in metric_columns(topics, topic):
        return text
    scope, rest = (topic or AVERAGE), text
    if ":" in text:
        scope, rest = (part.strip() for part in text.split(":", 1))
        scope = scope.lower()
    try:
        measure = parse_measure(rest)
    except FreshStackError:
        return None
    if measure not in HEADLINE or (scope != AVERAGE and scope not in topics) or (topic and scope != topic):
        return None
    return column(scope, measure)


def sort_choices(topics: Sequence[str], topic: str | None = None) -> list[str]:
    return [*metric_columns(topics, topic), "system", "size", "date"]


def export_files(view: pd.DataFrame, directory: str | Path | None = None) -> tuple[Path, Path]:
    """CSV and JSON of the rows shown, full precision; names hash the content, so repeats reuse the files."""
    out = view.drop(columns=["link"]).assign(link=[_plain_link(v) for v in view["link"]])
    csv_text = out.assign(**{c: out[c].map(_no_formula) for c in ("system", "type")}).to_csv(index=False)
    records = json.loads(out.to_json(orient="records", force_ascii=False))
    measures = {m.name: m.description for m in HEADLINE}
    payload = json.dumps({"measures": measures, "average": "plain mean of topics", "rows": records}, indent=1)
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


class StoreFrame:
    """A frame built from the store, rebuilt only when the store has changed.

    Typing in the search box fires a render per keystroke, and every page load renders once: re-reading
    1,000 systems each time would make the page lag. The store's change marker (a few indexed aggregates)
    tells when a worker or another app process has written something; the app's own writes also call
    `invalidate`, so a submitter sees their row at once.
    """

    def __init__(self, store: Any, build: Callable[[Any], pd.DataFrame]):
        import threading

        self.store, self._build = store, build
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._marker: Any = None

    def frame(self) -> pd.DataFrame:
        with self._lock:
            marker = self.store.change_marker()  # read before the rows: a write in between forces a rebuild
            if self._frame is None or marker != self._marker:
                self._frame = self._build(self.store)
                self._marker = marker
            return self._frame

    def invalidate(self) -> None:
        with self._lock:
            self._frame = None


class BoardSource(StoreFrame):
    """The full retrieval board (`build_frame` of the headline measures) for one dataset revision."""

    def __init__(self, store: Any, topics: Sequence[str], revision: str | None):
        measures = tuple(m.id for m in HEADLINE)
        super().__init__(store, lambda s: build_frame(s.leaderboard_rows(measures=measures), topics, revision=revision))
