"""Small pieces every subcommand shares: topic lists, JSON output, timing."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError


def split_list(value: str, what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise FreshStackError(f"empty {what} list {value!r}: give comma-separated names, e.g. langchain,yolo")
    return items


def resolve_topics(repo: str | Path, topic: str | None) -> list[str]:
    """`--topic all` (or none) means every topic of the repo; otherwise a comma-separated list."""
    from freshstack_hf.repo.reader import list_topics

    available = list_topics(repo)
    if topic in (None, "all"):
        if not available:
            raise FreshStackError(f"{repo}: the repo holds no topics")
        return available
    wanted = split_list(topic, "topic")
    missing = [t for t in wanted if t not in available]
    if missing:
        raise FreshStackError(
            f"{repo}: no topic {', '.join(map(repr, missing))}; available: {', '.join(available) or 'none'}"
        )
    return wanted


def write_json(data: Any, target: str) -> None:
    """`-` writes to stdout; a path is written atomically (temp file, then rename)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    from freshstack_hf.atomic import atomic_path

    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextmanager
def timed() -> Iterator[dict[str, float]]:
    box: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["seconds"] = time.perf_counter() - start
