"""Stage `corpus`: every repository at its pinned commit, walked and chunked into `corpus/chunks.parquet`.

Chunks stream to the Parquet writer in batches (the file is renamed into place only when complete), so a
50,000-file repository needs one file's text and one batch in memory, never the whole corpus. Ids are
`{keyword}/{path}_{start}_{end}`, the keyword unique per topic (the config checks). The default chunker
(`freshstack-0.0.6`) makes the released corpus's ids, whose numbers can repeat within a repository (ids keep only
the ASCII characters of a path, and a long leaf's pieces are numbered from the leaf's start): the first chunk
of an id is kept and the others are counted in the manifest. The `sections` chunker's ids cannot repeat.

A chunk's `url` opens its file at the chunk's commit on the web, `{url}/blob/{commit}/{path}`, where the repository
has a web address (an http(s) or `git@` clone URL, or `url:` in the YAML) and a known commit. A local source (a
checkout, a `file://` URL, a folder or a tarball) has none unless `url:` names one: its chunks' `url` is empty,
and `repo`, `path` and `commit` say where the text comes from without publishing a path of the building machine.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from freshstack_hf.atomic import atomic_path
from freshstack_hf.cl100k import count
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.document_cut import cut_document
from freshstack_hf.pipeline.accounting import StagePlan
from freshstack_hf.pipeline.config.topic import CorpusConfig, RepoConfig
from freshstack_hf.pipeline.corpus.chunking import Chunker
from freshstack_hf.pipeline.corpus.file_selection import (  # the walk's path rules, for a plan's tree of paths
    _release_skip,
    _skip_reason,
    glob_matcher,
    load_text,
    read_release_text,
    walk_files,
)
from freshstack_hf.pipeline.corpus.release_chunker import ReleaseChunker
from freshstack_hf.pipeline.corpus.repos import ResolvedRepo, describe_repo, resolve_repo
from freshstack_hf.pipeline.corpus.token_counts import get_tokenizer
from freshstack_hf.pipeline.inputs import CHUNK_MEMO, CHUNKS, REPO_CACHE
from freshstack_hf.pipeline.memo import Memo, content_key
from freshstack_hf.pipeline.stage import StageContext

if TYPE_CHECKING:
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts

NAME = "corpus"
READS = ("topic", "corpus")
VERSION = 1
OUTPUTS = (CHUNKS,)
SCHEMA = pa.schema(
    [
        ("_id", pa.string()),
        ("text", pa.string()),
        ("url", pa.string()),
        ("repo", pa.string()),
        ("path", pa.string()),
        ("start_byte", pa.int64()),  # the numbers the id records (see the chunker), under the released names
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
    tokenizer = get_tokenizer(cfg.tokenizer) if cfg.chunker == "sections" else None
    cache = REPO_CACHE.path(ctx.shared)
    target = CHUNKS.path(ctx.work)
    repos: list[dict[str, Any]] = []
    assert len({r.keyword for r in cfg.repositories}) == len(cfg.repositories), "keywords must be unique (id prefix)"
    memo = Memo(CHUNK_MEMO.path(ctx.shared)) if ctx.reuses else None
    reuse = {"files_reused": 0, "files_chunked": 0}
    with atomic_path(target) as tmp:
        with pq.ParquetWriter(tmp, SCHEMA, compression="zstd") as writer:
            batches = _Batches(writer)
            for repo in cfg.repositories:
                resolved = resolve_repo(repo, cache)
                chunk_file = _file_chunker(cfg, repo, tokenizer)
                if memo is not None:
                    chunk_file = _memoised(chunk_file, memo, _settings_key(cfg, repo), reuse)
                repos.append(_chunk_repo(repo, resolved, cfg.chunker, chunk_file, batches, ctx.show_progress))
            batches.flush()
        if memo is not None:
            memo.close()
        total = sum(r["chunks"] for r in repos)
        if not total:
            raise FreshStackError(
                f"{ctx.config.path}: corpus: no chunks from {len(repos)} repositories (skipped: "
                f"{_sum_counts(r['skipped'] for r in repos)}); check corpus.repositories' source, subdir and include"
            )
    settings: dict[str, Any] = {"chunker": cfg.chunker, "max_tokens": cfg.max_tokens}
    if tokenizer is None:
        settings.update(
            tokenizer="cl100k_base",
            max_chunks_per_file=cfg.max_chunks_per_file,
            max_file_chars=cfg.max_file_chars,
            notebooks=cfg.notebooks,
        )
    else:
        settings.update(tokenizer=tokenizer.name, min_tokens=cfg.min_tokens, max_file_bytes=cfg.max_file_bytes)
    return {
        "output": str(target),
        **settings,
        "repositories": repos,
        "files": sum(r["files"] for r in repos),
        "chunks": total,
        "skipped": _sum_counts(r["skipped"] for r in repos),
        "near_empty_dropped": sum(r["near_empty_dropped"] for r in repos),
        "duplicate_ids_dropped": sum(r["duplicate_ids_dropped"] for r in repos),
        "commits": {r["keyword"]: r["commit"] for r in repos},
        **(reuse if memo is not None else {}),
        "seconds": round(time.perf_counter() - started, 3),
    }


def _settings_key(cfg: CorpusConfig, repo: RepoConfig) -> str:
    """Everything a file's chunks depend on besides its path and bytes: the chunker's settings (not the list of
    repositories, whose dates differ between snapshots) and the OWNER/REPO name counted in each chunk's budget."""
    from dataclasses import asdict

    settings = {k: v for k, v in asdict(cfg).items() if k != "repositories"}
    return content_key(json.dumps(settings, sort_keys=True), repo.name, str(VERSION))


