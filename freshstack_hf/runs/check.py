"""Checking a run against a topic, in strict mode (the leaderboard) or lenient mode (the CLI default).

Malformed lines (wrong column count, a score that is not a number) are errors in both modes: there is no
sensible way to score them. The rest are problems only strict mode refuses: a doc listed twice for a query,
unknown query ids, doc ids outside the corpus, more docs per query than the allowed depth. Lenient mode
repairs them the way the official evaluator would treat them (unknown docs score as non-relevant, unknown
queries are dropped, the first occurrence of a repeated doc wins, deep queries are cut to their top docs)
and says so in a few counted warnings instead of one line per problem.

A reranking run may only reorder each query's candidates (`T-top_ranked`): given `candidates`, a doc ranked
for a query outside that query's own list is a problem too (a candidate of another query included); lenient
mode drops it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from freshstack_hf.errors import Problem, ValidationError
from freshstack_hf.runs.columns import (
    TrecColumns,
    arrow_int64,
    clean_trec_columns,
    doc_codes,
    kept_run,
    spans,
)
from freshstack_hf.runs.parse import Entry, RunEntry, stream_entries
from freshstack_hf.runs.run import top_docs

DEFAULT_MAX_DEPTH = 1000


class RunLimits(TypedDict):
    """What a run is checked against, passed on unchanged from `load_run` and `check_run` to `check_entries`."""

    query_ids: Container[str] | None
    doc_ids: Container[str] | None
    max_depth: int | None
    strict: bool
    candidates: Mapping[str, Container[str]] | None


@dataclass(frozen=True, slots=True)
class LoadedRun:
    """A run ready to score, where it came from, and what lenient mode repaired in it."""

    run: dict[str, dict[str, float]]
    source: str
    tag: str = ""
    fmt: str = ""
    warnings: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = field(default=(), repr=False)

    @property
    def name(self) -> str:
        """A short label for tables: the run's tag, else the file name."""
        return self.tag or Path(self.source).name


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _examples(items: Iterable[str], limit: int = 3) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (", ..." if len(items) > limit else "")


def _unknown_query_problems(source: str, unknown: Mapping[str, list[int | None]]) -> list[Problem]:
    """One problem per unknown query ({query: [row of its first line, its line count]}), at its first line."""
    return [
        Problem(source, f"unknown query {q!r} ({_plural(n or 0, 'line')})", row=row, unit="line")
        for q, (row, n) in unknown.items()
    ]


def _unknown_query_warning(unknown: Mapping[str, list[int | None]]) -> str:
    lines = sum(n or 0 for _, n in unknown.values())
    queries = _plural(len(unknown), "unknown query", "unknown queries")
    return f"dropped {_plural(lines, 'line')} of {queries}: {_examples(unknown)}"


def check_entries(
    entries: Iterable[Entry],
    *,
    source: str,
    malformed: Iterable[Problem] = (),
    query_ids: Container[str] | None = None,
    doc_ids: Container[str] | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
    strict: bool = False,
    fmt: str = "",
    candidates: Mapping[str, Container[str]] | None = None,
    keep: int | None = None,
) -> LoadedRun:
    """Build the run from parsed entries; raise `ValidationError` listing every problem that blocks it.

    `candidates` (query id -> the docs it may rank) restricts each query to its own candidates (reranking).
    `entries` may be a stream that adds to `malformed` as it is read (`stream_entries`). With `keep`, only each
    query's top `keep` (`top_docs`) are kept once every line is checked: what a board scores and archives."""
    read = _read_entries(entries, source, query_ids, doc_ids, max_depth, candidates)
    malformed = list(malformed)  # complete now that every entry was read
    if malformed and not strict:
        raise ValidationError(malformed, title=f"run {source} is malformed")
    found = read.problems(malformed, source, max_depth)
    if strict and found:
        raise ValidationError(found, title=f"run {source} is not valid")
    warnings = read.repair(max_depth)
    run = read.run
    if keep is not None:
        for q, docs in run.items():
            if len(docs) > keep:
                run[q] = {d: docs[d] for d in top_docs(docs, keep)}
    return LoadedRun(run, source, read.tag, fmt, tuple(warnings), tuple(found))


