"""Hand-worked values of every measure, the edge cases the official evaluator defines, and the tie rule."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import (
    HEADLINE,
    MEASURES,
    Measure,
    NuggetQrels,
    average_topics,
    covered_nuggets,
    evaluate,
    parse_measure,
    parse_measures,
    qrels_from_topic,
)
from freshstack_hf.metrics.ranking import ranked_rows
from freshstack_hf.records import Nugget, NuggetJudgment
from freshstack_hf.runs import top_docs


def judgments_of(query_id: str, support: dict[str, list[str]], nuggets: list[str]) -> list[NuggetJudgment]:
    """Every (nugget, doc) pair judged: 1 where the doc supports the nugget, 0 otherwise."""
    return [
        NuggetJudgment(query_id, f"{query_id}_{n}", doc, int(n in supported))
        for doc, supported in support.items()
        for n in nuggets
    ]


def query_level(qrels: NuggetQrels) -> dict[str, dict[str, int]]:
    """The query-level qrels read back from the packed matrix (score = nuggets supported; judged 0s kept), as
    `T-qrels` holds them: checks that every judgment landed in its query's row and nugget slot."""
    counts = qrels.matrix.sum(axis=1)
    return {q: {d: int(counts[row]) for d, row in qrels.doc_rows(i).items()} for i, q in enumerate(qrels.query_ids)}


# The DESIGN.md worked example: q1 has three nuggets, q2 two.
Q1 = judgments_of(
    "q1", {"d1": ["n1", "n2"], "d2": ["n1"], "d3": ["n3"], "d4": [], "d5": ["n2", "n3"]}, ["n1", "n2", "n3"]
)
Q2 = judgments_of("q2", {"d1": ["n1"], "d3": ["n2"], "d4": ["n1", "n2"], "d2": [], "d5": []}, ["n1", "n2"])
RUN = {"q1": {"d2": 5, "d1": 4, "d4": 3, "d3": 2, "d5": 1}, "q2": {"d5": 5, "d1": 4, "d3": 3, "d2": 2}}


@pytest.fixture
def qrels() -> NuggetQrels:
    return NuggetQrels.from_judgments(Q1 + Q2)


def test_design_worked_example_alpha_ndcg(qrels):
    result = evaluate(qrels, RUN, ["alpha_ndcg@5"])
    assert result.per_query["q1"]["alpha_ndcg@5"] == pytest.approx(0.810123, abs=1e-6)
    assert result.per_query["q2"]["alpha_ndcg@5"] == pytest.approx(0.440828, abs=1e-6)
    assert result.metrics["alpha_ndcg@5"] == pytest.approx(0.625476, abs=1e-6)


def test_coverage_counts_nuggets_seen_in_top_k(qrels):
    # q1: d2 covers n1; d1 adds n2; d4 nothing; d3 adds n3.
    per_query = evaluate(qrels, RUN, ["coverage@1", "coverage@2", "coverage@3", "coverage@4"]).per_query["q1"]
    assert per_query == pytest.approx(
        {"coverage@1": 1 / 3, "coverage@2": 2 / 3, "coverage@3": 2 / 3, "coverage@4": 1.0}
    )


def test_coverage_denominator_includes_nuggets_without_judgments():
    nuggets = [Nugget(f"q1_{n}", "q1", n) for n in ("n1", "n2", "n3", "n4")]  # n4 was never judged
    qrels = NuggetQrels.from_judgments(Q1, nuggets=nuggets)
    assert evaluate(qrels, RUN, ["coverage@5"]).per_query["q1"]["coverage@5"] == pytest.approx(3 / 4)


def test_recall_is_share_of_docs_supporting_any_nugget(qrels):
    # q1 relevant docs: d1, d2, d3, d5 (d4 judged, supports nothing). Top 2 = d2, d1; top 4 adds d4, d3.
    per_query = evaluate(qrels, RUN, ["recall@2", "recall@4", "recall@5"]).per_query["q1"]
    assert per_query == pytest.approx({"recall@2": 0.5, "recall@4": 0.75, "recall@5": 1.0})


def test_ndcg_uses_nugget_counts_as_gains(qrels):
    # q1 gains in run order: 1, 2, 0, 1, 2; ideal: 2, 2, 1, 1, 0.
    dcg = 1 + 2 / math.log2(3)
    ideal = 2 + 2 / math.log2(3) + 1 / 2
    assert dcg / ideal == pytest.approx(0.601261, abs=1e-6)
    assert evaluate(qrels, RUN, ["ndcg@3"]).per_query["q1"]["ndcg@3"] == pytest.approx(0.601261, abs=1e-6)