def _memoised(chunk_file: Any, memo: Memo, settings: str, counts: dict[str, int]) -> Any:
    """`chunk_file` answered from the memo for a file whose path and bytes were chunked before (an unchanged
    file of an earlier snapshot), and remembered otherwise."""

    def chunk(rel: str, path: Any) -> tuple[list[Row], str, int]:
        key = content_key(settings, rel, Path(path).read_bytes())
        known = memo.get(key)
        if known is not None:
            counts["files_reused"] += 1
            return [tuple(row) for row in known[0]], known[1], known[2]
        rows, reason, near_empty = chunk_file(rel, path)
        memo.put_many({key: [[list(r) for r in rows], reason, near_empty]})
        counts["files_chunked"] += 1
        return rows, reason, near_empty

    return chunk


Row = tuple[str, int, int, str]  # id after the keyword, start, end, text


def _file_chunker(cfg: CorpusConfig, repo: RepoConfig, tokenizer: Any) -> Any:
    """`(rel, path) -> (rows, skip reason, near-empty chunks dropped)` for the configured chunker."""
    if tokenizer is None:
        release = ReleaseChunker(repo.name, cfg.max_tokens, cfg.max_chunks_per_file, cfg.max_file_chars, cfg.notebooks)

        def release_file(rel: str, path: Any) -> tuple[list[Row], str, int]:
            text, reason = read_release_text(path, rel, cfg.max_file_chars)
            if text is None:
                return [], reason, 0
            result = release.chunk_file(rel, text)
            return result.rows, result.skipped, 0

        return release_file
    chunker = Chunker(tokenizer, cfg.max_tokens, cfg.min_tokens)

    def sections_file(rel: str, path: Any) -> tuple[list[Row], str, int]:
        text, reason = load_text(path, rel, cfg.max_file_bytes)
        if text is None:
            return [], reason, 0
        spans, near_empty = chunker.chunk(rel, text)
        end = 0
        for s, e in spans:
            assert end <= s < e, f"{rel}: overlapping chunks at {s}"
            end = e
        return [(f"{rel}_{s}_{e}", s, e, text[s:e]) for s, e in spans], "" if spans else "empty", near_empty

    return sections_file


