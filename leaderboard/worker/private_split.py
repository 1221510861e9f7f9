"""The private split a worker reads for live scores (`leaderboard.live_scores`): the revision of the private repo
that holds the embargoed questions of the snapshot a job is scored on.

`freshstack-hf worker --private-repo REPO` (or $FRESHSTACK_PRIVATE_REPO) names the private repo: a local folder
whose `REPO@DATE` revisions a refresh or `build --snapshot` wrote, or a private Hub dataset tagged by date. A job's
snapshot is the date its dataset revision is named by (the served folder `freshstack@DATE`, or the tag the board
was started on, as the Over time view labels it); the private revision read is the one at that date, and its
manifest must name that date as its public revision (`public.revision`, which a refresh's `publish_private` writes,
else each topic's `embargo.public_revision`, which `build --snapshot` writes).

The read is `Dataset(REPO, DATE)`, what `freshstack-hf evaluate REPO --revision DATE` runs for a user with a
network: a Hub dataset is downloaded by `huggingface_hub` with the token in HF_TOKEN, after the Hub is asked
whether the repo is still private (`freshstack_hf.publish.reported_public`): one made public since, or whose
visibility cannot be learnt, is not read (the row says there was no access, the log says why), since anyone may
have read it. It happens in the worker's own process (`worker.run_job`), and the job process is never handed the
revision: only a folder of what ranking needs (`worker.live_pass`). A worker that cannot read the repo (none
named, no token, no permission, the Hub unreachable) gives its jobs the status "not measured: no access to the
private split", which the row records instead of a number; a worker with no repo named, on a snapshot whose public
revision embargoes nothing (its manifest's per-topic `embargo` summary), records nothing live at all. What it
logs of a private revision it could not read is the error's type and counts, never its message: a validation
problem names query ids.

A job whose submitter had used up its live scorings when it submitted (`submission.submitter.BaseSubmitter.live_quota`)
carries that decision in its payload (`DECIDED`): it is handed that status as it is, and the private split is not
read for it.

`--live-runs DIR` (or $FRESHSTACK_LIVE_RUNS; default: none kept) keeps each live-scored job's ranking of the
embargoed questions as one TREC run, `DIR/SNAPSHOT/system-<id>-job-<id>.trec` (`kept_run_path`), which
`freshstack-hf evaluate REPO --revision SNAPSHOT --run FILE` scores to the row's live numbers before their
rounding: the way an operator checks a live score. It names embargoed query ids, so it stays on the worker's disk
(each snapshot's folder of it readable by its owner alone) and goes nowhere else: not to the store, its blobs, the
archive or the log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.publish import reported_public
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.layout import MANIFEST
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import is_date, is_local, list_revisions, revision_of
from leaderboard.live_scores import DECIDED, NO_ACCESS, NONE_HELD, status

log = logging.getLogger(__name__)

PRIVATE_REPO_ENV = "FRESHSTACK_PRIVATE_REPO"
LIVE_RUNS_ENV = "FRESHSTACK_LIVE_RUNS"
PRIVATE = "private_split"  # the payload key under which a live-scored job finds its job folder or a live status


def job_snapshot(payload: Mapping[str, Any]) -> str:
    """The dated snapshot a queued job is scored on ("" when its revision is not one): the date the served folder's
    name carries (`freshstack@2025-10-31`), else the revision the board was asked for (a Hub tag)."""
    named = str(payload.get("dataset") or "")
    found = revision_of(named) if named and Path(named).is_absolute() else ""
    found = found or str(payload.get("requested_revision") or "")
    return found if is_date(found) else ""


def _missing_revision(repo: str, date: str, exc: FreshStackError) -> bool:
    """Whether a failed read means the repo is readable and has no revision at `date` (nothing embargoed then)."""
    if is_local(repo):
        return date not in list_revisions(repo)
    return type(exc.__cause__).__name__ == "RevisionNotFoundError"


def public_revision(manifest: Mapping[str, Any]) -> str:
    """The public revision a private revision belongs to, as its manifest names it ("" when it names none or
    several)."""
    named = (manifest.get("public") or {}).get("revision")
    if named:
        return str(named)
    found = {
        str((entry.get("embargo") or {}).get("public_revision") or "") for entry in manifest.get("topics", {}).values()
    }
    return found.pop() if len(found) == 1 else ""


def _described(exc: BaseException) -> str:
    """What a log line may say of a failed read of a private revision: the error's type and counts, never its
    message (a validation problem names the embargoed query ids)."""
    problems = getattr(exc, "problems", None)
    return f"{type(exc).__name__}, {len(problems)} problem(s)" if isinstance(problems, list) else type(exc).__name__


def _public_manifest(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manifest of the public revision a job is scored on (None when this machine cannot read it): the folder
    the payload names, or the Hub's file at the commit the board serves."""
    named = str(payload.get("dataset") or "")
    try:
        if named and Path(named).is_absolute():
            return read_manifest(Path(named)) if Path(named).is_dir() else None
        if named:
            from huggingface_hub import hf_hub_download

            revision = payload.get("dataset_revision") or None
            return read_manifest(Path(hf_hub_download(named, MANIFEST, repo_type="dataset", revision=revision)).parent)
    except Exception:  # unreachable Hub, unreadable file: whether it embargoes anything is unknown
        return None
    return None


