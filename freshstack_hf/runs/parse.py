"""Reading run files: TREC 6-column text or JSON `{query_id: {doc_id: score}}`, optionally gzipped.

Parsing never stops at the first bad line: every malformed line becomes a `Problem` with its line number, so
a submitter fixes a file in one round. Only shape is checked here (columns, numbers); whether the queries and
docs exist is `validate`'s business, since that depends on the topic and on strict or lenient mode.

TREC doc ids may contain spaces (the official loader allows it), so a line is split as: query id = first
field, Q0 = second, rank, score and tag = last three, doc id = everything in between, spaces kept.

A TREC run is read as a stream (`stream_entries`): a release-size run (672 queries x 1,000 docs, 70 MB of text) is
never held as text, and a decompressed size limit (`max_bytes`) stops a gzip bomb after reading that much.

Most runs are plain, and are read by columns first (`columns.clean_trec_columns`), which gives up at the first
thing it would have to judge; this line-by-line reader then reads the file and says exactly what is wrong, so both
paths agree on every file by construction: the fast one only ever accepts what the slow one would split the same
way.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from freshstack_hf.errors import FreshStackError, Problem

TREC_COLUMNS = "query_id Q0 doc_id rank score tag"
_TREC_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(.+?)\s+(\S+)\s+(\S+)\s+(\S+)$")


class RunEntry(NamedTuple):
    """One retrieved doc as read from a file; `row` is its 1-based line (None where a format has none).

    The parsers emit plain `(query_id, doc_id, score, row, tag)` tuples of this shape (`Entry`): a run has up
    to a million lines, and a plain tuple is built several times faster than even a NamedTuple.
    """

    query_id: str
    doc_id: str
    score: float
    row: int | None = None
    tag: str = ""


Entry = tuple[str, str, float, int | None, str]


def open_text(path: Path, what: str = "run") -> str:
    """The text of a `what` file (run, answer); `.gz` is decompressed. A missing file is a user error."""
    with open_stream(path, what) as handle:
        try:
            return handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise FreshStackError(f"cannot read {what} file {path}: {exc}") from None


def detect_format(path: Path, text: str) -> str:
    """`json` for a `.json`/`.json.gz` name or text starting with `{`, else `trec`."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".json"] or suffixes[-2:] == [".json", ".gz"]:
        return "json"
    return "json" if text.lstrip().startswith("{") else "trec"


def parse_trec(lines: Iterable[str], source: str) -> tuple[list[Entry], list[Problem]]:
    """Entries of a TREC run and the malformed lines; blank lines are skipped."""
    problems: list[Problem] = []
    return list(trec_entries(lines, source, problems)), problems


def trec_entries(lines: Iterable[str], source: str, problems: list[Problem]) -> Iterator[Entry]:
    """The entries of a TREC run one line at a time; each malformed line is appended to `problems` as it is met."""
    for row, raw in enumerate(lines, start=1):
        parts = raw.split()
        if len(parts) == 6:  # the common case, without a regex
            query_id, _, doc_id, rank, score_text, tag = parts
        elif len(parts) > 6 and (match := _TREC_LINE.match(raw.strip())):  # a doc id with spaces
            query_id, _, doc_id, rank, score_text, tag = match.groups()
        else:
            if parts:  # blank lines are skipped
                problems.append(
                    Problem(source, f"expected 6 columns ({TREC_COLUMNS}), found {len(parts)}", row=row, unit="line")
                )
            continue
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            problems.append(Problem(source, f"score {score_text!r} is not a finite number", row=row, unit="line"))
        elif not rank.lstrip("-").isdigit():
            problems.append(Problem(source, f"rank {rank!r} is not an integer", row=row, unit="line"))
        else:
            yield query_id, doc_id, score, row, tag


class _Pairs(list):
    """A JSON object kept as its key/value pairs, so a repeated key is seen rather than silently dropped."""


