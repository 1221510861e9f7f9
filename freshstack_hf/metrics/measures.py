"""The one table of measures: every id, pretty name, tooltip and headline flag is read from here.

The evaluator, the CLI table, the MTEB score keys and the leaderboard columns all name measures through this
module, so a measure is spelled one way everywhere and adding `alpha_ndcg@20` is a one-line change to
`MEASURES`. Ids are `family@k` (`alpha_ndcg@10`); `parse_measure` also accepts the official evaluator's keys
(`alpha-nDCG@10`, `Coverage@20`, `Recall@50`, `NDCG@10`) so results from either side can be compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from freshstack_hf.errors import FreshStackError


@dataclass(frozen=True, slots=True)
class Family:
    """What a measure computes, independent of its cutoff."""

    key: str
    pretty: str
    description: str
    official: str  # the freshstack package's key prefix, "" where it has none


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        Family(
            "alpha_ndcg",
            "α-nDCG",
            "diversity-aware nDCG over nuggets (ndeval, alpha=0.5): a doc gains less for nuggets already seen",
            "alpha-nDCG",
        ),
        Family("coverage", "Coverage", "share of the query's nuggets supported by at least one top-k doc", "Coverage"),
        Family("recall", "Recall", "share of the docs supporting any nugget that appear in the top k", "Recall"),
        Family("ndcg", "nDCG", "trec_eval nDCG with gain = number of nuggets a doc supports", "NDCG"),
        Family("judged", "Judged", "share of the top k that has any judgment for the query", ""),
    )
}


@dataclass(frozen=True, slots=True)
class Measure:
    """A family at a cutoff. Frozen and hashable, so it can key dicts and sets."""

    family: str
    k: int

    @property
    def id(self) -> str:
        return f"{self.family}@{self.k}"

    @property
    def name(self) -> str:
        return f"{FAMILIES[self.family].pretty}@{self.k}"

    @property
    def description(self) -> str:
        return f"{FAMILIES[self.family].description} (k={self.k})"

    @property
    def official_key(self) -> str:
        """The key the official `EvaluateRetrieval` reports this under, or "" if it has no such measure."""
        prefix = FAMILIES[self.family].official
        return f"{prefix}@{self.k}" if prefix else ""

    @property
    def headline(self) -> bool:
        return self in HEADLINE

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
_MEASURE_RE = re.compile(r"^\s*([^@\s]+)\s*@\s*(\d+)\s*$")


def parse_measure(text: str | Measure) -> Measure:
    """Parse `alpha_ndcg@20`, `Coverage@5`, `alpha-nDCG@10`, ... into a Measure; any k >= 1 is allowed."""
    if isinstance(text, Measure):
        return text
    match = _MEASURE_RE.match(text)
    family = match.group(1).lower().replace("-", "_") if match else ""
    family = _ALIASES.get(family, family)
    if not match or family not in FAMILIES or int(match.group(2)) < 1:
        known = ", ".join(f"{f}@K" for f in FAMILIES)
        raise FreshStackError(f"unknown measure {text!r}: expected one of {known} with K >= 1 (e.g. alpha_ndcg@10)")
    return Measure(family, int(match.group(2)))


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