def public_topics(payload: Mapping[str, Any]) -> list[str] | None:
    """The topics a job is scored on: those its payload names, else the public revision's (None: unknown here)."""
    if payload.get("topics"):
        return list(payload["topics"])
    found = list((_public_manifest(payload) or {}).get("topics") or {})
    return found or None


def embargoes(payload: Mapping[str, Any]) -> bool:
    """Whether the public revision a job is scored on embargoes any question of its topics (the manifest's per-topic
    `embargo` summary counts more than 0); True when that cannot be read, so the row still says there was no access."""
    manifest = _public_manifest(payload)
    if manifest is None:
        return True
    entries = manifest.get("topics") or {}
    topics = payload.get("topics") or list(entries)
    return any(int(((entries.get(name) or {}).get("embargo") or {}).get("questions") or 0) > 0 for name in topics)


def private_split(repo: str | None, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the worker read for a live-scored job: {"folder": the private revision's local folder, "snapshot"}, a
    live status ({"status", "message"}) saying why there is nothing to score, or None when nothing live is to be
    recorded (no repo named, and the public revision embargoes nothing). See the module docstring."""
    repo = repo or os.environ.get(PRIVATE_REPO_ENV) or None
    snapshot = job_snapshot(payload)
    decided = payload.get(DECIDED)
    if isinstance(decided, Mapping) and decided.get("status"):  # its status and message only: never a folder
        return status((str(decided["status"]), str(decided.get("message") or "")), snapshot)
    if not repo:
        return status(NO_ACCESS, snapshot) if snapshot and embargoes(payload) else None
    if not snapshot:
        return status(NONE_HELD)  # a revision that is not a dated snapshot has no embargo
    if not is_local(repo) and (reason := reported_public(repo)):
        log.warning("live scores: %s is not read (%s)", repo, reason.split(";")[0])
        return status(NO_ACCESS, snapshot)
    try:
        private = Dataset(repo, snapshot)
        public = public_revision(read_manifest(Path(private.folder)))
    except Exception as exc:  # any failure to read is no access: the job still scores the public split
        if isinstance(exc, FreshStackError) and _missing_revision(repo, snapshot, exc):
            return status(NONE_HELD, snapshot)
        log.warning("live scores: the private repo %s could not be read at %s (%s)", repo, snapshot, _described(exc))
        return status(NO_ACCESS, snapshot)
    if public != snapshot:
        log.warning(
            "live scores: %s at %s names the public revision %r, not %s: not used", repo, snapshot, public, snapshot
        )
        return status(NO_ACCESS, snapshot)
    return {"folder": str(private.folder), "snapshot": snapshot}


def live_runs_folder(folder: str | os.PathLike[str] | None) -> Path | None:
    """The folder live rankings are kept in (`folder`, else $FRESHSTACK_LIVE_RUNS; None: none kept), made now
    (readable by its owner alone when this makes it; each snapshot's folder in it always is, `keep_ranking`):
    refused with the fix when it cannot be written, before any job is claimed, rather than a job finding out after
    scoring."""
    named = folder or os.environ.get(LIVE_RUNS_ENV) or None
    if named is None:
        return None
    found = Path(named).expanduser().resolve()
    try:
        found.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise FreshStackError(
            f"--live-runs {named}: the folder cannot be made ({exc.strerror or exc}); name a folder this worker's "
            "user can write, or leave the option out to keep no live ranking"
        ) from exc
    if not os.access(found, os.W_OK | os.X_OK):
        raise FreshStackError(
            f"--live-runs {named}: this worker's user cannot write there; name a folder it can write, or leave the "
            "option out to keep no live ranking"
        )
    return found


def kept_run_path(folder: str | os.PathLike[str], snapshot: str, system_id: int, job_id: int) -> Path:
    """Where a job keeps its live ranking: by snapshot (the `--revision` to evaluate it at), then by the row it
    scored (`Store.live_scores` is keyed by system id) and the job that ran it (a row scored again keeps both)."""
    return Path(folder) / snapshot / f"system-{system_id}-job-{job_id}.trec"
