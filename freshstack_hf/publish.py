"""Publishing a dataset repo folder to the Hugging Face Hub in one commit.

A repo that fails validation is refused before any network call; `dry_run` lists what would be sent and needs
neither a token nor a network. Two kinds of folder are published: a topic repo (`freshstack-hf build`), validated
as one, and a leaderboard's export (`freshstack-hf admin export`, told apart by its `board.json`), checked as an
export (`repo.board_folder`: its files and their row counts). A full export names submitters by IP address and
holds every blob, so it goes to a private repo only; an export made with `--public` is a public results dataset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.repo.board_folder import is_board_folder, read_board_folder
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import check_revision, revision_of

REPO_ID_HELP = "use ORG/NAME, e.g. me/freshstack"


@dataclass(frozen=True)
class PublishPlan:
    repo_id: str
    revision: str
    private: bool
    files: list[tuple[str, int]]  # (path in repo, size in bytes)
    commit_message: str
    tag: str = ""  # a dated revision (`freshstack@2025-10-31` -> tag `2025-10-31`): the commit is tagged with it

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def plan_publish(
    folder: Path,
    repo_id: str,
    revision: str | None = None,
    private: bool = False,
    message: str | None = None,
    tag: str | None = None,
) -> PublishPlan:
    """What `publish` would send. A revision folder (`NAME@REV`, see `repo.revisions`) is tagged `REV` unless
    `tag` says otherwise ("" for no tag): on the Hub, `load_dataset(ID, topic, revision=REV)` then reads it."""
    folder = Path(folder)
    tag = revision_of(folder) if tag is None else tag
    if tag:
        check_revision(tag, "--tag")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise FreshStackError(f"invalid --repo-id {repo_id!r}: {REPO_ID_HELP}")
    if not folder.is_dir():
        raise FreshStackError(
            f"{folder}: no such folder; give a dataset repo folder (one written by `freshstack-hf build TOPIC.yaml`, "
            "`freshstack-hf demo` or `freshstack-hf synth`)"
        )
    if is_board_folder(folder):
        what = _board_export(folder, private)
    else:
        problems = validate_repo(folder)
        if problems:
            raise ValidationError(problems, f"refusing to publish {folder}: it is not valid")
        what = f"topics {', '.join(sorted(read_manifest(folder)['topics']))}"
    files = sorted(
        (p.relative_to(folder).as_posix(), p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    commit = message or f"freshstack-hf: publish {what}" + (f" (revision {tag})" if tag else "")
    return PublishPlan(repo_id, revision or "main", private, files, commit, tag)


def _board_export(folder: Path, private: bool) -> str:
    """Check a leaderboard's export (files, counts, card) and say what it is; a full backup goes private only."""
    board = read_board_folder(folder)
    rows = {name: entry["rows"] for name, entry in board["configs"].items()}
    if not board["public"] and not private:
        raise FreshStackError(
            f"{folder} is a full backup of a board (identities, IP addresses included, and every stored blob): "
            "publish it with --private, or export a public results dataset (freshstack-hf admin export DIR --public)"
        )
    kind = "public board results" if board["public"] else "board backup"
    return f"{kind} (systems: {rows.get('systems', 0):,}, results: {rows.get('results', 0):,})"


def publish(plan: PublishPlan, folder: Path, token: str | None = None) -> str:
    """Create the repo (and branch) if needed and upload the folder as one commit; returns the commit URL."""
    token = token or os.environ.get("HF_TOKEN")
    if not token:
        raise FreshStackError(
            "no Hugging Face token: set HF_TOKEN to a token with write access "
            "(https://huggingface.co/settings/tokens), or use --dry-run"
        )
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        api.create_repo(plan.repo_id, repo_type="dataset", private=plan.private, exist_ok=True)
        if plan.private and (public := reported_public(plan.repo_id, api)):
            raise FreshStackError(public)
        if plan.revision != "main":
            api.create_branch(plan.repo_id, repo_type="dataset", branch=plan.revision, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(folder),
            repo_id=plan.repo_id,
            repo_type="dataset",
            revision=plan.revision,
            commit_message=plan.commit_message,
            ignore_patterns=[".*", "**/.*"],
            # a tagged revision is the whole repo at that date: files of another revision do not linger in it
            delete_patterns=["*"] if plan.tag else None,
        )
        if plan.tag:
            api.create_tag(
                plan.repo_id,
                tag=plan.tag,
                revision=info.oid,
                repo_type="dataset",
                tag_message=f"freshstack-hf revision {plan.tag}",
            )
    except FreshStackError:
        raise
    except Exception as exc:  # network, auth, permissions: all fixable by the user
        raise FreshStackError(f"publishing to {plan.repo_id} failed: {exc}") from exc
    return str(getattr(info, "commit_url", info))


def reported_public(repo_id: str, api: object | None = None) -> str:
    """Why `repo_id`, meant to be private, must not be written to: the Hub reports it public (an embargoed question
    uploaded there could be read, and trained on, by anyone); "" when it is private or not on the Hub at all (it is
    then created private). `create_repo(..., exist_ok=True)` keeps an existing repo's visibility, so this asks."""
    from huggingface_hub import HfApi
    from huggingface_hub.utils import RepositoryNotFoundError

    api = api or HfApi(token=os.environ.get("HF_TOKEN") or None)
    try:
        info = api.repo_info(repo_id, repo_type="dataset")  # type: ignore[attr-defined]
    except RepositoryNotFoundError:
        return ""
    except Exception as exc:  # network, auth: the visibility is unknown, so nothing private may go there
        return f"could not ask the Hub whether {repo_id} is private ({exc}); check HF_TOKEN and the network"
    if getattr(info, "private", None) is True:
        return ""
    return (
        f"the private repo {repo_id} is public on the Hub, so the embargoed questions written there could be read by "
        f"anyone and the embargo would be void; refused. Make it private (`hf repos settings {repo_id} --repo-type "
        "dataset --private`, or its Settings page on the Hub) or name another `private_repo:`"
    )
