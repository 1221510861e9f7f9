"""Per-nugget report: which facts of the answers no system retrieves, and which no document supports at all.

Coverage@k says how much of an answer a run finds; this report says which part is missing, so a topic
author can tell a hard nugget (judged supported, but every system misses it) from an unsupported one (no
judged doc supports it, so no run can ever cover it and it only lowers every score).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from freshstack_hf.metrics.engine import covered_nuggets
from freshstack_hf.metrics.qrels import NuggetQrels
from freshstack_hf.runs.run import Run


@dataclass(frozen=True, slots=True)
class NuggetCoverage:
    """One nugget: does any judged doc support it, and which of the given runs cover it in their top k."""

    query_id: str
    nugget_id: str
    supported: bool
    covered_by: tuple[str, ...]


def nugget_report(qrels: NuggetQrels, runs: Mapping[str, Run], k: int = 20) -> list[NuggetCoverage]:
    """Every nugget of the topic with the names of the runs whose top k supports it."""
    hits = {name: covered_nuggets(qrels, run, k) for name, run in runs.items()}
    supported = np.zeros((len(qrels), qrels.matrix.shape[1]), dtype=bool)
    np.logical_or.at(supported, qrels.row_query, qrels.matrix[:-1])
    return [
        NuggetCoverage(
            query_id=qid,
            nugget_id=nugget_id,
            supported=bool(supported[i, slot]),
            covered_by=tuple(name for name, covered in hits.items() if nugget_id in covered[qid]),
        )
        for i, (qid, nuggets) in enumerate(qrels.query_nuggets.items())
        for slot, nugget_id in enumerate(nuggets)
    ]


def uncovered_nuggets(qrels: NuggetQrels, runs: Mapping[str, Run], k: int = 20) -> list[NuggetCoverage]:
    """The nuggets none of the runs covers in its top k (unsupported ones included, flagged)."""
    return [row for row in nugget_report(qrels, runs, k) if not row.covered_by]
