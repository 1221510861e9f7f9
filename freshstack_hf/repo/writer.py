"""Atomic writes of a dataset repo.

Every change happens in a staging copy beside the repo (files hard-linked, so unchanged topics cost nothing),
then the staging folder replaces the repo in two renames. A failure at any point before the swap leaves the
previous repo exactly as it was; adding or replacing one topic keeps the others' files untouched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from freshstack_hf.atomic import swap_folder
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo import manifest as manifest_io
from freshstack_hf.repo.card import render_card
from freshstack_hf.repo.tables import core_tables
from freshstack_hf.split_stats import stats_to_dict, topic_stats
from freshstack_hf.topic import Topic

log = logging.getLogger(__name__)


@dataclass
class Staging:
    """An open transaction: write files under `root`, edit `manifest`; both land together on commit."""

    root: Path
    manifest: dict[str, Any]
    written: list[str] = field(default_factory=list)

    def write_table(self, topic: str, stem: str, table: pa.Table) -> None:
        path = layout.config_path(self.root, topic, stem)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():  # a hard link to the live repo's file: replace the link, never write through it
            path.unlink()
        pq.write_table(table, path, compression="zstd")
        entry = self.manifest["topics"].setdefault(topic, {})
        files = entry.setdefault("files", [])
        if stem not in files:
            files.append(stem)
        # Rows and bytes feed the card's `dataset_info`, which is what `datasets` fingerprints a local repo by.
        entry.setdefault("file_stats", {})[stem] = {"rows": table.num_rows, "bytes": path.stat().st_size}
        self.written.append(layout.relative_path(topic, stem))

    def remove_topic(self, topic: str) -> None:
        shutil.rmtree(layout.topic_dir(self.root, topic), ignore_errors=True)
        self.manifest["topics"].pop(topic, None)


@contextlib.contextmanager
def transaction(repo: Path | str) -> Iterator[Staging]:
    """Stage a change to `repo` (created if missing) and swap it in only if the block finishes."""
    repo = Path(repo)
    repo.parent.mkdir(parents=True, exist_ok=True)
    staging_root = repo.parent / f".{repo.name}.staging-{uuid.uuid4().hex[:8]}"
    try:
        if repo.exists():
            _link_tree(repo, staging_root)
        else:
            staging_root.mkdir()
        staging = Staging(staging_root, manifest_io.read_manifest(staging_root))
        yield staging
        _finish(staging)
        swap_folder(staging_root, repo)
    except BaseException:
        shutil.rmtree(staging_root, ignore_errors=True)
        raise


@contextlib.contextmanager
def derive(base: Path | str, target: Path | str) -> Iterator[Staging]:
    """Stage a NEW folder `target` made from `base` (hard links for unchanged files), and move it into place only
    if the block finishes. `base` is never touched: `Staging.write_table` replaces a link rather than writing
    through it. A new revision of a repo (`NAME@REV`) is written this way, so a published folder is never
    rewritten and a failure leaves no `target` at all."""
    base, target = Path(base), Path(target)
    if target.exists():
        raise FreshStackError(f"{target} exists already: a revision is written once; choose another name")
    staging_root = target.parent / f".{target.name}.staging-{uuid.uuid4().hex[:8]}"
    try:
        _link_tree(base, staging_root)
        staging = Staging(staging_root, manifest_io.read_manifest(staging_root))
        yield staging
        _finish(staging)
        staging_root.rename(target)
    except BaseException:
        shutil.rmtree(staging_root, ignore_errors=True)
        raise


def write_topics(
    repo: Path | str,
    topics: Iterable[Topic],
    *,
    source: dict[str, Any] | None = None,
    extra_tables: dict[str, dict[str, pa.Table]] | None = None,
    extra_manifest: dict[str, dict[str, Any]] | None = None,
    replace: bool = True,
) -> Path:
    """Write (or replace) topics in a repo atomically; other topics already there are kept as they are.

    `extra_tables` maps topic -> {file stem -> table} for additional configs written in the same commit, and
    `extra_manifest` topic -> fields added to that topic's manifest entry.
    """
    repo = Path(repo)
    with transaction(repo) as st:
        for topic in topics:  # a Topic's name is checked when it is made and cannot change (`Topic.name`)
            if topic.name in st.manifest["topics"]:
                if not replace:
                    raise FreshStackError(f"{repo}: topic {topic.name!r} exists; pass replace=True to overwrite")
                st.remove_topic(topic.name)
            for stem, table in core_tables(topic).items():
                st.write_table(topic.name, stem, table)
            for stem, table in (extra_tables or {}).get(topic.name, {}).items():
                st.write_table(topic.name, stem, table)
            entry = st.manifest["topics"][topic.name]
            entry.update(
                manifest_io.topic_entry(
                    stats_to_dict(topic_stats(topic)),
                    source or {"kind": "records"},
                    (extra_manifest or {}).get(topic.name),
                )
            )
            log.info("staged topic %s", topic.name)
    return repo


def _finish(st: Staging) -> None:
    (st.root / layout.MANIFEST).unlink(missing_ok=True)
    (st.root / layout.MANIFEST).write_text(manifest_io.dumps(st.manifest), encoding="utf-8")
    (st.root / layout.CARD).unlink(missing_ok=True)
    (st.root / layout.CARD).write_text(render_card(st.manifest), encoding="utf-8")


def _link_tree(src: Path, dst: Path) -> None:
    """Mirror `src` into `dst` with hard links (copies where the filesystem refuses links)."""

    def link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=link)
