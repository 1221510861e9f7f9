"""`manifest.json`: what built the repo and how, so any number computed from it can be traced back.

It also caches per-topic statistics, which lets the writer regenerate the card when one topic changes without
re-reading the other topics' corpora.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.layout import MANIFEST

MANIFEST_VERSION = 1


def empty_manifest() -> dict[str, Any]:
    return {"manifest_version": MANIFEST_VERSION, "builder": "freshstack-hf", "topics": {}}


def read_manifest(repo: Path) -> dict[str, Any]:
    path = repo / MANIFEST
    if not path.exists():
        return empty_manifest()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FreshStackError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); restore it or rebuild the repo"
        ) from exc
    data.setdefault("topics", {})
    return data


def topic_entry(stats: dict, source: dict, extra: dict | None = None) -> dict[str, Any]:
    """One topic's manifest record: counts, how it was made (`source`), when and by which version."""
    entry = {
        "builder_version": __version__,
        "built_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": source,
        "stats": stats,
    }
    if extra:
        entry.update(extra)
    return entry


def dumps(manifest: dict[str, Any]) -> str:
    manifest = dict(manifest)
    manifest["builder_version"] = __version__
    manifest["topics"] = dict(sorted(manifest.get("topics", {}).items()))
    return json.dumps(manifest, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
