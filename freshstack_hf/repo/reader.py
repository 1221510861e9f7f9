"""Reading topics from a dataset repo, local or on the Hub, through one code path.

A Hub id is first materialised with `huggingface_hub.snapshot_download` (only the files the call needs, at
the pinned revision), after which the local reader takes over, so a local folder and a published repo behave
identically.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

from freshstack_hf.defaults import cache_root
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import is_local, open_revision
from freshstack_hf.repo.tables import docs_from_corpus, query_side_from_official, with_importance
from freshstack_hf.topic import Topic


def resolve_repo(source: str | Path, revision: str | None = None, topics: list[str] | None = None) -> Path:
    """A local folder (its `@revision` sibling when a revision is asked, see `repo.revisions`); anything else is
    taken as a Hub dataset id and fetched (only the files needed)."""
    path = Path(source).expanduser()
    if is_local(path):  # a snapshot build writes only the dated folders
        return open_revision(path, revision)
    text = str(source)
    if path.exists() or "/" not in text or text.startswith((".", "/", "~")):
        raise FreshStackError(
            f"dataset repo {text!r} not found: give a folder holding README.md and data/ "
            "(e.g. one written by `freshstack-hf synth`) or a Hub id like ORG/freshstack"
        )
    return _download(text, revision, topics)


def _download(repo_id: str, revision: str | None, topics: list[str] | None) -> Path:
    from huggingface_hub import snapshot_download

    patterns = [layout.MANIFEST, layout.CARD]
    patterns += [f"{layout.DATA_DIR}/{t}/*" for t in topics] if topics else [f"{layout.DATA_DIR}/*"]
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns))
    except Exception as exc:  # network, auth, missing repo: all user-fixable
        raise FreshStackError(
            f"could not fetch dataset repo {repo_id!r} (revision {revision or 'main'}) from the Hub: {exc}. "
            "Check the id and your network, or pass a local folder"
        ) from exc


def local_revision(repo: str | Path) -> str:
    """`local-<hash>` of a local repo's data files (paths and bytes), what results record as its revision.

    Content, not the manifest: rebuilding identical data keeps the revision (the manifest's timestamps change),
    and any change to a data file changes it. A file's hash is kept by its absolute path, size and modification
    time (`DigestCache`, under the cache root): each `evaluate --json` or board start of the same release would
    otherwise read all of its data again (a fifth of a second at the release's size).
    """
    root = Path(repo) / layout.DATA_DIR
    files = sorted(p for p in root.rglob("*.parquet")) if root.is_dir() else []
    digest = hashlib.sha1()
    with DigestCache.opened() as known:
        for path in files:
            st = path.stat()
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(known.digest(path, st.st_size, st.st_mtime_ns))
    return f"local-{digest.hexdigest()[:12]}"


class DigestCache:
    """SHA-1 of files by (absolute path, size, mtime in ns), in a small JSON file under the cache root, shared by
    every process: what `git status` does with its index. A file rewritten in place gets a new mtime, so a
    stale entry is never used; an unreadable or unwritable cache only costs the hashing."""

    LIMIT = 20_000  # entries kept, newest last

    def __init__(self, path: Path) -> None:
        self.path, self.changed = path, False
        try:
            self.entries: dict[str, list] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}

    @classmethod
    @contextlib.contextmanager
    def opened(cls) -> Iterator[DigestCache]:
        cache = cls(cache_root() / "file-digests.json")
        yield cache
        cache.save()

    def digest(self, path: Path, size: int, mtime_ns: int) -> bytes:
        key = str(path.resolve())
        found = self.entries.get(key)
        if found and found[:2] == [size, mtime_ns]:
            return bytes.fromhex(found[2])
        with open(path, "rb") as handle:
            value = hashlib.file_digest(handle, "sha1").digest()
        self.entries.pop(key, None)
        self.entries[key] = [size, mtime_ns, value.hex()]
        self.changed = True
        return value

    def save(self) -> None:
        if not self.changed:
            return
        kept = dict(list(self.entries.items())[-self.LIMIT :])
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(kept), encoding="utf-8")
            os.replace(tmp, self.path)  # whole or not at all, whichever process writes last
        except OSError:
            pass


def list_topics(source: str | Path, revision: str | None = None) -> list[str]:
    """Topics of a repo: the manifest's list, else the folders under data/."""
    repo = resolve_repo(source, revision)
    topics = sorted(read_manifest(repo).get("topics", {}))
    if not topics and (repo / layout.DATA_DIR).is_dir():
        topics = sorted(p.name for p in (repo / layout.DATA_DIR).iterdir() if p.is_dir())
    return topics


def load_topic(source: str | Path, topic: str, revision: str | None = None) -> Topic:
    """A lazy `Topic` from a local repo folder or a Hub dataset id; nothing is read until first use."""
    repo = resolve_repo(source, revision, [topic])
    official = layout.config_path(repo, topic, "queries_official")
    corpus = layout.config_path(repo, topic, "corpus")
    if not official.exists():
        available = list_topics(repo)
        raise FreshStackError(
            f"topic {topic!r} not found in {repo} (missing {official.relative_to(repo)}); "
            f"available topics: {', '.join(available) or 'none'}"
        )
    return Topic.lazy(
        topic,
        query_side=lambda: _query_side(repo, topic, official),
        docs=lambda: docs_from_corpus(read_table(corpus)),
        doc_ids=lambda: read_table(corpus, columns=["_id"]).column("_id").to_pylist(),
    )


def _query_side(repo: Path, topic: str, official: Path):
    side = query_side_from_official(read_table(official))
    nuggets = layout.config_path(repo, topic, "nuggets")
    if nuggets.exists() and "importance" in pq.read_schema(nuggets).names:
        side = with_importance(side, read_table(nuggets))
    return side


def load_candidates(source: str | Path, topic: str, stem: str, revision: str | None = None) -> dict[str, list[str]]:
    """A candidate config (`bm25`, `dense`, `top_ranked`) as query id -> ranked corpus ids."""
    repo = resolve_repo(source, revision, [topic])
    path = layout.config_path(repo, topic, stem)
    if not path.exists():
        raise FreshStackError(
            f"{path}: no {stem} candidates for topic {topic!r}; run `freshstack-hf candidates {repo} --topic {topic}`"
        )
    table = read_table(path)
    return dict(zip(table.column("query-id").to_pylist(), table.column("corpus-ids").to_pylist(), strict=True))


def read_table(path: Path, columns: list[str] | None = None):
    """A parquet file (only `columns`, when given), with errors that say which file and how to fix it.

    Read as one file (`ParquetFile`), not through `pq.read_table`, whose dataset layer imports pandas: a quarter
    of a second of every scoring command's start, for files that are never partitioned."""
    try:
        with pq.ParquetFile(path) as parquet:
            return parquet.read(columns=columns)
    except FileNotFoundError as exc:
        raise FreshStackError(f"{path}: file missing; rebuild the topic or restore the file") from exc
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise FreshStackError(f"{path}: not a readable parquet file ({exc}); rebuild the topic") from exc
