"""Rank intervals by a paired bootstrap over queries (`freshstack_hf.metrics.rank_uncertainty`): a system ahead
on every query has a single-rank interval, near-identical systems share the tied marker, the draws are seeded and
shared by every system, and the topic average resamples each topic with the draws of its own ranking."""

from __future__ import annotations

import numpy as np
import pytest

from freshstack_hf.metrics.rank_uncertainty import (
    competition_ranks,
    rank_distribution,
    rank_intervals,
    topic_generator,
)


def noisy(rng: np.random.Generator, systems: int = 4, queries: int = 60) -> np.ndarray:
    return rng.random((systems, queries))


def test_competition_ranks_share_the_better_rank_on_ties():
    assert competition_ranks(np.array([0.5, 0.7, 0.7, 0.1])).tolist() == [3, 1, 1, 4]
    assert competition_ranks(np.array([[1.0, 2.0], [2.0, 2.0 + 1e-15]])).tolist() == [[2, 1], [1, 1]]


def test_a_system_ahead_on_every_query_has_a_single_rank_interval():
    rng = np.random.default_rng(1)
    others = noisy(rng, 3) * 0.5
    best = others.max(axis=0) + 0.01  # strictly ahead of every other system on every query
    intervals = rank_intervals({"t": np.vstack([others, best])}, resamples=500)
    leader = intervals[-1]
    assert (leader.rank, leader.low, leader.high, leader.first_share) == (1, 1, 1, 1.0)
    assert not leader.tied and leader.text() == "1 (1–1)"  # a clear leader carries no tied marker
    two = {"a": np.vstack([others, best]), "b": np.vstack([others, best])[:, :20]}  # the average too
    assert (rank_intervals(two, resamples=300)[-1].low, rank_intervals(two, resamples=300)[-1].high) == (1, 1)


def test_near_identical_systems_share_the_tied_marker():
    rng = np.random.default_rng(2)
    top = rng.random(80) * 0.3 + 0.6
    twin = top + rng.normal(0, 0.05, 80)  # differs by far less than the intervals' width
    weak = rng.random((2, 80)) * 0.3
    intervals = rank_intervals({"t": np.vstack([weak[0], top, twin, weak[1]])}, resamples=1000)
    a, b = intervals[1], intervals[2]
    assert a.tied and b.tied and a.text().endswith("≈1") and b.text().endswith("≈1")
    assert {a.rank, b.rank} == {1, 2} and a.low == b.low == 1 and a.high == b.high == 2
    assert min(a.first_share, b.first_share) >= 0.025
    assert not intervals[0].tied and not intervals[3].tied and intervals[0].low >= 3


def test_identical_systems_rank_alike_in_every_replicate():
    rng = np.random.default_rng(3)
    row = rng.random(40)
    histogram = rank_distribution({"t": np.vstack([row, row, row * 0.5])}, resamples=200)
    assert histogram[0].tolist() == histogram[1].tolist() == [0, 200, 0, 0]  # both rank 1, always
    intervals = rank_intervals({"t": np.vstack([row, row])}, resamples=200)
    assert [(i.rank, i.low, i.high, i.tied) for i in intervals] == [(1, 1, 1, True)] * 2


def test_seeded_reproducible_and_the_same_resamples_for_every_system():
    rng = np.random.default_rng(4)
    scores = {"a": noisy(rng, 6), "b": noisy(rng, 6, 30)}
    first = rank_distribution(scores, resamples=700, seed=7)
    assert np.array_equal(first, rank_distribution(scores, resamples=700, seed=7))
    assert not np.array_equal(first, rank_distribution(scores, resamples=700, seed=8))
    # Shared draws: each replicate's ranks are a permutation-with-ties of 1..n, so every replicate contributes
    # exactly one rank per system, and the per-rank totals are those of n ranked systems (no rank 2 twice).
    assert first.sum(axis=1).tolist() == [700] * 6
    assert first[:, 1:].sum(axis=0).tolist() == [700] * 6
    # The same draws for every system: adding a constant to one system's every query only moves that system,
    # never reorders the others among themselves within a replicate.
    shifted = {t: m.copy() for t, m in scores.items()}
    for m in shifted.values():
        m[0] += 10.0
    moved = rank_distribution(shifted, resamples=700, seed=7)
    assert moved[0, 1] == 700
    reference = rank_distribution({t: m[1:] for t, m in scores.items()}, resamples=700, seed=7)
    assert np.array_equal(moved[1:, 2:], reference[:, 1:])


def test_a_topics_draws_are_the_same_alone_and_in_the_average():
    draws = topic_generator("alpha", 0).integers(0, 10, 5)
    assert np.array_equal(draws, topic_generator("alpha", 0).integers(0, 10, 5))
    assert not np.array_equal(draws, topic_generator("beta", 0).integers(0, 10, 5))
    rng = np.random.default_rng(5)
    alone = noisy(rng, 5)
    # A topic whose scores are all equal adds nothing to any ranking: the average ranks exactly like the topic.
    average = rank_distribution({"alpha": alone, "flat": np.full((5, 9), 0.3)}, resamples=400)
    assert np.array_equal(average, rank_distribution({"alpha": alone}, resamples=400))


def test_mismatched_matrices_are_refused():
    with pytest.raises(ValueError, match="same systems"):
        rank_intervals({"a": np.zeros((3, 4)), "b": np.zeros((2, 4))})
    with pytest.raises(ValueError, match="at least one topic"):
        rank_intervals({})
    assert rank_intervals({"a": np.zeros((0, 4))}) == []


def test_the_kept_query_draws_are_the_ones_drawn_afresh_and_cannot_be_changed():
    from freshstack_hf.metrics.rank_uncertainty import CHUNK, _replicate_counts, replicate_draws, topic_generator

    sizes = (("alpha", 7), ("beta", 3))
    replicate_draws.cache_clear()
    kept = replicate_draws(sizes, 1200, 5)
    generators = {t: topic_generator(t, 5) for t, _ in sizes}
    fresh = [
        np.hstack([_replicate_counts(generators[t], min(CHUNK, 1200 - start), n) for t, n in sizes])
        for start in range(0, 1200, CHUNK)
    ]
    assert len(kept) == len(fresh) == 3 and all(np.array_equal(a, b) for a, b in zip(kept, fresh, strict=True))
    assert replicate_draws(sizes, 1200, 5) is kept  # a second board state reuses them
    with pytest.raises(ValueError):
        kept[0][0, 0] = 99  # shared by every caller: read-only
    rng = np.random.default_rng(1)
    scores = {"alpha": rng.random((4, 7)), "beta": rng.random((4, 3))}
    first = rank_intervals(scores, resamples=1200, seed=5)
    replicate_draws.cache_clear()
    assert rank_intervals(scores, resamples=1200, seed=5) == first
