"""The detail view from a real store: intervals, per-query scores, holes, missed nuggets, paired tests.

Every number is compared with the library function that should have produced it, called directly on the
same per-query values or the same archived run.
"""

from __future__ import annotations

import pytest
from submission_files import merged, write_trec

from freshstack_hf.metrics import bootstrap_ci, paired_test, uncovered_nuggets
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.leaderboard_table import build_frame
from leaderboard.tracks.retrieval.views import detail

RESAMPLES = 500


@pytest.fixture
def board(store, lb_dataset, bm25_runs, tmp_path):
    """BM25 baseline, a strong run (judged positives first, then BM25) and a weak one (BM25 cut to its top 3)."""
    compute_baselines(store, lb_dataset, methods=["bm25"], resamples=RESAMPLES)
    submitter = RunSubmitter(store, lb_dataset, resamples=RESAMPLES)
    oracle = {
        q: {**docs, **{d: 1000.0 + rel for d, rel in lb_dataset.topic(t).qrels.get(q, {}).items() if rel > 0}}
        for t, run in bm25_runs.items()
        for q, docs in run.items()
    }
    strong = submitter.submit(write_trec(tmp_path / "s.trec", oracle, depth=50), name="strong")
    weak = submitter.submit(write_trec(tmp_path / "w.trec", merged(bm25_runs), depth=3), name="weak")
    frame = build_frame(store.leaderboard_rows(), lb_dataset.topics, revision=lb_dataset.revision)
    return {"frame": frame, "strong": str(strong.system_id), "weak": str(weak.system_id)}


def view(key, board, store, lb_dataset, **kw):
    return detail.system_detail(key, board["frame"], store=store, dataset=lb_dataset, resamples=RESAMPLES, **kw)


def test_metrics_with_intervals_per_query_and_holes(board, store, lb_dataset):
    d = view(board["weak"], board, store, lb_dataset)
    stored = {(r["topic"], r["measure"]): r for r in store.results_for(int(board["weak"]))}
    alpha = d.metrics[(d.metrics["topic"] == "alpha") & (d.metrics["measure"] == "α-nDCG@10")].iloc[0]
    row = stored[("alpha", "alpha_ndcg@10")]
    assert (alpha["value"], alpha["95% low"], alpha["95% high"]) == (row["value"], row["ci_low"], row["ci_high"])
    assert alpha["queries"] == 6
    recall10 = d.metrics[(d.metrics["topic"] == "beta") & (d.metrics["measure"] == "Recall@10")].iloc[0]
    expected = bootstrap_ci(list(stored[("beta", "recall@10")]["per_query"].values()), resamples=RESAMPLES)
    assert (recall10["95% low"], recall10["95% high"]) == (expected.low, expected.high)  # computed on the fly
    average = d.metrics[(d.metrics["topic"] == "average") & (d.metrics["measure"] == "Coverage@20")].iloc[0]
    groups = [list(stored[(t, "coverage@20")]["per_query"].values()) for t in lb_dataset.topics]
    expected = bootstrap_ci(groups, resamples=RESAMPLES)
    assert (average["value"], average["95% low"], average["queries"]) == (expected.mean, expected.low, 12)
    assert len(d.per_query) == 12 and list(d.per_query.columns[2:]) == [
        "α-nDCG@10",
        "Coverage@20",
        "Recall@50",
        "Judged@10",
    ]
    q = d.per_query.iloc[0]
    assert q["Recall@50"] == stored[(q["topic"], "recall@50")]["per_query"][q["query"]]
    holes = d.holes.set_index("topic")
    judged = stored[("alpha", "judged@10")]
    assert holes.at["alpha", "Judged@10"] == judged["value"] and holes.at["alpha", "queries"] == 6
    assert holes.at["alpha", "unjudged share"] == pytest.approx(1 - judged["value"])
    assert d.parameters["dataset_revision"] == lb_dataset.revision and d.parameters["job"] == "run"


def test_nuggets_never_covered_come_from_the_archived_run(board, store, lb_dataset):
    d = view(board["weak"], board, store, lb_dataset)
    runs = store.blobs.ranking_of(int(board["weak"]))  # the top 3 the weak run was submitted with, kept in the store
    assert {len(docs) for run in runs.values() for docs in run.values()} == {3}
    expected = [
        (t, n.query_id, n.nugget_id, n.supported)
        for t in lb_dataset.topics
        for n in uncovered_nuggets(lb_dataset.qrels(t), {"x": runs[t]}, k=20)
    ]
    assert expected  # a top-3 run misses nuggets
    got = list(
        d.uncovered[["topic", "query", "nugget", "supported by a judged doc"]].itertuples(index=False, name=None)
    )
    assert got == expected
    assert all(d.uncovered["nugget text"].str.len() > 0)