def test_judged_divides_by_k_not_by_run_length(qrels):
    run = {"q1": {"d1": 3, "unknown": 2, "d4": 1}}  # d4 is judged (0 for every nugget): it counts
    per_query = evaluate(qrels, run, ["judged@2", "judged@3", "judged@10"]).per_query["q1"]
    assert per_query == pytest.approx({"judged@2": 0.5, "judged@3": 2 / 3, "judged@10": 0.2})


def test_alpha_ndcg_above_one_is_not_clipped():
    # Greedy ideal: d2 {n1,n2} first (gain 2, ties broken to the larger id), then d1 (1.5). The run's
    # d0 {n1,n3}, d1 {n0,n2} gains 2 + 2/log2(3) > 2 + 1.5/log2(3).
    judgments = judgments_of(
        "q", {"d0": ["n1", "n3"], "d1": ["n0", "n2"], "d2": ["n1", "n2"]}, ["n0", "n1", "n2", "n3"]
    )
    result = evaluate(NuggetQrels.from_judgments(judgments), {"q": {"d0": 2, "d1": 1}}, ["alpha_ndcg@2"])
    assert result.per_query["q"]["alpha_ndcg@2"] == pytest.approx(1.107068, abs=1e-6)


def test_alpha_ndcg_beyond_k_20():
    # 22 docs each supporting its own nugget; the run wastes rank 1 on an unjudged doc.
    nuggets = [f"n{i}" for i in range(22)]
    judgments = judgments_of("q", {f"d{i:02d}": [f"n{i}"] for i in range(22)}, nuggets)
    run = {"q": {"junk": 100.0, **{f"d{i:02d}": 50.0 - i for i in range(22)}}}
    value = evaluate(NuggetQrels.from_judgments(judgments), run, ["alpha_ndcg@21"]).metrics["alpha_ndcg@21"]
    assert value == pytest.approx(0.862345, abs=1e-6)


def test_alpha_is_settable_and_alpha_zero_equals_ndcg(qrels):
    zero = evaluate(qrels, RUN, ["alpha_ndcg(alpha=0)@4", "ndcg@4"]).per_query
    for values in zero.values():
        assert values["alpha_ndcg(alpha=0)@4"] == pytest.approx(values["ndcg@4"])
    high = evaluate(qrels, RUN, ["alpha_ndcg(alpha=0.9)@5", "alpha_ndcg@5"]).metrics
    assert high["alpha_ndcg(alpha=0.9)@5"] != high["alpha_ndcg@5"]


def test_alpha_belongs_to_the_measure():
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.metrics import parse_measure, with_params

    default = parse_measure("alpha_ndcg@10")
    assert default == parse_measure("alpha-nDCG(alpha=0.5)@10") and dict(default.params)["alpha"] == 0.5
    assert (default.id, default.spec) == ("alpha_ndcg@10", "alpha_ndcg(alpha=0.5)@10")
    other = parse_measure("alpha_ndcg(alpha=0.3)@10")
    assert other != default and other.id == "alpha_ndcg(alpha=0.3)@10" and other.name == "α-nDCG(α=0.3)@10"
    assert with_params(["alpha_ndcg@10", "coverage@20"], alpha=0.3) == (other, parse_measure("coverage@20"))
    assert parse_measure("coverage@20").spec == "coverage@20"
    for bad in ("coverage(alpha=0.5)@20", "alpha_ndcg(alpha=1.5)@10", "alpha_ndcg(beta=1)@10", "alpha_ndcg(x)@5"):
        with pytest.raises(FreshStackError):
            parse_measure(bad)


def test_a_run_with_none_of_the_judged_queries_warns(qrels):
    from freshstack_hf.metrics.engine import RunCoverageWarning

    with pytest.warns(RunCoverageWarning, match="none of the topic's"):
        assert evaluate(qrels, {"not-a-query": {"d1": 1.0}}, ["coverage@5"]).metrics["coverage@5"] == 0.0


def test_missing_and_unsatisfiable_queries_score_zero_and_count_in_the_mean():
    no_positive = [NuggetJudgment("q3", "q3_0", "d1", 0)]
    nuggets = [Nugget("q4_0", "q4", "never judged")]
    qrels = NuggetQrels.from_judgments(Q1 + Q2 + no_positive, nuggets=nuggets)
    assert qrels.query_ids == ["q4", "q1", "q2", "q3"]
    run = {**RUN, "q3": {"d1": 1.0}, "q4": {"d1": 1.0}, "not-a-query": {"d1": 1.0}}
    result = evaluate(qrels, run, HEADLINE)
    assert result.per_query["q3"] == {"alpha_ndcg@10": 0.0, "coverage@20": 0.0, "recall@50": 0.0}
    assert result.per_query["q4"] == {"alpha_ndcg@10": 0.0, "coverage@20": 0.0, "recall@50": 0.0}
    assert set(result.per_query) == {"q1", "q2", "q3", "q4"}
    assert result.metrics["alpha_ndcg@10"] == pytest.approx((0.810123 + 0.440828) / 4, abs=1e-6)
    # Without the two runs of q1/q2, everything is 0: an absent query is scored, not skipped.
    with pytest.warns(UserWarning, match="ranks none"):
        assert evaluate(qrels, {}, HEADLINE).metrics == {"alpha_ndcg@10": 0.0, "coverage@20": 0.0, "recall@50": 0.0}


