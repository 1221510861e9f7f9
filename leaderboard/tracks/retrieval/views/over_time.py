"""The board over time: every system's headline score on every published snapshot of the dataset, its rank on each,
how much the ranking moved between consecutive snapshots (Kendall's tau), which systems lost the most (the freshness
gap), and, for systems whose cutoff date is known, the score on the questions asked after it.

A snapshot is a dated revision published beside the served dataset (`REPO@2025-10-31`, as `refresh` writes them; a
dated tag of a Hub dataset) and the served revision itself. A system's rows on several snapshots are one line here:
rows share a `remeasure.lineage` (a model's reference, a baseline's name, the run a re-scored row came
from), so a model measured again by a worker and a run re-scored on a later snapshot continue their first row.
Values are the stored ones (the average is the plain mean of the snapshot's topics, as on the main board), so each
equals what `freshstack-hf evaluate --revision` gives that system's ranking on that snapshot.

A system that stops (a model whose folder is gone, a Hub id deleted) keeps its earlier values, and `stopped` says
why, from its lineage's failed row on the first later snapshot it lacks: the reason `remeasure` stored there, or the
worker's error.

On a snapshot with an embargo, a system a worker scored live there (`leaderboard.live_scores`: the snapshot's
embargoed questions, two decimals), once the board's release rule shows it (`leaderboard.live_release`), has its
live value and its gap to the public one beside them (`live_column`, `live_gap_column`), and the chart draws its
live values as a series of their own ("NAME (live)"); snapshots with no live value shown add nothing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.drift.rank_agreement import kendall_tau_b
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, Measure, parse_measure, topic_averages
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.revisions import dated_revisions, is_date, is_local, revision_folder, revision_of
from leaderboard.live_release import LiveRelease
from leaderboard.live_scores import MEASURED
from leaderboard.tracks.retrieval.jobs.remeasure import RESCORED_MARK, lineage
from leaderboard.tracks.retrieval.tables.table_columns import TYPES, column
from leaderboard.tracks.retrieval.tables.window_table import build_window_frame


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One published snapshot: its name (a date, or the served folder's) and its data."""

    label: str
    dataset: Dataset


def snapshots_of(
    dataset: Dataset, known: Mapping[str, Snapshot] | None = None, *, tolerant: bool = True
) -> list[Snapshot]:
    """The served dataset's dated snapshots, oldest first, and the served revision (last when it is not one of them):
    the folders `REPO@DATE` beside a local repo, or a Hub dataset's dated tags (what `refresh` publishes), each
    opened as a `Dataset` of its own; one named in `known` (an earlier listing's, by name) is reused, not opened
    again (a snapshot is written once and never rewritten). A tag that cannot be fetched (removed) is left out, and
    so, when `tolerant`, are all of them if the Hub cannot be asked (offline): the board still serves what it can
    read. Not `tolerant` (a board listing again), that is a `FreshStackError`, and the board keeps its last list
    rather than losing every tag to a moment without network."""
    known = known or {}
    folder = Path(dataset.folder)
    served = revision_of(folder) or (dataset.requested_revision or folder.name)
    found: list[Snapshot] = []
    if is_local(dataset.source):
        for name in dated_revisions(folder):
            if name != served:
                found.append(known.get(name) or Snapshot(name, Dataset(revision_folder(folder, name))))
    else:
        for name in _hub_tags(dataset.source) if tolerant else dated_revisions(dataset.source, hub=True):
            if name in known and name != served:
                found.append(known[name])
            elif name != served and (tagged := _opened(dataset.source, name)) is not None:
                found.append(Snapshot(name, tagged))
    found.append(Snapshot(served, dataset))
    return sorted(found, key=lambda s: (not is_date(s.label), s.label))


def _hub_tags(repo_id: str) -> list[str]:
    """The dated tags of a Hub dataset; none when the Hub cannot be asked (offline mode, no network, a private repo
    without a token): the board then serves the revision it has."""
    try:
        return dated_revisions(repo_id, hub=True)
    except FreshStackError:
        return []


