"""Which of a run's top-k documents no judgment covers: the holes a fill judges.

A document is judged for a query when any nugget of that query has a judgment (0 or 1) for it, the same rule
the `judged@k` measure counts by, so filling every hole of a run's top k brings its Judged@k to 1.0. The top k
follows the project's one tie rule (`runs.top_docs`: score descending, then doc id descending), so the fill
judges exactly the documents the evaluator ranks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from freshstack_hf.runs import Run, top_docs
from freshstack_hf.topic import Topic


@dataclass(frozen=True)
class Holes:
    """A run's unjudged top-k documents per query, in rank order; ids the corpus lacks cannot be judged."""

    k: int
    by_query: dict[str, list[str]]  # query id -> hole doc ids (in the corpus), best rank first
    not_in_corpus: dict[str, list[str]] = field(default_factory=dict)  # unjudged ids with no text to judge
    queries_ranked: int = 0  # queries of the topic (with nuggets) the run ranks

    @property
    def docs(self) -> int:
        return sum(len(d) for d in self.by_query.values())

    def pairs(self, nuggets_per_query: Mapping[str, int]) -> int:
        """(nugget, document) pairs a judge decides: every hole of a query against all its nuggets."""
        return sum(len(d) * nuggets_per_query.get(q, 0) for q, d in self.by_query.items())


def judged_docs(topic: Topic) -> dict[str, set[str]]:
    """query id -> documents any judgment of the query covers."""
    out: dict[str, set[str]] = {}
    for j in topic.judgments:
        out.setdefault(j.query_id, set()).add(j.doc_id)
    return out


def find_holes(topic: Topic, run: Run, k: int = 10) -> Holes:
    """The top-`k` documents of each of `topic`'s queries (those with nuggets) in `run` that no judgment covers."""
    covered = judged_docs(topic)
    corpus = topic.doc_ids
    by_query: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    ranked = 0
    for qid, nuggets in topic.query_nuggets.items():
        if not nuggets or qid not in run:
            continue
        ranked += 1
        seen = covered.get(qid, set())
        unjudged = [d for d in top_docs(run[qid], k) if d not in seen]
        if holes := [d for d in unjudged if d in corpus]:
            by_query[qid] = holes
        if absent := [d for d in unjudged if d not in corpus]:
            missing[qid] = absent
    return Holes(k, by_query, missing, ranked)
