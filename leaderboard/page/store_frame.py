"""A table built from the store and rebuilt only when the store has changed (the page's tables read through it),
with the views computed from it (a sorted page, a first paint, an export) kept as long as it stands."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, TypeVar

import pandas as pd

from leaderboard.defaults import VIEW_CACHE_ENTRIES

T = TypeVar("T")


class StoreFrame:
    """A frame built from the store, rebuilt only when the store has changed.

    Typing in the search box fires a render per keystroke, and every page load renders once: re-reading
    1,000 systems each time would make the page lag. The store's change marker (a few indexed aggregates)
    tells when a worker or another app process has written something; the app's own writes also call
    `invalidate`, so a submitter sees their row at once.

    Views of the frame (`view`) are kept for the frame they were computed from, up to `views` of them (least
    recently used dropped first): fifty visitors opening the same page at once cost one render between them,
    and the first render after a write is computed once, by whichever asks first, while the others wait for it.
    """

    def __init__(
        self,
        store: Any,
        build: Callable[[Any], pd.DataFrame],
        views: int = VIEW_CACHE_ENTRIES,
        depends: Callable[[], Hashable] | None = None,
    ):
        self.store, self._build = store, build
        self._depends = depends  # what the frame reads besides the store (the day a held live value is released)
        self._lock = threading.Lock()
        self._frame: pd.DataFrame | None = None
        self._marker: Any = None
        self._views: OrderedDict[Hashable, Future[Any]] = OrderedDict()
        self._views_of: pd.DataFrame | None = None  # the frame `_views` were computed from
        self._max_views = views

    def frame(self) -> pd.DataFrame:
        # The marker is read before the lock: renders asking at once share one read of it (`Store.change_marker`)
        # instead of taking turns, each its own read, behind the lock (fifty visitors at once waited there most of
        # their first paint). Read before the rows: a write in between forces a rebuild.
        marker = self.store.change_marker()
        if self._depends is not None:
            marker = (marker, self._depends())
        with self._lock:
            if self._frame is None or marker != self._marker:
                self._frame = self._build(self.store)
                self._marker = marker
            return self._frame

    def view(self, key: Hashable, make: Callable[[pd.DataFrame], T]) -> T:
        """`make(frame)` of the current frame, computed once per frame and `key` however many threads ask at once;
        `make` must depend on nothing but the frame and what `key` names (the store state is the frame's). A
        failure is not kept: the next caller computes again. Callers must not change what they get."""
        frame = self.frame()
        with self._lock:
            if self._views_of is not frame:
                self._views, self._views_of = OrderedDict(), frame
            found = self._views.get(key)
            mine = found is None
            if found is None:
                found = self._views[key] = Future()
                while len(self._views) > self._max_views:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(key)
        if mine:
            try:
                found.set_result(make(frame))
            except BaseException as exc:  # the waiters get it too, rather than waiting forever
                found.set_exception(exc)
                with self._lock:
                    if self._views.get(key) is found:
                        del self._views[key]
        return found.result()

    def invalidate(self) -> None:
        with self._lock:
            self._frame = None