def _chunk_repo(
    repo: RepoConfig, resolved: ResolvedRepo, chunker: str, chunk_file: Any, out: _Batches, progress: bool
) -> dict[str, Any]:
    started = time.perf_counter()
    rules = "release" if chunker != "sections" else "sections"
    files, skipped = walk_files(resolved.root, repo.subdir, repo.include, repo.exclude, rules=rules)
    link = resolved.url and resolved.commit not in ("", "unknown")
    chunks = dropped = read = duplicates = 0
    slowest = (0.0, "")
    seen: set[str] = set()
    previous = ""
    items: Any = files
    if progress:
        from tqdm.auto import tqdm

        items = tqdm(files, desc=f"corpus {repo.keyword}", unit="file")
    for rel, path in items:
        assert rel > previous, f"walk order broken at {rel!r}"  # sorted and unique paths
        previous = rel
        began = time.perf_counter()
        rows, reason, near_empty = chunk_file(rel, path)
        slowest = max(slowest, (time.perf_counter() - began, rel))
        dropped += near_empty
        if not rows:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        read += 1
        url = f"{resolved.url}/blob/{resolved.commit}/{rel}" if link else ""
        for suffix, s, e, text in rows:
            doc_id = f"{repo.keyword}/{suffix}"
            if chunker != "sections":  # the released ids can repeat (see the module doc); sections' cannot
                if doc_id in seen:
                    duplicates += 1
                    continue
                seen.add(doc_id)
            out.add((doc_id, text, url, repo.keyword, rel, s, e, resolved.commit))
            chunks += 1
    if not chunks:
        logger.warning("corpus repository %s (%s): no chunks; skipped %s", repo.keyword, repo.source, skipped)
    return {
        "keyword": repo.keyword,
        "name": repo.name,
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
        "duplicate_ids_dropped": duplicates,
        "slowest_file": {"path": slowest[1], "seconds": round(slowest[0], 3)},
        "seconds": round(time.perf_counter() - started, 3),
    }


def summary(record: dict[str, Any]) -> str:
    line = f"{record.get('chunks', '?')} chunks from {record.get('files', '?')} files"
    if "files_reused" in record:  # a snapshot: unchanged files' chunks come from the memo
        line += f" ({record['files_reused']} unchanged files' chunks reused, {record['files_chunked']} chunked)"
    return line


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    """Per repository: how it would be read and at which commit (resolved where cheap), and the documents a plan
    estimated it makes; nothing is written."""
    cfg = ctx.config.corpus
    details: dict[str, Any] = {
        "repositories": [describe_repo(repo) for repo in cfg.repositories],
        "chunker": cfg.chunker,
        "tokenizer": cfg.tokenizer if cfg.chunker == "sections" else "cl100k_base",
        "max_tokens": cfg.max_tokens,
        "writes": str(CHUNKS.path(ctx.work)),
    }
    if facts is not None and facts.documents is not None:
        details["est_documents"] = round(facts.documents.count)
    return StagePlan(NAME, details)


# ---- a plan's view of the documents (`pipeline.planning.plan_facts`) -------------------------------------------------


def readable_paths(cfg: CorpusConfig, repo: RepoConfig, paths: list[str]) -> list[str]:
    """The repository paths this stage's walk would read (its path rules: globs, hidden paths, extensions, lock
    files); the rules that need a file's bytes (not UTF-8, binary, too large) are left to `chunk_tokens`."""
    included = glob_matcher(repo.include) if repo.include else None
    excluded = glob_matcher(repo.exclude)
    skip = _release_skip if cfg.chunker != "sections" else _skip_reason
    nowhere = Path("/nonexistent")  # links are no blobs of a tree: the lstat in the rules finds nothing
    return [rel for rel in paths if not skip(rel, nowhere / rel, included, excluded)]


def chunk_tokens(cfg: CorpusConfig, repo: RepoConfig, files: list[tuple[str, Path]], max_doc_tokens: int) -> list[int]:
    """Per document this stage makes of `files` (a plan's sample, read as the stage reads them), the cl100k tokens
    it shows in a judge prompt: its text cut at `max_doc_tokens`, as the judgments stage cuts it."""
    tokenizer = get_tokenizer(cfg.tokenizer) if cfg.chunker == "sections" else None
    chunk_file = _file_chunker(cfg, repo, tokenizer)
    return [count(cut_document(row[3], max_doc_tokens)) for rel, path in files for row in chunk_file(rel, path)[0]]


def _sum_counts(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    return dict(sorted(total.items()))
