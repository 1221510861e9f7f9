"""The corpus stage run for the tests: a minimal topic around some repositories, its chunks read back, and git
repositories made in the test with fixed dates and identity (so commits and snapshot dates are reproducible)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq

from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.stage import StageContext


def corpus_context(tmp_path: Path, repos: list[dict], **corpus_options) -> StageContext:
    data = {
        "topic": "demo",
        "questions": {"source": "questions.xml", "tags": ["demo"]},
        "corpus": {"repositories": repos, **corpus_options},
    }
    return StageContext(
        parse_topic(data, base=tmp_path), work=tmp_path / "work", out=tmp_path / "repo", show_progress=False
    )


def chunk_rows(ctx: StageContext) -> list[dict]:
    return pq.read_table(ctx.work / "corpus" / "chunks.parquet").to_pylist()


def git(repo: Path, *args: str, date: str = "2024-01-01T12:00:00+00:00") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo.parent),
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