@dataclass
class _Read:
    """One pass over a run's entries: the run as first read, and what strict mode would refuse in it."""

    run: dict[str, dict[str, float]]
    tag: str
    unknown_queries: dict[str, list[int | None]]  # query -> [row of its first line, its line count]
    repeated: list[Problem]
    unknown_docs: list[Problem]
    unknown_doc_queries: set[str]
    too_deep: dict[str, int | None]  # query -> row of its first doc past the depth
    outside: list[Problem]  # docs not among their query's candidates

    def problems(self, malformed: list[Problem], source: str, max_depth: int | None) -> list[Problem]:
        """Every problem, in line order (those without a line last)."""
        deep = [
            Problem(
                source,
                f"query {q!r} has {len(self.run[q])} docs, more than the allowed depth {max_depth}",
                row=row,
                unit="line",
            )
            for q, row in self.too_deep.items()
        ]
        unknown = _unknown_query_problems(source, self.unknown_queries)
        found = malformed + self.repeated + self.unknown_docs + self.outside + deep + unknown
        found.sort(key=lambda p: (p.row is None, p.row or 0))
        return found

    def repair(self, max_depth: int | None) -> list[str]:
        """Lenient mode: the repairs already made while reading (unknown queries and outside docs dropped, the
        first of a repeated doc kept) and the cut of deep queries, each said once with its counts."""
        warnings: list[str] = []
        if self.unknown_queries:
            warnings.append(_unknown_query_warning(self.unknown_queries))
        if self.unknown_docs:
            queries = _plural(len(self.unknown_doc_queries), "query", "queries")
            warnings.append(
                f"{_plural(len(self.unknown_docs), 'doc id')} not in the corpus ({queries}), scored as non-relevant"
            )
        if self.repeated:
            warnings.append(f"{_plural(len(self.repeated), 'repeated doc')} ignored, the first occurrence kept")
        if self.outside:
            warnings.append(f"{_plural(len(self.outside), 'doc')} outside their query's candidates dropped")
        if self.too_deep:
            run = self.run
            for q in self.too_deep:
                run[q] = {d: run[q][d] for d in top_docs(run[q], max_depth or 0)}
            queries = _plural(len(self.too_deep), "query", "queries")
            warnings.append(f"{queries} had more than {max_depth} docs; the top {max_depth} kept")
        return warnings


def _read_entries(
    entries: Iterable[Entry],
    source: str,
    query_ids: Container[str] | None,
    doc_ids: Container[str] | None,
    max_depth: int | None,
    candidates: Mapping[str, Container[str]] | None,
) -> _Read:
    """The one pass over every entry (the hot loop of reading a run: plain locals, one dict lookup per line)."""
    run: dict[str, dict[str, float]] = {}
    unknown_queries: dict[str, list[int | None]] = {}
    repeated: list[Problem] = []
    unknown_docs: list[Problem] = []
    unknown_doc_queries: set[str] = set()
    too_deep: dict[str, int | None] = {}
    outside: list[Problem] = []
    no_candidates: frozenset[str] = frozenset()
    tag = ""
    limit = max_depth + 1 if max_depth is not None else -1
    for query_id, doc_id, score, row, line_tag in entries:
        if query_ids is not None and query_id not in query_ids:
            seen = unknown_queries.setdefault(query_id, [row, 0])
            seen[1] = (seen[1] or 0) + 1
            continue
        if candidates is not None and doc_id not in candidates.get(query_id, no_candidates):
            message = f"doc {doc_id!r} is not among the candidates of query {query_id!r}"
            fix = "a reranking run may only reorder the query's own top_ranked candidates"
            outside.append(Problem(source, message, row=row, fix=fix, unit="line"))
            continue
        docs = run.get(query_id)
        if docs is None:
            docs = run[query_id] = {}
            tag = tag or line_tag
        elif doc_id in docs:
            repeated.append(
                Problem(source, f"doc {doc_id!r} appears twice for query {query_id!r}", row=row, unit="line")
            )
            continue
        docs[doc_id] = score
        if doc_ids is not None and doc_id not in doc_ids:
            unknown_docs.append(Problem(source, f"unknown doc {doc_id!r} for query {query_id!r}", row=row, unit="line"))
            unknown_doc_queries.add(query_id)
        if len(docs) == limit:
            too_deep[query_id] = row
    return _Read(run, tag, unknown_queries, repeated, unknown_docs, unknown_doc_queries, too_deep, outside)


