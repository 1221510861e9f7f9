"""Which reader opens a questions source: the one table of layouts the build knows.

Three layouts carry Stack Overflow posts: the Stack Exchange dump (`Posts.xml`, ~100 GB for Stack Overflow, or its
`.7z`), the BigQuery `posts_questions` / `posts_answers` export (CSV, TSV or JSONL, often sharded) and the Stack
Exchange API's `{"items": [...]}` pages. Each is a `QuestionReader` (`freshstack_hf.pipeline.sources.reader`).

Adding a layout is one class and one line: subclass `QuestionReader` with a `format` name, `files()` and `scan()`
(and `recognises()` if `format: auto` should find it), then add it to `READERS` below, or call
`register_reader(cls)` from a plugin or a test. The topic YAML's `questions.format:` accepts every registered
name; `auto` asks each reader in table order and takes the surest answer (a name beats content, content beats an
extension; a tie goes to the earlier reader, which is why BigQuery's distinctive table names come first).
"""

from __future__ import annotations

from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources.api import ApiPages
from freshstack_hf.pipeline.sources.bigquery import BigQueryExport
from freshstack_hf.pipeline.sources.dump import StackExchangeDump
from freshstack_hf.pipeline.sources.reader import NO, QuestionReader

AUTO = "auto"
READERS: dict[str, type[QuestionReader]] = {r.format: r for r in (BigQueryExport, StackExchangeDump, ApiPages)}


def formats() -> tuple[str, ...]:
    """Every value `questions.format:` accepts."""
    return (AUTO, *READERS)


def register_reader(reader: type[QuestionReader]) -> None:
    """Make `reader.format` a questions format; a name already taken is refused rather than silently replaced."""
    if not reader.format or reader.format == AUTO:
        raise ValueError(f"{reader.__name__}: set `format` to a name other than {AUTO!r}")
    if reader.format in READERS:
        raise ValueError(
            f"questions format {reader.format!r} is already registered ({READERS[reader.format].__name__})"
        )
    READERS[reader.format] = reader


def detect_format(path: Path) -> str:
    """The registered layout that recognises `path` most surely (see the module docstring)."""
    if not path.exists():
        raise FreshStackError(f"{path}: no such questions source (check `questions.source:` in the topic YAML)")
    names, head = [], b""
    if path.is_dir():
        names = [p.name.lower() for p in path.iterdir()]
    else:
        with open(path, "rb") as f:
            head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    best, surest = "", NO
    for fmt, reader in READERS.items():
        score = reader.recognises(path, names, head)
        if score > surest:
            best, surest = fmt, score
    if best:
        return best
    what = "this folder's files" if path.is_dir() else "its name or first bytes"
    raise FreshStackError(
        f"{path}: cannot tell the question format from {what} (expected Posts.xml, a .7z, posts_questions.* or "
        f"API .json pages); set `questions.format:` ({', '.join(READERS)}) in the topic YAML"
    )


def open_source(path: str | Path, fmt: str = AUTO, tmp_dir: Path | None = None) -> QuestionReader:
    """The reader for a questions source: the named format's, or with `auto` the one that recognises it."""
    path = Path(path)
    name = detect_format(path) if fmt == AUTO else fmt
    if name not in READERS:
        raise FreshStackError(f"{path}: unknown questions format {fmt!r}; one of {', '.join(formats())}")
    if not path.exists():
        raise FreshStackError(f"{path}: no such questions source (check `questions.source:`)")
    return READERS[name](path, tmp_dir)
