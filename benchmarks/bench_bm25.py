"""BM25 engines on a topic-sized synthetic corpus: ours (Lucene's BM25) against bm25s and rank-bm25.

117,000 documents (the Angular topic's size) and 129 queries of about 500 tokens, code-like and prose-like text over
a Zipf vocabulary, generated from a fixed seed. Every engine gets the same token lists, so the timings compare
indexing and top-500 retrieval only; tokenization is timed once, on its own. rank-bm25 needs seconds per query at
this size, so it runs a few queries and its per-query time is extrapolated (and labelled so).

Run: `python -m benchmarks bm25` (part of `make bench`).
"""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np

N_DOCS = 117_000
N_QUERIES = 129
DOC_WORDS = 185  # mean words per document; identifiers split into parts make it ~200 tokens
QUERY_WORDS = 470  # ~500 tokens
VOCAB = 60_000
SEED = 20250401
K = 500
RANK_BM25_QUERIES = 2
CHECK_QUERIES = 5

_SYLLABLES = [c + v for c in ("", "k", "m", "n", "p", "r", "s", "t", "l", "v", "ch", "qu") for v in "aeiou"]
_PROSE_SEPS = np.array([" ", ", ", ". ", " (", ") ", ": "], dtype=object)
_PROSE_P = [0.84, 0.05, 0.05, 0.02, 0.02, 0.02]
_CODE_SEPS = np.array(["", "_", ".", "(", ") ", " = ", ";\n", ", ", " ", "::"], dtype=object)
_CODE_P = [0.18, 0.1, 0.14, 0.1, 0.08, 0.06, 0.08, 0.08, 0.16, 0.02]


def _vocabulary(rng: np.random.Generator) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCAB:
        n = int(rng.integers(1, 5))
        words["".join(rng.choice(_SYLLABLES, size=n))] = None
    return list(words)


