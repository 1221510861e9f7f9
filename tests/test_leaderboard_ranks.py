"""The board's rank column through a real store (`leaderboard.tracks.retrieval.tables.rank_column`): scored runs, their
stored per-query values, the same intervals as the library computes on them, the tied marker on two runs that
score alike, a single rank for a run ahead on every query, no interval without per-query scores, and a cache that
recomputes only when the store changes."""

from __future__ import annotations

import numpy as np
import pytest
from store_rows import META
from submission_files import merged, write_trec

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.metrics.rank_uncertainty import rank_intervals
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.leaderboard_table import BoardSource
from leaderboard.tracks.retrieval.tables.rank_column import RankSource, scope_of
from leaderboard.tracks.retrieval.tables.table_columns import RANK, default_sort
from leaderboard.tracks.retrieval.tables.table_filters import shown_rows

RESAMPLES = 400


@pytest.fixture
def board(store, lb_dataset, bm25_runs, tmp_path):
    """An oracle run (judged positives first), two BM25 runs cut at 100 and 99 (equal on every headline measure),
    BM25 cut to its top 3, and a row stored without per-query values."""
    submitter = RunSubmitter(store, lb_dataset, resamples=50)
    oracle = {
        q: {**docs, **{d: 1000.0 + rel for d, rel in lb_dataset.topic(t).qrels.get(q, {}).items() if rel > 0}}
        for t, run in bm25_runs.items()
        for q, docs in run.items()
    }
    ids = {}
    for name, run, depth in [("oracle", oracle, 100), ("bm25", merged(bm25_runs), 100),
                             ("bm25-twin", merged(bm25_runs), 99), ("weak", merged(bm25_runs), 3)]:  # fmt: skip
        ids[name] = str(submitter.submit(write_trec(tmp_path / f"{name}.trec", run, depth=depth), name=name).system_id)
    bare, _ = store.add_system(name="bare", kind="run", content_hash="bare")
    meta = type(META)(lb_dataset.revision, parameters={})
    store.save_results(bare.id, {t: {"metrics": {m.id: 0.9 for m in HEADLINE}} for t in lb_dataset.topics}, meta)
    ids["bare"] = str(bare.id)
    source = BoardSource(store, lb_dataset.topics, lb_dataset.revision)
    return source, RankSource(store, lb_dataset, source, resamples=RESAMPLES), ids


def per_query(store, key, measure, topic, qids):
    rows = [r for r in store.results_for(int(key)) if r["measure"] == measure and r["topic"] == topic]
    return [rows[0]["per_query"].get(q, 0.0) for q in qids]


@pytest.mark.slow
def test_rank_cells_match_the_library_on_the_stored_per_query_values(store, lb_dataset, board):
    _, ranks, ids = board
    sort = default_sort()
    intervals = ranks.intervals(sort)
    assert set(intervals) == {ids[n] for n in ("oracle", "bm25", "bm25-twin", "weak")}  # "bare" has none
    order = list(intervals)
    topics, measure = scope_of(sort, lb_dataset.topics)
    matrices = {
        t: np.array([per_query(store, k, measure.id, t, sorted(lb_dataset.qrels(t).query_ids)) for k in order])
        for t in topics
    }
    assert list(intervals.values()) == rank_intervals(matrices, resamples=RESAMPLES)
    best = order.index(ids["oracle"])
    everything = np.hstack([matrices[t] for t in topics])
    assert (everything[best] > np.delete(everything, best, axis=0)).all()  # the oracle is ahead on every query
    assert intervals[ids["oracle"]].text() == "1 (1–1)"  # hence a single rank, and no tie with anyone
    twin, bm25 = intervals[ids["bm25-twin"]], intervals[ids["bm25"]]
    assert (twin.rank, twin.low, twin.high, twin.tied) == (bm25.rank, bm25.low, bm25.high, bm25.tied)
    assert intervals[ids["weak"]].rank == 4 and not intervals[ids["weak"]].tied


def test_the_page_shows_the_column_after_the_type_and_alike_runs_share_a_cell(store, lb_dataset, board):
    source, ranks, ids = board
    topic = lb_dataset.topics[0]
    sort = f"{topic} {HEADLINE[1].name}"
    view = shown_rows(source.frame(), topic=topic, sort=sort, ranks=ranks.cells)
    assert list(view.columns[:4]) == ["id", "system", "type", RANK]
    cells = dict(zip(view["id"], view[RANK], strict=True))
    assert cells[ids["bare"]] == ""  # no per-query values: no interval
    # The two BM25 runs score alike on every query: whatever their place, they share one cell.
    assert cells[ids["bm25"]] == cells[ids["bm25-twin"]]
    view = shown_rows(source.frame(), sort="system", ranks=ranks.cells)  # not a measure: a blank column
    assert set(view[RANK]) == {""}


def test_the_cache_is_kept_until_the_store_changes(store, board, monkeypatch):
    _, ranks, _ = board
    first = ranks.intervals(default_sort())
    calls = []
    monkeypatch.setattr(store, "per_query_texts", lambda m, f=store.per_query_texts: calls.append(m) or f(m))
    assert ranks.intervals(default_sort()) is first and calls == []
    store.add_system(name="queued", kind="run", content_hash="queued")
    assert ranks.intervals(default_sort()) == first and len(calls) == 1  # recomputed, the same numbers


def test_after_a_write_only_the_new_rows_are_decoded(store, lb_dataset, board, bm25_runs, tmp_path, monkeypatch):
    """The per-query scores of the rows already on the board are not decoded again after a new submission, and
    the intervals are those of a source that decodes everything afresh."""
    from leaderboard.tracks.retrieval.tables import rank_column

    source, ranks, _ = board
    ranks.intervals(default_sort())
    decoded = []
    original = rank_column.PerQueryVectors._vector
    monkeypatch.setattr(rank_column.PerQueryVectors, "_vector", lambda s, t, x: decoded.append(t) or original(s, t, x))
    run = write_trec(tmp_path / "late.trec", merged(bm25_runs), depth=50)
    RunSubmitter(store, lb_dataset, resamples=50).submit(run, name="late")
    after = ranks.intervals(default_sort())
    assert sorted(decoded) == sorted(lb_dataset.topics)  # the new run's row of each topic, and nothing else
    fresh = RankSource(store, lb_dataset, source, resamples=RESAMPLES).intervals(default_sort())
    assert after == fresh and len(after) == 5


def test_two_leaders_that_score_alike_both_show_the_tied_marker(store, lb_dataset, bm25_runs, tmp_path):
    submitter = RunSubmitter(store, lb_dataset, resamples=50)
    ids = {}
    for name, depth in [("bm25", 100), ("bm25-twin", 99), ("weak", 3)]:
        path = write_trec(tmp_path / f"{name}.trec", merged(bm25_runs), depth=depth)
        ids[name] = str(submitter.submit(path, name=name).system_id)
    source = BoardSource(store, lb_dataset.topics, lb_dataset.revision)
    view = shown_rows(source.frame(), ranks=RankSource(store, lb_dataset, source, resamples=RESAMPLES).cells)
    cells = dict(zip(view["id"], view[RANK], strict=True))
    assert cells[ids["bm25"]] == cells[ids["bm25-twin"]] == "1 (1–1) ≈1"
    assert cells[ids["weak"]] == "3 (3–3)"
