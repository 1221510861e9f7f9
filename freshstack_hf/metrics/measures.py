"""The one table of measures: what each family computes, and every id, pretty name, tooltip and headline flag.

The evaluator, the CLI table, the MTEB score keys and the leaderboard columns all name measures through this
module, so a measure is spelled one way everywhere and adding `alpha_ndcg@20` is a one-line change to
`MEASURES`. Ids are `family@k` (`alpha_ndcg@10`); `parse_measure` also accepts the official evaluator's keys
(`alpha-nDCG@10`, `Coverage@20`, `Recall@50`, `NDCG@10`) so results from either side can be compared.

A family carries its own computation (`Family.compute`), so the engine scores whatever `FAMILIES` holds and the
CLI offers whatever it lists: a new family is one `Family` here (or `register_family` from outside the library)
and nothing else changes. `compute` gets the run read against the topic's judgments once (`RankedJudgments`)
and returns every cutoff at once, whole-topic array arithmetic rather than a loop per query.

Parameters belong to the measure, as in ir_measures: alpha is part of alpha-nDCG (`alpha_ndcg(alpha=0.3)@10`).
A measure always holds every parameter of its family (defaults filled in), so `alpha_ndcg@10` and
`alpha_ndcg(alpha=0.5)@10` are the same measure. `id` names a parameter only where it differs from the
default (so stored ids and table columns stay short and stable); `spec` names all of them, and is what
stored results record, so a number always says which alpha made it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics.ideal import discounts

if TYPE_CHECKING:
    from freshstack_hf.metrics.qrels import NuggetQrels


@dataclass(frozen=True, slots=True)
class RankedJudgments:
    """A run read against one topic's judgments: what every family computes from.

    `rows[i, r]` is the `qrels.matrix` row of the doc the run ranks at r + 1 for the i-th judged query
    (`qrels.unjudged_row` for an unjudged doc or a rank past the run's end), and `rel` is `qrels.matrix[rows]`:
    queries x depth x nugget slots, True where that doc supports that nugget of the query.
    """

    qrels: NuggetQrels
    rows: np.ndarray
    rel: np.ndarray

    @property
    def depth(self) -> int:
        return self.rows.shape[1]

    def head(self, depth: int) -> RankedJudgments:
        """The top `depth` ranks only (views, no copy): a family computes no deeper than its deepest cutoff."""
        return RankedJudgments(self.qrels, self.rows[:, :depth], self.rel[:, :depth])


# (ranked, the measure's parameters) -> queries x ranked.depth: the value at every cutoff, cutoff k in column k-1.
Compute = Callable[[RankedJudgments, Mapping[str, float]], np.ndarray]


@dataclass(frozen=True, slots=True)
class Family:
    """What a measure computes, independent of its cutoff, and how: `compute` returns all cutoffs at once."""

    key: str
    pretty: str
    description: str
    compute: Compute
    official: str = ""  # the freshstack package's key prefix, "" where it has none
    defaults: tuple[tuple[str, float], ...] = ()  # the family's parameters and their default values
    # Whether `compute` tells a judged doc that supports nothing from an unjudged one (`rows` against
    # `qrels.unjudged_row`). False (a family computed from `rel` alone) lets scoring look up only the supporting
    # docs; True, the safe default for a registered family, keeps every judged doc's row.
    reads_judged_rows: bool = True


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den is 0 (a query nothing can satisfy scores 0, as in the official)."""
    den = np.broadcast_to(den, num.shape)
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _alpha_ndcg(ranked: RankedJudgments, params: Mapping[str, float]) -> np.ndarray:
    """ndeval's alpha-nDCG: a doc's gain for a nugget shrinks by (1 - alpha) per earlier doc supporting it."""
    alpha, depth, rel = params["alpha"], ranked.depth, ranked.rel
    seen_before = np.cumsum(rel, axis=1, dtype=np.int64) - rel
    weights = (1.0 - alpha) ** np.arange(depth + 1, dtype=np.float64)
    gains = (rel * weights[seen_before]).sum(axis=2)
    dcg = np.cumsum(gains * discounts(depth), axis=1)
    return ratio(dcg, ranked.qrels.ideal_alpha_dcg(alpha, depth))  # the ideal costs per rank: no deeper than asked


def _ndcg(ranked: RankedJudgments, params: Mapping[str, float]) -> np.ndarray:
    dcg = np.cumsum(ranked.rel.sum(axis=2) * discounts(ranked.depth), axis=1)
    return ratio(dcg, ranked.qrels.ideal_ndcg_dcg(ranked.depth))


def _coverage(ranked: RankedJudgments, params: Mapping[str, float]) -> np.ndarray:
    return ratio(_covered_by_rank(ranked.rel), ranked.qrels.nugget_counts[:, None])


def _covered_by_rank(rel: np.ndarray) -> np.ndarray:
    """queries x depth: nuggets covered within the top r+1, from each nugget's first supporting rank.

    Counting first hits is about twice as fast as accumulating coverage over every rank and slot.
    """
    n_q, depth, _ = rel.shape
    first = np.where(rel.any(axis=1), rel.argmax(axis=1), depth)  # depth = never covered
    flat = (np.arange(n_q)[:, None] * (depth + 1) + first).ravel()
    counts = np.bincount(flat, minlength=n_q * (depth + 1)).reshape(n_q, depth + 1)[:, :depth]
    return np.cumsum(counts, axis=1)


def _recall(ranked: RankedJudgments, params: Mapping[str, float]) -> np.ndarray:
    found = np.cumsum(ranked.rel.any(axis=2), axis=1)
    return ratio(found, ranked.qrels.relevant_counts[:, None])


def _judged(ranked: RankedJudgments, params: Mapping[str, float]) -> np.ndarray:
    return np.cumsum(ranked.rows != ranked.qrels.unjudged_row, axis=1) / np.arange(1, ranked.depth + 1)


BUILT_IN: tuple[Family, ...] = (
    Family(
        "alpha_ndcg",
        "α-nDCG",
        "diversity-aware nDCG over nuggets (ndeval): a doc gains less for nuggets already seen",
        _alpha_ndcg,
        "alpha-nDCG",
        (("alpha", 0.5),),
        reads_judged_rows=False,
    ),
    Family(
        "coverage",
        "Coverage",
        "share of the query's nuggets supported by at least one top-k doc",
        _coverage,
        "Coverage",
        reads_judged_rows=False,
    ),
    Family(
        "recall",
        "Recall",
        "share of the docs supporting any nugget that appear in the top k",
        _recall,
        "Recall",
        reads_judged_rows=False,
    ),
    Family(
        "ndcg",
        "nDCG",
        "trec_eval nDCG with gain = number of nuggets a doc supports",
        _ndcg,
        "NDCG",
        reads_judged_rows=False,
    ),
    Family("judged", "Judged", "share of the top k that has any judgment for the query", _judged),
)
# Every family the evaluator computes and the CLI offers, in display order; `register_family` adds to it.
FAMILIES: dict[str, Family] = {f.key: f for f in BUILT_IN}
_FAMILY_KEY = re.compile(r"[a-z][a-z0-9_]*")


def register_family(family: Family) -> None:
    """Make `family` a measure family everywhere (`parse_measure`, `evaluate`, `Dataset.score`, the CLI's
    `--measures` and `--k` grid); a key already taken is refused rather than silently replaced."""
    if not _FAMILY_KEY.fullmatch(family.key):
        raise ValueError(f"measure family {family.key!r}: use lowercase letters, digits and '_', a letter first")
    if family.key in FAMILIES or family.key in _ALIASES:
        raise ValueError(f"measure family {family.key!r} is already registered")
    FAMILIES[family.key] = family


def unregister_family(key: str) -> None:
    """Remove a family added by `register_family`; the built-in families stay."""
    if any(f.key == key for f in BUILT_IN):
        raise ValueError(f"the built-in measure family {key!r} cannot be removed")
    FAMILIES.pop(key, None)


@dataclass(frozen=True, slots=True)
class Measure:
    """A family at a cutoff with its parameters. Frozen and hashable, so it can key dicts and sets."""

    family: str
    k: int
    params: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        given = dict(self.params)
        family = FAMILIES[self.family]
        unknown = sorted(set(given) - {name for name, _ in family.defaults})
        if unknown:
            allowed = ", ".join(name for name, _ in family.defaults) or "none"
            raise FreshStackError(f"{self.family} takes no parameter {unknown[0]!r} (parameters: {allowed})")
        full = tuple((name, float(given.get(name, default))) for name, default in family.defaults)
        object.__setattr__(self, "params", full)  # normalised, so equal measures compare and hash equal
        if "alpha" in given and not 0.0 <= dict(full)["alpha"] <= 1.0:
            raise FreshStackError(f"alpha must be within [0, 1], not {given['alpha']}")

    def _args(self, everything: bool) -> str:
        defaults = dict(FAMILIES[self.family].defaults)
        shown = [(n, v) for n, v in self.params if everything or v != defaults[n]]
        return f"({','.join(f'{n}={v:g}' for n, v in shown)})" if shown else ""

    @property
    def id(self) -> str:
        """`family@k`, with the parameters that differ from the family's defaults: `alpha_ndcg(alpha=0.3)@10`."""
        return f"{self.family}{self._args(False)}@{self.k}"

    @property
    def spec(self) -> str:
        """Every parameter spelled out (`alpha_ndcg(alpha=0.5)@10`): what stored results record."""
        return f"{self.family}{self._args(True)}@{self.k}"

    @property
    def name(self) -> str:
        return f"{FAMILIES[self.family].pretty}{self._args(False).replace('alpha', 'α')}@{self.k}"

    @property
    def description(self) -> str:
        settings = "".join(f", {n}={v:g}" for n, v in self.params)
        return f"{FAMILIES[self.family].description} (k={self.k}{settings})"

    @property
    def official_key(self) -> str:
        """The key the official `EvaluateRetrieval` reports this under, or "" if it has no such measure."""
        prefix = FAMILIES[self.family].official
        return f"{prefix}@{self.k}" if prefix else ""

    def with_params(self, **params: float) -> Measure:
        """This measure with the given parameters, where its family has them (others are ignored)."""
        known = {name for name, _ in FAMILIES[self.family].defaults}
        merged = {**dict(self.params), **{n: v for n, v in params.items() if n in known}}
        return Measure(self.family, self.k, tuple(merged.items()))

    def __str__(self) -> str:
        return self.id


# The FreshStack paper's three headline measures, in the order tables show them.
HEADLINE: tuple[Measure, ...] = (Measure("alpha_ndcg", 10), Measure("coverage", 20), Measure("recall", 50))

# Every measure the project reports by default (CLI JSON, leaderboard columns). Order = display order.
MEASURES: tuple[Measure, ...] = (
    *HEADLINE,
    Measure("alpha_ndcg", 20),
    Measure("coverage", 10),
    Measure("coverage", 50),
    Measure("recall", 10),
    Measure("recall", 20),
    Measure("ndcg", 10),
    Measure("judged", 10),
)

_ALIASES = {"alphandcg": "alpha_ndcg", "α_ndcg": "alpha_ndcg", "αndcg": "alpha_ndcg"}
_MEASURE_RE = re.compile(r"^\s*([^@(\s]+)\s*(?:\(([^)]*)\))?\s*@\s*(\d+)\s*$")
_PARAM_RE = re.compile(r"^\s*(\w+)\s*=\s*([-+0-9.eE]+)\s*$")


def parse_measure(text: str | Measure) -> Measure:
    """Parse `alpha_ndcg@20`, `alpha_ndcg(alpha=0.3)@10`, `Coverage@5`, `alpha-nDCG@10`, ...; any k >= 1."""
    if isinstance(text, Measure):
        return text
    match = _MEASURE_RE.match(text)
    family = match.group(1).lower().replace("-", "_") if match else ""
    family = _ALIASES.get(family, family)
    if not match or family not in FAMILIES or int(match.group(3)) < 1:
        known = ", ".join(f"{f}@K" for f in FAMILIES)
        raise FreshStackError(f"unknown measure {text!r}: expected one of {known} with K >= 1 (e.g. alpha_ndcg@10)")
    params = []
    for part in (match.group(2) or "").split(","):
        if not part.strip():
            continue
        found = _PARAM_RE.match(part)
        if not found:
            raise FreshStackError(f"measure {text!r}: parameter {part.strip()!r} is not name=number (alpha=0.5)")
        params.append((found.group(1), float(found.group(2))))
    return Measure(family, int(match.group(3)), tuple(params))


def parse_measures(items: Iterable[str | Measure] | str) -> tuple[Measure, ...]:
    """Parse a list (or a comma-separated string) of measures, dropping repeats but keeping the order."""
    if isinstance(items, str):
        items = [part for part in items.split(",") if part.strip()]
    return tuple(dict.fromkeys(parse_measure(item) for item in items))


def measures_at(
    ks: Iterable[int], families: Iterable[str] = ("alpha_ndcg", "coverage", "recall")
) -> tuple[Measure, ...]:
    """The given families at each cutoff, e.g. the official evaluator's `k_values` grid."""
    return tuple(Measure(family, int(k)) for family in families for k in ks)


def with_params(measures: Iterable[str | Measure], **params: float) -> tuple[Measure, ...]:
    """`measures` with the given parameters set where their family has them (`alpha=0.3` touches alpha-nDCG)."""
    return tuple(dict.fromkeys(parse_measure(m).with_params(**params) for m in measures))
