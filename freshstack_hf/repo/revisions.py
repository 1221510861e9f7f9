"""Named revisions of a local dataset repo: frozen sibling folders `NAME@REVISION`, the local form of a Hub tag.

On the Hub a dated snapshot (`2025-10-31`) or a filled qrels revision is a tag of the one dataset repo, and
`load_dataset("ORG/freshstack", "langchain", revision="2025-10-31")` reads it. A folder has no tags, and
`datasets` ignores `revision=` for a folder, so each revision is written whole beside the repo
(`freshstack@2025-10-31/`): `load_dataset("freshstack@2025-10-31", "langchain")` reads it as is, and every loader
of this project (`evaluate --revision`, `FRESHSTACK_REVISION` for MTEB and ir_datasets, the leaderboard's
`--revision`) maps `(freshstack, 2025-10-31)` to that folder. A revision folder is written once and never
rewritten, which is what keeps every number published from it reproducible; `publish --tag` uploads one and
tags the Hub commit with its name.

A *dated snapshot* is a revision named by a real calendar date (`2025-10-31`, what `refresh` and `build --snapshot`
write); other revisions (`2025-10-31.fill1`) are not snapshots. `dated_revisions` is the one listing of them, for
a local repo and for a Hub dataset alike: the refresh reads it to find its previous snapshot, the board's Over time
view to draw one point per snapshot.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.manifest import read_manifest  # heavy: its layout imports pyarrow; naming stays light

SEPARATOR = "@"
CONTENT_REVISION = "local-"  # what results record for a folder (`repo.reader.local_revision`)
# What a git tag and a folder name both accept: dates (2025-10-31), dotted suffixes (2025-10-31.fill1).
REVISION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_revision(name: str, what: str = "revision") -> str:
    if not REVISION_RE.match(name) or ".." in name or name.endswith((".", ".lock")):
        raise FreshStackError(
            f"invalid {what} {name!r}: letters, digits, '.', '_' and '-' only (a date like 2025-10-31 works)"
        )
    return name


def base_repo(folder: str | Path) -> Path:
    """`freshstack@2025-10-31` -> `freshstack`; a folder without a revision is its own base."""
    path = Path(folder)
    return path.with_name(path.name.split(SEPARATOR, 1)[0])


def revision_of(folder: str | Path) -> str:
    """The revision a folder's name carries ("" for the working repo)."""
    name = Path(folder).name
    return name.split(SEPARATOR, 1)[1] if SEPARATOR in name else ""


def revision_folder(repo: str | Path, revision: str) -> Path:
    """Where revision `revision` of the local repo `repo` lives (whether or not it exists yet)."""
    check_revision(revision)
    return base_repo(repo).with_name(f"{base_repo(repo).name}{SEPARATOR}{revision}")


def list_revisions(repo: str | Path) -> list[str]:
    """The revisions written beside `repo`, sorted (dates sort in time order)."""
    base = base_repo(repo)
    if not base.parent.is_dir():
        return []
    prefix = base.name + SEPARATOR
    return sorted(p.name[len(prefix) :] for p in base.parent.iterdir() if p.is_dir() and p.name.startswith(prefix))


def is_local(repo: str | Path) -> bool:
    """A folder, or a name whose dated revisions are folders beside it (a snapshot build writes only those)."""
    path = Path(repo).expanduser()
    return path.is_dir() or bool(list_revisions(path))


def open_revision(repo: str | Path, revision: str | None) -> Path:
    """The folder holding `revision` of local repo `repo` (`repo` itself when no revision is asked)."""
    path = Path(repo).expanduser()
    if not revision or revision_of(path) == revision or revision.startswith(CONTENT_REVISION):
        return path  # a content revision (`local-<hash>`) names this folder's data, not a sibling
    folder = revision_folder(path, revision)
    if not folder.is_dir():
        known = list_revisions(path)
        raise FreshStackError(
            f"{path}: no revision {revision!r} (looked for the folder {folder}); "
            + (
                f"its revisions: {', '.join(known)}"
                if known
                else "it has no dated revisions; build one with `freshstack-hf build TOPIC.yaml --snapshot DATE`"
            )
        )
    return folder


def is_date(name: str) -> bool:
    """Whether a revision name is a dated snapshot's: `YYYY-MM-DD` and a real calendar day (2025-13-45 is not)."""
    try:
        return len(name) == 10 and date.fromisoformat(name).isoformat() == name
    except ValueError:
        return False


def dated_revisions(repo: str | Path, *, hub: bool = False) -> list[str]:
    """The dated snapshots of a dataset repo, oldest first: the folders `REPO@DATE` beside a local repo, or the tags
    of the Hub dataset `repo` (`hub=True`) named by a date, as `refresh` publishes them. A Hub dataset that does
    not exist yet has none; one that cannot be asked (network, token, offline mode) raises `FreshStackError`,
    which a reader that can do without (the board: it serves the revision it has) catches."""
    if not hub:
        return [name for name in list_revisions(repo) if is_date(name)]
    repo_id = str(repo)
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.utils import RepositoryNotFoundError

        try:
            refs = HfApi(token=os.environ.get("HF_TOKEN") or None).list_repo_refs(repo_id, repo_type="dataset")
        except RepositoryNotFoundError:
            return []  # the first refresh creates it
        return sorted(tag.name for tag in refs.tags if is_date(tag.name))
    except Exception as exc:  # network, auth, offline mode, no huggingface_hub: the caller's to decide
        raise FreshStackError(
            f"could not list the revisions of {repo_id} on the Hub ({exc}); check the id, HF_TOKEN and the network"
        ) from exc


def previous_revision(repo: str | Path, topic: str, date: str) -> Path | None:
    """The latest dated snapshot of local `repo` before `date` that holds `topic`: the one whose questions a snapshot
    at `date` carries over."""

    for name in reversed(dated_revisions(repo)):
        if name < date:
            folder = revision_folder(repo, name)
            if topic in read_manifest(folder).get("topics", {}):
                return folder
    return None