def _opened(source: str, revision: str) -> Dataset | None:
    try:
        return Dataset(source, revision)
    except FreshStackError:
        return None


@dataclass(frozen=True, slots=True)
class OverTime:
    """The view's parts: `table` (a row per system: its value and rank on each snapshot, the change from its first
    to its last, and the after-cutoff values), `long` (snapshot, system, value: the line chart), `taus` (consecutive
    snapshots, tau, systems compared) and `gap` (systems on two or more snapshots, the largest loss first);
    `stopped`: a line per system measured on some snapshot but not on a later one, saying why (see the module
    docstring)."""

    snapshots: list[str]
    table: pd.DataFrame
    long: pd.DataFrame
    taus: list[tuple[str, str, float | None, int]]
    gap: pd.DataFrame
    stopped: list[str] = field(default_factory=list)
    live: list[str] = field(default_factory=list)  # the snapshots with a live value of the measure (`live_column`)


def rank_column(label: str) -> str:
    return f"{label} rank"


def after_column(label: str) -> str:
    return f"{label} after cutoff"


def live_column(label: str) -> str:
    return f"{label} live"


def live_gap_column(label: str) -> str:
    return f"{label} live gap"


LIVE_SERIES = " (live)"  # a system's live values in the chart: a series of their own, named after it


LiveOf = Callable[[Dataset], LiveRelease | None]  # how a snapshot's live values are released (None: not at all)


def _live_values(store: Any, snapshot: Snapshot, measure: Measure, live_of: LiveOf) -> dict[int, float]:
    """system id -> its live value of `measure` on `snapshot` (`leaderboard.live_scores`: the embargoed questions,
    two decimals), for the rows a worker measured live there and the board's release rule shows."""
    live = live_of(snapshot.dataset)
    if live is None:
        return {}
    found = {}
    for system_id, record in live.records(store, snapshot.dataset.revision).items():
        value = ((record.get("measures") or {}).get(measure.id) or {}).get("value")
        if record.get("status") == MEASURED and isinstance(value, int | float):
            found[system_id] = float(value)
    return found


def over_time(
    store: Any, snapshots: list[Snapshot], measure: str | Measure = HEADLINE[0], live_of: LiveOf = lambda _: None
) -> OverTime:
    """Every listed, scored system of the main board's kinds on every snapshot (see the module docstring); live
    values as `live_of` releases each snapshot's (`leaderboard.live_release`; by default none)."""
    chosen = parse_measure(measure) if isinstance(measure, str) else measure
    labels = [s.label for s in snapshots]
    rows = store.leaderboard_rows(kinds=tuple(TYPES), measures=(chosen.id,))
    lines = _Lines.of(rows, store.queue.first_payloads(), snapshots, chosen)
    frame = lines.frame(labels)
    with_cutoff = [row.system for row in rows if row.system.cutoff]  # read once for every snapshot
    per_query = store.per_query_scores((chosen.id,)) if with_cutoff else []
    for snapshot in snapshots:
        after = _after_cutoff(snapshot, chosen, with_cutoff, per_query)
        frame[after_column(snapshot.label)] = lines.after_cutoff(snapshot.label, after)
    live_labels, live_points = [], []
    for snapshot in snapshots:  # live values beside the public ones, on the snapshots a worker scored live
        label = snapshot.label
        found = lines.on(label, _live_values(store, snapshot, chosen, live_of))
        if all(math.isnan(v) for v in found):
            continue
        live_labels.append(label)
        frame[live_column(label)] = found
        frame[live_gap_column(label)] = (frame[live_column(label)] - frame[label]).round(2)
        series = [lines.names[k][0] + LIVE_SERIES for k in lines.keys]
        live_points += [(label, name, v) for name, v in zip(series, found, strict=True) if v == v]
    frame = frame.sort_values([labels[-1], "system"], ascending=[False, True], na_position="last")
    gap = frame[frame["change"].notna()][["system", "type", "change"]].sort_values(["change", "system"])
    stopped = _stopped(labels, lines.values, lines.names, lines.failed)
    long, taus = lines.chart(labels, live_points), lines.taus(labels)
    return OverTime(labels, frame.reset_index(drop=True), long, taus, gap.reset_index(drop=True), stopped, live_labels)


