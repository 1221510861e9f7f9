"""A measure family added from outside the library (README, "Extend it"): registered by this test only, it is parsed,
computed by `evaluate` and `Dataset.score`, and listed and accepted by `freshstack-hf evaluate --measures`, with no
library file edited. The toy is success@k (`first_rel`): 1 once a doc supporting any nugget of the query is in the
top k, else 0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import (
    FAMILIES,
    HEADLINE,
    Family,
    NuggetQrels,
    RankedJudgments,
    evaluate,
    parse_measure,
    register_family,
    unregister_family,
)
from freshstack_hf.records import NuggetJudgment


def first_relevant(ranked: RankedJudgments, params) -> np.ndarray:
    """queries x depth: 1.0 from the first rank holding a doc that supports any nugget of the query."""
    return np.maximum.accumulate(ranked.rel.any(axis=2), axis=1).astype(np.float64)


TOY = Family("first_rel", "First rel.", "1 once a doc supporting any nugget is in the top k", first_relevant)

JUDGMENTS = [
    NuggetJudgment("q1", "q1_n1", "d1", 1),
    NuggetJudgment("q1", "q1_n1", "d2", 0),
    NuggetJudgment("q1", "q1_n2", "d3", 1),
    NuggetJudgment("q2", "q2_n1", "d4", 1),
    NuggetJudgment("q3", "q3_n1", "d5", 0),
]
RUN = {"q1": {"d2": 3.0, "x": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}, "q3": {"d5": 1.0}}


@pytest.fixture
def toy_family():
    register_family(TOY)
    yield TOY
    unregister_family(TOY.key)


def test_a_registered_family_is_parsed_and_computed_by_evaluate(toy_family):
    qrels = NuggetQrels.from_judgments(JUDGMENTS)
    result = evaluate(qrels, RUN, ["first_rel@1", "first_rel@3", *HEADLINE])
    assert parse_measure("First_Rel@3").id == "first_rel@3" and parse_measure("first_rel@3").name == "First rel.@3"
    assert {q: s["first_rel@1"] for q, s in result.per_query.items()} == {"q1": 0.0, "q2": 1.0, "q3": 0.0}
    assert {q: s["first_rel@3"] for q, s in result.per_query.items()} == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert result.metrics["first_rel@3"] == pytest.approx(2 / 3)
    assert {m.id: result.metrics[m.id] for m in HEADLINE} == evaluate(qrels, RUN, HEADLINE).metrics  # others unmoved


def test_a_family_is_refused_twice_and_gone_once_unregistered(toy_family):
    with pytest.raises(ValueError, match="already registered"):
        register_family(TOY)
    with pytest.raises(ValueError, match="built-in"):
        unregister_family("recall")
    with pytest.raises(ValueError, match="lowercase"):
        register_family(Family("First-Rel", "x", "x", first_relevant))
    unregister_family(TOY.key)
    with pytest.raises(FreshStackError, match="unknown measure 'first_rel@3'"):
        parse_measure("first_rel@3")
    register_family(TOY)  # for the fixture's teardown


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.runs import write_run
    from freshstack_hf.samples.synth import synth_topics

    root = tmp_path_factory.mktemp("families")
    topics = synth_topics(["alpha", "beta"], queries=6, docs=80, seed=3)
    write_topics(root / "freshstack", topics)
    run = {q.query_id: {d.doc_id: 1.0 / (i + 1) for i, d in enumerate(t.docs[:30])} for t in topics for q in t.queries}
    return root / "freshstack", topics, run, write_run(run, root / "run.trec", tag="first30")


def expected_first_rel(topic, run, k: int) -> float:
    """The toy's mean computed by hand from the topic's records: the queries with nuggets, top k by score."""
    positives = {(j.query_id, j.doc_id) for j in topic.judgments if j.relevance > 0}
    queries = [q for q, nuggets in topic.query_nuggets.items() if nuggets]
    hits = [
        any((q, d) in positives for d in sorted(run.get(q, {}), key=lambda d: (-run[q][d], d))[:k]) for q in queries
    ]
    return sum(hits) / len(queries)


@pytest.mark.slow
def test_dataset_score_computes_a_registered_family(toy_family, repo):
    from freshstack_hf.repo.dataset import Dataset

    path, topics, run, _ = repo
    scores = Dataset(path).score(run, measures=["first_rel@10", "recall@50"], resamples=0)
    for topic in topics:
        assert scores.topics[topic.name].metrics["first_rel@10"] == pytest.approx(expected_first_rel(topic, run, 10))
    assert 0 < scores.average["first_rel@10"] < 1


def test_the_cli_lists_and_accepts_a_registered_family(toy_family, repo, capsys):
    from freshstack_hf.cli.main import main

    path, topics, run, run_file = repo
    with pytest.raises(SystemExit) as help_exit:
        main(["evaluate", "--help"])
    assert help_exit.value.code == 0
    assert f"(families: {', '.join(FAMILIES)})" in " ".join(capsys.readouterr().out.split())
    assert "first_rel" in FAMILIES

    args = ["evaluate", str(path), "--run", str(run_file), "--resamples", "50", "--json", "-"]
    assert main([*args, "--measures", "first_rel@5,ndcg@10"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m for m in data["settings"]["measures"] if "alpha" not in m] == [
        "coverage@20",
        "recall@50",
        "first_rel@5",
        "ndcg@10",
    ]
    for topic in topics:
        assert data["topics"][topic.name]["metrics"]["first_rel@5"] == pytest.approx(expected_first_rel(topic, run, 5))

    assert main(args) == 0  # no --measures: every registered family at each --k cutoff, the toy included
    metrics = json.loads(capsys.readouterr().out)["topics"]["alpha"]["metrics"]
    assert {"first_rel@10", "first_rel@20", "first_rel@50", "judged@50"} <= set(metrics)

    assert main([*args, "--measures", "nope@5"]) == 2
    assert "first_rel@K" in capsys.readouterr().err  # an unknown family is answered with the registered ones
