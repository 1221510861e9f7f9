"""The official `freshstack` 0.0.6 chunker, run offline in a subprocess (test_release_chunker.py says how).

`needs_official` skips a test, saying why, where the official chunker or one of its engines is not installed;
`official_chunks` runs it over a local repository. Its tiktoken cache is conftest.py's `tiktoken_cache`.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
OFFICIAL = """
import json, os, sys
from freshstack.chunking import GitHubRepoChunker
from freshstack.chunking.data_manager import GitHubRepoManager
GitHubRepoManager.default_branch = "main"  # its only network call; a class attribute shadows the property
local_dir, repo_id, out = sys.argv[1:4]
chunker = GitHubRepoChunker(repo_id=repo_id, local_dir=local_dir, output_dir=os.path.dirname(out),
                            output_filename=os.path.basename(out))
chunker.commit_id = "test"
chunker.process()
"""


def _official_available() -> str:
    for module in ("freshstack", "semchunk", "tree_sitter_language_pack", "nbconvert", "transformers", "tiktoken"):
        if importlib.util.find_spec(module) is None:
            return f"the official chunker needs {module} (pip install -e '.[all,test]')"
    return ""


needs_official = pytest.mark.skipif(bool(_official_available()), reason=_official_available() or "available")


def official_chunks(local_dir: Path, repo_id: str, cache: Path) -> dict[str, list[str]]:
    """{id: [texts]} from the official chunker over `local_dir/repo_id` (an id may repeat: all texts kept)."""
    out = local_dir.parent / f"official-{repo_id.replace('/', '_')}.jsonl"
    env = {"TIKTOKEN_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", OFFICIAL, str(local_dir), repo_id, str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    chunks: dict[str, list[str]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        chunks.setdefault(row["_id"], []).append(row["text"])
    return chunks
