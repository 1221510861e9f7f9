"""The one per-query score table runs and answers share, on hand-made values: intervals, the average, the stored
form and paired comparisons, with a measure some queries lack (an answer's Vital where no nugget is vital)."""

from __future__ import annotations

import pytest

from freshstack_hf.metrics import AVERAGE, TopicResult, bootstrap_ci, paired_test
from freshstack_hf.metrics.score_table import ScoreTable, compare_tables, tabulate


def table(per_topic: dict[str, dict[str, dict[str, float]]], resamples: int = 400) -> ScoreTable:
    topics = {}
    for name, per_query in per_topic.items():
        ids = list(dict.fromkeys(m for s in per_query.values() for m in s))
        cols = {m: [s[m] for s in per_query.values() if m in s] for m in ids}
        topics[name] = TopicResult(per_query, {m: sum(c) / len(c) for m, c in cols.items()})
    intervals, average = tabulate(topics, resamples=resamples, seed=1)
    return ScoreTable(topics, intervals, average)


A = {
    "t1": {"q1": {"all": 1.0, "vital": 1.0}, "q2": {"all": 0.5}, "q3": {"all": 0.0, "vital": 0.0}},
    "t2": {"q4": {"all": 0.25}, "q5": {"all": 0.75}},
}
B = {
    "t1": {"q1": {"all": 0.5, "vital": 1.0}, "q2": {"all": 1.0}, "q3": {"all": 0.5, "vital": 0.5}},
    "t2": {"q4": {"all": 0.5}, "q5": {"all": 1.0}},
}


def test_means_intervals_and_the_average_follow_the_queries_that_have_each_measure():
    a = table(A)
    assert a.topics["t1"].metrics == {"all": 0.5, "vital": 0.5}
    assert list(a.topics["t1"].column("vital")) == [1.0, 0.0]  # q2 has no vital nugget: not a zero
    assert a.intervals["t1"]["vital"] == bootstrap_ci([1.0, 0.0], resamples=400, seed=1)
    assert a.average == {"all": pytest.approx((0.5 + 0.5) / 2)}  # vital: t2 has none, so no average
    assert set(a.intervals[AVERAGE]) == {"all"}
    assert a.intervals[AVERAGE]["all"] == bootstrap_ci([[1.0, 0.5, 0.0], [0.25, 0.75]], resamples=400, seed=1)
    none = tabulate(a.topics, resamples=0)
    assert none == ({}, a.average)  # resamples=0: means only


def test_the_stored_form_keys_and_filters_measures():
    stored = table(A).stored(["vital"], key=lambda m: f"answers:{m}")
    assert set(stored) == {"t1"}  # t2 has no vital value: no row at all
    row = stored["t1"]
    assert row["metrics"] == {"answers:vital": 0.5}
    assert row["per_query"] == {"q1": {"answers:vital": 1.0}, "q2": {}, "q3": {"answers:vital": 0.0}}
    low, high = row["ci"]["answers:vital"]
    assert low <= 0.5 <= high


def test_paired_comparison_on_the_queries_both_have():
    a, b = table(A), table(B)
    tests = compare_tables(a, b, resamples=400, seed=1)
    assert set(tests) == {"t1", "t2", AVERAGE} and set(tests["t1"]) == {"all", "vital"}
    assert tests["t1"]["vital"] == paired_test([1.0, 0.0], [1.0, 0.5], resamples=400, seed=1)
    assert tests["t2"]["all"].diff == pytest.approx(0.25)
    assert set(tests[AVERAGE]) == {"all"}
    stratified = paired_test([[1.0, 0.5, 0.0], [0.25, 0.75]], [[0.5, 1.0, 0.5], [0.5, 1.0]], resamples=400, seed=1)
    assert tests[AVERAGE]["all"] == stratified
    only = compare_tables(a, b, ["all"], resamples=400, seed=1)
    assert all(set(by) == {"all"} for by in only.values())