def load_run(
    path: str | Path,
    *,
    query_ids: Container[str] | Callable[[], Container[str]] | None = None,
    doc_ids: Container[str] | Callable[[], Container[str]] | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
    strict: bool = False,
    fmt: str | None = None,
    candidates: Mapping[str, Container[str]] | None = None,
    keep: int | None = None,
    max_bytes: int | None = None,
) -> LoadedRun:
    """Read and check a TREC or JSON run file (format from the name or the content; `.gz` allowed), as a stream;
    `candidates`: each query's allowed docs, for a reranking run (see the module docstring); `keep`: the depth
    kept per query; `max_bytes`: the most text the file may hold once decompressed. `query_ids` and `doc_ids`
    may be functions returning them, called once a plain TREC file is read: a caller can read a dataset's ids on
    another thread meanwhile (`freshstack-hf evaluate` does).

    A plain TREC file with nothing to report is read by columns (`clean_trec_columns`, `_clean_run`); anything
    else, or anything either of them declines, goes through `check_entries`, which says what is wrong."""

    def limits() -> RunLimits:
        queries = query_ids() if callable(query_ids) else query_ids
        docs = doc_ids() if callable(doc_ids) else doc_ids
        return RunLimits(query_ids=queries, doc_ids=docs, max_depth=max_depth, strict=strict, candidates=candidates)

    if fmt in (None, "trec") and candidates is None:
        columns = clean_trec_columns(path, max_bytes=max_bytes)
        if columns is not None and (clean := _clean_run(columns, limits(), keep, str(path))) is not None:
            return clean
    entries, malformed, fmt = stream_entries(path, fmt, max_bytes=max_bytes)
    return check_entries(entries, source=str(path), malformed=malformed, fmt=fmt, keep=keep, **limits())


def _clean_run(columns: TrecColumns, limits: RunLimits, keep: int | None, source: str) -> LoadedRun | None:
    """The checked run of a well-formed TREC file when `check_entries` would find nothing to say about it but
    unknown queries in lenient mode (every doc in the corpus, no doc twice, no query past the depth), else None.
    The same `LoadedRun` as `check_entries` builds: queries in order of first appearance, docs in file order (a
    query cut to `keep` in `top_docs` order), unknown queries dropped with the same warning and problems.

    Every check is one pass over the columns, and only the rows kept become Python objects: with `keep` the
    depth a board archives or a command scores, that is a tenth of a release-size run or less."""
    import numpy as np

    query_ids, doc_ids, max_depth = limits["query_ids"], limits["doc_ids"], limits["max_depth"]
    lengths = np.diff(columns.starts)
    unknown: dict[str, list[int | None]] = {}
    known: list[int] = []
    for i, (query_id, first_row) in enumerate(zip(columns.queries, columns.first_rows, strict=True)):
        if query_ids is None or query_id in query_ids:
            known.append(i)
        else:
            unknown[query_id] = [first_row, int(lengths[i])]
    if unknown and limits["strict"]:
        return None
    chosen = np.array(known, dtype=np.int64)
    if max_depth is not None and len(chosen) and int(lengths[chosen].max()) > max_depth:
        return None  # too deep: check_entries reports it
    ids, scores, lengths = columns.doc_ids, columns.scores, lengths[chosen]
    if unknown:
        rows = spans(columns.starts[chosen], lengths)
        ids, scores = ids.take(arrow_int64(rows)), scores[rows]
    # Arrow's lookup of every row in the corpus holds no lock: it runs on its own thread while this one builds the
    # kept run (about as long), and a run it refuses costs that build for nothing.
    with ThreadPoolExecutor(max_workers=1) as pool:
        lookup = pool.submit(doc_codes, ids, doc_ids)
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        run = kept_run([columns.queries[i] for i in known], starts, ids, scores, keep)
        codes, distinct = lookup.result()
    if codes is None:
        return None  # a doc outside the corpus: check_entries reports it
    pairs = np.sort(np.repeat(np.arange(len(chosen), dtype=np.int64), lengths) * distinct + codes)
    if len(pairs) and (pairs[1:] == pairs[:-1]).any():
        return None  # a doc twice for a query: check_entries reports it
    warnings = (_unknown_query_warning(unknown),) if unknown else ()
    problems = sorted(_unknown_query_problems(source, unknown), key=lambda p: p.row or 0)
    return LoadedRun(run, source, columns.tags[known[0]] if known else "", "trec", warnings, tuple(problems))


def check_run(
    run: Mapping[str, Mapping[str, float]],
    *,
    source: str = "run",
    query_ids: Container[str] | None = None,
    doc_ids: Container[str] | None = None,
    max_depth: int | None = DEFAULT_MAX_DEPTH,
    strict: bool = False,
) -> LoadedRun:
    """The same checks for a run already in memory (e.g. a submission posted as JSON)."""
    entries: list[Entry] = []
    malformed: list[Problem] = []
    for q, docs in run.items():
        for d, s in docs.items():
            if isinstance(s, int | float) and not isinstance(s, bool) and math.isfinite(s):
                entries.append(RunEntry(str(q), str(d), float(s)))
            else:
                malformed.append(Problem(source, f"query {q!r} doc {d!r}: score {s!r} is not a number"))
    limits = RunLimits(query_ids=query_ids, doc_ids=doc_ids, max_depth=max_depth, strict=strict, candidates=None)
    return check_entries(entries, source=source, malformed=malformed, **limits)
