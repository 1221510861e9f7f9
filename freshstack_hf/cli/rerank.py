"""Rerank the hybrid candidates (`T-top_ranked`) with a sentence-transformers CrossEncoder; write a TREC run.

Run `candidates` first. The first --top-k candidates of each query (50 by default, as in the paper) are
rescored; the rest keep their order below them.

Example:
  freshstack-hf rerank out/freshstack --topic langchain --model path/to/cross-encoder --out runs/rerank.trec
"""

from __future__ import annotations

import argparse

from freshstack_hf import load_candidates, load_topic
from freshstack_hf.cli.common import add_repo_argument, plural, resolve_topics
from freshstack_hf.retrieval.rerank import rerank
from freshstack_hf.runs import write_run


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, hub=True)
    p.add_argument("--model", required=True, help="CrossEncoder name or local path")
    p.add_argument("--top-k", type=int, default=50, help="candidates rescored per query (default 50)")
    p.add_argument("--batch-size", type=int, default=32, help="pairs per batch (default 32)")
    p.add_argument("--out", required=True, help="run file to write (.trec or .json)")
    p.add_argument("--progress", action="store_true", help="show progress bars")


def run(args: argparse.Namespace) -> int:
    merged: dict[str, dict[str, float]] = {}
    for name in resolve_topics(args.repo, args.topic, args.revision):
        topic = load_topic(args.repo, name, args.revision)
        candidates = load_candidates(args.repo, name, "top_ranked", args.revision)
        wanted = {d for ids in candidates.values() for d in ids[: args.top_k]}
        texts = {d.doc_id: d.text for d in topic.docs if d.doc_id in wanted}
        out = rerank(
            args.model,
            {q.query_id: q.text for q in topic.queries},
            candidates,
            texts,
            top_k=args.top_k,
            batch_size=args.batch_size,
            show_progress=args.progress,
        )
        merged.update({q: dict(docs) for q, docs in out.items()})
        print(f"{name}: reranked {plural(len(out), 'query', 'queries')} (top {args.top_k})")
    write_run(merged, args.out, tag="freshstack-hf-rerank")
    print(f"wrote {args.out}")
    return 0
