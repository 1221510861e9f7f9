"""Nugget-level judgments packed into arrays once, so every run is scored without rebuilding them.

Scoring a run touches only the few dozen judged documents of each query; laying them out as one boolean
matrix (judged doc x nugget slot) with a per-query doc -> row lookup turns every metric into array
arithmetic over `matrix[rows]`. The ideal rankings depend only on the judgments, so they are computed once per
(alpha, depth) and cached here rather than once per run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np

from freshstack_hf.metrics import ideal
from freshstack_hf.records import Nugget, NuggetJudgment


class NuggetQrels:
    """Binary nugget support judgments of one topic.

    The queries it knows are those with at least one nugget: the official evaluator averages over exactly
    these, so a query without nuggets is not "judged" and one whose nuggets have no judgments scores 0.
    """

    def __init__(self, query_nuggets: Mapping[str, Sequence[str]], support: Mapping[str, Mapping[str, int]]):
        """`query_nuggets`: query -> nugget ids; `support`: nugget id -> {doc id: 0/1} (the official layout)."""
        self.query_nuggets: dict[str, tuple[str, ...]] = {
            qid: tuple(dict.fromkeys(ns)) for qid, ns in query_nuggets.items() if ns
        }
        self.query_ids: list[str] = list(self.query_nuggets)
        self.max_nuggets = max((len(ns) for ns in self.query_nuggets.values()), default=0)
        self._doc_rows: list[dict[str, int]] = []
        starts: list[int] = []
        judged_rows: list[int] = []  # one entry per (nugget, doc) judgment, in `support` order
        judged_rels: list[int] = []
        slots: list[int] = []
        counts: list[int] = []
        next_row = 0
        for nuggets in self.query_nuggets.values():
            starts.append(next_row)
            rows: dict[str, int] = {}
            add = rows.setdefault  # a doc's row is fixed the first time any nugget judges it
            for slot, nugget_id in enumerate(nuggets):
                docs = support.get(nugget_id)
                if docs:
                    judged_rows.extend([add(doc_id, next_row + len(rows)) for doc_id in docs])
                    judged_rels.extend(docs.values())
                    slots.append(slot)
                    counts.append(len(docs))
            self._doc_rows.append(rows)
            next_row += len(rows)
        # A query's judged docs take consecutive rows, in the order of `doc_rows(i)`.
        self.row_starts = np.array(starts, dtype=np.int64)
        # The last row stays all-False: unjudged docs and ranks past the end of a run point at it.
        self.unjudged_row = next_row
        self.matrix = np.zeros((next_row + 1, max(self.max_nuggets, 1)), dtype=bool)
        positive = np.array(judged_rels, dtype=np.float64) > 0
        self.matrix[
            np.array(judged_rows, dtype=np.int64)[positive],
            np.repeat(np.array(slots, dtype=np.int64), counts)[positive],
        ] = True
        self._ideal_cache: dict[tuple[str, float, int], np.ndarray] = {}
        # The same lookup for the docs supporting at least one nugget, all that most measures read (`ranking`).
        supports = self.matrix.any(axis=1).tolist()
        self._supporting_rows = [{d: r for d, r in rows.items() if supports[r]} for rows in self._doc_rows]

    @classmethod
    def from_judgments(
        cls, judgments: Iterable[NuggetJudgment], nuggets: Iterable[Nugget] | None = None
    ) -> NuggetQrels:
        """Build from records. Pass `nuggets` so nuggets without judgments count in Coverage's denominator."""
        query_nuggets: dict[str, list[str]] = {}
        owner: dict[str, str] = {}
        for n in nuggets or ():
            if n.nugget_id not in owner:
                owner[n.nugget_id] = n.query_id
                query_nuggets.setdefault(n.query_id, []).append(n.nugget_id)
        support: dict[str, dict[str, int]] = {}
        for j in judgments:
            if j.nugget_id not in owner:
                owner[j.nugget_id] = j.query_id
                query_nuggets.setdefault(j.query_id, []).append(j.nugget_id)
            docs = support.setdefault(j.nugget_id, {})
            docs[j.doc_id] = max(docs.get(j.doc_id, 0), int(j.relevance > 0))
        return cls(query_nuggets, support)

    def __len__(self) -> int:
        return len(self.query_ids)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self.query_nuggets

    def __repr__(self) -> str:
        return f"NuggetQrels(queries={len(self)}, judged_docs={self.unjudged_row})"

    # ---- per-query views (used by reports and the engine) ------------------------------------------
    def doc_rows(self, index: int) -> dict[str, int]:
        """doc id -> row of `matrix` for the query at position `index` of `query_ids`."""
        return self._doc_rows[index]

    def row_lookups(self, supporting_only: bool = False) -> list[dict[str, int]]:
        """Per query (in `query_ids` order), doc id -> row of `matrix`: of every judged doc (`doc_rows`), or with
        `supporting_only` of the docs supporting at least one nugget."""
        return self._supporting_rows if supporting_only else self._doc_rows

    @cached_property
    def nugget_counts(self) -> np.ndarray:
        """Nuggets per query (Coverage's denominator, nuggets with no positive included)."""
        return np.array([len(ns) for ns in self.query_nuggets.values()], dtype=np.int64)

    @cached_property
    def relevant_counts(self) -> np.ndarray:
        """Docs supporting >= 1 nugget per query (Recall's denominator, trec_eval's num_rel)."""
        relevant = self.matrix[:-1].any(axis=1)
        return np.bincount(self.row_query, weights=relevant, minlength=len(self)).astype(np.int64)

    @cached_property
    def row_query(self) -> np.ndarray:
        """The query position owning each judged row (the empty last row excluded)."""
        sizes = np.diff(np.append(self.row_starts, self.unjudged_row))
        return np.repeat(np.arange(len(self)), sizes)

    # ---- ideal rankings (cached: they depend on the judgments only) ------------------------------
    def ideal_ndcg_dcg(self, depth: int) -> np.ndarray:
        """Cumulative ideal DCG (queries x depth), gains = nugget counts sorted down, as trec_eval."""
        return self._cached(("ndcg", 0.0, depth), lambda: ideal.ndcg_ideal(self, depth))

    def ideal_alpha_dcg(self, alpha: float, depth: int) -> np.ndarray:
        """Cumulative ideal alpha-DCG (queries x depth) of ndeval's greedy ranking (see `ideal.alpha_ideal`)."""
        return self._cached(("alpha", float(alpha), depth), lambda: ideal.alpha_ideal(self, alpha, depth))

    def positive_rows(self) -> list[list[int]]:
        """Each query's rows of docs supporting >= 1 nugget, ordered by doc id descending (ndeval's tie order)."""
        return [[rows[d] for d in sorted(rows, reverse=True)] for rows in self._supporting_rows]

    def _cached(self, key: tuple[str, float, int], compute) -> np.ndarray:
        if key not in self._ideal_cache:
            self._ideal_cache[key] = compute()
        return self._ideal_cache[key]


def qrels_from_topic(topic) -> NuggetQrels:
    """Adapter for `freshstack_hf.topic.Topic` (duck-typed: only `.judgments` and `.nuggets` are read)."""
    return NuggetQrels.from_judgments(topic.judgments, nuggets=topic.nuggets)