def test_paired_tests_against_the_leader_and_each_baseline(board, store, lb_dataset):
    d = view(board["weak"], board, store, lb_dataset)
    versus = list(dict.fromkeys(d.tests["versus"]))
    assert versus[0] == f"leader: strong (#{board['strong']})" and versus[1].startswith("baseline: BM25")
    mine = {(r["topic"], r["measure"]): r["per_query"] for r in store.results_for(int(board["weak"]))}
    leader_id = int(versus[0].rsplit("#", 1)[1].rstrip(")"))
    theirs = {(r["topic"], r["measure"]): r["per_query"] for r in store.results_for(leader_id)}
    qids = sorted(mine[("beta", "recall@50")])
    a, b = ([side[("beta", "recall@50")][q] for q in qids] for side in (theirs, mine))
    expected = paired_test(a, b, resamples=RESAMPLES)
    row = d.tests[(d.tests["versus"] == versus[0]) & (d.tests["topic"] == "beta") & (d.tests["measure"] == "Recall@50")]
    assert row[["this", "other", "difference", "p"]].iloc[0].tolist() == [
        expected.mean_b,
        expected.mean_a,
        expected.diff,
        expected.p_value,
    ]
    assert set(d.tests["topic"]) == {"alpha", "beta", "average"}
    leader = view(str(leader_id), board, store, lb_dataset)
    assert leader.tests["versus"].iloc[0].startswith("runner-up (this system leads)")
    shown = detail.shown(d.tests)
    assert shown["data"][0] == d.tests.iloc[0].tolist()  # full precision kept for sorting and the API
    for raw, text in zip(shown["data"], shown["metadata"]["display_value"], strict=True):
        assert text[:3] == [str(v) for v in raw[:3]]  # versus, topic, measure as they are
        assert text[3:8] == [f"{v:.3f}" for v in raw[3:8]]  # this, other, difference, interval: 3 decimals
        assert text[8] == ("<0.001" if raw[8] < 0.001 else f"{raw[8]:.3f}")


def test_detail_cells_are_shown_with_three_decimals():
    """No `0.55` or `1` next to `0.462`: every measure has 3 decimals; counts stay whole; blanks stay blank."""
    import numpy as np
    import pandas as pd

    assert [detail.cell_text("value", v) for v in (0.55, 1.0, 0.4623, np.float64(0.0))] == [
        "0.550",
        "1.000",
        "0.462",
        "0.000",
    ]
    assert [detail.cell_text("p", v) for v in (0.0004, 0.001, 0.04999, 1.0)] == ["<0.001", "0.001", "0.050", "1.000"]
    assert [detail.cell_text("queries", v) for v in (6, np.int64(12), 6.0)] == ["6", "12", "6"]
    assert [detail.cell_text("x", v) for v in (None, float("nan"), True, np.bool_(False), "BM25")] == [
        "",
        "",
        "yes",
        "no",
        "BM25",
    ]
    frame = pd.DataFrame({"topic": ["alpha", "beta"], "value": [0.55, np.nan], "queries": [6, 12]})
    shown = detail.shown(frame)
    assert shown["headers"] == ["topic", "value", "queries"]
    assert shown["data"] == [["alpha", 0.55, 6], ["beta", None, 12]]  # plain Python values, NaN as None
    assert shown["metadata"]["display_value"] == [["alpha", "0.550", "6"], ["beta", "", "12"]]
    assert detail.shown(frame.iloc[:0]) == {"headers": ["topic", "value", "queries"], "data": [], "metadata": None}


def test_published_keys_and_unknown_systems_have_no_detail(board, store, lb_dataset):
    """The published figures live in the Reference tab only: their old keys ("r1") are unknown here."""
    assert view("r1", board, store, lb_dataset).header.startswith("no system")
    assert view("999", board, store, lb_dataset).header.startswith("no system")
    keys = [key for _, key in detail.choices(board["frame"])]
    assert keys[0] == board["frame"]["id"].iloc[0] and all(key.isdigit() for key in keys)