@dataclass
class _Lines:
    """Each system's line across the snapshots, keyed by its lineage (`remeasure.lineage`): its average on each
    snapshot (`values`), its (name, type, cutoff), the snapshots it was re-scored on, its system id on each, and why
    its row failed on a snapshot it was queued for."""

    values: dict[str, dict[str, float]] = field(default_factory=dict)
    names: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    rescored: dict[str, list[str]] = field(default_factory=dict)
    ids: dict[str, dict[str, int]] = field(default_factory=dict)  # lineage -> snapshot -> system id
    failed: dict[str, dict[str, str]] = field(default_factory=dict)  # lineage -> snapshot -> why its row failed

    @classmethod
    def of(cls, rows: list[Any], payloads: Mapping[int, Any], snapshots: list[Snapshot], measure: Measure) -> _Lines:
        lines = cls()
        by_revision = {s.dataset.revision: s for s in snapshots}
        for row in rows:
            lines.add(row, payloads.get(row.system.id), by_revision, measure)
        return lines

    def add(self, row: Any, payload: Any, by_revision: Mapping[str, Snapshot], measure: Measure) -> None:
        """One stored row: a point of its system's line when it is scored on a listed snapshot (and has an
        average there), the reason of a failed row queued for one."""
        snapshot = by_revision.get(row.dataset_revision or "")
        if row.system.status == "failed":
            queued_for = by_revision.get(str((payload or {}).get("dataset_revision") or ""))
            if queued_for is not None and row.system.error:
                key = lineage(row.system, payload)
                self.failed.setdefault(key, {}).setdefault(queued_for.label, row.system.error.splitlines()[0])
            return
        if row.system.status != "scored" or snapshot is None:
            return
        key = lineage(row.system, payload)
        cells = [[_value(row.scores, t, measure.id) for t in snapshot.dataset.topics]]
        average = float(topic_averages(np.array(cells, dtype=np.float64))[0])
        if math.isnan(average):
            return
        self.values.setdefault(key, {})[snapshot.label] = average
        self.ids.setdefault(key, {})[snapshot.label] = row.system.id
        name = row.system.name.removesuffix(RESCORED_MARK)
        if row.system.name.endswith(RESCORED_MARK):
            self.rescored.setdefault(key, []).append(snapshot.label)
        if key not in self.names or not row.system.name.endswith(RESCORED_MARK):
            self.names[key] = (name, TYPES[row.system.kind], row.system.cutoff or "")

    @property
    def keys(self) -> list[str]:
        return list(self.values)

    def frame(self, labels: list[str]) -> pd.DataFrame:
        """A row per line: its value and rank on each snapshot, the change from its first to its last, where it was
        re-scored, its cutoff."""
        frame = pd.DataFrame(
            [
                {"system": self.names[k][0], "type": self.names[k][1], **{label: v.get(label) for label in labels}}
                for k, v in self.values.items()
            ],
            columns=["system", "type", *labels],
        )
        for label in labels:
            frame[label] = frame[label].astype("float64")
            frame[rank_column(label)] = frame[label].rank(ascending=False, method="min").astype("Int64")
        first_last = [_ends(self.values[k], labels) for k in self.keys]
        frame["change"] = [last - first if n > 1 else np.nan for first, last, n in first_last]
        frame["re-scored on"] = [", ".join(self.rescored.get(k, [])) for k in self.keys]
        frame["cutoff"] = [self.names[k][2] for k in self.keys]
        return frame

    def on(self, label: str, by_system: Mapping[int, float]) -> list[float]:
        """Each line's value in `by_system` (system id -> value) for its system on snapshot `label`; NaN without."""
        return [by_system.get(self.ids[k].get(label, -1), np.nan) for k in self.keys]

    def after_cutoff(self, label: str, after: Mapping[int, float]) -> list[float]:
        """Each line's after-cutoff value on snapshot `label`; NaN for a system without a cutoff."""
        return [v if self.names[k][2] else np.nan for k, v in zip(self.keys, self.on(label, after), strict=True)]

    def chart(self, labels: list[str], live_points: list[tuple[str, str, float]]) -> pd.DataFrame:
        """(snapshot, system, value) of every point, the live points last: the line chart's data."""
        return pd.DataFrame(
            [{"snapshot": label, "system": self.names[k][0], "value": v[label]} for k, v in self.values.items()
             for label in labels if label in v] + [{"snapshot": a, "system": b, "value": c} for a, b, c in live_points],
            columns=["snapshot", "system", "value"],
        )  # fmt: skip

    def taus(self, labels: list[str]) -> list[tuple[str, str, float | None, int]]:
        """Kendall's tau between consecutive snapshots, over the systems on both, and how many they are."""
        taus = []
        for a, b in itertools.pairwise(labels):
            both = [k for k in self.keys if a in self.values[k] and b in self.values[k]]
            values_a, values_b = [self.values[k][a] for k in both], [self.values[k][b] for k in both]
            taus.append((a, b, kendall_tau_b(values_a, values_b), len(both)))
        return taus


