"""Scores for the store: every row kind (submitted run, baseline, model) is scored here, through the library.

The numbers come from `Dataset.score`, the entry point the CLI and the MTEB task use too; this module only
shapes them for `Store.add_system` / `JobQueue.finish_job`, records how they were made (the measures with their
parameters, resamples, seed) and cuts the run to what the archive keeps. An uploaded run file is read for the
store here too (`read_for_store`: checked strictly, kept to the archive's depth, known by its canonical ranking),
so that a served board can both read and score it in a child process (`ScoringApart`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics import HEADLINE, MEASURES, RunScores
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, cut, load_run, top_docs
from leaderboard.store.blobs import Blob
from leaderboard.store.ranking_blob import MEDIA as RANKING

ARCHIVE_DEPTH = 100  # the top of each query's ranking the store keeps behind a row


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


def canonical_ranking(run: Mapping[str, Mapping[str, float]]) -> tuple[str, int]:
    """(sha256, size in bytes) of a run written canonically: queries sorted, each query's docs in rank order
    (`top_docs`: score, then doc id), one `query<TAB>doc<TAB>score` line each, scores in Python's shortest exact
    form. A TREC file, its JSON twin, either gzipped or with its lines shuffled give the same ranking."""
    digest, size = hashlib.sha256(), 0
    for query_id in sorted(run):
        docs = run[query_id]
        block = "".join(f"{query_id}\t{d}\t{float(docs[d])!r}\n" for d in top_docs(docs, len(docs))).encode()
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size


@dataclass(frozen=True, slots=True)
class RunInChild:
    """A run read by a scoring child and kept there (`ScoringApart.read`): all the board holds of it is this key.
    A child that no longer has it (started again after a crash, or it has read `KEPT_RUNS` runs since) reads the
    file again from `path` with the same limits."""

    key: str
    path: str
    topics: tuple[str, ...]
    max_depth: int
    max_bytes: int | None

    def read(self, dataset: Dataset) -> ReadRun:
        """`read_for_store` of the file this key names, with its limits (in the child)."""
        return read_for_store(dataset, self.path, list(self.topics), max_depth=self.max_depth, max_bytes=self.max_bytes)


@dataclass(frozen=True, slots=True)
class ReadRun:
    """An uploaded run as the board keeps it: strictly checked, each query's top `ARCHIVE_DEPTH`, known by its
    canonical ranking (`ranking_sha256`, and `kept_bytes` for the size cap); `run` is the ranking itself, or
    its `RunInChild` key where a scoring child read it."""

    run: Run | RunInChild
    queries: frozenset[str]
    fmt: str
    tag: str
    ranking_sha256: str
    kept_bytes: int


def read_for_store(
    dataset: Dataset,
    path: str | Path,
    topics: list[str],
    *,
    max_depth: int,
    max_bytes: int | None,
    candidates: Mapping[str, frozenset[str]] | None = None,
) -> ReadRun:
    """The run file at `path` read for the store on `topics` (`load_run`, strict: its problems raise, as the
    submitter's refusal), with `candidates` each query's allowed docs (a reranked run)."""
    loaded = load_run(
        path,
        query_ids=dataset.query_ids(topics),
        doc_ids=dataset.doc_ids(topics),
        max_depth=max_depth,
        strict=True,
        keep=ARCHIVE_DEPTH,
        max_bytes=max_bytes,
        candidates=candidates,
    )
    ranking_sha256, kept_bytes = canonical_ranking(loaded.run)
    return ReadRun(loaded.run, frozenset(loaded.run), loaded.fmt, loaded.tag, ranking_sha256, kept_bytes)


class Scorer(Protocol):
    """What reads and scores an uploaded run for the store: `HERE` (in this process) or a `ScoringApart`."""

    def read(
        self,
        dataset: Dataset,
        path: str | Path,
        topics: list[str],
        *,
        max_depth: int,
        max_bytes: int | None,
        candidates: Mapping[str, frozenset[str]] | None = None,
    ) -> ReadRun: ...

    def __call__(
        self,
        dataset: Dataset,
        run: Run | RunInChild | Mapping[str, Run],
        topics: Iterable[str],
        *,
        by_topic: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
    ) -> Scored: ...


class ScoringHere:
    """`read_for_store` and `score_for_store` in this process: the library's and the tests' default."""

    read = staticmethod(read_for_store)
    __call__ = staticmethod(score_for_store)


HERE = ScoringHere()


def scoring_parameters(resamples: int, seed: int) -> dict[str, Any]:
    """How stored numbers were made: each measure with all its parameters (alpha included), the bootstrap."""
    return {"measures": [m.spec for m in MEASURES], "interval_measures": [m.spec for m in HEADLINE],
            "resamples": resamples, "seed": seed}  # fmt: skip


class ScoringApart:
    """`read_for_store` and `score_for_store` in a child process of its own, so that a served board's reads never
    wait on a submission.

    Reading a run file into Python objects, hashing its canonical ranking and scoring it (the metrics, the
    bootstrap intervals, the archive's blob) is pure Python and NumPy work that holds the interpreter for a second
    or more; in the board's process every page, first paint and table request took turns with it for the
    interpreter, and fifty visitors arriving while six runs were submitted each waited longer
    (`benchmarks/bench_visitors.py`). The child does all of it, one submission at a time, at a lower CPU priority
    (`NICE`), so the visitors' requests also come first for the cores: the board receives what its checks need
    (`ReadRun`, the ranking itself kept in the child under a `RunInChild` key until it is scored) and then the
    scores. It is started with the board (`warm`) or on the first submission, keeps each dataset it has read, and
    gives what the same functions give in the process. What comes back from scoring holds the archived ranking as
    its blob only (`Scored.blobs()`, what the store keeps), with `archived` empty: the ranking as Python dicts would
    cost the board as much to receive as to send. A child that died (killed, out of memory) fails that
    submission, which stores nothing, and the next one starts a new child.
    """

    NICE = 10

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def read(
        self,
        dataset: Dataset,
        path: str | Path,
        topics: list[str],
        *,
        max_depth: int,
        max_bytes: int | None,
        candidates: Mapping[str, frozenset[str]] | None = None,
    ) -> ReadRun:
        if candidates is not None:  # a reranked run: its candidates are the board's, read here
            return read_for_store(
                dataset, path, topics, max_depth=max_depth, max_bytes=max_bytes, candidates=candidates
            )
        key = RunInChild(uuid.uuid4().hex, str(path), tuple(topics), max_depth, max_bytes)
        return self._in_child(_read_in_child, _opened(dataset), key)

    def __call__(
        self,
        dataset: Dataset,
        run: Run | RunInChild | Mapping[str, Run],
        topics: Iterable[str],
        *,
        by_topic: bool = False,
        resamples: int = RESAMPLES,
        seed: int = SEED,
    ) -> Scored:
        return self._in_child(_score_in_child, _opened(dataset), run, list(topics), by_topic, resamples, seed)

    def warm(self, dataset: Dataset) -> None:
        """Start the child now and have it read `dataset` (without waiting): the board's start pays for it, on
        the other core, rather than the first submission and the visitors around it."""
        self._started().submit(_dataset_in_child, _opened(dataset))

    def _in_child(self, function: Callable[..., Any], *args: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        pool = self._started()
        try:
            return pool.submit(function, *args).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise

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
KEPT_RUNS = 8  # the runs a scoring child keeps read and not yet scored (a refused upload's stays until pushed out)
_CHILD_RUNS: OrderedDict[str, Run] = OrderedDict()


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


def _dataset_in_child(opened: tuple[str, tuple[str, ...]]) -> None:
    """Read what reading and scoring runs need of the dataset (ids, judgments), and nothing to send back."""
    _open_in_child(opened).warm()


def _read_in_child(opened: tuple[str, tuple[str, ...]], key: RunInChild) -> ReadRun:
    """`read_for_store` in the child (`ScoringApart.read`): the ranking stays here under `key`."""
    read = key.read(_open_in_child(opened))
    _CHILD_RUNS[key.key] = read.run  # type: ignore[assignment]  (read here: the ranking itself)
    while len(_CHILD_RUNS) > KEPT_RUNS:
        _CHILD_RUNS.popitem(last=False)
    return dataclasses.replace(read, run=key)


def _score_in_child(
    opened: tuple[str, tuple[str, ...]],
    run: Run | RunInChild | Mapping[str, Run],
    topics: list[str],
    by_topic: bool,
    resamples: int,
    seed: int,
) -> Scored:
    """`score_for_store` in the child (`ScoringApart`), on the dataset folder and topics the board opened; a
    `RunInChild` is the ranking read here, or read again."""
    dataset = _open_in_child(opened)
    if isinstance(run, RunInChild):
        kept = _CHILD_RUNS.pop(run.key, None)
        run = kept if kept is not None else run.read(dataset).run
    scored = score_for_store(dataset, run, topics, by_topic=by_topic, resamples=resamples, seed=seed)
    return dataclasses.replace(scored, archived={}, encoded=scored.blobs())  # the archive travels as its blob
