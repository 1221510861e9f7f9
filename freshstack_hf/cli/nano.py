"""Write a Nano subset of a dataset repo: up to 200 queries and 10,000 docs per topic, for quick CPU evaluation.

Kept documents: all judged docs of the kept queries, then candidate-list docs (run `candidates` first for hard
negatives), then random distractors. The Nano repo's card says how it was sampled.

Example:
  freshstack-hf nano out/freshstack --out out/nano/freshstack
  freshstack-hf nano out/freshstack --out out/nano/freshstack --topic langchain --max-docs 5000 --seed 1
"""

from __future__ import annotations

import argparse

NAME = "nano"
HELP = "write a Nano subset (few queries and docs per topic) of a dataset repo"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", help="dataset repo folder (or Hub id)")
    p.add_argument("--out", required=True, help="folder of the Nano dataset repo to write")
    p.add_argument("--topic", default="all", help="topic(s), comma-separated, or 'all' (default)")
    p.add_argument("--max-queries", type=int, default=200, help="queries kept per topic (default 200)")
    p.add_argument("--max-docs", type=int, default=10_000, help="documents kept per topic (default 10,000)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the sampling record as JSON")


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.cli.common import resolve_topics, write_json
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.nano import build_nano

    if args.max_queries < 1 or args.max_docs < 1:
        raise FreshStackError("--max-queries and --max-docs must be at least 1")
    topics = resolve_topics(args.repo, args.topic)
    records = build_nano(
        args.repo, args.out, topics=topics, max_queries=args.max_queries, max_docs=args.max_docs, seed=args.seed
    )
    if args.json:
        write_json(records, "-")
        return 0
    for name, r in records.items():
        print(
            f"{name}: {r['queries']}/{r['queries_in_full_topic']} queries, {r['docs']:,}/"
            f"{r['docs_in_full_topic']:,} docs ({r['judged_docs']:,} judged, {r['candidate_docs']:,} candidates, "
            f"{r['random_distractors']:,} random)"
        )
    print(f"wrote {args.out}")
    return 0
