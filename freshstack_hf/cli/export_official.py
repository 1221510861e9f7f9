"""Write a topic back in the official release schema (queries.parquet and corpus.parquet).

Example:
  freshstack-hf export-official out/freshstack --topic langchain --out official/langchain
"""

from __future__ import annotations

import argparse

NAME = "export-official"
HELP = "export a topic in the official release schema"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", help="dataset repo folder")
    p.add_argument("--topic", required=True, help="topic to export")
    p.add_argument("--out", required=True, help="folder for queries.parquet and corpus.parquet")


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.official import export_official

    q, c = export_official(args.repo, args.topic, args.out)
    print(f"wrote {q} and {c}")
    return 0
