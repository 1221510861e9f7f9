"""What the retrieval track's tabs share on one page, each built once (`Page.shared`): the board (its frame built
at once, so the first visitor does not wait for it), its rank intervals, the published figures, and the system
pickers of the Detail and Plots tabs, which the Leaderboard tab fills in one step of the page's load chain, after
the table's first rows (1,000 choices would only delay them).

The Leaderboard tab serves every published snapshot (`snapshot_list`): the served one reads the page's own board,
each other one a board (and rank intervals) of its own, so one running board shows every revision's table. The
other tabs read the served snapshot only (`board`, `ranks`).

The snapshots are listed again while the board runs (`SnapshotList`): a `refresh` that publishes the next one (a
`REPO@DATE` folder beside the repo, a Hub tag) while the board is up reaches the Snapshot selector, the deep links,
the `/table` API and the Over time view within `SNAPSHOT_RELIST_SECONDS` of a visit, with no restart, and the page
says when it last looked (`Listing.as_of`: "snapshots as of 14:05 UTC")."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import SNAPSHOT_RELIST_SECONDS
from leaderboard.live_release import LiveRelease, has_embargo
from leaderboard.page.page import Page
from leaderboard.tracks.retrieval.tables.leaderboard_table import BoardSource
from leaderboard.tracks.retrieval.tables.rank_column import RankSource
from leaderboard.tracks.retrieval.views.over_time import Snapshot, snapshots_of
from leaderboard.tracks.retrieval.views.published import load_reference

log = logging.getLogger(__name__)
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


@dataclass(frozen=True, slots=True)
class Listing:
    """The published snapshots as the board listed them (oldest first; the newest, last, is the Leaderboard's
    default) and when, in UTC. A reader takes one listing per request, so its parts agree with each other."""

    snapshots: tuple[Snapshot, ...]
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def labels(self) -> list[str]:
        return [snap.label for snap in self.snapshots]

    @property
    def newest(self) -> str:
        return self.snapshots[-1].label

    def as_of(self) -> str:
        """When the board last looked for snapshots, as the page says it ("snapshots as of 14:05 UTC")."""
        return f"as of {self.at:%H:%M} UTC"


class SnapshotList:
    """The served dataset's published snapshots, listed again on a read once the last listing is `every` seconds old
    (default `SNAPSHOT_RELIST_SECONDS`, `$FRESHSTACK_SNAPSHOT_RELIST`).

    A listing is cheap (a directory read beside a local repo; one Hub request for a Hub dataset's tags) and a
    snapshot already listed is not opened again; so a board lists on its visitors' reads instead of a timer of its
    own. One reader lists at a time; the others meanwhile read the listing they have. A listing that fails (the Hub
    unreachable, a folder that cannot be read) keeps the last one, and is tried again `every` seconds later. Each
    snapshot's board is made once, when it is first asked for (`board`), and kept."""

    def __init__(
        self,
        dataset: Dataset,
        make_board: Callable[[Snapshot], SnapshotBoard],
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.dataset = dataset
        self.every = SNAPSHOT_RELIST_SECONDS if every is None else every  # the board's setting, read when made
        self._make_board, self._clock = make_board, clock
        self._listing = Listing(tuple(snapshots_of(dataset)))
        self._listed = clock()
        self._failed = ""  # why the last listing failed, "" when it did not
        self._listing_lock = threading.Lock()
        self._boards: dict[str, SnapshotBoard] = {}
        self._boards_lock = threading.RLock()  # a board being made may read the listing, never the other way

    def current(self) -> Listing:
        """The listing now: listed again first when the last one is `every` seconds old and no other reader is
        listing."""
        if self._clock() - self._listed >= self.every and self._listing_lock.acquire(blocking=False):
            try:
                if self._clock() - self._listed >= self.every:
                    self._relist()
            finally:
                self._listing_lock.release()
        return self._listing

    def _relist(self) -> None:
        known = {snap.label: snap for snap in self._listing.snapshots}
        try:
            self._listing = Listing(tuple(snapshots_of(self.dataset, known, tolerant=False)))
            self._failed = ""
        except (FreshStackError, OSError) as exc:  # the board serves on with what it listed before
            if str(exc) != self._failed:  # said once, not once a minute while it lasts
                log.warning("listing the snapshots of %s failed (the last list is kept): %s", self.dataset.source, exc)
            self._failed = str(exc)
        finally:
            self._listed = self._clock()

    def board(self, snapshot: Snapshot) -> SnapshotBoard:
        """`snapshot`'s board, made the first time it is asked for."""
        with self._boards_lock:
            if snapshot.label not in self._boards:
                self._boards[snapshot.label] = self._make_board(snapshot)
            return self._boards[snapshot.label]

    def boards(self, listing: Listing) -> dict[str, SnapshotBoard]:
        """{snapshot name: its board} of `listing`, oldest first."""
        return {snap.label: self.board(snap) for snap in listing.snapshots}


def snapshot_list(page: Page) -> SnapshotList:
    """The page's one list of snapshots (the Leaderboard's selector, the Over time view, the release rule)."""
    return page.shared("retrieval.snapshots", lambda: SnapshotList(page.dataset, functools.partial(_board_of, page)))


def _board_of(page: Page, snap: Snapshot) -> SnapshotBoard:
    """A snapshot's board: the served one shares the page's board, which a submission invalidates at once; each
    other one gets a board and rank intervals of its own."""
    if snap.dataset is page.dataset:
        return SnapshotBoard(snap.label, snap.dataset, board(page), ranks(page))
    source = BoardSource(page.store, snap.dataset.topics, snap.dataset.revision, live(page, snap.dataset))
    return SnapshotBoard(snap.label, snap.dataset, source, RankSource(page.store, snap.dataset, source))


def snapshot_labels(page: Page) -> list[str]:
    """The names of the snapshots the board lists now, oldest first (what the release rule judges against)."""
    return snapshot_list(page).current().labels
