"""What lies behind stored rows, kept in one folder the app and the workers share (`--runs-dir`, by default
`<data dir>/runs`): the runs behind rows (`RunArchive`) and, under `answers/`, the answer files judge jobs read
(`AnswersArchive`). Files are written atomically: a reader never sees half a file.

Scores alone cannot say which nugget a system missed; the archived ranking can, so the detail view lists
"nuggets never covered" and runs paired analyses for every row kind (submitted runs, baselines and models
alike). An answer file is archived by the hash of its content, and a judge job names that hash instead of
carrying the answers: the job stays small whatever the file's size, and the worker reads exactly what the app
checked (the hash is verified on reading).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs import Run
from leaderboard.store_engine import default_data_dir

ARCHIVE_DEPTH = 100
ANSWERS_FOLDER = "answers"  # under the runs archive's root
_SHA256 = re.compile(r"[0-9a-f]{64}")


def runs_dir(folder: str | Path | None = None) -> Path:
    """The archive's folder: `folder` (`--runs-dir`), else `<data dir>/runs`, the same for the app and workers."""
    return Path(folder).expanduser() if folder else default_data_dir() / "runs"


class RunArchive:
    """Top-k runs of stored rows ({topic: {query: {doc: score}}}), one file per content hash."""

    def __init__(self, root: str | Path, depth: int = ARCHIVE_DEPTH) -> None:
        self.root, self.depth = Path(root).expanduser(), depth

    def path(self, content_hash: str) -> Path:
        return self.root / f"{hashlib.sha256(content_hash.encode()).hexdigest()[:32]}.json.gz"

    def save(self, content_hash: str, runs: Mapping[str, Run]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.path(content_hash)
        with atomic_path(target) as tmp, gzip.open(tmp, "wb") as fh:
            fh.write(json.dumps(runs, separators=(",", ":")).encode())
        return target

    def load(self, content_hash: str) -> dict[str, dict[str, dict[str, float]]] | None:
        path = self.path(content_hash)
        if not path.is_file():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)


def archived_rankings(store: Any, archive: RunArchive, *, scored_only: bool = False) -> Iterator[tuple[Any, dict]]:
    """(system, {topic: run}) of every stored system whose ranking the archive keeps (`scored_only`: finished rows
    only; a ranking is archived before its scores are stored, so a row that then failed may still have one)."""
    for row in store.leaderboard_rows():
        if scored_only and row.system.status != "scored":
            continue
        runs = archive.load(row.system.content_hash)
        if runs:
            yield row.system, runs


class AnswersArchive:
    """Checked answer files (TREC RAG JSONL text), gzipped, one file per sha256 of the text: its name is its hash."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()

    @classmethod
    def beside(cls, runs_root: str | Path) -> AnswersArchive:
        """The answers archive kept in the runs archive's folder (`answers/` under it)."""
        return cls(Path(runs_root).expanduser() / ANSWERS_FOLDER)

    def path(self, sha256: str) -> Path:
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise FreshStackError(f"{str(sha256)[:80]!r} is not the sha256 of archived answers")
        return self.root / f"{sha256}.jsonl.gz"

    def save(self, text: str) -> str:
        """Archive `text` (kept once: the same answers are one file); returns its sha256."""
        data = text.encode("utf-8")
        sha256 = hashlib.sha256(data).hexdigest()
        target = self.path(sha256)
        if not target.is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            with atomic_path(target) as tmp, gzip.open(tmp, "wb") as fh:
                fh.write(data)
        return sha256

    def load(self, sha256: str) -> str:
        """The archived text of `sha256`; refused when it is missing or its content no longer has that hash."""
        path = self.path(sha256)
        if not path.is_file():
            where = f"no archived answers {sha256} under {self.root}"
            raise FreshStackError(f"{where}: run the worker with the app's --runs-dir")
        with gzip.open(path, "rb") as fh:
            data = fh.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise FreshStackError(f"archived answers {path} do not match their hash {sha256}: the file was changed")
        return data.decode("utf-8")
