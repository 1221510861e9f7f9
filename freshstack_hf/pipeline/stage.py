"""What every build stage shares: its work folder, the records of the stages before it, atomic table writes.

A stage module exposes `NAME`, `READS` (the config sections and earlier stages its output depends on),
`run(ctx) -> dict` (does the work, writes its `OUTPUTS` atomically and returns its record:
counts, backend, what it read) and `plan(ctx) -> dict` (for `--dry-run`: what it would read, call and cost,
without doing it). The pipeline writes `record.json` after `run` returns; a stage whose record exists with the
same fingerprint is done, which is what makes `--resume` and re-runs cheap. The runner hands a running stage the
records of the stages before it (`StageContext.records`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from freshstack_hf import atomic
from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.choose import make_backend
from freshstack_hf.pipeline.config.topic import TopicConfig

RECORD = "record.json"


@dataclass
class StageContext:
    config: TopicConfig
    work: Path  # this topic's work folder (one sub-folder per stage, plus the LLM cache)
    out: Path  # the dataset repo the `write` stage commits to
    show_progress: bool = True
    dry_run: bool = False
    backend_override: Any = None  # a Backend to use instead of the one the config names (tests, demo)
    # Dated snapshots of one topic share one folder (the LLM cache, repository clones, the chunk and judgment
    # memos), so a later snapshot pays only for what changed; a plain build shares with itself.
    shared_dir: Path | None = None
    # The records of the stages before the running one, in stage order, as stored: handed over by the runner.
    records: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _backend: Any = field(default=None, repr=False)

    @property
    def shared(self) -> Path:
        return self.shared_dir or self.work

    @property
    def reuses(self) -> bool:
        """Whether chunks and judgments are memoised across builds: a snapshot build's promise."""
        return bool(self.config.snapshot.date)

    def dir(self, stage: str) -> Path:
        path = self.work / stage
        path.mkdir(parents=True, exist_ok=True)
        return path

    def record_path(self, stage: str) -> Path:
        """Where a finished stage's record lives; its presence with the right fingerprint means "done"."""
        return self.work / stage / RECORD

    def record(self, stage: str) -> dict[str, Any]:
        """The record an earlier stage left (see `records`); a clear error when that stage has not run."""
        if stage not in self.records:
            raise FreshStackError(
                f"{self.record_path(stage)}: stage `{stage}` has not finished; run `freshstack-hf build "
                f"{self.config.path} --out {self.out} --stages {stage}` (or without --stages) first"
            )
        return self.records[stage]

    @property
    def llm_cache(self) -> Path:
        return self.shared / "llm-cache.sqlite"

    def backend(self) -> Any:
        """The LLM backend for this build, made once: offline when the config names no endpoint."""
        if self.backend_override is not None:
            return self.backend_override
        if self._backend is None:
            self._backend = make_backend(self.config.llm, self.llm_cache, show_progress=self.show_progress)
        return self._backend


def write_table(path: Path, table: pa.Table) -> Path:
    """Parquet written whole or not at all (a killed stage leaves the previous file or none)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def read_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A stage output, only the `columns` asked for (parquet reads no other column from disk); a missing or
    unreadable file names the stage to run again (a stage file is remade by its stage, not by hand)."""
    if not path.is_file():
        raise FreshStackError(f"{path}: missing stage output; re-run the stage that writes it")
    try:
        return pq.read_table(path, columns=columns)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise FreshStackError(
            f"{path}: not a readable parquet file ({exc}); re-run the `{path.parent.name}` stage (--no-resume)"
        ) from exc


def write_json(path: Path, data: Any) -> Path:
    return atomic.write_json(path, data, default=str)
