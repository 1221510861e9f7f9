"""The questions stage run on a source for the tests: a minimal topic around it, the stage's files read back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.pipeline.stages import questions


def stage_context(tmp_path: Path, source: Path | str, tags, **extra) -> StageContext:
    config = parse_topic(
        {
            "topic": "t",
            "questions": {"source": str(source), "tags": list(tags), **extra},
            "corpus": {"repositories": [{"source": "https://github.com/x/y", "commit": "abcdef1"}]},
        },
        base=tmp_path,
    )
    return StageContext(config, work=tmp_path / "work", out=tmp_path / "repo", show_progress=False)


def run_questions(tmp_path: Path, source, tags, **extra) -> tuple[dict, list[dict], dict]:
    ctx = stage_context(tmp_path, source, tags, **extra)
    record = questions.run(ctx)
    rows = pq.read_table(ctx.work / "questions" / "questions.parquet").to_pylist()
    cooc = json.loads((ctx.work / "questions" / "cooccurrence.json").read_text())
    return record, rows, cooc
