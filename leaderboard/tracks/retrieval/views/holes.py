"""The Holes tab's content: which qrels revision the board serves, the fills made from it, and every stored
system re-scored on each fill (Judged@10 and the headline measures, old -> new).

A fill (`freshstack-hf fill-board`, run by a worker; or `freshstack-hf fill-holes`) writes a new revision beside
the served one and never rewrites it, so every number on the board stays reproducible; this view says how far the
numbers would move on the filled judgments. The systems re-scored are those scored on the served revision (a row of
another snapshot ranked that snapshot's queries and documents, so its "old" number would not be its own). The
re-scoring reads each system's archived ranking and is cached per (fill, store change), so a page load after the
first costs a lookup.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import list_revisions, revision_folder, revision_of
from leaderboard.fills import MOVE_MEASURES, archived_runs, materialize_fills, moves_table, score_moves

log = logging.getLogger(__name__)

COLUMNS = ["id", "system", "qrels revision", *MOVE_MEASURES]


def served_revision(dataset: Dataset) -> str:
    """The served folder's revision name (`main` for the working repo, as the fills record their base)."""
    return revision_of(dataset.folder) or "main"


def fills_from(dataset: Dataset) -> list[tuple[str, Path, dict[str, Any]]]:
    """(revision, folder, provenance) of every fill whose base is the served revision, oldest first."""
    served, found = served_revision(dataset), []
    for name in list_revisions(dataset.folder):
        folder = revision_folder(dataset.folder, name)
        fills = read_manifest(folder).get("fills") or []
        if fills and fills[-1].get("base_revision") == served:
            found.append((name, folder, fills[-1]))
    return found


def served_note(dataset: Dataset) -> str:
    """One line naming the served qrels revision, with the fills that made it when it is a filled one."""
    fills = read_manifest(dataset.folder).get("fills") or []
    line = f"Qrels revision served: **{served_revision(dataset)}** (data revision `{dataset.revision}`)."
    for f in fills:
        line += (
            f" Filled from `{f['base_revision']}` on {f['date'][:10]}: {f['pairs']:,} (nugget, document) pairs of "
            f"{f['holes']:,} holes in the top {f['k']} of {f['system']['name']!r}, judged by {f['judge']}."
        )
    return line


class HolesSource:
    """The moves tables of every fill of the served revision, recomputed only when a fill or the store changes."""

    def __init__(self, store: Any, dataset: Dataset) -> None:
        self.store, self.dataset = store, dataset
        self._cache: dict[tuple, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._written: Any = None  # the store's change marker when its fills were last written here

    def sections(self) -> list[tuple[str, list[dict[str, Any]]]]:
        marker = self.store.change_marker()
        with self._lock:
            if self._written != marker:  # fills a worker elsewhere made: written here from the store, once
                try:
                    materialize_fills(self.store, self.dataset)
                except (OSError, FreshStackError) as exc:
                    log.warning("fills kept in the store could not be written beside %s: %s", self.dataset.folder, exc)
                self._written = marker
        out = []
        for name, folder, fill in fills_from(self.dataset):
            key = (name, (folder / "manifest.json").stat().st_mtime_ns, marker)
            with self._lock:
                if key not in self._cache:
                    topic = fill["topic"]
                    served = self._served_systems()
                    runs = {i: r for i, r in archived_runs(self.store, topic).items() if i in served}
                    moves = score_moves(runs, self.dataset, Dataset(folder), topic)
                    self._cache[key] = moves_table(moves, name)
            title = (
                f"`{name}`: {fill['topic']}, {fill['pairs']:,} pairs judged for {fill['system']['name']!r}'s top "
                f"{fill['k']} by {fill['judge']} on {fill['date'][:10]}"
            )
            out.append((title, self._cache[key]))
        return out

    def _served_systems(self) -> set[int]:
        """The ids of the systems scored on the served revision."""
        rows = self.store.leaderboard_rows(measures=(HEADLINE[0].id,))
        return {row.system.id for row in rows if row.dataset_revision == self.dataset.revision}
