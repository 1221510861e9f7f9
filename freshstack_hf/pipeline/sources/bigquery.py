"""Reads the BigQuery `posts_questions` / `posts_answers` export (CSV, TSV or JSONL, plain or gzipped, often
sharded) as a stream of posts: every question file first, then every answer file.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import html
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources.posts import Post, Progress, ScanStats, iso_date, parse_tags, to_int
from freshstack_hf.pipeline.sources.reader import BY_NAME, NO, QuestionReader

_TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".csv.gz", ".tsv.gz", ".jsonl.gz", ".json.gz")
QUESTION_COLUMNS = ("id", "title", "body", "accepted_answer_id", "creation_date", "tags", "score")
ANSWER_COLUMNS = ("id", "body", "parent_id", "creation_date", "score")


def _table_files(folder: Path, table: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(table) and p.name.lower().endswith(_TABLE_SUFFIXES))


def bigquery_files(path: Path) -> tuple[list[Path], list[Path]]:
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


def scan_bigquery(path: Path, want_question, want_answer, stats: ScanStats, progress) -> Iterator[Post]:
    questions, answers = bigquery_files(path)
    for file, is_question in [(q, True) for q in questions] + [(a, False) for a in answers]:
        last = 0

        def advance(pos: int) -> None:
            nonlocal last
            if progress is not None:
                progress(pos - last)
            last = pos

        for n, row in _rows(file, QUESTION_COLUMNS if is_question else ANSWER_COLUMNS, advance):
            stats.rows += 1
            stats.saw(row.get("creation_date"))
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


class BigQueryExport(QuestionReader):
    """BigQuery's `posts_questions` and `posts_answers` tables exported as CSV, TSV or JSONL (sharded or not)."""

    format = "bigquery"

    @classmethod
    def holds(cls, name: str) -> bool:
        return name.startswith("posts_questions")

    @classmethod
    def file_score(cls, name: str, head: bytes) -> int:
        if name.endswith((".7z", ".xml")):  # never a table export, whatever its name
            return NO
        tables = name.startswith(("posts_questions", "posts_answers")) or name.endswith((".csv", ".tsv", ".jsonl"))
        return BY_NAME if tables else NO

    def files(self) -> list[Path]:
        questions, answers = bigquery_files(self.path)
        return questions + answers

    def scan(self, want_question, want_answer, stats, progress=None) -> Iterator[Post]:
        return scan_bigquery(self.path, want_question, want_answer, stats, progress)