def _texts(rng: np.random.Generator, vocab: list[str], n: int, mean_words: int, spread: float) -> list[str]:
    """n texts, 60% prose and 40% code; camelCase where a code separator is empty."""
    ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
    p = 1.0 / (ranks + 2.7) ** 1.07
    cdf = np.cumsum(p / p.sum())
    lengths = np.maximum(3, rng.lognormal(math.log(mean_words) - spread**2 / 2, spread, size=n)).astype(np.int64)
    total = int(lengths.sum())
    word_idx = np.minimum(np.searchsorted(cdf, rng.random(total)), len(vocab) - 1)
    is_code = np.repeat(rng.random(n) < 0.4, lengths)
    seps = np.where(
        is_code, rng.choice(_CODE_SEPS, size=total, p=_CODE_P), rng.choice(_PROSE_SEPS, size=total, p=_PROSE_P)
    )
    lower = np.array(vocab, dtype=object)
    capital = np.array([w.capitalize() for w in vocab], dtype=object)
    upper = np.array([w.upper() for w in vocab], dtype=object)
    camel = np.zeros(total, dtype=bool)
    camel[1:] = seps[:-1] == ""
    form = rng.random(total)
    words = np.where(camel | (is_code & (form < 0.05)), capital[word_idx], lower[word_idx])
    words = np.where(is_code & (form > 0.99), upper[word_idx], words)
    parts = np.empty(2 * total, dtype=object)
    parts[0::2] = words
    parts[1::2] = seps
    ends = np.cumsum(lengths) * 2
    starts = ends - 2 * lengths
    flat = parts.tolist()
    return ["".join(flat[s:e]) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def synthetic_topic(n_docs: int = N_DOCS, n_queries: int = N_QUERIES, seed: int = SEED) -> tuple[list[str], list[str]]:
    """(documents, queries), identical for a given seed."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    return _texts(rng, vocab, n_docs, DOC_WORDS, 0.6), _texts(rng, vocab, n_queries, QUERY_WORDS, 0.25)


def _reference_scores(doc_tokens: list[list[str]], queries: list[list[str]]) -> list[np.ndarray]:
    """Lucene BM25 (k1=0.9, b=0.4, one-byte lengths) of every doc, computed directly from the token lists."""
    from freshstack_hf.retrieval.lucene import encoded_lengths

    wanted = set().union(*queries)
    hits: dict[str, list[int]] = {t: [] for t in wanted}
    for i, doc in enumerate(doc_tokens):
        for t in doc:
            if t in wanted:
                hits[t].append(i)
    n = len(doc_tokens)
    tf = {t: np.bincount(rows, minlength=n).astype(np.float64) for t, rows in hits.items()}
    lengths = np.array([len(d) for d in doc_tokens], dtype=np.int64)
    doc_count = int(np.count_nonzero(lengths))
    denom = 0.9 * (1 - 0.4 + 0.4 * encoded_lengths(lengths) / (lengths.sum() / doc_count))
    results = []
    for query in queries:
        total = np.zeros(n)
        for t, count in Counter(query).items():
            df = np.count_nonzero(tf[t])
            if df:
                idf = math.log(1 + (doc_count - df + 0.5) / (df + 0.5))
                total += count * idf * tf[t] / (tf[t] + denom)
        results.append(total)
    return results


def _timed(label: str, fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    seconds = time.perf_counter() - start
    print(f"  {label:<44} {seconds:8.2f} s", flush=True)
    return out, seconds


def main() -> None:
    from freshstack_hf.retrieval.analyzer import Tokenizer
    from freshstack_hf.retrieval.bm25 import BM25Index

    (docs, queries), _ = _timed("generate synthetic topic", synthetic_topic)
    tokenizer = Tokenizer()
    doc_tokens, _ = _timed("tokenize corpus (code-aware)", tokenizer.tokenize_many, docs)
    query_tokens = tokenizer.tokenize_many(queries)
    doc_ids = [f"doc{i}" for i in range(len(docs))]
    print(
        f"  {len(docs)} docs, {np.mean([len(d) for d in doc_tokens]):.0f} tokens/doc; {len(queries)} queries, "
        f"{np.mean([len(q) for q in query_tokens]):.0f} tokens/query; top-{K}"
    )

    print("ours (Lucene BM25, sparse x dense matrices):")
    index, ours_build = _timed("index", BM25Index.build, doc_ids, doc_tokens)
    ours_runs, ours_search = _timed(f"search {len(queries)} queries", index.search, query_tokens, k=K)
    ours = ours_build + ours_search

    print("bm25s (method='lucene', same tokens):")
    import bm25s

    retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    _, bm25s_build = _timed("index", retriever.index, doc_tokens, show_progress=False)
    bm25s_res, bm25s_search = _timed(
        f"search {len(queries)} queries", retriever.retrieve, query_tokens, k=K, show_progress=False
    )
    bm25s_total = bm25s_build + bm25s_search

    print(f"rank-bm25 (BM25Okapi, same tokens; {RANK_BM25_QUERIES} queries timed, the rest extrapolated):")
    from rank_bm25 import BM25Okapi

    okapi, rank_build = _timed("index", BM25Okapi, doc_tokens, k1=0.9, b=0.4)
    sample = query_tokens[:RANK_BM25_QUERIES]
    _, rank_sample = _timed(
        f"search {len(sample)} queries", lambda: [np.argsort(-okapi.get_scores(q))[:K] for q in sample]
    )
    # get_scores loops over the query's tokens, so its time grows with query length: extrapolate per token.
    per_token = rank_sample / sum(len(q) for q in sample)
    rank_search = per_token * sum(len(q) for q in query_tokens)
    rank_total = rank_build + rank_search
    print(f"  {'search all queries (EXTRAPOLATED)':<44} {rank_search:8.2f} s")

    print("scores against a direct Lucene BM25 computation (sample of queries):")
    worst, same_docs = 0.0, 0
    for q, ref in enumerate(_reference_scores(doc_tokens, query_tokens[:CHECK_QUERIES])):
        worst = max([worst] + [abs(ref[int(d[3:])] - s) for d, s in ours_runs[q]])
        top_ref = sorted(np.flatnonzero(ref).tolist(), key=lambda i: (-ref[i], i))[:K]
        same_docs += [doc_ids[i] for i in top_ref] == [d for d, _ in ours_runs[q]]
    print(
        f"  max |ours - reference| over {CHECK_QUERIES} x top-{K}: {worst:.2e}; identical top-{K}: "
        f"{same_docs}/{CHECK_QUERIES}"
    )
    bm25s_top10 = [[doc_ids[i] for i in bm25s_res.documents[q][:10]] for q in range(len(queries))]
    ours_top10 = [[d for d, _ in ours_runs[q][:10]] for q in range(len(queries))]
    differ = sum(a != b for a, b in zip(bm25s_top10, ours_top10, strict=True))
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(bm25s_top10, ours_top10, strict=True)])
    print(
        f"  bm25s (no length encoding) vs ours: top-10 order differs in {differ}/{len(queries)} queries, "
        f"mean top-10 overlap {overlap:.2f}"
    )

    print("summary (index + search, seconds):")
    print(f"  ours {ours:.2f} | bm25s {bm25s_total:.2f} | rank-bm25 {rank_total:.1f} (extrapolated)")
    print(
        f"  bm25s / ours = {bm25s_total / ours:.1f}x (search only {bm25s_search / ours_search:.1f}x); "
        f"rank-bm25 / ours = {rank_total / ours:.0f}x (extrapolated)"
    )
