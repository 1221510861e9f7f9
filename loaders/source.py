"""Which dataset repo the loaders read, decided in one place so MTEB, ir_datasets and `datasets` agree.

`FRESHSTACK_DATASET` names a local folder or a Hub id; unset, it is the published repo, read at a pinned
revision so a score computed today can be reproduced after the repo gains topics or fixes.
`FRESHSTACK_REVISION` overrides the revision of a Hub repo; for a local folder it picks the dated sibling folder
(`freshstack@2025-10-31`, see `freshstack_hf.repo.revisions`). A local folder has no commit, so it is identified
by a hash of its data files (their paths and bytes; not the manifest, whose timestamps change with every
rebuild of the same data): results say which data they were computed on (the rule is
`freshstack_hf.repo.dataset.dataset_revision`'s).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf import list_topics
from freshstack_hf.repo.dataset import dataset_revision
from freshstack_hf.repo.revisions import is_local, open_revision

# The published dataset repo and the revision the loaders pin. Update both together when publishing a new
# version: results computed with another revision say so in their metadata.
PUBLISHED_DATASET = "freshstack-hf/freshstack"
PUBLISHED_REVISION = "v1"
# Topics of the published revision: known without a download, so listing or filtering tasks costs nothing.
PUBLISHED_TOPICS = ("langchain", "yolo", "laravel", "angular", "godot")

ENV_DATASET = "FRESHSTACK_DATASET"
ENV_REVISION = "FRESHSTACK_REVISION"


@dataclass(frozen=True, slots=True)
class DatasetSource:
    """A dataset repo as the loaders see it: where it is, which revision, and whether it is a local folder."""

    location: str
    revision: str | None

    @property
    def is_local(self) -> bool:
        return Path(self.location).expanduser().is_dir()

    @property
    def is_published(self) -> bool:
        return self.location == PUBLISHED_DATASET and self.revision == PUBLISHED_REVISION

    def metadata_revision(self) -> str:
        """The revision an mteb task's metadata names: what the loader reads, known without a download.

        For a local folder it is the recorded revision (`freshstack_hf.repo.dataset.dataset_revision`, the one
        rule); for a Hub id not yet fetched, the pinned revision to load (results record the commit later).
        """
        if not self.is_local:
            return self.revision or "main"

        return dataset_revision(Path(self.location).expanduser())

    def topics(self) -> list[str]:
        """Topics of the repo; the published revision's list is known without reading anything."""
        if self.is_published:
            return list(PUBLISHED_TOPICS)

        return list_topics(self.location, self.revision)


def dataset_source(location: str | os.PathLike[str] | None = None, revision: str | None = None) -> DatasetSource:
    """The repo to read: `location` if given, else FRESHSTACK_DATASET, else the published repo (pinned)."""
    chosen = os.fspath(location) if location is not None else os.environ.get(ENV_DATASET, "").strip()
    chosen = chosen or PUBLISHED_DATASET
    pinned = revision or os.environ.get(ENV_REVISION, "").strip() or None

    local = Path(chosen).expanduser()
    if is_local(local):  # a folder's revision is its `@REV` sibling folder
        return DatasetSource(str(open_revision(local, pinned).resolve()), None)
    if pinned is None and chosen == PUBLISHED_DATASET:
        pinned = PUBLISHED_REVISION
    return DatasetSource(chosen, pinned)
