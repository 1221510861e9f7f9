"""What the retrieval track's tabs share on one page, each built once (`Page.shared`): the board (its frame built
at once, so the first visitor does not wait for it), its rank intervals, the published figures, and the system
pickers of the Detail and Plots tabs, which the Leaderboard tab fills in one step of the page's load chain, after
the table's first rows (1,000 choices would only delay them).

The Leaderboard tab serves every published snapshot (`snapshots`, `snapshot_boards`): the served one reads the
page's own board, each other one a board (and rank intervals) of its own, so one running board shows every
revision's table. The other tabs read the served snapshot only (`board`, `ranks`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from freshstack_hf.repo.dataset import Dataset
from leaderboard.live_release import LiveRelease, has_embargo
from leaderboard.page.page import Page
from leaderboard.tracks.retrieval.leaderboard_table import BoardSource
from leaderboard.tracks.retrieval.over_time import Snapshot, snapshots_of
from leaderboard.tracks.retrieval.published import load_reference
from leaderboard.tracks.retrieval.rank_column import RankSource

# A picker: a dropdown of systems and how it is filled from the board's frame and its (label, id) choices.
Picker = tuple[Any, Callable[[pd.DataFrame, list[tuple[str, str]]], Any]]


def release(page: Page) -> LiveRelease:
    """The board's release rule of live values (`leaderboard.live_release`: `--live-release`), judged against the
    snapshots the page lists."""
    rule = page.settings.live_release
    return page.shared("retrieval.release", lambda: LiveRelease(rule, published=lambda: snapshot_labels(page)))


def live(page: Page, dataset: Dataset) -> LiveRelease | None:
    """How `dataset`'s live values are released on this board; None when the snapshot holds no embargoed question,
    so its tables have no live column."""
    return release(page) if has_embargo(dataset) else None


def board(page: Page) -> BoardSource:
    def make() -> BoardSource:
        source = BoardSource(page.store, page.dataset.topics, page.dataset.revision, live(page, page.dataset))
        source.frame()  # built now, so the first visitor does not wait for it
        return source

    return page.shared("retrieval.board", make)


def ranks(page: Page) -> RankSource:
    """The board's rank intervals (the rank column; the Detail tab's rank line), computed when first asked."""
    return page.shared("retrieval.ranks", lambda: RankSource(page.store, page.dataset, board(page)))


def published(page: Page) -> pd.DataFrame | None:
    """The reference frame of the figures passed with `--reported`, or None without them."""
    path = page.settings.reported_path
    return page.shared("retrieval.published", lambda: load_reference(path) if path else None)


def pickers(page: Page) -> list[Picker]:
    """The page's system pickers; a tab appends its own while it is laid out."""
    return page.shared("retrieval.pickers", list)


@dataclass(frozen=True, slots=True)
class SnapshotBoard:
    """One snapshot's table as the Leaderboard tab reads it: its name, its data, its board and rank intervals."""

    label: str
    dataset: Dataset
    board: BoardSource
    ranks: RankSource


def snapshots(page: Page) -> list[Snapshot]:
    """The published snapshots beside the served dataset, oldest first (`over_time.snapshots_of`), listed once
    when the page is built; the newest, last, is what the Leaderboard shows by default."""
    return page.shared("retrieval.snapshots", lambda: snapshots_of(page.dataset))


def snapshot_labels(page: Page) -> list[str]:
    return [snap.label for snap in snapshots(page)]


def snapshot_boards(page: Page) -> dict[str, SnapshotBoard]:
    """{snapshot name: its board}, oldest first. Made together while the page is built (no frame is read yet, but
    the newest's), so requests never race to make them; the served snapshot shares the page's board, which a
    submission invalidates at once."""

    def make() -> dict[str, SnapshotBoard]:
        made = {}
        for snap in snapshots(page):
            if snap.dataset is page.dataset:
                made[snap.label] = SnapshotBoard(snap.label, snap.dataset, board(page), ranks(page))
            else:
                source = BoardSource(page.store, snap.dataset.topics, snap.dataset.revision, live(page, snap.dataset))
                made[snap.label] = SnapshotBoard(
                    snap.label, snap.dataset, source, RankSource(page.store, snap.dataset, source)
                )
        newest = list(made.values())[-1]
        newest.board.frame()  # the default view's frame, built now like the served board's
        return made

    return page.shared("retrieval.snapshot_boards", make)
