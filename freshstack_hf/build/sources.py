"""Readers that turn each question source into the same plain `Post` records, streaming, whatever the layout.

Three layouts carry Stack Overflow posts: the Stack Exchange dump (`Posts.xml`, ~100 GB for Stack Overflow, or its
`.7z`), the BigQuery `posts_questions` / `posts_answers` export (CSV, TSV or JSONL, often sharded) and the Stack
Exchange API's `{"items": [...]}` pages. A full scan of the dump is the cost of a build, so a reader never builds a
record it will not keep: the caller passes `want_question(raw_tags)` (a cheap substring test on the raw tag string)
and `want_answer(answer_id)`, and only rows passing them are decoded. Every user error names the file and, where
known, the line or row, and says how to fix it.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import html
import io
import json
import logging
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from freshstack_hf.errors import FreshStackError

log = logging.getLogger(__name__)

FORMATS = ("stackexchange", "bigquery", "api")
WantQuestion = Callable[[str], bool]
WantAnswer = Callable[[str], bool]
Progress = Callable[[int], None]


@dataclass(slots=True)
class Post:
    """One question or answer; `body` is the raw HTML, `date` ISO `YYYY-MM-DDTHH:MM:SS`, tags lowercased."""

    id: int
    is_question: bool
    date: str
    score: int
    body: str
    title: str = ""
    tags: tuple[str, ...] = ()
    accepted_answer_id: int | None = None
    parent_id: int | None = None


@dataclass
class ScanStats:
    rows: int = 0  # every post row scanned, questions and answers
    questions: int = 0
    bytes_read: int = 0


def parse_tags(raw: str | list | tuple | None) -> tuple[str, ...]:
    """`<a><b>` (dump), `|a|b|` (newer dumps) or `a|b` (BigQuery), or a list (API) -> lowercased tags."""
    if not raw:
        return ()
    if isinstance(raw, list | tuple):
        return tuple(str(t).strip().lower() for t in raw if str(t).strip())
    raw = raw.strip()
    if raw.startswith("<"):
        return tuple(t.lower() for t in raw[1:-1].split("><") if t)
    return tuple(t.strip().lower() for t in raw.split("|") if t.strip())


def iso_date(value: object) -> str:
    """Dump (`2023-07-17T19:24:01.893`), BigQuery (`2022-08-02 16:16:31.81 UTC`) or unix seconds -> ISO seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    text = str(value).strip()
    if text.isdigit():
        return iso_date(int(text))
    text = text[:19].replace(" ", "T")
    if len(text) == 10:
        text += "T00:00:00"
    datetime.fromisoformat(text)  # ValueError on anything else
    return text


