"""The one table of answer measures: ids, pretty names, tooltips, which need a judge and which way is better.

The CLI table, the JSON report and the leaderboard's Answers columns all read names from here, so a measure is
spelled one way everywhere (the leaderboard stores them as `answers:<id>`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AnswerMeasure:
    """One answer measure. `judge`: made by the nugget judge (else exact, from the judgments)."""

    id: str
    name: str
    description: str
    judge: bool = False
    higher_is_better: bool = True


CITATION_RECALL = "citation_recall"
CITATION_PRECISION = "citation_precision"
CITATION_UNJUDGED = "citation_unjudged"
ALL = "nugget_all"
ALL_STRICT = "nugget_all_strict"
VITAL = "nugget_vital"
VITAL_STRICT = "nugget_vital_strict"

ANSWER_MEASURES: tuple[AnswerMeasure, ...] = (
    AnswerMeasure(CITATION_RECALL, "Cit. recall", "share of the query's nuggets supported by at least one cited doc"),
    AnswerMeasure(CITATION_PRECISION, "Cit. precision", "share of the cited docs that support any nugget of the query"),
    AnswerMeasure(
        CITATION_UNJUDGED,
        "Unjudged",
        "share of the cited docs with no judgment for the query (holes: lower is better)",
        higher_is_better=False,
    ),
    AnswerMeasure(ALL, "All", "TREC RAG All: nuggets the answer supports, 0.5 for partial support", judge=True),
    AnswerMeasure(ALL_STRICT, "All strict", "TREC RAG All, full support only", judge=True),
    AnswerMeasure(VITAL, "Vital", "TREC RAG Vital: vital nuggets supported, 0.5 for partial support", judge=True),
    AnswerMeasure(VITAL_STRICT, "Vital strict", "TREC RAG Vital, full support only", judge=True),
)
BY_ID: dict[str, AnswerMeasure] = {m.id: m for m in ANSWER_MEASURES}
CITATION_IDS = tuple(m.id for m in ANSWER_MEASURES if not m.judge)
JUDGE_IDS = tuple(m.id for m in ANSWER_MEASURES if m.judge)
