"""Write a Nano subset of a dataset repo: up to 200 queries and 10,000 docs per topic, for quick CPU evaluation.

Kept documents: all judged docs of the kept queries, then candidate-list docs (run `candidates` first for hard
negatives), then random distractors. The Nano repo's card says how it was sampled.

Example:
  freshstack-hf nano out/freshstack --out out/nano/freshstack
  freshstack-hf nano out/freshstack --out out/nano/freshstack --topic langchain --max-docs 5000 --seed 1
"""

from __future__ import annotations

import argparse
from typing import Any

from freshstack_hf.cli.common import add_repo_argument, print_records, resolve_topics
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.reader import resolve_repo
from freshstack_hf.samples.nano import build_nano


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, hub=True)
    p.add_argument("--out", required=True, help="folder of the Nano dataset repo to write")
    p.add_argument("--max-queries", type=int, default=200, help="queries kept per topic (default 200)")
    p.add_argument("--max-docs", type=int, default=10_000, help="documents kept per topic (default 10,000)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the sampling record as JSON")


def run(args: argparse.Namespace) -> int:
    if args.max_queries < 1 or args.max_docs < 1:
        raise FreshStackError("--max-queries and --max-docs must be at least 1")

    topics = resolve_topics(args.repo, args.topic, args.revision)
    records = build_nano(
        resolve_repo(args.repo, args.revision, topics),
        args.out,
        topics=topics,
        max_queries=args.max_queries,
        max_docs=args.max_docs,
        seed=args.seed,
    )

    def line(name: str, r: dict[str, Any]) -> list[str]:
        docs = f"{r['docs']:,}/{r['docs_in_full_topic']:,} docs"
        kinds = f"{r['judged_docs']:,} judged, {r['candidate_docs']:,} candidates, {r['random_distractors']:,} random"
        return [f"{name}: {r['queries']}/{r['queries_in_full_topic']} queries, {docs} ({kinds})"]

    print_records(records, args.json, line)
    if not args.json:
        print(f"wrote {args.out}")
    return 0
