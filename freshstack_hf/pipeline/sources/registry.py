"""Readers that turn each question source into the same plain `Post` records, streaming, whatever the layout.

Three layouts carry Stack Overflow posts: the Stack Exchange dump (`Posts.xml`, ~100 GB for Stack Overflow, or its
`.7z`), the BigQuery `posts_questions` / `posts_answers` export (CSV, TSV or JSONL, often sharded) and the Stack
Exchange API's `{"items": [...]}` pages. A full scan of the dump is the cost of a build, so a reader never builds a
record it will not keep: the caller passes `want_question(raw_tags)` (a cheap substring test on the raw tag string)
and `want_answer(answer_id)`, and only rows passing them are decoded. Every user error names the file and, where
known, the line or row, and says how to fix it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources.api import api_files, scan_api
from freshstack_hf.pipeline.sources.bigquery import bigquery_files, scan_bigquery
from freshstack_hf.pipeline.sources.dump import archive_member, dump_file, scan_dump
from freshstack_hf.pipeline.sources.posts import Post, Progress, ScanStats, WantAnswer, WantQuestion

FORMATS = ("stackexchange", "bigquery", "api")


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
            questions, answers = bigquery_files(self.path)
            return questions + answers
        if self.format == "api":
            return api_files(self.path)
        return [dump_file(self.path)]

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
            return scan_bigquery(self.path, want_question, want_answer, stats, progress)
        if self.format == "api":
            return scan_api(self.path, want_question, want_answer, stats, progress)
        return scan_dump(dump_file(self.path), want_question, want_answer, stats, progress, self.tmp_dir)

    def stream_size(self) -> int | None:
        """The bytes a scan reads (the uncompressed Posts.xml inside a .7z), for the progress bar's total."""
        path = dump_file(self.path) if self.format == "stackexchange" else None
        if path is not None and path.suffix.lower() == ".7z":
            return archive_member(path)[1]
        return self.size()