def parse_json(text: str, source: str) -> tuple[list[Entry], list[Problem]]:
    """Entries of a JSON run. Repeated keys are kept as separate entries so validation can report them."""
    try:
        data = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        return [], [Problem(source, f"invalid JSON: {exc.msg}", row=exc.lineno, unit="line")]
    shape = "expected a JSON object {query_id: {doc_id: score}}"
    if not isinstance(data, _Pairs):
        return [], [Problem(source, shape)]
    entries: list[Entry] = []
    problems: list[Problem] = []
    for query_id, docs in data:
        if not isinstance(docs, _Pairs):
            problems.append(Problem(source, f"query {query_id!r}: {shape}"))
            continue
        for doc_id, score in docs:
            ok = isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score)
            if ok:
                entries.append((query_id, doc_id, float(score), None, ""))
            else:
                problems.append(Problem(source, f"query {query_id!r} doc {doc_id!r}: score {score!r} is not a number"))
    return entries, problems


def read_entries(path: str | Path, fmt: str | None = None) -> tuple[list[Entry], list[Problem], str]:
    """Parse a run file: its entries, its malformed lines, and the format used (`trec` or `json`)."""
    entries, problems, fmt = stream_entries(path, fmt)
    return list(entries), problems, fmt


class TooLarge(FreshStackError):
    """A file holds more text than the reader was allowed to read (`max_bytes`)."""


class _Capped(io.RawIOBase):
    """A binary reader that fails once more than `limit` bytes came out of it (a decompressed stream's size)."""

    def __init__(self, raw: io.IOBase, limit: int | None, message: str) -> None:
        self._raw, self._limit, self._message, self.total = raw, limit, message, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # a writable buffer of any kind
        n = self._raw.readinto(buffer)
        self.total += n or 0
        if self._limit is not None and self.total > self._limit:
            raise TooLarge(self._message)
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_stream(path: Path, what: str = "run", max_bytes: int | None = None) -> io.TextIOWrapper:
    """The text of a `what` file as a stream (`.gz` decompressed as it is read), failing with a clear error once
    more than `max_bytes` have been decompressed."""
    limit = f"{max_bytes:,}" if max_bytes is not None else ""
    message = f"{what} file expands past {limit} bytes once decompressed"
    try:
        raw = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115 - returned open
    except FileNotFoundError:
        raise FreshStackError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise FreshStackError(f"cannot read {what} file {path}: {exc}") from None
    return io.TextIOWrapper(io.BufferedReader(_Capped(raw, max_bytes, message), 1 << 20), encoding="utf-8")


def stream_entries(
    path: str | Path, fmt: str | None = None, *, max_bytes: int | None = None
) -> tuple[Iterator[Entry], list[Problem], str]:
    """A run file's entries as an iterator, the list its malformed lines are added to while it is read, and the
    format (`trec` or `json`, from the name or the first character). A TREC file is read a line at a time; a JSON
    one is parsed whole. Read errors (not gzip, not UTF-8, over `max_bytes`) raise `FreshStackError`."""
    path = Path(path)
    if fmt not in (None, "trec", "json"):
        raise FreshStackError(f"unknown run format {fmt!r}: use 'trec' or 'json'")
    handle = open_stream(path, "run", max_bytes)
    try:
        head = handle.read(1 << 12)
        fmt = fmt or detect_format(path, head)
        text = head + handle.read() if fmt == "json" else None
    except _READ_ERRORS as exc:
        handle.close()
        raise _unreadable(path, exc) from None
    problems: list[Problem] = []
    if text is not None:
        handle.close()
        entries, problems = parse_json(text, str(path))
        return iter(entries), problems, fmt
    return trec_entries(_lines(head, handle, path), str(path), problems), problems, fmt


_READ_ERRORS = (OSError, EOFError, UnicodeDecodeError)  # not gzip, cut short, not UTF-8


def _unreadable(path: Path, exc: Exception) -> FreshStackError:
    if isinstance(exc, gzip.BadGzipFile) or (isinstance(exc, EOFError) and path.suffix == ".gz"):  # cut short
        fix = "send it uncompressed, or compress it again with gzip"
        return FreshStackError(f"run file {path} is not a readable gzip file ({exc}); {fix}")
    return FreshStackError(f"cannot read run file {path}: {exc}")


def _lines(head: str, handle: io.TextIOWrapper, path: Path) -> Iterator[str]:
    """The file's lines, `head` (already read) first; closes the file when done or abandoned."""
    with handle:
        try:
            yield from io.StringIO(head + handle.readline())  # the line `head` cut in two, made whole
            yield from handle
        except _READ_ERRORS as exc:
            raise _unreadable(path, exc) from None
