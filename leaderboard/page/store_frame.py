"""A table built from the store and rebuilt only when the store has changed (the page's tables read through it)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pandas as pd


class StoreFrame:
    """A frame built from the store, rebuilt only when the store has changed.

    Typing in the search box fires a render per keystroke, and every page load renders once: re-reading
    1,000 systems each time would make the page lag. The store's change marker (a few indexed aggregates)
    tells when a worker or another app process has written something; the app's own writes also call
    `invalidate`, so a submitter sees their row at once.
    """

    def __init__(self, store: Any, build: Callable[[Any], pd.DataFrame]):
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