def to_int(value: object) -> int | None:
    """An id or score from XML/CSV/JSON text; empty means absent (BigQuery writes `73247188` or `7.3247188E7`)."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else int(float(text))


# ---- format detection ----------------------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    """Pick the layout from the name, extension, folder contents or, failing those, the first bytes."""
    if path.is_dir():
        names = [p.name.lower() for p in path.iterdir()]
        if any(n.startswith("posts_questions") for n in names):
            return "bigquery"
        if any(n == "posts.xml" or n.endswith(".7z") for n in names):
            return "stackexchange"
        if any(n.endswith(".json") for n in names):
            return "api"
        raise FreshStackError(
            f"{path}: cannot tell the question format from this folder's files (expected Posts.xml, a .7z, "
            "posts_questions.* or API .json pages); set `questions.format:` in the topic YAML"
        )
    if not path.is_file():
        raise FreshStackError(f"{path}: no such questions source (check `questions.source:` in the topic YAML)")
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".7z", ".xml")):
        return "stackexchange"
    if name.startswith(("posts_questions", "posts_answers")) or name.endswith((".csv", ".tsv", ".jsonl")):
        return "bigquery"
    with open(path, "rb") as f:
        head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        return "stackexchange"
    if head.startswith(b"{") and b'"items"' in head:
        return "api"
    if name.endswith(".json"):
        return "api"
    raise FreshStackError(
        f"{path}: cannot tell the question format from its name or first bytes; set `questions.format:` "
        "(stackexchange, bigquery or api) in the topic YAML"
    )


class PostSource:
    """A questions source resolved to its files; `scan` streams its posts, `files` lists them for `--dry-run`."""

    def __init__(self, path: str | Path, fmt: str = "auto", tmp_dir: Path | None = None) -> None:
        self.path = Path(path)
        self.format = detect_format(self.path) if fmt == "auto" else fmt
        if self.format not in FORMATS:
            raise FreshStackError(f"{self.path}: unknown questions format {fmt!r}; one of auto, {', '.join(FORMATS)}")
        if not self.path.exists():
            raise FreshStackError(f"{self.path}: no such questions source (check `questions.source:`)")
        self.tmp_dir = tmp_dir

    def files(self) -> list[Path]:
        if self.format == "bigquery":
            questions, answers = _bigquery_files(self.path)
            return questions + answers
        if self.format == "api":
            return _api_files(self.path)
        return [_dump_file(self.path)]

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.files())

    def scan(
        self,
        want_question: WantQuestion,
        want_answer: WantAnswer,
        stats: ScanStats,
        progress: Progress | None = None,
    ) -> Iterator[Post]:
        """Posts passing the prechecks, in file order (BigQuery and API: every question before any answer)."""
        if self.format == "bigquery":
            return _scan_bigquery(self.path, want_question, want_answer, stats, progress)
        if self.format == "api":
            return _scan_api(self.path, want_question, want_answer, stats, progress)
        return _scan_dump(_dump_file(self.path), want_question, want_answer, stats, progress, self.tmp_dir)

    def stream_size(self) -> int | None:
        """The bytes a scan reads (the uncompressed Posts.xml inside a .7z), for the progress bar's total."""
        path = _dump_file(self.path) if self.format == "stackexchange" else None
        if path is not None and path.suffix.lower() == ".7z":
            return _archive_member(path)[1]
        return self.size()


def _dump_file(path: Path) -> Path:
    if path.is_file():
        return path
    for name in ("Posts.xml", "posts.xml"):
        if (path / name).is_file():
            return path / name
    archives = sorted(p for p in path.glob("*.7z") if "post" in p.name.lower())
    if archives:
        return archives[0]
    raise FreshStackError(f"{path}: no Posts.xml or *Posts*.7z in this folder; point `questions.source:` at the dump")


# ---- the Stack Exchange dump ---------------------------------------------------------------------------------


