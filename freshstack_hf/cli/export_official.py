"""Write a topic back in the official release schema (queries.parquet and corpus.parquet).

Example:
  freshstack-hf export-official out/freshstack --topic langchain --out official/langchain
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli.common import add_repo_argument
from freshstack_hf.repo.official import export_official


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, topics="one")
    p.add_argument("--out", required=True, help="folder for queries.parquet and corpus.parquet")


def run(args: argparse.Namespace) -> int:
    q, c = export_official(args.repo, args.topic, args.out)
    print(f"wrote {q} and {c}")
    return 0
