"""Contamination windows: a topic's judged questions asked after a date (a model's release or training cutoff).

A model trained on Stack Overflow up to some day may have seen the questions (and accepted answers) asked before
it, so a fair comparison scores it only on the questions asked later. The rule, in one place for the CLI
(`evaluate --after`) and the leaderboard (each system on the questions after its own cutoff):

* a question's date is its `metadata.date` (`Query.date`, ISO: `2024-06-30` or `2024-06-30T12:34:56`, UTC as
  the builders write it); only its day counts;
* "after DATE" means *strictly after the day*: a question asked on the cutoff day itself is out, since a
  cutoff day's data may well be in the training set;
* a question without a readable date is never in a window (it cannot be shown to be after the cutoff);
* only judged questions (those with nuggets, the ones the metrics average over) are counted.

Every measure is a per-query value averaged over the topic's judged queries, and a query's value depends on its
own judgments only (alpha-nDCG's ideal is per query), so the window's score is the mean of the per-query
scores of the questions in it: `window_result` restricts stored per-query scores without re-scoring, and
`window_qrels` gives the restricted judgments for scoring a run from scratch; both give the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import NuggetQrels, TopicResult
from freshstack_hf.records import Query
from freshstack_hf.topic import Topic


def parse_day(text: str, flag: str = "--after") -> date:
    """A cutoff given by a user (`YYYY-MM-DD`) as a date; `flag` names where it came from in the error."""
    value = (text or "").strip()
    try:
        if len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise FreshStackError(
            f"{flag} {text!r} is not a date: give the day as YYYY-MM-DD, e.g. {flag} 2024-06-30"
        ) from None


def question_day(text: str) -> date | None:
    """The day a question was asked, from its metadata date (`2024-06-30` or `2024-06-30T12:34:56`); None when
    the date is missing or unreadable."""
    try:
        return date.fromisoformat((text or "").strip()[:10])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Window:
    """The judged questions of one topic asked strictly after `after`, and the counts a report shows."""

    topic: str
    after: date
    query_ids: tuple[str, ...]  # in the topic's judged-query order
    judged: int  # judged questions of the topic, in or out of the window
    undated: int  # judged questions without a readable date (never in a window)

    @property
    def asked(self) -> int:
        return len(self.query_ids)

    def describe(self) -> str:
        """`12 of 40 questions asked after 2024-06-30` (the CLI's line per topic)."""
        note = f" ({self.undated} undated)" if self.undated else ""
        return f"{self.asked} of {self.judged} questions asked after {self.after.isoformat()}{note}"

    def counts(self) -> dict[str, int]:
        return {"questions": self.asked, "judged": self.judged, "undated": self.undated}


def window(topic: str, queries: Iterable[Query], judged: Iterable[str], after: date) -> Window:
    """The `Window` of `judged` query ids (a topic's `NuggetQrels.query_ids`) given the topic's `queries`."""
    days = {q.query_id: question_day(q.date) for q in queries}
    order = list(judged)
    inside = tuple(qid for qid in order if (day := days.get(qid)) is not None and day > after)
    undated = sum(1 for qid in order if days.get(qid) is None)
    return Window(topic, after, inside, len(order), undated)


def window_qrels(topic: Topic, keep: Iterable[str]) -> NuggetQrels:
    """The topic's judgments restricted to the questions `keep`, for scoring a run on the window only (the run's
    other queries are then ignored, as any query unknown to the qrels is)."""
    wanted = set(keep)
    return NuggetQrels.from_judgments(
        (j for j in topic.judgments if j.query_id in wanted),
        nuggets=[n for n in topic.nuggets if n.query_id in wanted],
    )


def window_result(per_query: Mapping[str, Mapping[str, float]], keep: Iterable[str]) -> TopicResult:
    """A topic's result on the questions `keep`, from its full per-query scores (no re-scoring).

    A kept question without a stored value of a measure is left out of that measure's mean (as a topic's
    answers measures do); an empty window has no metrics at all rather than zeros that would look like scores.
    """
    rows = {qid: dict(per_query[qid]) for qid in keep if qid in per_query}
    measures = list(dict.fromkeys(m for scores in rows.values() for m in scores))
    metrics = {
        m: float(np.mean([scores[m] for scores in rows.values() if m in scores], dtype=np.float64)) for m in measures
    }
    return TopicResult(per_query=rows, metrics=metrics)
