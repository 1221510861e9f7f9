"""Hub models for the board's tests, without the Hub.

* `COMMIT`, `OTHER_COMMIT`: full commit ids, which the board takes offline as their own pin
  (`model_source.pinned_commit`): what a test gives as the revision of a Hub model it never downloads.
* `HubCache`: a Hugging Face cache laid out as huggingface_hub writes one (`models--ORG--NAME/refs/main`,
  `models--ORG--NAME/snapshots/SHA/...`), which the board and an in-process worker read through
  `huggingface_hub.snapshot_download(local_files_only=True)`, and a worker process through `HF_HUB_CACHE`.
* `FakeModelInfo`: the one Hub call that pins a revision online (`HfApi.model_info`), answered from a dict of
  commits per model as the Hub answers: an unknown model `RepositoryNotFoundError`, an unknown revision
  `RevisionNotFoundError`, and `down()` the error of a Hub that does not answer (503).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

COMMIT = "3f1c2a9d8b7e6f5a4c3b2a1908f7e6d5c4b3a291"
OTHER_COMMIT = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"


class HubCache:
    """A fresh Hugging Face cache at `root`, used by huggingface_hub in this process (and by processes given
    `environment()`)."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from huggingface_hub import constants

        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))  # read once at import; snapshot_download reads it
        monkeypatch.setenv("HF_HUB_CACHE", str(root))

    def add(self, repo_id: str, sha: str, folder: Path, *, main: bool = True) -> Path:
        """`folder`'s files as commit `sha` of `repo_id`, with the main branch naming it when `main`; the snapshot."""
        repo = self.root / f"models--{repo_id.replace('/', '--')}"
        snapshot = repo / "snapshots" / sha
        shutil.copytree(folder, snapshot)
        if main:
            (repo / "refs").mkdir(exist_ok=True)
            (repo / "refs" / "main").write_text(sha)
        return snapshot


class FakeModelInfo:
    """`huggingface_hub.HfApi.model_info` answered from `commits` ({model: {revision: sha}}, a commit naming itself),
    with the Hub online (HF_HUB_OFFLINE unset for this test); `asked` lists each call's (model, revision)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, commits: dict[str, dict[str, str]]) -> None:
        import huggingface_hub

        self.commits, self.asked, self.unreachable = commits, [], False
        fake = self

        def model_info(api: Any, repo_id: str, *, revision: str | None = None, **_: Any) -> Any:
            return fake.answer(repo_id, revision)

        monkeypatch.setattr(huggingface_hub.HfApi, "model_info", model_info)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)

    def answer(self, repo_id: str, revision: str | None) -> Any:
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

        self.asked.append((repo_id, revision))
        if self.unreachable:
            down = SimpleNamespace(headers={}, request=None, status_code=503)
            raise HfHubHTTPError("503 Server Error: Service Unavailable", response=down)
        response = SimpleNamespace(headers={}, request=None, status_code=404)
        if repo_id not in self.commits:
            raise RepositoryNotFoundError(f"404 Client Error: Repository Not Found for {repo_id}", response=response)
        known = self.commits[repo_id]
        sha = known.get(revision or "main") or (revision if revision in known.values() else None)
        if sha is None:
            raise RevisionNotFoundError(f"404 Client Error: Revision Not Found for {revision}", response=response)
        return SimpleNamespace(id=repo_id, sha=sha)

    def down(self, unreachable: bool = True) -> None:
        """The Hub stops (or starts again) answering."""
        self.unreachable = unreachable
