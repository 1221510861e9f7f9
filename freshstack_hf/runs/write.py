"""Writing runs as TREC 6-column text or JSON, the two formats `load_run` reads back unchanged.

Docs are written in the evaluator's order (score descending, then doc id descending) with 1-based ranks, and
scores in `repr` form so a round trip gives the same floats and therefore the same metric values.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.run import top_docs


@contextmanager
def _open(path: Path) -> Iterator[Any]:
    """A text handle on a temporary file that becomes `path` only once fully written (gzip by suffix)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with atomic_path(path) as tmp, opener(tmp, "wt", encoding="utf-8") as handle:
        yield handle


def trec_lines(run: Mapping[str, Mapping[str, float]], tag: str = "freshstack-hf", depth: int | None = None):
    """Yield the run's TREC lines; ids that would not read back (whitespace in query ids or tags) are refused."""
    if not tag or len(tag.split()) != 1:
        raise FreshStackError(f"run tag {tag!r} must be one word without spaces")
    for query_id, scores in run.items():
        if len(str(query_id).split()) != 1:
            raise FreshStackError(f"query id {query_id!r} cannot be written to a TREC run: it contains spaces")
        for rank, doc_id in enumerate(top_docs(scores, depth or len(scores)), start=1):
            if doc_id != doc_id.strip() or "\n" in doc_id or not doc_id:
                raise FreshStackError(f"doc id {doc_id!r} cannot be written to a TREC run (edge spaces or newline)")
            yield f"{query_id} Q0 {doc_id} {rank} {float(scores[doc_id])!r} {tag}\n"


def write_run(
    run: Mapping[str, Mapping[str, float]],
    path: str | Path,
    *,
    tag: str = "freshstack-hf",
    fmt: str | None = None,
    depth: int | None = None,
) -> Path:
    """Write `run` to `path` (`.json` -> JSON, anything else -> TREC; `.gz` compresses). Returns the path."""
    path = Path(path)
    fmt = fmt or ("json" if ".json" in [s.lower() for s in path.suffixes] else "trec")
    if fmt == "trec":
        lines = list(trec_lines(run, tag, depth))  # validate everything before creating the file
        with _open(path) as handle:
            handle.writelines(lines)
    elif fmt == "json":
        ranked = {q: {d: float(scores[d]) for d in top_docs(scores, depth or len(scores))} for q, scores in run.items()}
        with _open(path) as handle:
            json.dump(ranked, handle, ensure_ascii=False)
    else:
        raise FreshStackError(f"unknown run format {fmt!r}: use 'trec' or 'json'")
    return path
