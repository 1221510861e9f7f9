"""Every system scored on both snapshots of a topic: the candidate-list baselines and run files given in pairs.

Each side is scored on its own snapshot's judgments through `Dataset.score`, the path the CLI and the leaderboard
score through, so a drift report's numbers are the numbers either snapshot's leaderboard would show. The baselines
are each snapshot's own candidate configs (`bm25`, `dense`, `top_ranked`): the same method, re-run on the new
corpus. A run file given once is scored on both snapshots as it is (unchanged documents keep their ids, so an old
run scores on the new snapshot wherever its documents survived).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs.run import Run, from_ids

BASELINES = {"bm25": "BM25", "dense": "dense", "top_ranked": "RRF hybrid"}


@dataclass(frozen=True, slots=True)
class SystemPair:
    """One system's run on the old and on the new snapshot (the same run twice when it was given once)."""

    name: str
    source: str
    old: Run
    new: Run


@dataclass(frozen=True, slots=True)
class SystemScores:
    """A system's means and per-query values per headline measure, on each snapshot."""

    name: str
    source: str
    old: dict[str, float]
    new: dict[str, float]
    old_per_query: dict[str, dict[str, float]] = field(repr=False)  # measure -> query -> value
    new_per_query: dict[str, dict[str, float]] = field(repr=False)

    def as_json(self) -> dict:
        return {"source": self.source, "old": self.old, "new": self.new}


def baseline_pairs(old: Dataset, new: Dataset, topic: str) -> list[SystemPair]:
    """The candidate-config baselines present on both snapshots (a config only one snapshot has is skipped)."""
    pairs = []
    for stem, label in BASELINES.items():
        if all(layout.config_path(d.folder, topic, stem).exists() for d in (old, new)):
            pairs.append(
                SystemPair(
                    label,
                    f"candidates:{stem}",
                    from_ids(old.candidates(topic, stem)),
                    from_ids(new.candidates(topic, stem)),
                )
            )
    return pairs


def run_pairs(specs: Sequence[Sequence[str]], old: Dataset, new: Dataset) -> list[SystemPair]:
    """`--run NAME RUN` (one file on both snapshots) or `--run NAME OLD_RUN NEW_RUN`, read leniently."""
    from freshstack_hf.runs import load_run

    pairs = []
    for spec in specs:
        if len(spec) not in (2, 3):
            raise FreshStackError(f"--run {' '.join(spec)}: give NAME RUN or NAME OLD_RUN NEW_RUN")
        name, paths = spec[0], list(spec[1:])
        old_path, new_path = paths[0], paths[-1]
        old_run = load_run(old_path, query_ids=old.query_ids(), max_depth=None).run
        new_run = load_run(new_path, query_ids=new.query_ids(), max_depth=None).run
        source = f"run:{old_path}" if old_path == new_path else f"runs:{old_path} -> {new_path}"
        pairs.append(SystemPair(name, source, old_run, new_run))
    names = [p.name for p in pairs]
    if len(set(names)) != len(names):
        raise FreshStackError(f"--run names must differ (given: {', '.join(names)})")
    return pairs


def score_pairs(
    pairs: Sequence[SystemPair], old: Dataset, new: Dataset, topic: str, measures: Sequence[str] | None = None
) -> list[SystemScores]:
    """Score each pair on its snapshot's judgments of `topic` (no intervals here: the drift interval is tau's)."""
    ids = [m.id for m in HEADLINE] if measures is None else list(measures)
    out = []
    for pair in pairs:
        sides = []
        for dataset, run in ((old, pair.old), (new, pair.new)):
            with warnings.catch_warnings():  # queries a run lacks score 0, as everywhere; not worth a warning here
                warnings.simplefilter("ignore")
                scores = dataset.score(run, topics=[topic], measures=ids, interval_measures=ids, resamples=0)
            result = scores.topics[topic]
            per_query = {m: {q: row[m] for q, row in result.per_query.items()} for m in ids}
            sides.append(({m: result.metrics[m] for m in ids}, per_query))
        out.append(SystemScores(pair.name, pair.source, sides[0][0], sides[1][0], sides[0][1], sides[1][1]))
    return out


def by_measure(scores: Sequence[SystemScores], measure: str) -> tuple[dict, dict, dict, dict]:
    """(old means, new means, old per-query, new per-query) of every system for one measure, keyed by name."""
    return (
        {s.name: s.old[measure] for s in scores},
        {s.name: s.new[measure] for s in scores},
        {s.name: s.old_per_query[measure] for s in scores},
        {s.name: s.new_per_query[measure] for s in scores},
    )


def check_unique(scores: Sequence[SystemScores]) -> Mapping[str, SystemScores]:
    """Systems by name; two with one name would silently merge in every table."""
    named: dict[str, SystemScores] = {}
    for s in scores:
        if s.name in named:
            raise FreshStackError(f"two systems are named {s.name!r}; give run files other names")
        named[s.name] = s
    return named
