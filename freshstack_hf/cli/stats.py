"""Print a dataset repo's split statistics (the table its card shows).

Example:
  freshstack-hf stats out/freshstack
  freshstack-hf stats out/freshstack --json
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli.common import add_repo_argument, require_repo_folder, write_json
from freshstack_hf.repo.card import stats_table
from freshstack_hf.repo.manifest import read_manifest


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, topics=None)
    p.add_argument("--json", action="store_true", help="print as JSON")


def run(args: argparse.Namespace) -> int:
    manifest = read_manifest(require_repo_folder(args.repo))
    if args.json:
        write_json({t: e.get("stats", {}) for t, e in manifest["topics"].items()}, "-")
    else:
        print(stats_table(manifest))
    return 0