def test_tie_rule_is_score_then_doc_id_descending():
    assert top_docs({"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.0}, 2) == ["d", "c"]
    assert top_docs({"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.0}, 10) == ["d", "c", "b", "a"]
    judgments = judgments_of("q", {"a": ["n"], "b": [], "c": []}, ["n"])
    qrels = NuggetQrels.from_judgments(judgments)
    tied = evaluate(qrels, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, ["recall@1", "recall@3", "coverage@2"])
    assert tied.per_query["q"] == {"recall@1": 0.0, "recall@3": 1.0, "coverage@2": 0.0}  # order: c, b, a


def test_vectorised_ranking_matches_the_exact_path_on_ties_and_uneven_runs():
    rng = random.Random(3)
    judgments = [
        NuggetJudgment(f"q{q}", f"q{q}_{n}", f"d{d}", int(rng.random() < 0.4))
        for q in range(40)
        for n in range(3)
        for d in rng.sample(range(60), 15)
    ]
    qrels = NuggetQrels.from_judgments(judgments)
    run = {
        f"q{q}": {f"d{d}": float(rng.randint(0, 8)) for d in rng.sample(range(60), rng.choice([1, 5, 30, 60]))}
        for q in range(40)
    }
    rows = ranked_rows(qrels, run, 12)
    supporting = ranked_rows(qrels, run, 12, supporting_only=True)
    for i, qid in enumerate(qrels.query_ids):
        expected = [qrels.doc_rows(i).get(d, qrels.unjudged_row) for d in top_docs(run[qid], 12)]
        expected += [qrels.unjudged_row] * (12 - len(expected))
        assert rows[i].tolist() == expected
        support = qrels.matrix[expected].any(axis=1)  # a doc supporting nothing reads as unjudged
        assert supporting[i].tolist() == [
            r if s else qrels.unjudged_row for r, s in zip(expected, support, strict=True)
        ]
    assert (supporting != rows).any()  # some judged docs supporting nothing were ranked: the case is exercised
    # Scored alone, the support-only families look up supporting docs only; beside Judged@k every judged doc:
    # the values are the same.
    alone = evaluate(qrels, run, ["alpha_ndcg@10", "coverage@12", "recall@5", "ndcg@10"])
    beside = evaluate(qrels, run, ["alpha_ndcg@10", "coverage@12", "recall@5", "ndcg@10", "judged@10"])
    assert {m: v for m, v in beside.metrics.items() if m != "judged@10"} == alone.metrics
    assert beside.metrics["judged@10"] > 0


def test_non_finite_scores_are_rejected(qrels):
    with pytest.raises(ValueError, match="finite"):
        evaluate(qrels, {"q1": {"d1": float("nan"), "d2": 1.0}}, HEADLINE)


def test_average_topics_is_the_plain_mean_of_topic_means(qrels):
    small = evaluate(NuggetQrels.from_judgments(Q2), {"q2": RUN["q2"]}, ["alpha_ndcg@5"])
    both = evaluate(qrels, RUN, ["alpha_ndcg@5"])
    average = average_topics({"small": small, "both": both})
    assert average == {"alpha_ndcg@5": pytest.approx((0.440828 + 0.625476) / 2, abs=1e-6)}
    assert average_topics([]) == {}


def test_covered_nuggets_and_query_qrels(qrels):
    assert covered_nuggets(qrels, RUN, 2) == {"q1": {"q1_n1", "q1_n2"}, "q2": {"q2_n1"}}
    assert query_level(qrels)["q1"] == {"d1": 2, "d2": 1, "d3": 1, "d4": 0, "d5": 2}
    assert len(qrels) == 2 and "q1" in qrels and "q9" not in qrels


def test_qrels_from_topic_reads_only_judgments_and_nuggets():
    topic = SimpleNamespace(judgments=Q1, nuggets=[Nugget("q1_n9", "q1", "unjudged")])
    qrels = qrels_from_topic(topic)
    assert qrels.query_nuggets["q1"] == ("q1_n9", "q1_n1", "q1_n2", "q1_n3")
    assert evaluate(qrels, RUN, ["coverage@5"]).metrics["coverage@5"] == pytest.approx(3 / 4)


def test_result_column_is_in_query_order(qrels):
    column = evaluate(qrels, RUN, ["alpha_ndcg@5"]).column("alpha_ndcg@5")
    assert isinstance(column, np.ndarray)
    assert column.tolist() == pytest.approx([0.810123, 0.440828], abs=1e-6)


# ---- the measure table --------------------------------------------------------------------------------
def test_measure_table_and_headline():
    assert [m.id for m in HEADLINE] == ["alpha_ndcg@10", "coverage@20", "recall@50"]
    assert [m.name for m in HEADLINE] == ["α-nDCG@10", "Coverage@20", "Recall@50"]
    assert Measure("alpha_ndcg", 10) in HEADLINE and Measure("alpha_ndcg", 20) not in HEADLINE
    assert MEASURES[:3] == HEADLINE and len(set(MEASURES)) == len(MEASURES)
    assert Measure("alpha_ndcg", 10).official_key == "alpha-nDCG@10"
    assert Measure("judged", 10).official_key == ""
    assert "k=20" in Measure("coverage", 20).description


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("alpha_ndcg@20", Measure("alpha_ndcg", 20)),
        ("coverage@5", Measure("coverage", 5)),
        ("recall@50", Measure("recall", 50)),
        ("ndcg@10", Measure("ndcg", 10)),
        ("judged@10", Measure("judged", 10)),
        ("alpha-nDCG@10", Measure("alpha_ndcg", 10)),
        ("α-nDCG@100", Measure("alpha_ndcg", 100)),
        (" Coverage @ 20 ", Measure("coverage", 20)),
        ("NDCG@10", Measure("ndcg", 10)),
    ],
)
def test_parse_measure(text, expected):
    assert parse_measure(text) == expected


@pytest.mark.parametrize("text", ["map@10", "recall", "recall@0", "recall@x", "@10", ""])
def test_parse_measure_rejects(text):
    with pytest.raises(FreshStackError, match="unknown measure"):
        parse_measure(text)


def test_parse_measures_accepts_a_comma_list_and_drops_repeats():
    assert [m.id for m in parse_measures("recall@50, coverage@20,recall@50")] == ["recall@50", "coverage@20"]


def test_topics_without_queries_or_judgments_score_zero():
    empty = evaluate(NuggetQrels({}, {}), RUN, MEASURES)
    assert empty.per_query == {} and set(empty.metrics.values()) == {0.0}
    unjudged = evaluate(NuggetQrels({"q1": ["q1_n1"]}, {}), RUN, MEASURES)
    assert set(unjudged.per_query["q1"].values()) == {0.0}


def test_the_all_topics_average_has_one_rule_for_one_row_and_for_many():
    import math

    import numpy as np

    from freshstack_hf.metrics import topic_average, topic_averages

    rows = [[0.2, 0.4, 0.9], [0.5, float("nan"), 0.1], [1.0, 1.0, 1.0]]
    topics = ["a", "b", "c"]
    many = topic_averages(np.array(rows))
    for row, value in zip(rows, many, strict=True):
        one = topic_average(dict(zip(topics, row, strict=True)), topics)
        assert (one is None and math.isnan(value)) or one == pytest.approx(value, abs=1e-15)
    assert topic_average({"a": 0.2, "b": 0.4}, ["a", "b", "c"]) is None  # a missing topic: no average
    assert many[0] == pytest.approx(0.5) and math.isnan(many[1])


def test_every_measure_at_k_reads_only_the_top_k():
    """`evaluate` (the CLI) keeps each query of a run to the deepest cutoff it scores: a measure at k must give the
    same value on the run and on its top k under the tie rule, ties at the cut included."""
    rng = random.Random(11)
    judgments = [
        NuggetJudgment(f"q{q}", f"q{q}_{n}", f"d{d}", int(rng.random() < 0.5))
        for q in range(30)
        for n in range(3)
        for d in rng.sample(range(80), 20)
    ]
    qrels = NuggetQrels.from_judgments(judgments)
    run = {f"q{q}": {f"d{d}": float(rng.randint(0, 6)) for d in rng.sample(range(80), 70)} for q in range(30)}
    measures = [m.id for m in MEASURES]
    depth = max(parse_measure(m).k for m in measures)
    kept = {q: {d: docs[d] for d in top_docs(docs, depth)} for q, docs in run.items()}
    assert evaluate(qrels, kept, measures).per_query == evaluate(qrels, run, measures).per_query
    assert any(len(set(docs.values())) < len(docs) for docs in kept.values())  # ties inside the kept depth
