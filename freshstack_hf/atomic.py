"""Write a file so that readers see the old version or the new one, never half of it.

Every writer of user-visible files (runs, JSON reports, exports, caches, archives) goes through `atomic_path`:
it hands out a temporary name beside the target, renames it over the target only when the block finishes, and
removes it otherwise, so an interrupted run leaves nothing half-written. A whole folder (a dataset repo, a board
export) is built beside its target and put in place with `swap_folder`.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, durable: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` when the block succeeds, and is removed if not.

    `durable` fsyncs the file before the rename, for caches that must survive a power cut as well as a crash.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        if durable:
            with open(tmp, "rb") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: str | os.PathLike[str], data: Any, *, default: Any = None) -> Path:
    """`data` as indented UTF-8 JSON at `path`, atomically; `default` converts what JSON cannot hold."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=default) + "\n"
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def swap_folder(staged: Path, target: Path) -> None:
    """Put the finished folder `staged` at `target` by renames only: an existing `target` is moved aside first and
    removed once `staged` is in place, and put back if the rename fails, so `target` is never half-written."""
    old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    if target.exists():
        target.rename(old)
    try:
        staged.rename(target)
    except BaseException:
        if old.exists():
            old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)
