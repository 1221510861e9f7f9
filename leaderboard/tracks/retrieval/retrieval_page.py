"""What the retrieval track's tabs share on one page, each built once (`Page.shared`): the board (its frame built
at once, so the first visitor does not wait for it), its rank intervals, the published figures, and the system
pickers of the Detail and Plots tabs, which the Leaderboard tab fills in one step of the page's load chain, after
the table's first rows (1,000 choices would only delay them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from leaderboard.page.page import Page
from leaderboard.tracks.retrieval.leaderboard_table import BoardSource
from leaderboard.tracks.retrieval.published import load_reference
from leaderboard.tracks.retrieval.rank_column import RankSource

# A picker: a dropdown of systems and how it is filled from the board's frame and its (label, id) choices.
Picker = tuple[Any, Callable[[pd.DataFrame, list[tuple[str, str]]], Any]]


def board(page: Page) -> BoardSource:
    def make() -> BoardSource:
        source = BoardSource(page.store, page.dataset.topics, page.dataset.revision)
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
