"""A served board scores submissions in a child process (`leaderboard.scoring.ScoringApart`, issue 38): the
numbers, the archive and its blob equal scoring in the process, a submission stores the same row either way; a
child that died fails only the submission it was scoring; the child ends with the board's process however that
ends."""

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
from leaderboard.scoring import ScoringApart, score_for_store
from leaderboard.store.ranking_blob import decode_ranking
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.run_submit import RunSubmitter


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
        state = (
            Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] if Path(f"/proc/{pid}").exists() else "X"
        )
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
    for name, scorer in (("here", score_for_store), ("apart", apart)):
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
