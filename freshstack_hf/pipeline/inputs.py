"""Readers of the stage outputs that later stages share (questions, nuggets, chunks), in one place."""

from __future__ import annotations

from pathlib import Path

from freshstack_hf.pipeline.backends import QA
from freshstack_hf.pipeline.stage import StageContext, read_table


def questions_path(ctx: StageContext) -> Path:
    return ctx.work / "questions" / "questions.parquet"


def nuggets_path(ctx: StageContext) -> Path:
    return ctx.work / "nuggets" / "nuggets.parquet"


def chunks_path(ctx: StageContext) -> Path:
    return ctx.work / "corpus" / "chunks.parquet"


def read_qas(ctx: StageContext) -> list[QA]:
    rows = read_table(questions_path(ctx), ["query_id", "title", "body", "answer_text"]).to_pylist()
    return [QA(r["query_id"], r["title"] or "", r["body"] or "", r["answer_text"] or "") for r in rows]


def read_nuggets(ctx: StageContext) -> dict[str, list[tuple[str, str, str]]]:
    """query id -> [(nugget id, text, importance)] in nugget order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for r in read_table(nuggets_path(ctx)).to_pylist():
        out.setdefault(r["query_id"], []).append((r["nugget_id"], r["text"], r.get("importance") or ""))
    return out


def read_chunks(ctx: StageContext, columns: list[str] | None = None):
    return read_table(chunks_path(ctx), columns)
