"""Stage `corpus`: every repository at its pinned commit, walked and chunked into `corpus/chunks.parquet`.

Chunks stream to the Parquet writer in batches (the file is renamed into place only when complete), so a
50,000-file repository needs one file's text and one batch in memory, never the whole corpus. Ids are
`{keyword}/{path}_{start}_{end}`: the keyword is unique per topic (the config checks), paths are unique within a
repository (the walk sorts them and this module asserts it), and spans within a file are non-overlapping and
increasing (asserted) — so a duplicate id cannot be written, without keeping millions of ids in a set.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pyarrow as pa

from freshstack_hf.atomic import atomic_path
from freshstack_hf.build.chunking import Chunker
from freshstack_hf.build.config import RepoConfig
from freshstack_hf.build.files import load_text, walk_files
from freshstack_hf.build.repos import ResolvedRepo, describe_repo, resolve_repo
from freshstack_hf.build.stage import StageContext
from freshstack_hf.build.tokenizers import get_tokenizer
from freshstack_hf.errors import FreshStackError

NAME = "corpus"
READS = ("topic", "corpus")
OUTPUT = "chunks.parquet"
SCHEMA = pa.schema(
    [
        ("_id", pa.string()),
        ("text", pa.string()),
        ("url", pa.string()),
        ("repo", pa.string()),
        ("path", pa.string()),
        ("start_byte", pa.int64()),  # character offsets, under the released corpus's column names
        ("end_byte", pa.int64()),
        ("commit", pa.string()),
    ]
)
BATCH_ROWS = 4096
BATCH_CHARS = 32_000_000

logger = logging.getLogger(__name__)


class _Batches:
    """Column buffers flushed to the Parquet writer every few thousand rows or tens of MB of text."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.columns: dict[str, list] = {name: [] for name in SCHEMA.names}
        self.chars = 0

    def add(self, row: tuple) -> None:
        for column, value in zip(self.columns.values(), row, strict=True):
            column.append(value)
        self.chars += len(row[1])
        if len(self.columns["_id"]) >= BATCH_ROWS or self.chars >= BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        if self.columns["_id"]:
            self.writer.write_table(pa.table(self.columns, schema=SCHEMA))
        self.columns = {name: [] for name in SCHEMA.names}
        self.chars = 0


def run(ctx: StageContext) -> dict[str, Any]:
    import pyarrow.parquet as pq

    started = time.perf_counter()
    cfg = ctx.config.corpus
    tokenizer = get_tokenizer(cfg.tokenizer)
    chunker = Chunker(tokenizer, cfg.max_tokens, cfg.min_tokens)
    cache = ctx.dir(NAME) / "cache"
    target = ctx.dir(NAME) / OUTPUT
    repos: list[dict[str, Any]] = []
    assert len({r.keyword for r in cfg.repositories}) == len(cfg.repositories), "keywords must be unique (id prefix)"
    with atomic_path(target) as tmp:
        with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as writer:
            batches = _Batches(writer)
            for repo in cfg.repositories:
                resolved = resolve_repo(repo, cache)
                repos.append(_chunk_repo(repo, resolved, chunker, cfg.max_file_bytes, batches, ctx.show_progress))
            batches.flush()
        total = sum(r["chunks"] for r in repos)
        if not total:
            raise FreshStackError(
                f"{ctx.config.path}: corpus: no chunks from {len(repos)} repositories (skipped: "
                f"{_sum_counts(r['skipped'] for r in repos)}); check corpus.repositories' source, subdir and include"
            )
    return {
        "output": str(target),
        "tokenizer": tokenizer.name,
        "max_tokens": cfg.max_tokens,
        "min_tokens": cfg.min_tokens,
        "repositories": repos,
        "files": sum(r["files"] for r in repos),
        "chunks": total,
        "skipped": _sum_counts(r["skipped"] for r in repos),
        "near_empty_dropped": sum(r["near_empty_dropped"] for r in repos),
        "commits": {r["keyword"]: r["commit"] for r in repos},
        "seconds": round(time.perf_counter() - started, 3),
    }


def _chunk_repo(
    repo: RepoConfig, resolved: ResolvedRepo, chunker: Chunker, max_file_bytes: int, out: _Batches, progress: bool
) -> dict[str, Any]:
    started = time.perf_counter()
    files, skipped = walk_files(resolved.root, repo.subdir, repo.include, repo.exclude)
    link = resolved.url and resolved.commit not in ("", "unknown")
    chunks = dropped = read = 0
    previous = ""
    items: Any = files
    if progress:
        from tqdm.auto import tqdm

        items = tqdm(files, desc=f"corpus {repo.keyword}", unit="file")
    for rel, path in items:
        assert rel > previous, f"walk order broken at {rel!r}"  # sorted and unique paths: ids cannot collide
        previous = rel
        text, reason = load_text(path, rel, max_file_bytes)
        if text is None:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        read += 1
        spans, near_empty = chunker.chunk(rel, text)
        dropped += near_empty
        url = f"{resolved.url}/blob/{resolved.commit}/{rel}" if link else ""
        end = 0
        for s, e in spans:
            assert end <= s < e, f"{rel}: overlapping chunks at {s}"
            end = e
            out.add((f"{repo.keyword}/{rel}_{s}_{e}", text[s:e], url, repo.keyword, rel, s, e, resolved.commit))
        chunks += len(spans)
    if not chunks:
        logger.warning("corpus repository %s (%s): no chunks; skipped %s", repo.keyword, repo.source, skipped)
    return {
        "keyword": repo.keyword,
        "source": repo.source,
        "how": resolved.how,
        "commit": resolved.commit,
        "commit_date": resolved.commit_date,
        "url": resolved.url,
        "subdir": repo.subdir,
        "files": read,
        "chunks": chunks,
        "skipped": dict(sorted(skipped.items())),
        "near_empty_dropped": dropped,
        "seconds": round(time.perf_counter() - started, 3),
    }


def plan(ctx: StageContext) -> dict[str, Any]:
    """Per repository: how it would be read and at which commit (resolved where cheap); nothing is written."""
    cfg = ctx.config.corpus
    return {
        "repositories": [describe_repo(repo) for repo in cfg.repositories],
        "tokenizer": cfg.tokenizer,
        "max_tokens": cfg.max_tokens,
        "writes": str(ctx.work / NAME / OUTPUT),
    }


def _sum_counts(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    return dict(sorted(total.items()))