class _Counting:
    """A read-only stream wrapper that counts bytes and can show its first bytes before the parser starts."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.bytes = 0
        self.reported = 0
        self.head = raw.read(65536)

    def read(self, n: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
        else:
            data = self.raw.read(n)
        self.bytes += len(data)
        return data

    def delta(self) -> int:
        d, self.reported = self.bytes - self.reported, self.bytes
        return d


def _scan_dump(
    path: Path,
    want_question: WantQuestion,
    want_answer: WantAnswer,
    stats: ScanStats,
    progress: Progress | None,
    tmp_dir: Path | None,
) -> Iterator[Post]:
    with _open_posts(path, tmp_dir) as raw:
        stream = _Counting(raw)
        yield from _iter_rows(path, stream, want_question, want_answer, stats, progress)
        stats.bytes_read += stream.bytes


def _iter_rows(path, stream: _Counting, want_question, want_answer, stats: ScanStats, progress) -> Iterator[Post]:
    from lxml import etree

    head = stream.head[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<") or b"<posts" not in stream.head:
        what = "not XML" if not head.startswith(b"<") else "XML without a <posts> root"
        raise FreshStackError(
            f"{path}: line 1: {what}; expected a Stack Exchange dump Posts.xml (<posts><row Id=... PostTypeId=.../>). "
            "Check `questions.source:`, or set `questions.format:` if this is a BigQuery or API export"
        )
    row = None
    try:
        for _, row in etree.iterparse(stream, events=("end",), tag="row", huge_tree=True):
            stats.rows += 1
            get = row.get
            kind = get("PostTypeId")
            if kind == "1":
                stats.questions += 1
                tags = get("Tags")
                if tags and want_question(tags):
                    yield _dump_post(path, row, True)
            elif kind == "2" and want_answer(get("Id") or ""):
                yield _dump_post(path, row, False)
            row.clear()
            while row.getprevious() is not None:
                del row.getparent()[0]
            if progress is not None and not stats.rows & 8191:
                progress(stream.delta())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or (row.sourceline if row is not None else None)
        raise FreshStackError(
            f"{path}: line {line}: not well-formed XML ({exc.msg}); the file is damaged or truncated: "
            "download the dump again (or re-extract the .7z)"
        ) from exc
    if progress is not None:
        progress(stream.delta())


def _dump_post(path: Path, row, is_question: bool) -> Post:
    get = row.get
    try:
        return Post(
            id=int(get("Id")),
            is_question=is_question,
            date=iso_date(get("CreationDate") or ""),
            score=to_int(get("Score")) or 0,
            body=get("Body") or "",
            title=get("Title") or "",
            tags=parse_tags(get("Tags")),
            accepted_answer_id=to_int(get("AcceptedAnswerId")),
            parent_id=to_int(get("ParentId")),
        )
    except (TypeError, ValueError) as exc:
        raise FreshStackError(
            f"{path}: line {row.sourceline}: bad post row Id={get('Id')!r} ({exc}); each row needs a numeric Id and "
            "a CreationDate; is this a Posts.xml from the Stack Exchange dump?"
        ) from exc


# ---- .7z archives ----------------------------------------------------------------------------------------------


def _archive_member(path: Path) -> tuple[str, int | None]:
    """The Posts.xml member of a dump archive and its uncompressed size (the header only is read)."""
    import py7zr

    try:
        with py7zr.SevenZipFile(path) as archive:
            infos = [i for i in archive.list() if not i.is_directory]
    except (py7zr.exceptions.Bad7zFile, OSError) as exc:
        raise FreshStackError(f"{path}: not a readable .7z archive ({exc}); download it again") from exc
    posts = [i for i in infos if i.filename.rsplit("/", 1)[-1].lower() == "posts.xml"]
    if not posts:
        names = ", ".join(i.filename for i in infos[:5]) or "nothing"
        raise FreshStackError(f"{path}: no Posts.xml inside (holds {names}); use the site's Posts archive")
    return posts[0].filename, posts[0].uncompressed


@contextlib.contextmanager
def _open_posts(path: Path, tmp_dir: Path | None) -> Iterator:
    """A binary stream of Posts.xml: the file itself, a 7z binary's stdout, or a py7zr extraction removed after."""
    if path.suffix.lower() != ".7z":
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rb") as f:
            yield f
        return
    member, _ = _archive_member(path)
    exe = next((shutil.which(n) for n in ("7zz", "7z", "7za") if shutil.which(n)), None)
    if exe:
        proc = subprocess.Popen([exe, "x", "-so", str(path), member], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            yield proc.stdout
        finally:
            proc.stdout.close()
            if proc.poll() is None:  # the reader stopped early (an error): do not wait for the whole archive
                proc.kill()
            proc.wait()
        if proc.returncode not in (0, -9):
            err = proc.stderr.read().decode(errors="replace").strip()[-300:]
            raise FreshStackError(f"{path}: {exe} failed ({err}); check the archive")
        return
    import py7zr

    base = tmp_dir if tmp_dir is not None else path.parent
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=".posts-7z-", dir=base))
    log.info("no 7z binary on PATH: extracting %s from %s into %s with py7zr", member, path, folder)
    try:
        with py7zr.SevenZipFile(path) as archive:
            archive.extract(path=folder, targets=[member])
        with open(folder / member, "rb") as f:
            yield f
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---- the BigQuery export -----------------------------------------------------------------------------------------

_TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".csv.gz", ".tsv.gz", ".jsonl.gz", ".json.gz")
QUESTION_COLUMNS = ("id", "title", "body", "accepted_answer_id", "creation_date", "tags", "score")
ANSWER_COLUMNS = ("id", "body", "parent_id", "creation_date", "score")


def _table_files(folder: Path, table: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(table) and p.name.lower().endswith(_TABLE_SUFFIXES))


def _bigquery_files(path: Path) -> tuple[list[Path], list[Path]]:
    folder = path if path.is_dir() else path.parent
    questions = _table_files(folder, "posts_questions") if path.is_dir() else []
    if path.is_file():
        shard = path.name.startswith("posts_questions-")
        questions = _table_files(folder, "posts_questions-") if shard else [path]
    answers = _table_files(folder, "posts_answers")
    if not questions:
        raise FreshStackError(f"{path}: no posts_questions.csv/.tsv/.jsonl here; export the posts_questions table")
    if not answers:
        raise FreshStackError(
            f"{path}: no posts_answers.csv/.tsv/.jsonl beside the questions; export the posts_answers table into "
            f"{folder} (accepted answers are read from it)"
        )
    return questions, answers


def _rows(path: Path, required: tuple[str, ...], progress: Progress | None) -> Iterator[tuple[int, dict]]:
    """(line or row number, row) from one CSV/TSV/JSONL file, checking its columns first."""
    name = path.name.lower().removesuffix(".gz")
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(open(path, "rb"))  # its position drives the progress bar
        stream = stack.enter_context(gzip.open(raw, "rb")) if path.name.lower().endswith(".gz") else raw
        text = stack.enter_context(io.TextIOWrapper(stream, encoding="utf-8", newline=""))
        done = 0
        if name.endswith((".jsonl", ".json")):
            for n, line in enumerate(text, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise FreshStackError(f"{path}: line {n}: not JSON ({exc.msg}); expected one row per line") from exc
                if not isinstance(row, dict):
                    raise FreshStackError(f"{path}: line {n}: expected a JSON object per line (one table row)")
                if n == 1:
                    _check_columns(path, row.keys(), required)
                yield n, row
                if progress is not None and n - done > 2000:
                    done = n
                    progress(raw.tell())
        else:
            csv.field_size_limit(sys.maxsize)
            reader = csv.reader(text, delimiter="\t" if name.endswith(".tsv") else ",")
            header = next(reader, None) or []
            _check_columns(path, header, required)
            try:
                for values in reader:
                    if not values:
                        continue
                    yield reader.line_num, dict(zip(header, values, strict=False))
                    if progress is not None and reader.line_num - done > 2000:
                        done = reader.line_num
                        progress(raw.tell())
            except csv.Error as exc:
                raise FreshStackError(f"{path}: line {reader.line_num}: {exc}; re-export the table") from exc
        if progress is not None:
            progress(raw.tell())


def _check_columns(path: Path, found, required: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in set(found)]
    if missing:
        raise FreshStackError(
            f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(list(found)[:12])}); export "
            f"the BigQuery table with at least {', '.join(required)}"
        )


def _scan_bigquery(path: Path, want_question, want_answer, stats: ScanStats, progress) -> Iterator[Post]:
    questions, answers = _bigquery_files(path)
    for file, is_question in [(q, True) for q in questions] + [(a, False) for a in answers]:
        last = 0

        def advance(pos: int) -> None:
            nonlocal last
            if progress is not None:
                progress(pos - last)
            last = pos

        for n, row in _rows(file, QUESTION_COLUMNS if is_question else ANSWER_COLUMNS, advance):
            stats.rows += 1
            if is_question:
                stats.questions += 1
                tags = row["tags"]
                tags_raw = "|".join(tags) if isinstance(tags, list) else tags or ""
                if not (tags_raw and want_question(tags_raw)):
                    continue
            elif not want_answer(str(to_int(row["id"]))):
                continue
            yield _table_post(file, n, row, is_question)
        stats.bytes_read += file.stat().st_size


