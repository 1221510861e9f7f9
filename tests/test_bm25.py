"""The BM25 engine against a plain-Python Lucene reference, SmallFloat's known values, top-k order and storage."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import numpy as np
import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval import bm25_scorers
from freshstack_hf.retrieval.analyzer import Tokenizer
from freshstack_hf.retrieval.bm25 import BM25Index, top_k
from freshstack_hf.retrieval.lucene import byte4_to_int, encoded_lengths, int_to_byte4, lucene_idf

# ---- reference: Lucene's SmallFloat and BM25Similarity, transcribed from the Java semantics with plain ints ----


def ref_long_to_int4(i: int) -> int:
    num_bits = i.bit_length()  # 64 - Long.numberOfLeadingZeros(i)
    if num_bits < 4:
        return i
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07
    return encoded | ((shift + 1) << 3)


def ref_int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


REF_NUM_FREE_VALUES = 255 - ref_long_to_int4(2**31 - 1)


def ref_int_to_byte4(i: int) -> int:
    return i if i < REF_NUM_FREE_VALUES else REF_NUM_FREE_VALUES + ref_long_to_int4(i - REF_NUM_FREE_VALUES)


def ref_byte4_to_int(b: int) -> int:
    if b < REF_NUM_FREE_VALUES:
        return b
    return min(REF_NUM_FREE_VALUES + ref_int4_to_long(b - REF_NUM_FREE_VALUES), 2**31 - 1)


def ref_lucene_bm25(
    docs: list[list[str]], queries: list[list[str]], k1: float = 0.9, b: float = 0.4, encode: bool = True
) -> list[list[float]]:
    """Every document's score for each query: the sum over query tokens (repeats included) of Lucene's term score."""
    doc_count = sum(1 for d in docs if d)
    avgdl = sum(len(d) for d in docs) / doc_count
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    doc_tf = [Counter(d) for d in docs]
    results = []
    for query in queries:
        scores = []
        for d, tf in zip(docs, doc_tf, strict=True):
            dl = ref_byte4_to_int(ref_int_to_byte4(len(d))) if encode else len(d)
            total = 0.0
            for term, count in Counter(query).items():
                if tf[term]:
                    idf = math.log(1 + (doc_count - df[term] + 0.5) / (df[term] + 0.5))
                    total += count * idf * tf[term] / (tf[term] + k1 * (1 - b + b * dl / avgdl))
            scores.append(total)
        results.append(scores)
    return results


def assert_matches_reference(docs: list[list[str]], queries: list[list[str]]) -> None:
    """Same matching documents, same scores to 1e-5, and encoding the lengths changed some scores."""
    index = BM25Index.build([f"d{i}" for i in range(len(docs))], docs)
    results = index.search(queries, k=len(docs))
    refs = ref_lucene_bm25(docs, queries)
    for ranking, ref in zip(results, refs, strict=True):
        got = dict(ranking)
        assert set(got) == {f"d{i}" for i, s in enumerate(ref) if s > 0}
        assert max(abs(got[f"d{i}"] - s) for i, s in enumerate(ref) if s > 0) <= 1e-5
        assert [s for _, s in ranking] == sorted(got.values(), reverse=True)
    exact = ref_lucene_bm25(docs, queries, encode=False)
    assert max(abs(a - b) for ra, rb in zip(refs, exact, strict=True) for a, b in zip(ra, rb, strict=True)) > 1e-3


def random_corpus(seed: int, n_docs: int, n_queries: int, max_len: int, query_len: tuple[int, int]):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    weights = [1 / (r + 1) for r in range(len(vocab))]
    docs = [rng.choices(vocab, weights, k=rng.randint(0, max_len)) for _ in range(n_docs)]
    docs[3] = []  # an empty document counts neither in docCount nor in avgdl
    queries = [[*rng.choices(vocab, weights, k=rng.randint(*query_len)), "unseen"] for _ in range(n_queries)]
    return docs, queries


# ---- SmallFloat ----


def test_smallfloat_matches_the_java_transcription() -> None:
    lengths = np.concatenate(
        [np.arange(0, 70_000), np.random.default_rng(0).integers(0, 2**31 - 1, 5000), [2**31 - 1, 2**24, 2**24 + 1]]
    )
    assert int_to_byte4(lengths).tolist() == [ref_int_to_byte4(int(i)) for i in lengths]
    assert byte4_to_int(np.arange(256)).tolist() == [ref_byte4_to_int(i) for i in range(256)]


def test_smallfloat_known_values() -> None:
    # Exact up to 40, then 4 significant bits; decoding never exceeds the true length.
    assert encoded_lengths(np.arange(41)).tolist() == list(range(41))
    spots = {41: 40, 43: 42, 57: 56, 63: 60, 100: 96, 200: 200, 201: 200, 1000: 984, 2**31 - 1: 2013265944}
    assert encoded_lengths(np.array(list(spots))).tolist() == list(spots.values())
    assert int_to_byte4(np.array([0, 23, 24, 100, 1000, 2**31 - 1])).tolist() == [0, 23, 24, 57, 87, 255]
    assert (np.diff(byte4_to_int(np.arange(256))) > 0).all()
    with pytest.raises(ValueError, match="only encodes lengths"):
        int_to_byte4(-1)


def test_lucene_idf_is_the_plus_one_variant() -> None:
    expected = [math.log(1 + 9.5 / 1.5), math.log(1 + 0.5 / 10.5)]
    assert lucene_idf(np.array([1, 10]), 10).tolist() == pytest.approx(expected)


# ---- scores against the reference ----


@pytest.mark.slow
def test_scores_equal_the_reference_with_length_encoding() -> None:
    docs, queries = random_corpus(seed=1, n_docs=300, n_queries=12, max_len=400, query_len=(200, 500))
    assert_matches_reference(docs, queries)


@pytest.mark.slow
def test_scores_equal_the_reference_on_long_documents() -> None:
    docs, queries = random_corpus(seed=5, n_docs=1500, n_queries=20, max_len=5000, query_len=(400, 600))
    assert_matches_reference(docs, queries)


def test_custom_k1_b_and_text_queries() -> None:
    texts = ["getUserName returns the user name", "setUserName(name)", "nothing related", "user user user"]
    index = BM25Index.build(["a", "b", "c", "d"], texts, k1=1.2, b=0.75)
    tokens = Tokenizer().tokenize_many(texts)
    query = "how to get the userName"
    ref = ref_lucene_bm25(tokens, [Tokenizer()(query)], k1=1.2, b=0.75)[0]
    ranking = index.search([query], k=10)[0]
    expected = sorted(((s, d) for d, s in zip("abcd", ref, strict=True) if s > 0), key=lambda x: -x[0])
    assert ranking[0][0] == "a" and len(ranking) == 3  # "c" shares no token with the query
    assert [d for d, _ in ranking] == [d for _, d in expected]
    assert [s for _, s in ranking] == pytest.approx([s for s, _ in expected], abs=1e-9)


@pytest.mark.parametrize("ratio", [0.0, math.inf])
def test_dense_and_sparse_paths_agree(monkeypatch: pytest.MonkeyPatch, ratio: float) -> None:
    docs, queries = random_corpus(seed=2, n_docs=200, n_queries=6, max_len=300, query_len=(100, 300))
    index = BM25Index.build([str(i) for i in range(len(docs))], docs)
    default = index.search(queries, k=50)
    monkeypatch.setattr(bm25_scorers, "DENSE_RATIO", ratio)
    other = index.search(queries, k=50, batch_size=4)
    for a, b in zip(default, other, strict=True):
        assert [d for d, _ in a] == [d for d, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], rtol=0, atol=1e-9)


# ---- top-k ----


def test_top_k_orders_by_score_then_index_and_keeps_only_matches() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 0.0, 2.0, 2.0, 3.0])
    idx, vals = top_k(scores, 5)
    assert idx.tolist() == [1, 3, 7, 2, 5]
    assert vals.tolist() == [3, 3, 3, 2, 2]
    assert top_k(scores, 100)[0].tolist() == [1, 3, 7, 2, 5, 6, 0]
    assert top_k(np.zeros(4), 2)[0].tolist() == []
    assert top_k(scores, 0)[0].tolist() == []


def test_tied_documents_come_in_corpus_order() -> None:
    docs = [["x", "y"], ["z"], ["x", "y"], ["x", "y"], ["x", "y"]]
    index = BM25Index.build(["e", "d", "c", "b", "a"], docs)
    assert [d for d, _ in index.search([["x"]], k=3)[0]] == ["e", "c", "b"]
    assert index.search([["nothing"], []], k=3) == [[], []]


# ---- storage and inputs ----


def test_save_load_round_trip(tmp_path) -> None:
    docs, queries = random_corpus(seed=3, n_docs=120, n_queries=4, max_len=200, query_len=(50, 100))
    texts = [" ".join(d) for d in docs]
    index = BM25Index.build([f"doc-{i}" for i in range(len(docs))], texts, tokenizer=Tokenizer(keep_compound=False))
    index.save(tmp_path / "idx")
    params = json.loads((tmp_path / "idx" / "params.json").read_text())
    assert params["format"] == "freshstack-bm25" and params["k1"] == 0.9 and params["b"] == 0.4
    assert params["tokenizer"]["keep_compound"] is False
    loaded = BM25Index.load(tmp_path / "idx")
    text_queries = [" ".join(q) for q in queries]
    assert loaded.search(text_queries, k=20) == index.search(text_queries, k=20)
    assert loaded.params == index.params


def test_load_errors(tmp_path) -> None:
    with pytest.raises(FreshStackError, match=r"not a BM25 index folder: missing params\.json"):
        BM25Index.load(tmp_path)
    BM25Index.build(["a"], [["x"]]).save(tmp_path)
    meta = json.loads((tmp_path / "params.json").read_text())
    (tmp_path / "params.json").write_text(json.dumps({**meta, "format_version": 99}))
    with pytest.raises(FreshStackError, match="unsupported index format 'freshstack-bm25' version 99"):
        BM25Index.load(tmp_path)


def test_build_errors() -> None:
    with pytest.raises(FreshStackError, match="empty corpus"):
        BM25Index.build([], [])
    with pytest.raises(FreshStackError, match="2 doc ids for 1 documents"):
        BM25Index.build(["a", "b"], ["x"])
    with pytest.raises(FreshStackError, match=r"1 duplicate doc ids, e\.g\. a"):
        BM25Index.build(["a", "b", "a"], ["x", "y", "z"])
    with pytest.raises(FreshStackError, match="mix of texts and token lists"):
        BM25Index.build(["a", "b"], ["x", ["y"]])
    with pytest.raises(FreshStackError, match="unknown BM25 backend 'lucene9'"):
        BM25Index.build(["a"], ["x"], backend="lucene9")
    with pytest.raises(FreshStackError, match="built from token lists"):
        BM25Index.build(["a"], [["x"]]).search(["x"])


# ---- reference backends ----

TOY = [
    "angular router navigate with query params",
    "the router outlet renders the routed component",
    "httpclient get request with headers in angular",
    "rxjs switchMap cancels the previous request",
    "forms module reactive forms validators",
]


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_reference_backends_rank_sensibly(backend: str, tmp_path) -> None:
    pytest.importorskip(backend)
    ids = [f"t{i}" for i in range(len(TOY))]
    index = BM25Index.build(ids, TOY, backend=backend)
    top = [ranking[0][0] for ranking in index.search(["router navigate", "http request headers"], k=3)]
    assert top == ["t0", "t2"]
    index.save(tmp_path)
    assert BM25Index.load(tmp_path).search(["switchMap"], k=1)[0][0][0] == "t3"


def test_bm25s_equals_ours_when_lengths_are_exact() -> None:
    pytest.importorskip("bm25s")
    docs, queries = random_corpus(seed=4, n_docs=80, n_queries=5, max_len=40, query_len=(20, 60))
    docs[3] = ["w0"]  # bm25s counts every document in N; keep them all non-empty
    ids = [str(i) for i in range(len(docs))]
    ours = BM25Index.build(ids, docs).search(queries, k=len(docs))
    theirs = BM25Index.build(ids, docs, backend="bm25s").search(queries, k=len(docs))
    for a, b in zip(ours, theirs, strict=True):
        assert dict(a).keys() == dict(b).keys()
        assert np.allclose([dict(a)[d] for d in dict(b)], [s for _, s in b], rtol=1e-5)
