"""Scores for the store: every row kind (submitted run, baseline, model) is scored here, through the library.

The numbers come from `Dataset.score`, the entry point the CLI and the MTEB task use too; this module only
shapes them for `Store.add_system` / `JobQueue.finish_job`, records how they were made (the measures with their
parameters, resamples, seed) and cuts the run to what the archive keeps.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics import HEADLINE, MEASURES, RunScores
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, cut
from leaderboard.store.blobs import Blob
from leaderboard.store.ranking_blob import MEDIA as RANKING

ARCHIVE_DEPTH = 100  # the top of each query's ranking the store keeps behind a row
Scorer = Callable[..., "Scored"]  # `score_for_store`, or a `ScoringApart` doing the same in a child process


@dataclass(frozen=True, slots=True)
class Scored:
    """What storing a scored system needs: per-topic results, the runs to archive, and the scores themselves."""

    results: dict[str, dict[str, Any]]  # topic -> {"metrics", "per_query", "ci"}
    archived: dict[str, dict[str, dict[str, float]]]  # topic -> top ARCHIVE_DEPTH of the run (empty: `ScoringApart`)
    scores: RunScores
    parameters: dict[str, Any]  # how the numbers were made (`scoring_parameters`), recorded with the row
    encoded: dict[str, Blob] | None = field(default=None, repr=False, compare=False)  # `blobs()`, when made

    def blobs(self) -> dict[str, Blob]:
        return self.encoded if self.encoded is not None else ranking_blobs(self.archived)


def ranking_blobs(archived: Mapping[str, Any] | None) -> dict[str, Blob]:
    """What the store keeps behind a row ({role: blob}): the archived ranking, stored with the scores."""
    return {RANKING: Blob.ranking(archived)} if archived else {}


def score_for_store(
    dataset: Dataset,
    run: Run | Mapping[str, Run],
    topics: Iterable[str],
    *,
    by_topic: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Scored:
    """Score `run` (one run, or with `by_topic` topic -> run) on `topics`; see the module docstring.

    A run may hold other topics' queries too (a whole-dataset file): the evaluator ignores them, and the
    archived copy keeps only each topic's own queries.
    """
    names = list(topics)
    runs = {t: run[t] for t in names} if by_topic else {t: run for t in names}
    archived = {t: cut(runs[t], ARCHIVE_DEPTH, dataset.query_ids([t])) for t in names}
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The archive's blob is encoded, hashed and compressed (zstd and sha256 without the GIL) while it scores.
        blobs = pool.submit(ranking_blobs, archived)
        scores = dataset.score(
            runs, by_topic=True, measures=MEASURES, interval_measures=HEADLINE, resamples=resamples, seed=seed
        )
    return Scored(scores.stored(), archived, scores, scoring_parameters(resamples, seed), blobs.result())


def scoring_parameters(resamples: int, seed: int) -> dict[str, Any]:
    """How stored numbers were made: each measure with all its parameters (alpha included), the bootstrap."""
    return {"measures": [m.spec for m in MEASURES], "interval_measures": [m.spec for m in HEADLINE],
            "resamples": resamples, "seed": seed}  # fmt: skip


class ScoringApart:
    """`score_for_store` in a child process of its own, so that a served board's reads never wait on scoring.

    Scoring a submitted run (parse aside: the metrics, the bootstrap intervals, the archive's blob) is pure Python
    and NumPy work that holds the interpreter for a second or more; in the board's process every page, first
    paint and table request took turns with it for the interpreter, and fifty visitors arriving while six runs were
    scored each waited longer (`benchmarks/bench_visitors.py`). The child scores one submission at a time at a
    lower CPU priority (`NICE`), so the visitors' requests also come first for the cores. It is started on the
    first submission (a board nobody submits to never starts it), keeps each dataset it has read, and gives numbers
    equal to scoring in the process (the same function runs there). What comes back holds the archived ranking as
    its blob only (`Scored.blobs()`, what the store keeps), with `archived` empty: the ranking as Python dicts would
    cost the board as much to receive as to send. A child that died (killed, out of memory) fails that submission,
    which stores nothing, and the next one starts a new child.
    """

    NICE = 10

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def __call__(
        self,
        dataset: Dataset,
        run: Run | Mapping[str, Run],
        topics: Iterable[str],
        *,
        by_topic: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
    ) -> Scored:
        from concurrent.futures.process import BrokenProcessPool

        opened = _opened(dataset)
        pool = self._started()
        try:
            return pool.submit(_score_in_child, opened, run, list(topics), by_topic, resamples, seed).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise

    def warm(self, dataset: Dataset) -> None:
        """Start the child now and have it read `dataset` (without waiting): the board's start pays for it, on
        the other core, rather than the first submission and the visitors around it."""
        self._started().submit(_judgments_in_child, _opened(dataset))

    def _started(self) -> Any:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")  # the board runs threads: no fork
                started = {"initializer": _child_start, "initargs": (os.getpid(), self.NICE)}
                self._pool = ProcessPoolExecutor(1, mp_context=context, **started)
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_CHILD_DATASETS: dict[tuple[str, tuple[str, ...]], Dataset] = {}  # a scoring child's datasets, each read once


def _child_start(board_pid: int, nice: int) -> None:
    """The child's priority lowered, and its end when the board's process ends however it ends (a board stopped
    by a signal runs no clean-up, and the child would otherwise outlive it)."""
    import time

    os.nice(nice)

    def watch() -> None:
        while os.getppid() == board_pid:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="scoring-child-watch", daemon=True).start()


def _opened(dataset: Dataset) -> tuple[str, tuple[str, ...]]:
    return str(dataset.folder), tuple(dataset.topics)


def _open_in_child(opened: tuple[str, tuple[str, ...]]) -> Dataset:
    dataset = _CHILD_DATASETS.get(opened)
    if dataset is None:
        folder, names = opened
        dataset = _CHILD_DATASETS[opened] = Dataset(folder, topics=names)
    return dataset


def _judgments_in_child(opened: tuple[str, tuple[str, ...]]) -> None:
    """Read what scoring needs of the dataset (every topic's judgments), and nothing to send back."""
    dataset = _open_in_child(opened)
    for name in dataset.topics:
        dataset.qrels(name)


def _score_in_child(
    opened: tuple[str, tuple[str, ...]],
    run: Run | Mapping[str, Run],
    topics: list[str],
    by_topic: bool,
    resamples: int,
    seed: int,
) -> Scored:
    """`score_for_store` in the child (`ScoringApart`), on the dataset folder and topics the board opened."""
    dataset = _open_in_child(opened)
    scored = score_for_store(dataset, run, topics, by_topic=by_topic, resamples=resamples, seed=seed)
    return dataclasses.replace(scored, archived={}, encoded=scored.blobs())  # the archive travels as its blob
