"""Answer scores on hand-worked examples, TREC RAG nugget scores against nuggetizer's, the offline judge, prompts."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from answers_topic import answers_a, answers_b, handmade_topic

from freshstack_hf.answers import OfflineJudge, citation_scores, nugget_scores, parse_answers, score_answers
from freshstack_hf.answers.judge import AssignTask, offline_label
from freshstack_hf.answers.measures import (
    ALL,
    ALL_STRICT,
    CITATION_PRECISION,
    CITATION_RECALL,
    CITATION_UNJUDGED,
    VITAL,
    VITAL_STRICT,
)
from freshstack_hf.answers.rag_prompts import LABELS, assign_messages, parse_assignments
from freshstack_hf.answers.scores import compare_answers
from freshstack_hf.llm.repair import ParseError
from freshstack_hf.metrics import qrels_from_topic
from freshstack_hf.topic import Topic

TOPIC = handmade_topic()
KNOWN = {"query_ids": set(TOPIC.query_ids), "doc_ids": TOPIC.doc_ids}
R, P, U = CITATION_RECALL, CITATION_PRECISION, CITATION_UNJUDGED


def test_citation_scores_hand_worked():
    a = parse_answers(answers_a(), **KNOWN).answers
    b = parse_answers(answers_b(), **KNOWN).answers
    # A, 101 cites d1 (supports 101_0), d3 (judged 0 for 101_1), d7 (never judged): 1 of 3 nuggets, 1 of 3 docs
    # A, 102 cites d5 (supports 102_0 and 102_1), d6 (judged 0): 2 of 2 nuggets, 1 of 2 docs, nothing unjudged
    # 103 has no nugget: not scored
    assert citation_scores(qrels_from_topic(TOPIC), a) == {
        "101": {R: 1 / 3, P: 1 / 3, U: 1 / 3},
        "102": {R: 1.0, P: 0.5, U: 0.0},
    }
    # B, 101 cites d2 (supports 101_1, judged 0 for 101_0) and d4 (supports 101_2): 2 of 3 nuggets, 2 of 2 docs
    # B, 102 has no answer: 0 everywhere
    assert citation_scores(qrels_from_topic(TOPIC), b) == {
        "101": {R: 2 / 3, P: 1.0, U: 0.0},
        "102": {R: 0.0, P: 0.0, U: 0.0},
    }


def test_topic_means_and_intervals_of_citation_scores():
    a = score_answers([TOPIC], parse_answers(answers_a(), **KNOWN), resamples=500)
    topic = a.topics["handmade"]
    assert topic.metrics == pytest.approx({R: (1 / 3 + 1) / 2, P: (1 / 3 + 1 / 2) / 2, U: (1 / 3 + 0) / 2})
    assert a.judge is None and a.measures() == [R, P, U]
    assert a.average == topic.metrics  # one topic: the average is its mean
    intervals = a.intervals["handmade"]
    assert set(intervals) == {R, P, U}
    for m, interval in intervals.items():
        assert interval.low <= topic.metrics[m] <= interval.high
    assert intervals[R].low == pytest.approx(1 / 3) and intervals[R].high == pytest.approx(1.0)


def test_nugget_scores_hand_worked():
    labels = ["support", "partial_support", "not_support", "partial_support"]
    grades = ["vital", "vital", "okay", "okay"]
    assert nugget_scores(labels, grades) == {
        ALL: (1 + 0.5 + 0 + 0.5) / 4,
        ALL_STRICT: 1 / 4,
        VITAL: (1 + 0.5) / 2,
        VITAL_STRICT: 1 / 2,
    }
    # no vital nugget (or no grades at all): Vital is absent, not 0
    assert nugget_scores(["support", "not_support"], ["okay", "okay"]) == {ALL: 0.5, ALL_STRICT: 0.5}
    assert nugget_scores(["partial_support"], [""]) == {ALL: 0.5, ALL_STRICT: 0.0}
    with pytest.raises(ValueError):
        nugget_scores(["support"], [])


@pytest.mark.slow
def test_nugget_scores_equal_nuggetizer_on_the_same_assignments():
    from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

    rng = random.Random(12)
    records = []
    for i in range(300):
        n = rng.randint(1, 12)
        grades = [rng.choice(["vital", "okay"]) for _ in range(n)]
        grades[rng.randrange(n)] = "vital"  # parity is defined where vital nuggets exist
        labels = [rng.choice(LABELS) for _ in range(n)]
        ours = nugget_scores(labels, grades)
        pairs = enumerate(zip(grades, labels, strict=True))
        nuggets = [{"text": f"n{j}", "importance": g, "assignment": a} for j, (g, a) in pairs]
        theirs = calculate_nugget_scores(str(i), nuggets)
        assert ours == {
            ALL: pytest.approx(theirs.all_score, abs=1e-12),
            ALL_STRICT: pytest.approx(theirs.strict_all_score, abs=1e-12),
            VITAL: pytest.approx(theirs.vital_score, abs=1e-12),
            VITAL_STRICT: pytest.approx(theirs.strict_vital_score, abs=1e-12),
        }
        records.append({"qid": str(i), "nuggets": nuggets, "ours": ours})
    # and the means over queries, nuggetizer's global metrics
    overall = calculate_global_metrics(records)
    for ours_key, key in ((ALL, "all_score"), (ALL_STRICT, "strict_all_score"), (VITAL, "vital_score")):
        assert sum(r["ours"][ours_key] for r in records) / len(records) == pytest.approx(overall[key], abs=1e-12)
    # where nuggetizer reports 0.0 for a missing Vital we report none
    okay_only = [{"text": "x", "importance": "okay", "assignment": "support"}]
    assert calculate_nugget_scores("q", okay_only).vital_score == 0.0
    assert VITAL not in nugget_scores(["support"], ["okay"])


def test_offline_judge_labels_by_term_share():
    assert [offline_label(x) for x in (0.0, 0.24, 0.25, 0.49, 0.5, 1.0)] == [
        "not_support",
        "not_support",
        "partial_support",
        "partial_support",
        "support",
        "support",
    ]
    judge = OfflineJudge()
    nuggets = ("redis cache driver", "supervisor restarts workers", "horizon dashboard metrics tags")
    tasks = [
        AssignTask("q1", "question", nuggets, "Use the redis driver; the supervisor restarts it."),
        AssignTask("q2", "question", nuggets, ""),  # unanswered: no support, and no work
        AssignTask("q3", "question", (), "an answer to a query with no nuggets"),
    ]
    # q1: redis+driver = 2/3 -> support; supervisor+restart(s) = 2/3 -> support (plural s folded); horizon... 0
    assert judge.assign(tasks) == [["support", "support", "not_support"], ["not_support"] * 3, []]
    assert judge.stats() == {"judge": "offline-heuristic", "judged_queries": 1}
    partial = judge.assign([AssignTask("q", "", ("horizon dashboard metrics tags",), "the horizon tags")])
    assert partial == [["support"]]  # 2 of 4 terms: exactly the 0.5 threshold
    partial = judge.assign([AssignTask("q", "", ("horizon dashboard metrics tags",), "see horizon")])
    assert partial == [["partial_support"]]  # 1 of 4


def test_offline_scores_carry_the_judge_name_and_vital_only_where_graded():
    answers = parse_answers(answers_a(), **KNOWN)
    scores = score_answers([TOPIC], answers, OfflineJudge(), resamples=200)
    assert scores.judge == "offline-heuristic"
    per_query = scores.topics["handmade"].per_query
    assert VITAL in per_query["101"] and VITAL not in per_query["102"]  # 102's nuggets are all "okay"
    assert scores.topics["handmade"].metrics[VITAL] == per_query["101"][VITAL]  # mean over queries with vital ones
    assert set(scores.assignments["handmade"]) == {"101", "102"}
    assert sum(scores.judge_stats["labels"].values()) == 5  # one label per nugget of the judged queries

    ungraded = Topic(
        "ungraded",
        queries=TOPIC.queries,
        nuggets=[replace(n, importance="") for n in TOPIC.nuggets],
        docs=TOPIC.docs,
        judgments=TOPIC.judgments,
    )
    both = score_answers([TOPIC, ungraded], answers, OfflineJudge(), resamples=200)
    assert VITAL in both.topics["handmade"].metrics and VITAL not in both.topics["ungraded"].metrics
    assert VITAL not in both.average and ALL in both.average  # an average over some topics only would mislead
    assert both.average[ALL] == pytest.approx(
        (both.topics["handmade"].metrics[ALL] + both.topics["ungraded"].metrics[ALL]) / 2
    )


def test_paired_comparison_of_two_answer_files():
    a = score_answers([TOPIC], parse_answers(answers_a(), **KNOWN), resamples=300)
    b = score_answers([TOPIC], parse_answers(answers_b(), **KNOWN), resamples=300)
    tests = compare_answers(a, b, resamples=300)
    assert set(tests) == {"handmade", "average"}
    recall = tests["handmade"][R]
    assert recall.mean_a == pytest.approx(2 / 3) and recall.mean_b == pytest.approx(1 / 3)
    assert recall.diff == pytest.approx(-1 / 3)
    same = compare_answers(a, a, resamples=300)["handmade"][P]
    assert same.diff == 0.0 and same.p_value == 1.0


def test_assign_prompt_and_strict_parser():
    messages = assign_messages("How?", ["first fact", "second fact"], "An answer.")
    user = messages[1]["content"]
    assert "1. first fact\n2. second fact" in user and "<answer>\nAn answer.\n</answer>" in user
    assert parse_assignments('{"labels": ["support", "Partial Support"]}', 2) == ["support", "partial_support"]
    assert parse_assignments('```json\n["not_support"]\n```', 1) == ["not_support"]
    with pytest.raises(ParseError, match="expected 2 labels"):
        parse_assignments('{"labels": ["support"]}', 2)
    with pytest.raises(ParseError, match="unknown label 'maybe'"):
        parse_assignments('{"labels": ["maybe"]}', 1)
    with pytest.raises(ParseError):
        parse_assignments("no json here", 1)
