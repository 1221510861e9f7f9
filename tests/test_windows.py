"""Contamination windows: `evaluate --after DATE` equals scoring, by hand, the run restricted to the questions
asked after DATE (through the project's scorer and through the official `freshstack` evaluator)."""

from __future__ import annotations

import json
import random
from datetime import date

import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, evaluate, qrels_from_topic
from freshstack_hf.records import Query
from freshstack_hf.topic import Topic
from freshstack_hf.windows import parse_day, question_day, window, window_result


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    from freshstack_hf.repo import writer
    from freshstack_hf.samples import synth

    path = tmp_path_factory.mktemp("windows") / "freshstack"
    topics = synth.synth_topics(["langchain", "yolo"], queries=15, docs=300, seed=1)
    writer.write_topics(path, topics)
    return path, topics


def tie_free_run(topics, seed: int = 3) -> dict[str, dict[str, float]]:
    """Every query ranks half its judged docs and a few other docs with distinct scores (the official tools
    disagree on ties, so parity is only meaningful without them)."""
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    for t in topics:
        others = sorted(t.doc_ids)
        judged: dict[str, set[str]] = {}
        for j in t.judgments:
            judged.setdefault(j.query_id, set()).add(j.doc_id)
        for qid, docs in judged.items():
            picked = rng.sample(sorted(docs), max(1, len(docs) // 2)) + rng.sample(others, 8)
            picked = list(dict.fromkeys(picked))
            scores = rng.sample(range(10**6), len(picked))
            run[qid] = {d: s / 1000.0 for d, s in zip(picked, scores, strict=True)}
    return run


def median_day(topics) -> date:
    days = sorted(question_day(q.date) for t in topics for q in t.queries)
    return days[len(days) // 2]


def restricted(topic: Topic, after: date) -> Topic:
    """The topic cut by hand to the questions asked after `after` (records filtered, nothing else)."""
    keep = {q.query_id for q in topic.queries if date.fromisoformat(q.date[:10]) > after}
    return Topic(
        topic.name,
        queries=[q for q in topic.queries if q.query_id in keep],
        nuggets=[n for n in topic.nuggets if n.query_id in keep],
        judgments=[j for j in topic.judgments if j.query_id in keep],
    )


def test_the_rule_strictly_after_the_day_dated_judged_questions_only():
    queries = [
        Query("1", "t", "b", date="2024-06-30T23:59:59"),  # on the cutoff day: out
        Query("2", "t", "b", date="2024-07-01T00:00:00"),
        Query("3", "t", "b", date="2024-08-15"),
        Query("4", "t", "b", date=""),  # undated: never in a window
        Query("5", "t", "b", date="2025-01-01"),  # not judged: not counted at all
    ]
    w = window("t", queries, ["1", "2", "3", "4"], date(2024, 6, 30))
    assert w.query_ids == ("2", "3")
    assert (w.asked, w.judged, w.undated) == (2, 4, 1)
    assert w.describe() == "2 of 4 questions asked after 2024-06-30 (1 undated)"
    assert parse_day(" 2024-06-30 ") == date(2024, 6, 30)
    for bad in ("2024-6-30", "30/06/2024", "2024-02-30", "", "2024-06-30T00:00"):
        with pytest.raises(FreshStackError, match=r"--cutoff .* YYYY-MM-DD"):
            parse_day(bad, "--cutoff")
    assert question_day("not a date") is None


@pytest.mark.slow
def test_window_of_stored_per_query_scores_equals_rescoring_the_window(repo):
    """The leaderboard restricts stored per-query scores; that must equal scoring restricted judgments."""
    from freshstack_hf.repo.dataset import Dataset

    path, topics = repo
    run, after = tie_free_run(topics), median_day(topics)
    dataset = Dataset(path)
    full = dataset.score(run, measures=HEADLINE, resamples=0)
    windowed = dataset.score(run, measures=HEADLINE, resamples=0, after=after)
    for t in topics:
        keep = dataset.window(t.name, after).query_ids
        from_stored = window_result(full.topics[t.name].per_query, keep)
        assert list(from_stored.per_query) == list(windowed.topics[t.name].per_query) == list(keep)
        for m in HEADLINE:
            assert from_stored.metrics[m.id] == pytest.approx(windowed.topics[t.name].metrics[m.id], abs=1e-12)
    assert window_result(full.topics["yolo"].per_query, []).metrics == {}


def test_evaluate_after_equals_hand_restricted_scoring_and_the_official_evaluator(repo, tmp_path, capsys):
    from freshstack.retrieval.evaluation import EvaluateRetrieval

    from freshstack_hf.cli.main import main
    from freshstack_hf.runs import write_run

    path, topics = repo
    run, after = tie_free_run(topics), median_day(topics)
    run_file = write_run(run, tmp_path / "r.trec", tag="r")
    out = tmp_path / "scores.json"
    code = main(["evaluate", str(path), "--run", str(run_file), "--after", after.isoformat(), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["settings"]["after"] == after.isoformat()
    for t in topics:
        cut = restricted(t, after)
        asked = len(cut.queries)
        judged = len(qrels_from_topic(t))
        assert 0 < asked < judged  # the window really cuts each topic
        assert f"{t.name}: {asked} of {judged} questions asked after {after.isoformat()}" in printed
        assert data["settings"]["window"][t.name] == {"questions": asked, "judged": judged, "undated": 0}
        got = data["topics"][t.name]
        assert set(got["per_query"]) == {q.query_id for q in cut.queries}

        # By hand: the restricted topic and the restricted run through the project's scorer ...
        own_run = {q: docs for q, docs in run.items() if q in got["per_query"]}
        by_hand = evaluate(qrels_from_topic(cut), own_run, HEADLINE).metrics
        # ... and through the official evaluator, on dicts built from the restricted records.
        qrels_nuggets = {n.nugget_id: {} for n in cut.nuggets}
        for j in cut.judgments:
            qrels_nuggets[j.nugget_id][j.doc_id] = max(qrels_nuggets[j.nugget_id].get(j.doc_id, 0), j.relevance)
        query_to_nuggets: dict[str, list[str]] = {}
        for n in cut.nuggets:
            query_to_nuggets.setdefault(n.query_id, []).append(n.nugget_id)
        qrels_query = {q: {} for q in query_to_nuggets}
        for q, nids in query_to_nuggets.items():
            for nid in nids:
                for doc, rel in qrels_nuggets[nid].items():
                    qrels_query[q][doc] = qrels_query[q].get(doc, 0) + rel
        alpha, cov, rec = EvaluateRetrieval(k_values=[10, 20, 50]).evaluate(
            qrels_nuggets, query_to_nuggets, qrels_query, own_run
        )
        official = {"alpha_ndcg@10": alpha["alpha-nDCG@10"], "coverage@20": cov["Coverage@20"]}
        official["recall@50"] = rec["Recall@50"]
        for m in HEADLINE:
            assert got["metrics"][m.id] == pytest.approx(by_hand[m.id], abs=1e-12), (t.name, m.id)
            assert got["metrics"][m.id] == pytest.approx(official[m.id], abs=1e-4), (t.name, m.id)
        full = evaluate(qrels_from_topic(t), run, HEADLINE).metrics
        assert any(abs(full[m.id] - by_hand[m.id]) > 1e-6 for m in HEADLINE)  # the window changes the numbers


@pytest.mark.parametrize(
    ("after", "message"),
    [
        ("2024-13-01", "--after '2024-13-01' is not a date: give the day as YYYY-MM-DD"),
        ("next year", "--after 'next year' is not a date"),
        ("2099-01-01", "--after 2099-01-01: no judged question was asked after that day in langchain: 0 of"),
    ],
)
def test_evaluate_after_bad_input_exits_2_and_writes_nothing(repo, tmp_path, capsys, after, message):
    from freshstack_hf.cli.main import main
    from freshstack_hf.runs import write_run

    path, topics = repo
    run_file = write_run(tie_free_run(topics), tmp_path / "r.trec", tag="r")
    out = tmp_path / "scores.json"
    assert main(["evaluate", str(path), "--run", str(run_file), "--after", after, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("error:") == 1
    assert not out.exists()


def test_evaluate_help_shows_the_after_example():
    from freshstack_hf.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = " ".join(sub.choices["evaluate"].format_help().split())
    assert "--after YYYY-MM-DD" in text and "freshstack-hf evaluate out/freshstack --run my-llm.trec --after" in text
