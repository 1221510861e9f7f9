"""Bootstrap intervals, paired tests and the per-nugget report: properties that must hold, and determinism."""

from __future__ import annotations

import numpy as np
import pytest

from freshstack_hf.metrics import NuggetQrels, nugget_report, uncovered_nuggets
from freshstack_hf.metrics.uncertainty import bootstrap_ci, bootstrap_cis, paired_test
from freshstack_hf.records import Nugget, NuggetJudgment

RNG = np.random.default_rng(11)
SCORES = RNG.uniform(0, 1, size=120)


def test_interval_contains_the_mean_and_narrows_with_more_queries():
    ci = bootstrap_ci(SCORES)
    assert ci.low < ci.mean < ci.high
    assert ci.mean == pytest.approx(SCORES.mean())
    wide = bootstrap_ci(SCORES[:15])
    assert (wide.high - wide.low) > (ci.high - ci.low)
    # Roughly the normal-theory width: 2 * 1.96 * sd / sqrt(n).
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * SCORES.std() / np.sqrt(len(SCORES)), rel=0.1)


def test_interval_is_deterministic_with_a_seed():
    assert bootstrap_ci(SCORES, seed=3) == bootstrap_ci(SCORES, seed=3)
    assert bootstrap_ci(SCORES, seed=3) != bootstrap_ci(SCORES, seed=4)


def _reference_interval(groups: list[np.ndarray], resamples: int, seed: int) -> tuple[float, float]:
    """The stratified percentile bootstrap written out plainly: per topic, `resamples` draws of its queries from
    one seeded generator (topic after topic, in chunks of at most 2,000,000 entries), the mean over topics."""
    rng = np.random.default_rng(seed)
    per_topic = []
    for g in groups:
        step, means = max(1, 2_000_000 // len(g)), []
        for start in range(0, resamples, step):
            picks = rng.integers(0, len(g), size=(min(resamples, start + step) - start, len(g)))
            means.append(g[picks].mean(axis=1))
        per_topic.append(np.concatenate(means))
    low, high = np.percentile(np.mean(per_topic, axis=0), [2.5, 97.5])
    return float(low), float(high)


def test_intervals_of_several_measures_share_draws_and_equal_each_alone():
    rng = np.random.default_rng(5)
    sizes = [203, 57, 184]
    columns = {m: [rng.random(n) ** (i + 1) for n in sizes] for i, m in enumerate(["a@10", "c@20", "r@50"])}
    together = bootstrap_cis(columns, resamples=700, seed=11)
    for m, groups in columns.items():
        alone = bootstrap_ci(groups, resamples=700, seed=11)
        assert together[m] == alone  # bit for bit
        assert (alone.low, alone.high) == _reference_interval(groups, 700, 11)
    flat = bootstrap_cis({m: groups[0] for m, groups in columns.items()}, resamples=300, seed=2)
    assert flat["c@20"] == bootstrap_ci(columns["c@20"][0], resamples=300, seed=2)
    uneven = bootstrap_cis({"x": [0.1, 0.5, 0.9], "y": [0.2, 0.4]}, resamples=200, seed=1)  # not the same queries
    assert uneven["y"] == bootstrap_ci([0.2, 0.4], resamples=200, seed=1)


def test_constant_scores_give_a_zero_width_interval():
    ci = bootstrap_ci([0.5] * 10, resamples=500)
    assert (ci.low, ci.mean, ci.high) == (0.5, 0.5, 0.5)


def test_stratified_interval_is_around_the_mean_of_topic_means():
    topics = {"big": np.full(200, 0.2) + RNG.normal(0, 0.01, 200), "small": np.full(10, 0.8)}
    ci = bootstrap_ci(topics, resamples=2000)
    assert ci.mean == pytest.approx((topics["big"].mean() + 0.8) / 2)
    assert ci.low < ci.mean < ci.high < 0.55  # a pooled mean would be near 0.23
    assert bootstrap_ci([list(topics["big"]), [0.8] * 10], resamples=2000) == ci


def test_identical_runs_have_p_value_one():
    for method in ("randomization", "bootstrap"):
        test = paired_test(SCORES, SCORES, method=method, resamples=2000)
        assert test.p_value == 1.0
        assert test.diff == 0.0 and test.low == 0.0 and test.high == 0.0


def test_clearly_different_runs_have_small_p_values():
    better = SCORES + 0.1 + RNG.normal(0, 0.02, len(SCORES))
    for method in ("randomization", "bootstrap"):
        test = paired_test(SCORES, better, method=method, resamples=5000)
        assert test.p_value == pytest.approx(1 / 5001)
        assert test.low < test.diff < test.high and test.low > 0.05
        assert test.mean_b - test.mean_a == pytest.approx(test.diff)


def test_noise_is_not_significant_and_tests_are_seeded():
    noisy = SCORES + RNG.normal(0, 0.05, len(SCORES))
    noisy += SCORES.mean() - noisy.mean()  # the same mean: no real difference
    test = paired_test(SCORES, noisy, resamples=4000, seed=5)
    assert test.p_value > 0.5
    assert paired_test(SCORES, noisy, resamples=4000, seed=5) == test


def test_paired_test_is_stratified_by_topic():
    a = {"t1": [0.1, 0.2, 0.3], "t2": [0.5] * 50}
    b = {"t1": [0.4, 0.5, 0.6], "t2": [0.5] * 50}
    test = paired_test(a, b, resamples=2000)
    assert test.diff == pytest.approx(0.3 / 2)  # t1's +0.3 weighs half, however few its queries


def test_paired_test_rejects_misaligned_inputs():
    with pytest.raises(ValueError, match="same queries"):
        paired_test([0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="unknown method"):
        paired_test([0.1], [0.2], method="t-test")
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_ci([])


def test_nugget_report_names_covering_runs_and_unsupported_nuggets():
    judgments = [
        NuggetJudgment("q1", "q1_0", "d1", 1),
        NuggetJudgment("q1", "q1_1", "d2", 1),
        NuggetJudgment("q1", "q1_2", "d3", 0),  # judged, never supported
    ]
    nuggets = [Nugget(f"q1_{i}", "q1", "") for i in range(4)]  # q1_3 never judged
    qrels = NuggetQrels.from_judgments(judgments, nuggets=nuggets)
    runs = {"A": {"q1": {"d1": 2.0, "x": 1.0}}, "B": {"q1": {"x": 2.0, "d2": 1.0, "d1": 0.5}}}
    report = {row.nugget_id: (row.supported, row.covered_by) for row in nugget_report(qrels, runs, k=2)}
    assert report == {
        "q1_0": (True, ("A",)),
        "q1_1": (True, ("B",)),
        "q1_2": (False, ()),
        "q1_3": (False, ()),
    }
    assert [row.nugget_id for row in uncovered_nuggets(qrels, runs, k=3)] == ["q1_2", "q1_3"]
