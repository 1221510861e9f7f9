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
    scores  float32 little-endian when every score is exactly a float32 (model similarities usually are), else each
            score's shortest round-trip decimal text, one per line (TREC files' "12.3456")

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
    narrow = values.astype("<f4")
    exact = bool((narrow.astype("<f8") == values).all())
    header = {"topics": layout, "docs": vocabulary, "scores": "f32" if exact else "text"}
    scores = narrow.tobytes() if exact else "\n".join(repr(v) for v in values.tolist()).encode()
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    return b"".join((MAGIC, head, b"\n", index.tobytes(), scores))


def decode_ranking(data: bytes) -> Rankings:
    """The ranking `encode_ranking` wrote, every score and order as it was."""
    if not data.startswith(MAGIC):
        raise FreshStackError("stored ranking: not a ranking blob of this release (unknown header)")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC) : end])
    total = sum(n for _, queries in header["topics"] for _, n in queries)
    start = end + 1
    index = np.frombuffer(data, dtype="<u4", count=total, offset=start)
    body = data[start + 4 * total :]
    if header["scores"] == "f32":
        values = np.frombuffer(body, dtype="<f4", count=total).astype(np.float64).tolist()
    else:
        values = [float(v) for v in body.split(b"\n")] if total else []
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
