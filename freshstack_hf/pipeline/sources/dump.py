"""Reads the Stack Exchange dump's `Posts.xml` (plain, gzipped or inside the site's `.7z`) as a stream of posts.

Stack Overflow's Posts.xml is ~100 GB, so the file is parsed incrementally with lxml, each row is cleared once read,
and only rows passing the caller's cheap prechecks become `Post` records. A `.7z` is streamed through a 7z binary
when one is on PATH, else extracted with py7zr into a temporary folder that is removed afterwards.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources.posts import (
    Post,
    Progress,
    ScanStats,
    WantAnswer,
    WantQuestion,
    iso_date,
    parse_tags,
    to_int,
)
from freshstack_hf.pipeline.sources.reader import BY_CONTENT, BY_NAME, NO, QuestionReader

log = logging.getLogger(__name__)


def dump_file(path: Path) -> Path:
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


def scan_dump(
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
            created = get("CreationDate")
            if created and created > stats.newest:  # ISO already: a string comparison (the hot loop stays cheap)
                stats.newest = created[:19]
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


def archive_member(path: Path) -> tuple[str, int | None]:
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
    member, _ = archive_member(path)
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


class StackExchangeDump(QuestionReader):
    """The Stack Exchange data dump: `Posts.xml`, gzipped, or inside the site's `.7z` (a file or its folder)."""

    format = "stackexchange"
    answers_may_come_first = True  # ids are not strictly creation-ordered after merges and migrations

    @classmethod
    def holds(cls, name: str) -> bool:
        return name == "posts.xml" or name.endswith(".7z")

    @classmethod
    def file_score(cls, name: str, head: bytes) -> int:
        if name.endswith((".7z", ".xml")):
            return BY_NAME
        return BY_CONTENT if head.startswith(b"<") else NO

    def files(self) -> list[Path]:
        return [dump_file(self.path)]

    def scan(self, want_question, want_answer, stats, progress=None) -> Iterator[Post]:
        return scan_dump(dump_file(self.path), want_question, want_answer, stats, progress, self.tmp_dir)

    def stream_size(self) -> int | None:
        path = dump_file(self.path)
        return archive_member(path)[1] if path.suffix.lower() == ".7z" else self.size()
