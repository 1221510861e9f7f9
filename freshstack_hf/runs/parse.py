"""Reading run files: TREC 6-column text or JSON `{query_id: {doc_id: score}}`, optionally gzipped.

Parsing never stops at the first bad line: every malformed line becomes a `Problem` with its line number, so
a submitter fixes a file in one round. Only shape is checked here (columns, numbers); whether the queries and
docs exist is `validate`'s business, since that depends on the topic and on strict or lenient mode.

TREC doc ids may contain spaces (the official loader allows it), so a line is split as: query id = first
field, Q0 = second, rank, score and tag = last three, doc id = everything in between, spaces kept.

A TREC run is read as a stream (`stream_entries`): a release-size run (672 queries x 1,000 docs, 70 MB of text) is
never held as text, and a decompressed size limit (`max_bytes`) stops a gzip bomb after reading that much.

Most runs are plain: single spaces, ASCII ids, every line well formed. `clean_trec_columns` reads such a file by
columns (pyarrow's CSV reader, several times faster than a Python loop over 672,000 lines) and gives up, returning
None, at the first thing it would have to judge (a malformed line, a tab, a non-ASCII character, a doc id with a
space); the line-by-line reader then reads the file and says exactly what is wrong, so both paths agree on every
file by construction: the fast one only ever accepts what the slow one would split the same way.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

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


class TrecColumns(NamedTuple):
    """A well-formed TREC run grouped by query (queries in order of first appearance, each query's lines in file
    order): rows `starts[i]:starts[i + 1]` are those of `queries[i]`, `starts` ending with the line count;
    `first_rows[i]` is the file line of the query's first line and `tags[i]` that line's tag. Doc ids stay an
    Arrow string column and scores a float64 array: a release-size run is 672,000 rows, and turning each into
    Python objects cost more than reading the file."""

    queries: list[str]
    starts: Any  # np.ndarray, int64, len(queries) + 1
    first_rows: list[int]
    tags: list[str]
    doc_ids: Any  # pyarrow.ChunkedArray of strings
    scores: Any  # np.ndarray, float64


_TREC_NAMES = ("query_id", "q0", "doc_id", "rank", "score", "tag")


def clean_trec_columns(path: str | Path, *, max_bytes: int | None = None) -> TrecColumns | None:
    """A TREC run read by columns when every line is plainly well formed, else None (read it line by line).

    Accepted only if the line reader would split every line the same way: six non-empty fields of printable
    ASCII split by single spaces, integer ranks, finite scores equal to what Python's `float` (the line reader's
    parser) reads, no blank line (so row numbers are line numbers), no byte-order mark. Any error here, a read
    error included, means None: the line reader then raises or reports it with the line number.

    The file is read a block at a time (pyarrow's streaming CSV reader), each block checked and its columns kept
    as arrays before the next is read, so the text is never held whole, as text or as a table."""
    import numpy as np
    import pyarrow as pa

    path = Path(path)
    codes: dict[str, int] = {}  # query id -> number, in order of first appearance
    tags: list[str] = []  # the tag of each query's first line, by number
    parts: list[np.ndarray] = []
    id_chunks: list[Any] = []
    score_parts: list[np.ndarray] = []
    cap = max_bytes if path.suffix == ".gz" else None  # a plain file's size is checked before it is read
    fields = lines = 0
    try:
        with _trec_blocks(path, max_bytes) as blocks:
            if blocks is None:
                return None
            for block in blocks:
                if not _plain_block(block):
                    return None
                score_parts.append(_block_scores(block.column("score")))
                id_chunks.append(block.column("doc_id"))
                parts.append(_query_numbers(block, codes, tags))
                fields, lines = fields + _field_bytes(block), lines + block.num_rows
                if cap is not None and fields + 6 * lines - 1 > cap:  # a line: fields, 5 spaces, a newline (or none)
                    return None  # past the cap for sure
    except Exception:  # whatever went wrong, the line reader reads the file and says what
        return None
    if cap is not None and fields + 7 * lines > cap:
        return None  # near the cap (a line may end in "\r\n"): the line reader counts exactly
    if not score_parts:
        return None
    scores = np.concatenate(score_parts)
    if not np.isfinite(scores).all():
        return None
    doc_ids = pa.chunked_array(id_chunks, type=pa.string())
    index = np.concatenate(parts)
    order = None
    if np.any(np.diff(index) < 0):  # numbered by first appearance: sorted means grouped
        order = np.argsort(index, kind="stable")  # a query's lines apart: grouped, each keeping its file order
        index = index[order]
        doc_ids = doc_ids.take(arrow_int64(order))
        scores = scores[order]
    starts = np.concatenate([[0], np.flatnonzero(np.diff(index)) + 1, [len(scores)]]).astype(np.int64)
    first = (starts[:-1] if order is None else order[starts[:-1]]).tolist()  # blank lines are declined: row = line
    return TrecColumns(
        queries=list(codes),
        starts=starts,
        first_rows=[row + 1 for row in first],
        tags=tags,
        doc_ids=doc_ids,
        scores=scores,
    )


def numpy_view(array) -> Any:
    """A fixed-width Arrow array without nulls as a NumPy array over the same memory. Read from its buffers:
    pyarrow's own conversions to and from NumPy import pandas, a quarter of a second of every scoring command."""
    import numpy as np

    dtype = np.dtype({"int32": np.int32, "int64": np.int64, "double": np.float64}[str(array.type)])
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=dtype.itemsize * array.offset)


