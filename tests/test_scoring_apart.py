"""A served board reads and scores submissions in a child process (`leaderboard.scoring.ScoringApart`, issue 38):
the numbers, the archive and its blob equal scoring in the process, a submission stores the same row (or gets the
same refusal) either way, and the board holds only a key of a run the child read; a child that died fails only the
submission it was scoring; the child ends with the board's process however that ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.runs import write_run
from leaderboard.scoring import HERE, KEPT_RUNS, RunInChild, ScoringApart, score_for_store
from leaderboard.store.ranking_blob import decode_ranking
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter


@pytest.fixture(scope="module")
def apart():
    scorer = ScoringApart()
    yield scorer
    scorer.close()


def _child_pids(scorer: ScoringApart) -> list[int]:
    return list(scorer._started()._processes)


def _gone(pid: int, limit: float = 20.0) -> bool:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:  # reaped between the signal and the read
            return True
        if state == "Z":  # ended, not yet reaped by its parent
            return True
        time.sleep(0.1)
    return False


def test_scores_from_the_child_equal_scoring_in_the_process(lb_dataset, bm25_runs, apart):
    runs = {t: dict(bm25_runs[t]) for t in lb_dataset.topics}
    here = score_for_store(lb_dataset, runs, lb_dataset.topics, by_topic=True, resamples=60)
    there = apart(lb_dataset, runs, lb_dataset.topics, by_topic=True, resamples=60)
    assert there.results == here.results and there.parameters == here.parameters
    assert there.blobs() == here.blobs() and there.archived == {}  # the archive comes back as its blob only
    (blob,) = there.blobs().values()
    assert decode_ranking(blob.raw()) == here.archived
    assert there.scores.average == here.scores.average
    assert all(pid != os.getpid() for pid in _child_pids(apart))


def test_a_submission_scored_apart_stores_the_row_scoring_in_the_process_stores(lb_dataset, bm25_runs, tmp_path, apart):
    merged = {q: docs for t in lb_dataset.topics for q, docs in bm25_runs[t].items()}
    path = tmp_path / "bm25.trec"
    write_run(merged, path, tag="bm25")
    rows = []
    for name, scorer in (("here", HERE), ("apart", apart)):
        with Store(f"sqlite:///{tmp_path / name}.db") as store:
            store.create_all()
            outcome = RunSubmitter(store, lb_dataset, rate_limit=None, resamples=40, scorer=scorer).submit(
                path, name="bm25 run"
            )
            assert outcome.status == "scored", outcome.message
            (row,) = store.leaderboard_rows()
            per_query = [found[1:] for found in store.per_query_scores(tuple(m.id for m in HEADLINE))]
            rows.append((row.scores, per_query))
    assert rows[0] == rows[1] and rows[0][0] and len(rows[0][1]) == 3 * len(lb_dataset.topics)


def test_a_run_read_apart_stays_in_the_child_and_is_read_again_once_pushed_out(lb_dataset, bm25_runs, tmp_path, apart):
    topic = lb_dataset.topics[0]
    paths = []
    for i in range(KEPT_RUNS + 1):  # the first is pushed out of the child's runs by the last
        path = tmp_path / f"run{i}.trec"
        write_run({q: {d: s + i for d, s in docs.items()} for q, docs in bm25_runs[topic].items()}, path, tag=f"r{i}")
        paths.append(path)
    limits = {"max_depth": 1000, "max_bytes": None}
    read = [apart.read(lb_dataset, path, [topic], **limits) for path in paths]
    here = HERE.read(lb_dataset, paths[0], [topic], **limits)
    assert isinstance(read[0].run, RunInChild) and isinstance(here.run, dict)  # the board holds a key, not the run
    assert (read[0].queries, read[0].ranking_sha256, read[0].kept_bytes, read[0].fmt, read[0].tag) == (
        here.queries,
        here.ranking_sha256,
        here.kept_bytes,
        here.fmt,
        here.tag,
    )
    first = apart(lb_dataset, read[0].run, [topic], resamples=30)  # read again from its file
    last = apart(lb_dataset, read[-1].run, [topic], resamples=30)  # still kept
    assert first.results == score_for_store(lb_dataset, here.run, [topic], resamples=30).results
    assert last.results == score_for_store(lb_dataset, HERE.read(lb_dataset, paths[-1], [topic], **limits).run,
                                           [topic], resamples=30).results  # fmt: skip


def test_a_refused_run_gets_the_same_refusal_read_apart(lb_dataset, bm25_runs, tmp_path, apart):
    topic = lb_dataset.topics[0]
    run = {q: dict(docs) for q, docs in bm25_runs[topic].items()}
    first = next(iter(run))
    run[first]["no-such-doc"] = 99.0
    path = tmp_path / "unknown-doc.trec"
    write_run(run, path, tag="bad")
    told = []
    for name, scorer in (("here", HERE), ("apart", apart)):
        with Store(f"sqlite:///{tmp_path / name}.db") as store:
            store.create_all()
            outcome = RunSubmitter(store, lb_dataset, rate_limit=None, resamples=20, scorer=scorer).submit(
                path, name="bad run", scope=topic
            )
            assert not store.leaderboard_rows()
        told.append((outcome.status, outcome.message, outcome.problems))
    assert told[0] == told[1] and told[0][0] == "refused" and "no-such-doc" in " ".join(told[0][2]), told


@pytest.mark.slow
def test_a_child_that_died_fails_the_submission_it_scored_and_the_next_one_gets_a_new_child(lb_dataset, bm25_runs):
    scorer = ScoringApart()
    try:
        run = dict(bm25_runs[lb_dataset.topics[0]])
        first = scorer(lb_dataset, run, lb_dataset.topics[:1], resamples=20)
        (pid,) = _child_pids(scorer)
        os.kill(pid, signal.SIGKILL)
        assert _gone(pid)
        with pytest.raises(BrokenProcessPool):
            scorer(lb_dataset, run, lb_dataset.topics[:1], resamples=20)
        again = scorer(lb_dataset, run, lb_dataset.topics[:1], resamples=20)
        assert again.results == first.results and _child_pids(scorer) != [pid]
    finally:
        scorer.close()


@pytest.mark.slow
def test_the_child_ends_when_the_boards_process_ends_without_cleaning_up(lb_dataset, tmp_path):
    script = tmp_path / "board.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, sys
            from freshstack_hf.repo.dataset import Dataset
            from leaderboard.scoring import ScoringApart
            if __name__ == "__main__":
                scorer = ScoringApart()
                scorer.warm(Dataset({str(lb_dataset.folder)!r}))
                pool = scorer._started()
                pool.submit(os.getpid).result()
                print(*pool._processes, flush=True)
                os._exit(0)  # as a board killed by a signal: no clean-up of any kind
            """
        )
    )
    printed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env={**os.environ}
    )
    assert printed.returncode == 0, printed.stderr
    (pid,) = map(int, printed.stdout.split())
    assert _gone(pid), f"the scoring child {pid} outlived the board"
