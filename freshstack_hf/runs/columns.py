"""Plain TREC runs by columns: the fast reader (`clean_trec_columns`), the corpus' ids as one Arrow column
(`IdColumn`), and the array work that turns the columns into a checked run (`load_run`'s fast path in `check`).

Most runs are plain: single spaces, ASCII ids, every line well formed. `clean_trec_columns` reads such a file by
columns (pyarrow's CSV reader, several times faster than a Python loop over 672,000 lines) and gives up, returning
None, at the first thing it would have to judge; the line reader (`parse`) then reads the file and says exactly
what is wrong. NumPy and pyarrow are imported where they are used, so importing `freshstack_hf.runs` stays free.
"""

from __future__ import annotations

import contextlib
from collections.abc import Container, Iterable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, NamedTuple

from freshstack_hf.runs.parse import detect_format, open_stream
from freshstack_hf.runs.run import top_docs


class IdColumn(AbstractSet[str]):
    """A set of ids held as one Arrow string column (a corpus' `_id`s): a run is checked against it in one
    vectorised pass (`contains_all`), and the Python set that `in` needs is built only when an id is asked
    about one at a time (the line reader's path), since 271,842 Python strings cost more than the check."""

    def __init__(self, column) -> None:
        self.column = column  # an Array or ChunkedArray: Arrow's set lookups take either
        self._names: frozenset[str] | None = None

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:  # two threads may both build it; either result is the same set
            self._names = frozenset(self.column.to_pylist())
        return self._names

    def __contains__(self, item: object) -> bool:
        return item in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    @classmethod
    def _from_iterable(cls, items: Iterable[str]) -> frozenset[str]:  # what `&`, `|` and `-` return
        return frozenset(items)

    def contains_all(self, ids) -> bool:
        """Whether every id of the Arrow string column `ids` is in this set."""
        import pyarrow.compute as pc

        return len(ids) == 0 or bool(pc.all(pc.is_in(ids, value_set=self.column)).as_py())


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
    return _grouped(list(codes), tags, parts, id_chunks, score_parts) if score_parts else None


def _grouped(
    queries: list[str], tags: list[str], parts: list[Any], id_chunks: list[Any], score_parts: list[Any]
) -> TrecColumns | None:
    """The blocks' columns joined and grouped by query (each keeping its file order), or None when a score is not
    finite (the line reader reports it)."""
    import numpy as np
    import pyarrow as pa

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
        queries=queries,
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


def doc_codes(ids, doc_ids: Container[str] | None) -> tuple[Any, int]:
    """(a number per row of the Arrow column `ids`, equal numbers for equal ids, and how many numbers there can
    be), or (None, 0) when an id is not in `doc_ids`. Against an `IdColumn` this is one hash lookup per row (its
    position in the corpus); otherwise the distinct ids are numbered and those few are looked up in Python."""
    import pyarrow.compute as pc

    if isinstance(doc_ids, IdColumn):
        found = pc.index_in(ids, value_set=doc_ids.column)
        return (None, 0) if found.null_count else (_flat(found), len(doc_ids.column))
    encoded = pc.dictionary_encode(ids.combine_chunks() if hasattr(ids, "combine_chunks") else ids)  # one dictionary
    if doc_ids is not None:
        names = encoded.dictionary.to_pylist()
        known = doc_ids.issuperset(names) if isinstance(doc_ids, set | frozenset) else all(d in doc_ids for d in names)
        if not known:
            return None, 0
    return numpy_view(encoded.indices), len(encoded.dictionary)


def _flat(column) -> Any:
    """A fixed-width Arrow column (chunked or not) without nulls as one NumPy array."""
    import numpy as np

    chunks = getattr(column, "chunks", [column])
    if len(chunks) == 1:
        return numpy_view(chunks[0])
    return np.concatenate([numpy_view(c) for c in chunks]) if chunks else np.empty(0, dtype=np.int32)


def kept_run(queries: list[str], starts, ids, scores, keep: int | None) -> dict[str, dict[str, float]]:
    """{query: {doc: score}} from grouped columns, each query cut to its top `keep` (`top_docs`, the tie rule).

    A query's cut is found in bulk: its `keep`-th best score is the threshold, every doc at or above it is kept,
    and the kept docs are ordered by score. Only a query with tied scores among its kept docs (where doc ids
    decide, and may decide which docs make the cut) is ranked by `top_docs` on its doc ids."""
    import numpy as np

    lengths = np.diff(starts)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    over = np.flatnonzero(lengths > keep) if keep is not None else np.empty(0, dtype=np.int64)
    if not len(over):
        kept = np.arange(len(scores))
        tied: set[int] = set()
    else:
        width = int(lengths[over].max())
        grid = np.full((len(over), width), -np.inf)
        rows = spans(starts[over], lengths[over])
        grid[np.repeat(np.arange(len(over)), lengths[over]), rows - np.repeat(starts[over], lengths[over])] = scores[
            rows
        ]
        floor = np.full(len(lengths), -np.inf)
        floor[over] = np.partition(grid, width - keep, axis=1)[:, width - keep]
        kept = np.flatnonzero(scores >= floor[owner])
        cut = np.zeros(len(lengths), dtype=bool)
        cut[over] = True
        within = np.where(cut[owner[kept]], -scores[kept], np.arange(len(kept)))  # uncut queries: file order
        kept = kept[np.lexsort((within, owner[kept]))]
        same = (owner[kept][1:] == owner[kept][:-1]) & (scores[kept][1:] == scores[kept][:-1])
        tied = set(owner[kept][1:][same & cut[owner[kept][1:]]].tolist())
    bounds = np.searchsorted(owner[kept], np.arange(len(lengths) + 1)).tolist()
    names = (ids.take(arrow_int64(kept)) if len(kept) < len(scores) or len(over) else ids).to_pylist()
    values = scores[kept].tolist()
    run: dict[str, dict[str, float]] = {}
    for i, query_id in enumerate(queries):
        if i in tied:  # the whole query, ranked on its doc ids
            a, b = int(starts[i]), int(starts[i + 1])
            docs = dict(zip(ids.slice(a, b - a).to_pylist(), scores[a:b].tolist(), strict=True))
            run[query_id] = {d: docs[d] for d in top_docs(docs, keep or 0)}
        else:
            run[query_id] = dict(zip(names[bounds[i] : bounds[i + 1]], values[bounds[i] : bounds[i + 1]], strict=True))
    return run
