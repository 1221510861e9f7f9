"""Answer scores per query, per topic and over topics, with 95% intervals, paired comparisons and their JSON form.

Citation scores are exact, from the topic's nugget-level judgments (no model involved): FreshStack judged which
corpus docs support which nugget, so the docs an answer cites say which nuggets the answer can back up:

* citation recall: share of the query's nuggets supported by at least one cited doc;
* citation precision: share of the cited docs that support any nugget of the query;
* unjudged share: share of the cited docs with no judgment for the query (a hole: the doc may or may not help).

Only the distinct cited docs count (`Answer.cited`): a doc listed in `references` but never cited does not. A
query with no answer scores 0 recall; a query whose answer cites nothing (or that has no answer) scores 0
precision (nothing backed up, the convention of set precision with an empty set) and 0 unjudged share.

Nugget scores follow TREC RAG 2024 (Ragnarök): All is the share of the query's nuggets the answer supports,
Vital the share of its vital nuggets; the plain versions give 0.5 for partial support, the strict ones count full
support only. Vital exists only where nuggets are graded (`Nugget.importance == "vital"`): a query with no
vital nugget has no Vital value (nuggetizer reports 0.0 there, which would read as a failed answer), a topic's
Vital is the mean over its queries that have vital nuggets, and a topic with none reports no Vital at all.

Every query of a topic that has nuggets is scored (answered or not, so every measure averages over the same
queries and two answer files line up query by query), and the scores form the same
`freshstack_hf.metrics.score_table.ScoreTable` runs do: topic means with percentile bootstrap intervals, the
all-topics score (`topic_average`: the plain mean of topic means, absent when any topic lacks the measure) with a
stratified interval, paired comparisons and the stored form. `answers_json` is the full-precision JSON
`freshstack-hf evaluate-answers --json` writes (its text table is the CLI's own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf.answers.answer_set import Answer, AnswerSet
from freshstack_hf.answers.judge import AssignTask, Judge, label_counts
from freshstack_hf.answers.measures import (
    ALL,
    ALL_STRICT,
    ANSWER_MEASURES,
    CITATION_PRECISION,
    CITATION_RECALL,
    CITATION_UNJUDGED,
    VITAL,
    VITAL_STRICT,
)
from freshstack_hf.answers.rag_prompts import PARTIAL, SUPPORT
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics.engine import TopicResult
from freshstack_hf.metrics.qrels import NuggetQrels, qrels_from_topic
from freshstack_hf.metrics.score_table import AVERAGE, ScoreTable, compare_tables, tabulate
from freshstack_hf.metrics.uncertainty import PairedTest
from freshstack_hf.topic import Topic

PerQuery = dict[str, dict[str, float]]  # query id -> measure id -> value (a measure a query lacks is absent)


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


def nugget_scores(labels: Sequence[str], importance: Sequence[str]) -> dict[str, float]:
    """All / All strict of one answer, plus Vital / Vital strict when it has vital nuggets (else absent)."""
    if len(labels) != len(importance):
        raise ValueError(f"{len(labels)} labels for {len(importance)} nuggets")
    if not labels:
        raise ValueError("a query without nuggets has no nugget scores")

    def shares(picked: list[str]) -> tuple[float, float]:
        full = sum(label == SUPPORT for label in picked)
        half = sum(label == PARTIAL for label in picked)
        return (full + 0.5 * half) / len(picked), full / len(picked)

    out: dict[str, float] = {}
    out[ALL], out[ALL_STRICT] = shares(list(labels))
    vital = [label for label, grade in zip(labels, importance, strict=True) if grade == "vital"]
    if vital:
        out[VITAL], out[VITAL_STRICT] = shares(vital)
    return out


@dataclass(frozen=True, slots=True)
class AnswerScores(ScoreTable):
    """One answer file on several topics (a `ScoreTable`); `judge` names who made the nugget scores (None:
    citations only) and `assignments` holds its labels, per topic and query."""

    source: str = ""
    name: str = ""
    assignments: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    judge: str | None = None
    judge_stats: dict[str, Any] = field(default_factory=dict)

    def measures(self) -> list[str]:
        """Measure ids present somewhere, in the table's order."""
        present = {m for t in self.topics.values() for m in t.metrics}
        return [m.id for m in ANSWER_MEASURES if m.id in present]