def _stopped(
    labels: list[str],
    values: dict[str, dict[str, float]],
    names: dict[str, tuple[str, str, str]],
    failed: dict[str, dict[str, str]],
) -> list[str]:
    """ "name: not measured after LABEL: why", for each system with a value on a snapshot and a failed row on a later
    one it lacks (the reason stored on the first such), LABEL its last value before that one."""
    lines = []
    for key, by_label in values.items():
        reasons = failed.get(key, {})
        first = labels.index(next(label for label in labels if label in by_label))
        missing = [i for i in range(first + 1, len(labels)) if labels[i] not in by_label]
        stop = next((i for i in missing if labels[i] in reasons), None)
        if stop is not None:
            last = max(i for i in range(stop) if labels[i] in by_label)
            lines.append(f"{names[key][0]}: not measured after {labels[last]}: {reasons[labels[stop]]}")
    return sorted(lines)


def _value(scores: dict[str, dict[str, Any]], topic: str, measure: str) -> float:
    found = scores.get(topic, {}).get(measure)
    return float(found.value) if found is not None else math.nan


def _ends(by_label: dict[str, float], labels: list[str]) -> tuple[float, float, int]:
    """(value on the first snapshot it has, on the last, how many it has)."""
    present = [by_label[label] for label in labels if label in by_label]
    return present[0], present[-1], len(present)


def _after_cutoff(
    snapshot: Snapshot, measure: Measure, systems: list[Any], scores: list[tuple[int, str, str, str, float, Any]]
) -> dict[int, float]:
    """system id -> the average on the questions asked after the system's cutoff, on `snapshot` (the After-cutoff
    table's rule, `window_table`), for `systems` (those with a cutoff); `scores` are `Store.per_query_scores`' rows
    of every revision, read once by the caller (the window frame keeps the snapshot's own)."""
    if not systems:
        return {}
    data = snapshot.dataset
    judged = {t: len(data.qrels(t)) for t in data.topics}
    frame = build_window_frame(systems, scores, data.topics, data.window, judged.__getitem__, revision=data.revision)
    average = column(AVERAGE, measure) if measure in HEADLINE else None
    if average is None or average not in frame:
        return {}
    return {int(i): float(v) for i, v in zip(frame["id"], frame[average], strict=True) if not pd.isna(v)}
