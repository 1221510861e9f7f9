"""Citation scores of answers, exactly, from a topic's nugget-level judgments (no model involved).

FreshStack judged which corpus docs support which nugget, so the docs an answer cites say which nuggets the
answer can back up, with no judge at all:

* citation recall: share of the query's nuggets supported by at least one cited doc;
* citation precision: share of the cited docs that support any nugget of the query;
* unjudged share: share of the cited docs with no judgment for the query (a hole: the doc may or may not help).

Each query of the topic that has nuggets is scored, answered or not, so every measure averages over the same
queries and two answer files can be compared query by query:

* a query with no answer scores 0 recall;
* a query whose answer cites nothing (or that has no answer) scores 0 precision (nothing backed up, the
  convention of set precision with an empty set) and 0 unjudged share (no citation is a hole).

Only the distinct cited docs count (`Answer.cited`): a doc listed in `references` but never cited does not.
"""

from __future__ import annotations

from collections.abc import Mapping

from freshstack_hf.answers.answer_set import Answer
from freshstack_hf.answers.measures import CITATION_PRECISION, CITATION_RECALL, CITATION_UNJUDGED
from freshstack_hf.metrics.qrels import NuggetQrels


def query_citation_scores(qrels: NuggetQrels, index: int, answer: Answer | None) -> dict[str, float]:
    """The three citation measures of one query (the query at position `index` of `qrels.query_ids`)."""
    n_nuggets = len(qrels.query_nuggets[qrels.query_ids[index]])
    cited = answer.cited if answer is not None else ()
    if not cited:
        return {CITATION_RECALL: 0.0, CITATION_PRECISION: 0.0, CITATION_UNJUDGED: 0.0}
    rows = qrels.doc_rows(index)
    judged = [rows[d] for d in cited if d in rows]
    support = qrels.matrix[judged, :n_nuggets]  # cited judged docs x the query's nuggets
    return {
        CITATION_RECALL: float(support.any(axis=0).sum()) / n_nuggets,
        CITATION_PRECISION: float(support.any(axis=1).sum()) / len(cited),
        CITATION_UNJUDGED: (len(cited) - len(judged)) / len(cited),
    }


def citation_scores(qrels: NuggetQrels, answers: Mapping[str, Answer]) -> dict[str, dict[str, float]]:
    """query id -> citation measures, for every query of `qrels` (the topic's queries with nuggets), in order."""
    return {qid: query_citation_scores(qrels, i, answers.get(qid)) for i, qid in enumerate(qrels.query_ids)}