def answers_json(scores: AnswerScores) -> dict[str, Any]:
    """`{"answers", "judge", "topics": {T: {metrics, ci95, per_query, assignments}}, "average": {...}}`."""
    topics = {
        name: {
            "metrics": t.metrics,
            "ci95": {m: [i.low, i.high] for m, i in scores.intervals.get(name, {}).items()},
            "per_query": t.per_query,
            **({"assignments": scores.assignments.get(name, {})} if scores.judge else {}),
        }
        for name, t in scores.topics.items()
    }
    average_ci = {m: [i.low, i.high] for m, i in scores.intervals.get(AVERAGE, {}).items()}
    average = {"metrics": scores.average, "ci95": average_ci}
    judge = {"name": scores.judge, **scores.judge_stats} if scores.judge else None
    return {
        "answers": {"name": scores.name, "path": scores.source},
        "judge": judge,
        "topics": topics,
        "average": average,
    }


def judge_tasks(topic: Topic, answers: AnswerSet) -> tuple[list[AssignTask], list[list[str]]]:
    """One task per query with nuggets (its answer's text, "" when unanswered) and the nuggets' grades."""
    texts = {n.nugget_id: n for n in topic.nuggets}
    qrels = qrels_from_topic(topic)
    questions = {q.query_id: q for q in topic.queries}
    tasks, grades = [], []
    for qid in qrels.query_ids:
        nuggets = [texts[n] for n in qrels.query_nuggets[qid] if n in texts]  # a judgment-only nugget has no text
        query = questions.get(qid)
        answer = answers.answers.get(qid)
        question = f"{query.title}\n\n{query.body}".strip() if query else ""
        tasks.append(AssignTask(qid, question, tuple(n.text for n in nuggets), answer.text if answer else ""))
        grades.append([n.importance for n in nuggets])
    return tasks, grades


def score_answers(
    topics: Iterable[Topic],
    answers: AnswerSet,
    judge: Judge | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    citations: bool = True,
) -> AnswerScores:
    """Citation scores (unless `citations=False`: the judge's nugget scores only, for answers whose citation scores
    are known already; the nugget scores are the same either way); nugget scores when a judge is given (all topics'
    queries sent to it at once)."""
    if not citations and judge is None:
        raise ValueError("citations=False needs a judge: there would be nothing to score")
    topics = list(topics)
    per_topic: dict[str, PerQuery] = {}
    for topic in topics:
        per_topic[topic.name] = citation_scores(qrels_from_topic(topic), answers.answers) if citations else {}
    assignments: dict[str, dict[str, list[str]]] = {t.name: {} for t in topics}
    if judge is not None:
        planned = [(topic.name, *judge_tasks(topic, answers)) for topic in topics]
        flat = [task for _, tasks, _ in planned for task in tasks]
        labels = iter(judge.assign(flat))
        for name, tasks, grades in planned:
            for task, grade in zip(tasks, grades, strict=True):
                got = next(labels)
                assignments[name][task.query_id] = got
                if task.nuggets:
                    per_topic[name].setdefault(task.query_id, {}).update(nugget_scores(got, grade))
    scored = {name: _topic(per_query) for name, per_query in per_topic.items()}
    intervals, average = tabulate(scored, resamples=resamples, seed=seed)
    table = (scored, intervals, average, answers.source, answers.name, assignments)
    if judge is None:
        return AnswerScores(*table)
    labels_given = label_counts([x for t in assignments.values() for x in t.values()])
    return AnswerScores(*table, judge.name, {**judge.stats(), "labels": labels_given})


def _topic(per_query: PerQuery) -> TopicResult:
    """The topic means of every measure some query has, each over the queries that have it (Vital: those with
    vital nuggets), summed in query order."""
    ids = [m.id for m in ANSWER_MEASURES if any(m.id in s for s in per_query.values())]
    columns = {m: [s[m] for s in per_query.values() if m in s] for m in ids}
    return TopicResult(per_query, {m: sum(col) / len(col) for m, col in columns.items()})


def compare_answers(
    a: AnswerScores,
    b: AnswerScores,
    *,
    method: str = "randomization",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, dict[str, PairedTest]]:
    """Paired tests of B vs A per topic and over topics (stratified), for the measures both files have."""
    return compare_tables(a, b, method=method, resamples=resamples, seed=seed)