def _table_post(path: Path, n: int, row: dict, is_question: bool) -> Post:
    try:
        return Post(
            id=int(to_int(row["id"])),
            is_question=is_question,
            date=iso_date(row["creation_date"]),
            score=to_int(row.get("score")) or 0,
            body=row.get("body") or "",
            title=html.unescape(row.get("title") or "") if is_question else "",
            tags=parse_tags(row.get("tags")) if is_question else (),
            accepted_answer_id=to_int(row.get("accepted_answer_id")) if is_question else None,
            parent_id=None if is_question else to_int(row.get("parent_id")),
        )
    except (TypeError, ValueError) as exc:
        raise FreshStackError(f"{path}: line {n}: bad value in row id={row.get('id')!r} ({exc}); re-export") from exc


# ---- Stack Exchange API pages ------------------------------------------------------------------------------------


def _api_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob("*.json"))
    if not files:
        raise FreshStackError(f"{path}: no .json API pages in this folder; save each API response as a .json file")
    return files


def _scan_api(path: Path, want_question, want_answer, stats: ScanStats, progress) -> Iterator[Post]:
    """Questions of every page first, then answers (embedded or separate), so no answer precedes its question."""
    answers: list[tuple[Path, int, dict]] = []
    for file in _api_files(path):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise FreshStackError(f"{file}: not a JSON API response ({exc}); save the API's raw JSON") from exc
        items = data.get("items") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise FreshStackError(f'{file}: expected {{"items": [...]}} as the Stack Exchange API returns it')
        size = file.stat().st_size
        stats.bytes_read += size
        if progress is not None:
            progress(size)
        for i, item in enumerate(items):
            if not isinstance(item, dict) or ("question_id" not in item and "answer_id" not in item):
                raise FreshStackError(f"{file}: items[{i}] has neither question_id nor answer_id")
            stats.rows += 1
            if "answer_id" in item:
                answers.append((file, i, item))
                continue
            stats.questions += 1
            for a in item.get("answers") or []:
                stats.rows += 1
                answers.append((file, i, {**a, "question_id": item["question_id"]}))
                if a.get("is_accepted") and not item.get("accepted_answer_id"):
                    item = {**item, "accepted_answer_id": a.get("answer_id")}
            tags = item.get("tags") or []
            if tags and want_question("|".join(tags) if isinstance(tags, list) else str(tags)):
                yield _api_post(file, i, item, True)
    for file, i, item in answers:
        if want_answer(str(to_int(item.get("answer_id")))):
            yield _api_post(file, i, item, False)


def _api_post(path: Path, i: int, item: dict, is_question: bool) -> Post:
    if "body" not in item:
        raise FreshStackError(
            f"{path}: items[{i}] has no `body`; request the API with a filter that includes bodies (filter=withbody)"
        )
    try:
        return Post(
            id=int(to_int(item["question_id" if is_question else "answer_id"])),
            is_question=is_question,
            date=iso_date(item["creation_date"]) if is_question or "creation_date" in item else "",
            score=to_int(item.get("score")) or 0,
            body=item["body"] or "",
            title=html.unescape(item.get("title") or ""),
            tags=parse_tags(item.get("tags")) if is_question else (),
            accepted_answer_id=to_int(item.get("accepted_answer_id")) if is_question else None,
            parent_id=None if is_question else to_int(item.get("question_id")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise FreshStackError(f"{path}: items[{i}]: bad or missing field ({exc}); keep the API's raw JSON") from exc
