"""Every file a build stage leaves in the work folder, named once, with the readers later stages share.

A stage declares what it writes (`OUTPUTS`, from the names below) and later stages read through the same names,
so a file's place is written in exactly one line: moving one is one edit here, and the runner can check after
each stage that everything it declared is on disk before the stage is recorded as done.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.pipeline.backends import QA
from freshstack_hf.pipeline.stage import StageContext, read_table


@dataclass(frozen=True)
class StageFile:
    """`name` in the folder of `stage`, under a build's work folder."""

    stage: str
    name: str

    def path(self, work: Path) -> Path:
        """The file under `work`, a build's work folder (`ctx.work`)."""
        return work / self.stage / self.name


QUESTIONS = StageFile("questions", "questions.parquet")
COOCCURRENCE = StageFile("questions", "cooccurrence.json")  # the tag report the paper chose repositories with
CHUNKS = StageFile("corpus", "chunks.parquet")
REPO_CACHE = StageFile("corpus", "cache")  # clones and checked-out trees, shared with `pin-commits`
NUGGETS = StageFile("nuggets", "nuggets.parquet")
POOL_QUERIES = StageFile("pools", "pool_queries.parquet")
POOLS = StageFile("pools", "pools.parquet")
JUDGMENTS = StageFile("judgments", "judgments.parquet")
KEPT = StageFile("filter", "kept.json")
CARRYOVER = StageFile("filter", "carryover.json")  # snapshot builds: the previous snapshot's questions, re-judged
# Shared by a topic's snapshots (under `ctx.shared`): what a later snapshot reuses instead of redoing.
CHUNK_MEMO = StageFile("memo", "chunks.sqlite")
JUDGMENT_MEMO = StageFile("memo", "judgments.sqlite")
SHARED_FILES = (REPO_CACHE, CHUNK_MEMO, JUDGMENT_MEMO)  # caches, not any stage's output


def read_qas(ctx: StageContext) -> list[QA]:
    rows = read_table(QUESTIONS.path(ctx.work), ["query_id", "title", "body", "answer_text"]).to_pylist()
    return [QA(r["query_id"], r["title"] or "", r["body"] or "", r["answer_text"] or "") for r in rows]


def read_nuggets(ctx: StageContext) -> dict[str, list[tuple[str, str, str]]]:
    """query id -> [(nugget id, text, importance)] in nugget order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for r in read_table(NUGGETS.path(ctx.work)).to_pylist():
        out.setdefault(r["query_id"], []).append((r["nugget_id"], r["text"], r.get("importance") or ""))
    return out


def read_chunks(ctx: StageContext, columns: list[str] | None = None) -> Any:
    return read_table(CHUNKS.path(ctx.work), columns)
