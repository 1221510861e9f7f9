"""Where a dataset repo's dated revisions live and are published: a local folder, or a Hub dataset.

A refresh reads the previous snapshot from its repo and publishes the next one into it, and it must not care which
kind of repo that is. Both kinds list their dated snapshots through the one listing (`repo.revisions.dated_revisions`)
and keep the revisions the build reads in local folders `BASE@REV`:

- `LocalTarget`: the revisions are the folders `REPO@DATE` beside the repo; publishing is one rename, so a reader
  sees a revision complete or not at all;
- `HubTarget`: the revisions are tags of a Hub dataset; the previous snapshot is downloaded into the local mirror
  (`--out`), and publishing is the commit-and-tag of `freshstack_hf.publish` (what `freshstack-hf publish REPO@DATE
  --repo-id ID` does), after which the staged folder becomes the mirror's revision.

This lives in the repo room, beside `revisions` (the folder naming) and next to `freshstack_hf.publish` (the Hub
upload it calls), because it is about a repo's revisions, not about building one: `refresh` and the schedule
writer (`pipeline.refresh.schedule`, which only needs to know a Hub id from a folder) both open one here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from freshstack_hf.errors import FreshStackError
from freshstack_hf.publish import plan_publish, publish
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import dated_revisions, is_local, previous_revision, revision_folder

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class Target(Protocol):
    """The repo a refresh publishes to. `base` is the local folder whose `@REV` siblings hold the revisions the
    build reads (the previous snapshot) and writes; `local` says whether those folders are the published ones."""

    label: str
    base: Path
    local: bool

    def revisions(self) -> list[str]: ...

    def topics_at(self, revision: str) -> list[str]: ...

    def previous(self, topic: str, date: str) -> Path | None: ...

    def location(self, date: str) -> str: ...

    def check_publishable(self) -> None: ...

    def publish(self, staged: Path, date: str, message: str) -> str: ...


@dataclass
class LocalTarget:
    """A dataset repo folder: each dated revision is the folder `REPO@DATE` beside it (`repo.revisions`)."""

    base: Path
    local: bool = field(default=True, init=False)

    @property
    def label(self) -> str:
        return str(self.base)

    def revisions(self) -> list[str]:
        return dated_revisions(self.base)

    def topics_at(self, revision: str) -> list[str]:
        return sorted(read_manifest(revision_folder(self.base, revision))["topics"])

    def previous(self, topic: str, date: str) -> Path | None:
        return previous_revision(self.base, topic, date)

    def location(self, date: str) -> str:
        return str(revision_folder(self.base, date))

    def check_publishable(self) -> None:
        return None

    def publish(self, staged: Path, date: str, message: str) -> str:
        """One rename puts the whole revision in place: readers see it complete or not at all."""
        folder = revision_folder(self.base, date)
        if folder.exists():
            raise FreshStackError(f"{folder} exists already: a revision is written once; refresh at a later --date")
        folder.parent.mkdir(parents=True, exist_ok=True)  # a first revision of a repo whose folder is new
        staged.rename(folder)
        return str(folder)


@dataclass
class HubTarget:
    """A Hub dataset: revisions are tags. The previous snapshot is downloaded into the local mirror (`base@REV`),
    where the build reads it and keeps what it published, so the next refresh downloads nothing it made."""

    repo_id: str
    base: Path
    local: bool = field(default=False, init=False)
    private: bool = False  # an embargo's private repo: created private, and refused when the Hub says it is public
    _tags: list[str] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.repo_id} (Hub)"

    def revisions(self) -> list[str]:
        if self._tags is None:
            try:
                self._tags = dated_revisions(self.repo_id, hub=True)
            except FreshStackError as exc:  # network, auth: the user's to fix
                raise FreshStackError(f"{exc}, or refresh a local folder") from exc.__cause__
        return self._tags

    def topics_at(self, revision: str) -> list[str]:
        folder = revision_folder(self.base, revision)
        if (folder / "manifest.json").is_file():
            return sorted(read_manifest(folder)["topics"])
        from huggingface_hub import hf_hub_download

        try:
            path = hf_hub_download(self.repo_id, "manifest.json", repo_type="dataset", revision=revision)
        except Exception as exc:
            raise FreshStackError(f"could not read manifest.json of {self.repo_id} at {revision}: {exc}") from exc
        return sorted(json.loads(Path(path).read_text(encoding="utf-8")).get("topics", {}))

    def previous(self, topic: str, date: str) -> Path | None:
        for revision in reversed(self.revisions()):
            if revision < date and topic in self.topics_at(revision):
                return self._download(revision)
        return None

    def _download(self, revision: str) -> Path:
        folder = revision_folder(self.base, revision)
        if (folder / "manifest.json").is_file():
            return folder
        from huggingface_hub import snapshot_download

        tmp = folder.with_name(f".{folder.name}.download-{uuid.uuid4().hex[:8]}")
        try:
            snapshot_download(self.repo_id, repo_type="dataset", revision=revision, local_dir=str(tmp))
            tmp.rename(folder)
        except Exception as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise FreshStackError(f"could not download {self.repo_id} at {revision} into {folder}: {exc}") from exc
        return folder

    def location(self, date: str) -> str:
        return f"{self.repo_id}@{date}"

    def check_publishable(self) -> None:
        if not os.environ.get("HF_TOKEN"):
            raise FreshStackError(
                f"publishing to {self.repo_id} needs a Hugging Face token: set HF_TOKEN to a token with write access "
                "(https://huggingface.co/settings/tokens), or use --dry-run; nothing was built"
            )

    def publish(self, staged: Path, date: str, message: str) -> str:
        """The same commit-and-tag as `freshstack-hf publish REPO@DATE --repo-id ID`; the folder then becomes the
        local mirror's revision."""
        url = publish(plan_publish(staged, self.repo_id, private=self.private, tag=date, message=message), staged)
        mirror = revision_folder(self.base, date)
        if not mirror.exists():
            staged.rename(mirror)
        return url


def names_hub_dataset(repo: str, path: Path) -> bool:
    """Whether `repo`, a folder at `path` if it were one, names a Hub dataset: it reads `ORG/NAME` and no local
    repo `ORG/NAME` nor folder `ORG` is there (the rule of `--repo`, and of a definition's `private_repo`)."""
    return bool(HUB_ID.match(repo)) and not is_local(path) and not path.parent.is_dir()


def open_target(repo: str, out: str | None = None) -> Target:
    """`--repo`: a Hub id `ORG/NAME` (no local folder `ORG` or `ORG/NAME`), else a local dataset repo folder."""
    path = Path(repo).expanduser()
    if not names_hub_dataset(repo, path):
        if out:
            raise FreshStackError(f"--out is for a Hub --repo; {repo} is a local folder, its revisions sit beside it")
        return LocalTarget(path)
    return HubTarget(repo, Path(out or repo.split("/", 1)[1]).expanduser())