def arrow_int64(values) -> Any:
    """An int64 NumPy array as an Arrow array over the same memory (`pa.array` would import pandas)."""
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def spans(starts, lengths) -> Any:
    """The row numbers `starts[i] .. starts[i] + lengths[i] - 1` of every span, one after another."""
    import numpy as np

    offsets = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - offsets, lengths) + np.arange(int(np.sum(lengths)))


def _block_scores(column) -> Any:
    """A block's scores as float64. Arrow's parser (correctly rounded, like Python's) reads the plain decimal
    forms; a block it refuses (`1_000`, which Python accepts) is read by Python's `float`, and a score neither
    reads raises, so the line reader reports it."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return numpy_view(pc.cast(column, pa.float64()))
    except pa.ArrowInvalid:
        return np.array([float(text) for text in column.to_pylist()], dtype=np.float64)


def _plain_block(block) -> bool:
    """Every field non-empty printable ASCII (so no other whitespace the line reader would split on), every
    rank an integer as the line reader reads one (`rank.lstrip("-").isdigit()`).

    Checked on each column's bytes with NumPy, a few passes over the buffers Arrow parsed into: a field never
    holds a space (the delimiter), so printable means every byte in 0x21-0x7E. Arrow's string kernels did the same
    at three times the cost (a kernel call per column and test, 56 blocks in a release-size run)."""
    import numpy as np

    for name in _TREC_NAMES:
        column = block.column(name)
        if column.null_count:
            return False
        offsets = _offsets(column)
        if not len(column):
            continue
        if int(np.diff(offsets).min()) < 1:
            return False
        data = np.frombuffer(column.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        if name != "rank":
            if ((data - np.uint8(0x21)) > 0x5D).any():  # below 0x21 or above 0x7E wraps or stays past 0x5D
                return False
            continue
        minus = data == 0x2D
        if ((data - np.uint8(0x30) > 9) & ~minus).any():  # a byte neither a digit nor "-"
            return False
        if minus.any():  # "-" only before a field's digits, and at least one digit
            inner = np.ones(len(data), dtype=bool)
            inner[offsets[:-1] - offsets[0]] = False  # a field's first byte
            if (minus[1:] & ~minus[:-1] & inner[1:]).any() or minus[offsets[1:] - offsets[0] - 1].any():
                return False
    return True


def _offsets(column) -> Any:
    """A string column's int32 offsets (one more than its length) as a NumPy view."""
    import numpy as np

    return np.frombuffer(column.buffers()[1], dtype=np.int32, count=len(column) + 1, offset=4 * column.offset)


def _field_bytes(block) -> int:
    """The bytes of a block's fields, read from each string column's offsets."""
    total = 0
    for column in block.columns:
        offsets = _offsets(column)
        total += int(offsets[-1] - offsets[0])
    return total


def _query_numbers(block, codes: dict[str, int], tags: list[str]):
    """The block's query ids as numbers in order of first appearance in the file (new ones added to `codes`, with
    the tag of their first line added to `tags`)."""
    import numpy as np
    import pyarrow.compute as pc

    local = pc.dictionary_encode(block.column("query_id"))
    index = numpy_view(local.indices)  # int32, no nulls
    names = local.dictionary.to_pylist()  # in order of first appearance within the block
    fresh = [i for i, q in enumerate(names) if q not in codes]
    if fresh:  # numbered by first appearance: a number's first row is where the running maximum reaches it
        first = np.flatnonzero(index > np.maximum.accumulate(np.concatenate([[-1], index[:-1]])))
        tag = block.column("tag")
        for i in fresh:
            codes[names[i]] = len(codes)
            tags.append(tag[int(first[i])].as_py())
    return np.array([codes[q] for q in names], dtype=np.int64)[index]


@contextlib.contextmanager
def _trec_blocks(path: Path, max_bytes: int | None) -> Iterator[Any]:
    """The file's blocks as six string columns (pyarrow's streaming CSV reader), or None for a file the line
    reader should see: one that is JSON or starts with a byte-order mark, or a plain file over `max_bytes`. pyarrow
    reads and decompresses the file natively, on its own thread; the caller counts a gzip file's text."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with open_stream(path, "run", max_bytes) as handle:
        head = handle.buffer.peek(1 << 12)
    gzipped = path.suffix == ".gz"
    if (
        head.startswith(b"\xef\xbb\xbf")
        or detect_format(path, head.decode("ascii", "replace")) != "trec"
        or (not gzipped and max_bytes is not None and path.stat().st_size > max_bytes)
    ):
        yield None
        return
    options = {
        "read_options": pcsv.ReadOptions(column_names=list(_TREC_NAMES), block_size=1 << 20, use_threads=True),
        # a blank line fails to parse (one field): each row is then the file line of the same number
        "parse_options": pcsv.ParseOptions(
            delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=False
        ),
        # no UTF-8 validation: `_plain_block` declines any byte outside printable ASCII before a block is used
        "convert_options": pcsv.ConvertOptions(column_types=dict.fromkeys(_TREC_NAMES, pa.string()), check_utf8=False),
    }
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(pa.input_stream(str(path), compression="gzip" if gzipped else None))
        yield pcsv.open_csv(source, **options)


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
