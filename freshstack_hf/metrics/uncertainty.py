"""Uncertainty of topic scores: bootstrap confidence intervals and paired significance tests over queries.

A FreshStack topic has 50-200 queries, so a difference of 0.01 in alpha-nDCG@10 is often noise; reporting an
interval and a p-value next to each mean keeps readers from ranking systems on it. Everything here resamples
queries, never documents, with a seeded generator (same inputs and seed, same numbers), and draws all
resamples as one matrix per topic instead of looping in Python.

The all-topics score is a plain mean of topic means, so its interval and test are *stratified*: queries are
resampled or sign-flipped within their own topic, and each topic keeps its weight 1/T whatever its size.

Paired tests: `randomization` (default; Fisher's sign-flip test, the one Smucker et al. 2007 recommend for
IR) and `bootstrap` (the paired bootstrap, p-value from the bootstrap distribution re-centred on 0). Both
are two-sided, with the +1 correction, so p is never 0 and identical runs give exactly 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from freshstack_hf.defaults import RESAMPLES, SEED

_CHUNK = 65_536  # resample-matrix entries drawn at once: half a megabyte, reused from cache (2M: 20% slower)

Groups = Sequence[Sequence[float]] | Mapping[str, Sequence[float]]


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean with its bootstrap percentile interval."""

    mean: float
    low: float
    high: float
    confidence: float = 0.95


@dataclass(frozen=True, slots=True)
class PairedTest:
    """Run B against run A on the same queries: means, the difference B - A with its interval, a p-value."""

    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    p_value: float
    method: str


def _groups(values: Groups) -> list[np.ndarray]:
    items = list(values.values()) if isinstance(values, Mapping) else list(values)
    groups = [np.asarray(v, dtype=np.float64) for v in items]
    if not groups or any(len(g) == 0 for g in groups):
        raise ValueError("every topic needs at least one query score")
    return groups


def _boot_means(xs: Sequence[np.ndarray], resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Means of `resamples` bootstrap samples of each x (drawn with replacement, same size as x); the xs, one per
    measure of the same queries, share each draw, so each gets exactly the means it would get alone."""
    n = len(xs[0])
    out = [np.empty(resamples) for _ in xs]
    step = max(1, _CHUNK // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        picks = rng.integers(0, n, size=(stop - start, n))
        for x, means in zip(xs, out, strict=True):
            means[start:stop] = x[picks].mean(axis=1)
    return out


def _stratified_means(groups: list[list[np.ndarray]], resamples: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Per measure, the mean over topics of its bootstrap means; `groups[t][m]` is topic t's scores of measure m."""
    per_topic = [_boot_means(measures, resamples, rng) for measures in groups]
    return [np.mean([topic[m] for topic in per_topic], axis=0) for m in range(len(groups[0]))]


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_ci(
    values: Sequence[float] | Groups,
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """Percentile bootstrap interval of a mean; pass per-topic groups for the stratified all-topics mean."""
    return bootstrap_cis({"": values}, confidence=confidence, resamples=resamples, seed=seed)[""]


def bootstrap_cis(
    columns: Mapping[str, Sequence[float] | Groups],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Interval]:
    """`bootstrap_ci` of several measures of the same queries (name -> values, flat or per topic), each interval
    exactly `bootstrap_ci`'s: one seeded draw of queries serves every measure, a third of the cost for three."""
    grouped = {name: _groups(_as_groups(values)) for name, values in columns.items()}
    shapes = {tuple(len(g) for g in groups) for groups in grouped.values()}
    if len(shapes) > 1:  # different queries per measure: each its own draws
        return {
            name: bootstrap_ci(values, confidence=confidence, resamples=resamples, seed=seed)
            for name, values in columns.items()
        }
    names = list(grouped)
    if not names:
        return {}
    rng = np.random.default_rng(seed)
    by_topic = [[grouped[name][t] for name in names] for t in range(len(grouped[names[0]]))]
    samples = _stratified_means(by_topic, resamples, rng)
    out = {}
    for name, boot in zip(names, samples, strict=True):
        mean = float(np.mean([g.mean() for g in grouped[name]]))
        out[name] = Interval(mean, *_percentiles(boot, confidence), confidence)
    return out


def _as_groups(values: Sequence[float] | Groups) -> Groups:
    """A flat list of numbers is one topic; a list of lists or a mapping is already per topic."""
    if isinstance(values, Mapping):
        return values
    items = list(values)
    if items and np.ndim(items[0]) == 0:
        return [items]
    return items


def paired_test(
    a: Sequence[float] | Groups,
    b: Sequence[float] | Groups,
    *,
    method: str = "randomization",
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedTest:
    """Two-sided paired test of B vs A; values are per query, aligned (same order, same topics)."""
    groups_a, groups_b = _groups(_as_groups(a)), _groups(_as_groups(b))
    if [len(g) for g in groups_a] != [len(g) for g in groups_b]:
        raise ValueError("paired test needs the same queries, in the same order, for both runs")
    diffs = [gb - ga for ga, gb in zip(groups_a, groups_b, strict=True)]
    observed = float(np.mean([d.mean() for d in diffs]))
    rng = np.random.default_rng(seed)
    (boot,) = _stratified_means([[d] for d in diffs], resamples, rng)
    low, high = _percentiles(boot, confidence)
    if method == "randomization":
        null = _sign_flip_means(diffs, resamples, rng)
    elif method == "bootstrap":
        null = boot - observed  # the bootstrap distribution shifted to the null hypothesis
    else:
        raise ValueError(f"unknown method {method!r}: use 'randomization' or 'bootstrap'")
    tolerance = 1e-12 * max(1.0, abs(observed))  # float noise must not turn an equal statistic into a smaller one
    extreme = int(np.count_nonzero(np.abs(null) >= abs(observed) - tolerance))
    return PairedTest(
        mean_a=float(np.mean([g.mean() for g in groups_a])),
        mean_b=float(np.mean([g.mean() for g in groups_b])),
        diff=observed,
        low=low,
        high=high,
        p_value=(extreme + 1) / (resamples + 1),
        method=method,
    )


def _sign_flip_means(diffs: list[np.ndarray], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The statistic under random swaps of A and B within each query (each topic weighted 1/T)."""
    out = np.zeros(resamples)
    for d in diffs:
        step = max(1, _CHUNK // len(d))
        for start in range(0, resamples, step):
            stop = min(resamples, start + step)
            signs = rng.integers(0, 2, size=(stop - start, len(d))) * 2 - 1
            out[start:stop] += signs @ d / len(d)
    return out / len(diffs)
