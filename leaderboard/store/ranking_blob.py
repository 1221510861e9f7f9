"""How the ranking behind a row is kept in the store: one canonical byte string per ranking, so that the same
ranking always has the same sha256 whichever process, machine or dict order produced it (the store deduplicates
blobs by that hash).

A release-size archived ranking (672 queries x 100 documents) written as gzipped JSON took about 1.9 MB; most of it
repeats long document ids and prints float32 similarities as 17-digit decimals. This layout writes each distinct
document id once and each score in the fewest lossless bytes, and the store compresses the whole (zstd):

    FSHF-RANKING 1\\n
    header  one line of JSON: {"topics": [[topic, [[query id, n docs], ...]], ...], "docs": [doc id, ...],
            "scores": "f32" | "text"}\\n
    index   uint32 little-endian, one per (query, rank): the position of the document in "docs"
    scores  float32 little-endian when every score is exactly a float32 (model similarities usually are); else,
            when every score is a whole number of 10^-k (TREC files' "12.3456"), int64 per query: the first score
            times 10^k, then each drop to the next rank; else each score's shortest round-trip text, one a line

Topics and queries are sorted, and each query's documents are in the evaluator's order (score descending, then doc
id descending, as `freshstack_hf.runs.top_docs`), so decoding gives back every score exactly and in ranked order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from freshstack_hf.errors import FreshStackError

MAGIC = b"FSHF-RANKING 1\n"
MEDIA = "ranking"

Rankings = dict[str, dict[str, dict[str, float]]]  # topic -> query -> doc -> score


def encode_ranking(runs: Mapping[str, Mapping[str, Mapping[str, float]]]) -> bytes:
    """The canonical bytes of `runs` ({topic: {query: {doc: score}}}); equal rankings give equal bytes."""
    layout: list[list[Any]] = []
    ordered: list[tuple[str, float]] = []
    for topic in sorted(runs):
        queries = []
        for query in sorted(runs[topic]):
            docs = sorted(((float(s), str(d)) for d, s in runs[topic][query].items()), reverse=True)
            queries.append([str(query), len(docs)])
            ordered += [(d, s) for s, d in docs]
        layout.append([str(topic), queries])
    vocabulary = sorted({d for d, _ in ordered})
    position = {d: i for i, d in enumerate(vocabulary)}
    index = np.fromiter((position[d] for d, _ in ordered), dtype="<u4", count=len(ordered))
    values = np.fromiter((s for _, s in ordered), dtype="<f8", count=len(ordered))
    if not np.isfinite(values).all():
        raise FreshStackError("a ranking to store has a score that is not a finite number")
    counts = [n for _, queries in layout for _, n in queries]
    kind, scores = _scores(values, counts)
    header = {"topics": layout, "docs": vocabulary, "scores": kind}
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    return b"".join((MAGIC, head, b"\n", index.tobytes(), scores))


def _scores(values: np.ndarray, counts: list[int]) -> tuple[str, bytes]:
    """The fewest lossless bytes for `values`, in ranked order, `counts` per query: float32 when every score is
    one; else whole numbers of 10^-k (a TREC file's "12.3456", k = 0..9) as each query's first value then its
    drops from rank to rank (small numbers, as the scores descend, that compress to almost nothing); else text."""
    narrow = values.astype("<f4")
    if (narrow.astype("<f8") == values).all():
        return "f32", narrow.tobytes()
    for k in range(10):
        whole = np.round(values * 10**k)
        if np.abs(whole).max(initial=0) < 2**53 and (whole / 10**k == values).all():
            drops = np.empty_like(whole)
            drops[1:] = whole[:-1] - whole[1:]
            drops[_starts(counts)] = whole[_starts(counts)]
            return f"dec{k}", drops.astype("<i8").tobytes()
    return "text", "\n".join(repr(v) for v in values.tolist()).encode()


def _starts(counts: list[int]) -> np.ndarray:
    """Where each query's scores start, in the flat array (queries with no document have none)."""
    ends = np.cumsum(counts, dtype=np.int64)
    return (ends - np.asarray(counts, dtype=np.int64))[np.asarray(counts) > 0]


def _values(kind: str, body: bytes, counts: list[int], total: int) -> list[float]:
    if kind == "f32":
        return np.frombuffer(body, dtype="<f4", count=total).astype(np.float64).tolist()
    if kind.startswith("dec"):
        drops = np.frombuffer(body, dtype="<i8", count=total).astype(np.float64)
        steps = -drops
        starts = _starts(counts)
        steps[starts] = drops[starts]
        running = np.cumsum(steps)  # exact: whole numbers below 2^53
        before = np.concatenate(([0.0], running))[starts]
        query = np.repeat(np.arange(len(starts)), [n for n in counts if n > 0])
        return ((running - before[query]) / 10 ** int(kind[3:])).tolist()
    return [float(v) for v in body.split(b"\n")] if total else []


def decode_ranking(data: bytes) -> Rankings:
    """The ranking `encode_ranking` wrote, every score and order as it was."""
    if not data.startswith(MAGIC):
        raise FreshStackError("stored ranking: not a ranking blob of this release (unknown header)")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC) : end])
    total = sum(n for _, queries in header["topics"] for _, n in queries)
    start = end + 1
    index = np.frombuffer(data, dtype="<u4", count=total, offset=start)
    counts = [n for _, queries in header["topics"] for _, n in queries]
    values = _values(header["scores"], data[start + 4 * total :], counts, total)
    docs = header["docs"]
    names = [docs[i] for i in index.tolist()]
    out: Rankings = {}
    at = 0
    for topic, queries in header["topics"]:
        per_query = out.setdefault(topic, {})
        for query, n in queries:
            per_query[query] = dict(zip(names[at : at + n], values[at : at + n], strict=True))
            at += n
    return out
