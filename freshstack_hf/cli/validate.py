"""Check a dataset repo: card and manifest, schemas, ids, nuggets, judgments and derived configs.

Every problem is reported at once (first 20 shown, total counted), each naming config, row and value.
Exit code 0 when valid, 2 when problems were found.

Example:
  freshstack-hf validate out/freshstack
  freshstack-hf validate out/freshstack --topic langchain --json
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli.common import add_repo_argument, require_repo_folder, resolve_topics, write_json
from freshstack_hf.errors import ValidationError
from freshstack_hf.repo.check import validate_repo


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p)
    p.add_argument("--json", action="store_true", help="print problems as JSON")


def run(args: argparse.Namespace) -> int:
    repo = require_repo_folder(args.repo)
    topics = resolve_topics(args.repo, args.topic)
    problems = validate_repo(repo, topics)
    if args.json:
        write_json(
            {
                "valid": not problems,
                "problems": [{"where": p.where, "row": p.row, "message": p.message, "fix": p.fix} for p in problems],
            },
            "-",
        )
        return 2 if problems else 0
    if problems:
        raise ValidationError(problems, f"{args.repo} is not valid")
    print(f"{args.repo}: valid ({', '.join(topics)})")
    return 0
