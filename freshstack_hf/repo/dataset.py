"""One dataset handle: a repo (folder or Hub id + revision) resolved once, with its revision, topics and caches.

Every consumer that scores or serves a dataset (the CLI, the leaderboard and its worker, the MTEB task,
ir_datasets) opens it through `Dataset`, so there is one rule for what a dataset revision is:

* a Hub id is downloaded to a snapshot folder whose name *is* the commit sha: that sha is the revision,
  whatever branch or tag was asked for (a tag can move; a commit cannot);
* a local folder is identified by a hash of its data files (`local-<hash>`): rebuilding identical data keeps
  it, any change to a data file changes it.

The leaderboard files rows by this revision, so two rules for one dataset would hide rows. Topics, qrels and
id sets are read once and shared; the handle is safe to use from several threads (the leaderboard scores
submissions on many).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, MEASURES, qrels_from_topic, score_topics
from freshstack_hf.repo import layout
from freshstack_hf.repo.reader import list_topics, load_candidates, load_topic, local_revision, read_table, resolve_repo
from freshstack_hf.runs.columns import IdColumn
from freshstack_hf.runs.run import Run
from freshstack_hf.topic import Topic
from freshstack_hf.windows import window, window_qrels

if TYPE_CHECKING:
    from datetime import date

    from freshstack_hf.metrics import Measure, RunScores
    from freshstack_hf.windows import Window


def dataset_revision(folder: str | Path) -> str:
    """The revision results record for a resolved repo folder (see the module docstring for the rule)."""
    path = Path(folder)
    if path.parent.name == "snapshots" and path.parent.parent.name.startswith("datasets--"):
        return path.name  # huggingface_hub's cache: .../datasets--ORG--NAME/snapshots/<commit sha>
    return local_revision(path)


class Dataset:
    """A dataset repo resolved once: its folder, recorded revision, topic list and cached topic parts."""

    def __init__(self, source: str | Path, revision: str | None = None, topics: Iterable[str] | None = None):
        self.source = str(source)
        self.requested_revision = revision
        wanted = list(topics) if topics is not None else None
        self.folder = resolve_repo(source, revision, wanted)
        available = list_topics(self.folder)
        if wanted is not None:
            unknown = [t for t in wanted if t not in available]
            if unknown:
                raise FreshStackError(
                    f"dataset {self.source}: no topic {', '.join(map(repr, unknown))}; it has {', '.join(available)}"
                )
        self.topics = wanted if wanted is not None else available
        if not self.topics:
            raise FreshStackError(f"dataset {self.source}: no topics found (expected data/<topic>/ folders)")
        self._cache: dict[tuple[str, str], Any] = {}
        self._lock = threading.RLock()

    @functools.cached_property
    def revision(self) -> str:
        """The recorded revision, computed at first use: hashing a large local repo's data files takes a while,
        and a one-off score from the CLI does not need it."""
        return dataset_revision(self.folder)

    def __repr__(self) -> str:
        return f"Dataset({self.source!r}, revision={self.revision!r}, topics={self.topics})"

    def _cached(self, kind: str, topic: str, make: Callable[[], Any]) -> Any:
        with self._lock:  # each part is read once, whichever thread asks first
            key = (kind, topic)
            if key not in self._cache:
                self._cache[key] = make()
            return self._cache[key]

    def _check(self, name: str) -> str:
        if name not in self.topics:
            available = ", ".join(self.topics)
            raise FreshStackError(f"topic {name!r} not found in {self.source}; available topics: {available}")
        return name

    def topic(self, name: str) -> Topic:
        return self._cached("topic", self._check(name), lambda: load_topic(self.folder, name))

    def qrels(self, name: str) -> Any:
        """The topic's `NuggetQrels` (built once: every scoring of the topic reuses it)."""

        return self._cached("qrels", self._check(name), lambda: qrels_from_topic(self.topic(name)))

    def window(self, name: str, after: date) -> Window:
        """The topic's judged questions asked strictly after `after` (`freshstack_hf.windows` has the rule)."""

        topic = self.topic(name)
        return self._cached(
            f"window:{after}", name, lambda: window(name, topic.queries, self.qrels(name).query_ids, after)
        )

    def window_qrels(self, name: str, after: date) -> Any:
        """The topic's `NuggetQrels` restricted to `window(name, after)`; an empty window is an error (its
        scores would be zeros that look like results)."""

        found = self.window(name, after)
        if not found.asked:
            raise FreshStackError(
                f"topic {name!r} of {self.source}: no judged question was asked after {after.isoformat()} "
                f"({found.describe()}); give an earlier date, or leave the topic out"
            )
        return self._cached(f"qrels:{after}", name, lambda: window_qrels(self.topic(name), found.query_ids))

    def candidates(self, name: str, stem: str = "top_ranked") -> dict[str, list[str]]:
        return self._cached(f"candidates:{stem}", self._check(name), lambda: load_candidates(self.folder, name, stem))

    def query_ids(self, topics: Iterable[str] | None = None) -> frozenset[str]:
        names = self.topics if topics is None else list(topics)
        parts = [self._cached("qids", t, lambda t=t: frozenset(self.topic(t).query_ids)) for t in names]
        return frozenset().union(*parts)

    def doc_ids(self, topics: Iterable[str] | None = None) -> IdColumn:
        """The corpus ids of `topics` (default: all), read from the `_id` column only and kept as that column:
        a run is checked against it in one pass, and Python strings are made only if ids are asked one by one."""
        import pyarrow as pa

        names = self.topics if topics is None else [self._check(t) for t in topics]
        columns = [self._cached("docs", t, lambda t=t: self._id_column(t)) for t in names]
        return self._cached(
            "doc_ids",
            "\t".join(names),
            lambda: IdColumn(pa.chunked_array([c for column in columns for c in column.chunks], pa.string())),
        )

    def _id_column(self, topic: str) -> Any:
        return read_table(layout.config_path(self.folder, topic, "corpus"), columns=["_id"]).column("_id")

    def score(
        self,
        run: Run | Mapping[str, Run],
        *,
        topics: Iterable[str] | None = None,
        by_topic: bool = False,
        measures: Iterable[str | Measure] | None = None,
        interval_measures: Iterable[str | Measure] | None = None,
        resamples: int = RESAMPLES,
        seed: int = SEED,
        after: date | None = None,
    ) -> RunScores:
        """Score a run on this dataset: the one entry point of the CLI, leaderboard, worker and MTEB task.

        `run` is one run holding any topics' queries, scored on `topics` (default: all), or with `by_topic`
        a mapping topic -> run. Per-query scores, topic values, the all-topics average and 95% intervals of
        `interval_measures` (the headline measures by default; `resamples=0` skips them) come back together.
        With `after`, each topic is scored on its questions asked strictly after that day only (`window`).
        """

        runs = dict(run) if by_topic else {t: run for t in (self.topics if topics is None else list(topics))}
        return score_topics(
            {t: self.qrels(t) if after is None else self.window_qrels(t, after) for t in runs},
            runs,
            MEASURES if measures is None else measures,
            interval_measures=HEADLINE if interval_measures is None else interval_measures,
            resamples=resamples,
            seed=seed,
        )

    def warm(self) -> None:
        """Read every topic now and hash the revision, so the first user (a submission, a page view) does not pay;
        load the Arrow kernels a run is checked with too (a tenth of a second at their first import)."""
        import pyarrow.compute  # noqa: F401

        self.query_ids(), self.doc_ids(), [self.qrels(t) for t in self.topics], self.revision


_OPEN: dict[tuple[str, str | None], Dataset] = {}
_OPEN_LOCK = threading.Lock()


def open_dataset(source: str | Path, revision: str | None = None) -> Dataset:
    """A shared `Dataset` per (source, revision) in this process, re-opened when a local folder's data changed.

    ir_datasets and MTEB ask for topics many times; this keeps one handle (and one read of each topic) per
    repo, and a rebuilt folder is noticed through its revision hash.
    """
    key = (str(Path(source).expanduser().resolve()) if Path(source).expanduser().is_dir() else str(source), revision)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None and Path(found.folder).is_dir() and dataset_revision(found.folder) == found.revision:
            return found
        _OPEN[key] = Dataset(source, revision)
        return _OPEN[key]
