"""Fusion and safeguard, checked against numbers worked by hand (rrf_k = 100 as in FreshStack)."""

from __future__ import annotations

import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.fusion import apply_safeguard, minmax_fusion, pick_positive, ranked, rrf

BM25 = {"q1": [("d1", 10.0), ("d2", 8.0), ("d3", 5.0)]}
DENSE = {"q1": {"d2": 0.9, "d4": 0.8, "d1": 0.7}}


def test_rrf_hand_worked() -> None:
    # d1: ranks 1 and 3 -> 1/101 + 1/103; d2: ranks 2 and 1 -> 1/102 + 1/101; d3: 1/103; d4: 1/102
    fused = rrf([BM25, DENSE], rrf_k=100)["q1"]
    assert [d for d, _ in fused] == ["d2", "d1", "d4", "d3"]
    expected = {"d2": 0.0197049117, "d1": 0.0196097280, "d4": 0.0098039216, "d3": 0.0097087379}
    for doc, score in fused:
        assert score == pytest.approx(expected[doc], abs=1e-10)


def test_rrf_ties_go_to_smaller_doc_id_and_depth_cuts() -> None:
    a = {"q": ["y", "x", "z"]}  # bare id lists: order is the rank
    b = {"q": ["x", "y"]}
    fused = rrf([a, b], depth=2)["q"]
    assert [d for d, _ in fused] == ["x", "y"]  # both 1/101 + 1/102
    assert fused[0][1] == fused[1][1] == pytest.approx(1 / 101 + 1 / 102)


def test_rrf_input_order_and_run_order_do_not_matter() -> None:
    shuffled = {"q1": [("d3", 5.0), ("d1", 10.0), ("d2", 8.0)]}
    assert rrf([shuffled, DENSE]) == rrf([DENSE, BM25])


def test_rrf_query_in_one_run_only_and_input_depth() -> None:
    fused = rrf([BM25, {"q2": ["d9"]}], input_depth=1)
    assert fused["q2"] == [("d9", pytest.approx(1 / 101))]
    assert fused["q1"] == [("d1", pytest.approx(1 / 101))]


def test_ranked_keeps_best_entry_of_a_duplicated_doc() -> None:
    assert ranked([("a", 1.0), ("b", 3.0), ("a", 2.0)]) == [("b", 3.0), ("a", 2.0)]
    assert ranked(["b", "a", "b"]) == [("b", None), ("a", None)]


def test_minmax_fusion_hand_worked() -> None:
    # bm25 normalised: d1 (10-5)/5 = 1, d2 0.6, d3 0; dense: d2 1, d4 0.5, d1 0
    fused = minmax_fusion([BM25, DENSE])["q1"]
    assert [d for d, _ in fused] == ["d2", "d1", "d4", "d3"]
    expected = {"d2": 1.6, "d1": 1.0, "d4": 0.5, "d3": 0.0}
    for doc, score in fused:
        assert score == pytest.approx(expected[doc], abs=1e-6)


def test_minmax_fusion_depth_and_ties() -> None:
    # top-2 only: bm25 d1 1, d2 0; dense d2 1, d4 0 -> d1 = d2 = 1 (tie, id asc), d4 = 0
    fused = minmax_fusion([BM25, DENSE], depth=2)["q1"]
    assert [d for d, _ in fused] == ["d1", "d2", "d4"]
    assert fused[0][1] == pytest.approx(fused[1][1])


def test_minmax_fusion_constant_scores_add_nothing() -> None:
    flat = {"q1": [("d7", 3.0), ("d8", 3.0)]}
    fused = dict(minmax_fusion([BM25, flat])["q1"])
    assert fused["d7"] == fused["d8"] == 0.0
    assert fused["d1"] == pytest.approx(1.0)


def test_minmax_fusion_needs_scores() -> None:
    with pytest.raises(FreshStackError, match=r"needs scores.*'q'"):
        minmax_fusion([{"q": ["d1", "d2"]}])


def test_safeguard_leaves_lists_with_a_positive() -> None:
    fused = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]}
    out = apply_safeguard(fused, {"q": {"b"}}, depth=2)
    assert out.runs == {"q": [("a", 3.0), ("b", 2.0)]}
    assert out.count == 0


def test_safeguard_appends_best_ranked_positive_at_depth_plus_one() -> None:
    fused = {"q": [("a", 3.0), ("b", 2.0), ("p3", 1.0)]}  # a positive at rank 3 is below the cut
    inputs = [{"q": ["a", "b", "p3"]}, {"q": ["b", "p9", "a"]}]  # p9 ranked 2nd by the second system
    out = apply_safeguard(fused, {"q": {"p3", "p9"}}, depth=2, inputs=inputs)
    assert out.runs["q"] == [("a", 3.0), ("b", 2.0), ("p9", 1.0)]  # score one below the last kept
    assert out.safeguarded == {"q": "p9"} and out.count == 1


def test_safeguard_rank_ties_go_to_smaller_id_and_fallback_is_smallest_id() -> None:
    inputs = [{"q": ["x", "p5"]}, {"q": ["y", "p4"]}]
    assert pick_positive({"p5", "p4"}, inputs, "q") == "p4"
    assert pick_positive({"z2", "z1"}, inputs, "q") == "z1"  # no system found any positive


def test_safeguard_missing_query_and_query_without_positives() -> None:
    fused = {"q1": [("a", 1.0)], "q2": [("b", 1.0)]}
    out = apply_safeguard(fused, {"q2": set(), "q3": {"c"}}, depth=100)
    assert out.runs == {"q1": [("a", 1.0)], "q2": [("b", 1.0)], "q3": [("c", 0.0)]}
    assert out.safeguarded == {"q3": "c"}
    assert out.without_positives == ["q2"]


def test_rrf_then_safeguard_pipeline() -> None:
    bm25 = {"q": [f"b{i:03d}" for i in range(150)]}
    dense = {"q": [f"e{i:03d}" for i in range(150)] + ["pos"]}
    fused = rrf([bm25, dense], depth=None)
    out = apply_safeguard(fused, {"q": {"pos"}}, depth=100, inputs=[bm25, dense])
    assert len(out.runs["q"]) == 101 and out.runs["q"][100][0] == "pos"
    assert out.runs["q"][99][1] > out.runs["q"][100][1]
