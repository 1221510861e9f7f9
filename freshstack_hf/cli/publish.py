"""Publish a dataset repo folder to the Hugging Face Hub as one commit (token from HF_TOKEN).

The folder is validated first and refused if it has problems. `--dry-run` lists every file with its size and
the commit message, and needs no token and no network. A leaderboard's export (`freshstack-hf admin export`, a
folder with board.json) is checked as an export instead; a full backup is published with --private only, an
export made with --public is a public results dataset.

Example:
  freshstack-hf publish out/freshstack --repo-id me/freshstack --dry-run
  HF_TOKEN=hf_... freshstack-hf publish out/freshstack --repo-id me/freshstack --revision v1 --private
  HF_TOKEN=hf_... freshstack-hf publish out/freshstack@2025-10-31 --repo-id me/freshstack   # tagged 2025-10-31
  freshstack-hf publish out/board-results --repo-id me/freshstack-board --dry-run           # admin export --public

A dated snapshot folder (OUT@DATE, written by `build --snapshot DATE`) is committed whole and its commit tagged
DATE, so `load_dataset("me/freshstack", "langchain", revision="2025-10-31")` reads it; publish the snapshots
oldest first.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from freshstack_hf.cli.common import add_repo_argument, plural, write_json
from freshstack_hf.publish import plan_publish, publish


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, topics=None)
    p.add_argument("--repo-id", required=True, help="Hub dataset id, ORG/NAME")
    p.add_argument("--revision", default=None, help="branch to commit to (created if missing; default main)")
    p.add_argument(
        "--tag", default=None, help="tag the commit (default: the folder's revision, DIR@REV -> REV; '' for none)"
    )
    p.add_argument("--private", action="store_true", help="create the Hub repo as private")
    p.add_argument("--message", default=None, help="commit message")
    p.add_argument("--dry-run", action="store_true", help="list files and the commit message; send nothing")
    p.add_argument("--json", action="store_true", help="print the plan or result as JSON")


def run(args: argparse.Namespace) -> int:
    plan = plan_publish(Path(args.repo), args.repo_id, args.revision, args.private, args.message, args.tag)
    if args.dry_run:
        if args.json:
            write_json(
                {
                    "repo_id": plan.repo_id,
                    "revision": plan.revision,
                    "tag": plan.tag,
                    "private": plan.private,
                    "commit_message": plan.commit_message,
                    "files": [{"path": p, "bytes": s} for p, s in plan.files],
                },
                "-",
            )
            return 0
        print(
            f"dry run: would commit to dataset {plan.repo_id} (revision {plan.revision}"
            f"{', private' if plan.private else ''})" + (f" and tag the commit {plan.tag}" if plan.tag else "")
        )
        print(f"commit message: {plan.commit_message}")
        for path, size in plan.files:
            print(f"  {size:>12,}  {path}")
        print(f"{plural(len(plan.files), 'file')}, {plural(plan.total_bytes, 'byte')}")
        return 0
    url = publish(plan, Path(args.repo))
    if args.json:
        write_json({"repo_id": plan.repo_id, "commit": url}, "-")
    else:
        print(f"published {args.repo} to {plan.repo_id}: {url}")
    return 0
