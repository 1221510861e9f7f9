"""Reads saved Stack Exchange API pages (`{"items": [...]}` JSON, one file or a folder of them) as posts."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources.posts import Post, ScanStats, iso_date, parse_tags, to_int
from freshstack_hf.pipeline.sources.reader import BY_CONTENT, BY_EXTENSION, NO, QuestionReader


def api_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(path.glob("*.json"))
    if not files:
        raise FreshStackError(f"{path}: no .json API pages in this folder; save each API response as a .json file")
    return files


def scan_api(path: Path, want_question, want_answer, stats: ScanStats, progress) -> Iterator[Post]:
    """Questions of every page first, then answers (embedded or separate), so no answer precedes its question."""
    answers: list[tuple[Path, int, dict]] = []
    for file in api_files(path):
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
            stats.saw(item.get("creation_date"))
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


class ApiPages(QuestionReader):
    """Saved Stack Exchange API responses, `{"items": [...]}` JSON: one file or a folder of them."""

    format = "api"

    @classmethod
    def holds(cls, name: str) -> bool:
        return name.endswith(".json")

    @classmethod
    def file_score(cls, name: str, head: bytes) -> int:
        if head.startswith(b"{") and b'"items"' in head:
            return BY_CONTENT
        return BY_EXTENSION if name.endswith(".json") else NO

    def files(self) -> list[Path]:
        return api_files(self.path)

    def scan(self, want_question, want_answer, stats, progress=None) -> Iterator[Post]:
        return scan_api(self.path, want_question, want_answer, stats, progress)
