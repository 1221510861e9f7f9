"""Every system scored on both snapshots of a topic: the registered retrieval methods and run files given in pairs.

Each side is scored on its own snapshot's judgments through `Dataset.score`, the path the CLI and the leaderboard
score through, so a drift report's numbers are the numbers either snapshot's leaderboard would show. The baselines
are methods of the retrieval registry (`baselines.registry.METHODS`), each the same method re-run on the new corpus: by
default those a dataset repo stores the run of (`Method.stored`: the `bm25`, `dense` and `top_ranked` candidate
configs), read from each snapshot; a method named that a snapshot stores no list of (a plugin's method) is run on
each snapshot's topic. A run file given once is scored on both snapshots as it is (unchanged documents keep their
ids, so an old run scores on the new snapshot wherever its documents survived).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from freshstack_hf.baselines import registry
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import load_run
from freshstack_hf.runs.run import Run, from_ids


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


def check_methods(names: Sequence[str], resources: registry.Resources) -> list[str]:
    """`names` when each is a registered method these resources can run (one needing a cross-encoder only where
    the setup names one); else an error listing those it can, before anything is read or run."""
    offered = registry.runnable(resources.setup)
    unknown = [name for name in names if name not in offered]
    if unknown:
        raise FreshStackError(
            f"unknown drift system {', '.join(repr(n) for n in unknown)}: name registered retrieval methods, of "
            f"{', '.join(offered)}"
        )
    return list(names)


def baseline_pairs(
    old: Dataset,
    new: Dataset,
    topic: str,
    methods: Sequence[str] | None = None,
    resources: registry.Resources | None = None,
) -> list[SystemPair]:
    """The retrieval methods as systems, each named by its title, in the order given (default: registry order).

    `methods` None: every method a dataset repo stores the run of, where both snapshots hold its list (a config
    only one snapshot has is skipped). Named methods: each from its stored lists where both snapshots hold them,
    else run on each snapshot's topic with `resources` (one dense model loaded for every topic and snapshot)."""
    names = [n for n, m in registry.METHODS.items() if m.stored] if methods is None else list(methods)
    pairs = []
    for name in names:
        method = registry.method(name)
        stem = method.stored
        if stem and all(layout.config_path(d.folder, topic, stem).exists() for d in (old, new)):
            runs = [from_ids(d.candidates(topic, stem)) for d in (old, new)]
            pairs.append(SystemPair(method.title, f"candidates:{stem}", *runs))
        elif methods is not None:
            resources = resources or registry.Resources()
            runs = [registry.compute(d.topic(topic), [name], resources)[name].as_scores() for d in (old, new)]
            pairs.append(SystemPair(method.title, f"method:{name}", *runs))
    return pairs


def run_pairs(specs: Sequence[Sequence[str]], old: Dataset, new: Dataset) -> list[SystemPair]:
    """`--run NAME RUN` (one file on both snapshots) or `--run NAME OLD_RUN NEW_RUN`, read leniently."""

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
