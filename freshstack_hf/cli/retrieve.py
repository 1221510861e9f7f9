"""Run a baseline retriever (BM25, dense or RRF hybrid) on topics and write a TREC run for `evaluate`.

Example:
  freshstack-hf retrieve out/freshstack --topic langchain --method bm25 --out runs/bm25.trec
  freshstack-hf retrieve out/freshstack --topic all --method dense --model path/to/model --out runs/dense.trec
  freshstack-hf evaluate out/freshstack --topic all --run runs/dense.trec
"""

from __future__ import annotations

import argparse
import math

from freshstack_hf import load_topic
from freshstack_hf.baselines.registry import CROSS_ENCODER, METHODS, needs, run_method
from freshstack_hf.cli.common import add_repo_argument, plural, resolve_topics, timed
from freshstack_hf.runs import write_run


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, hub=True)
    offered = [name for name in METHODS if CROSS_ENCODER not in needs([name])]  # no cross-encoder flag here
    p.add_argument("--method", required=True, choices=offered, help="retriever (the registered methods)")
    p.add_argument("--model", default="", help="dense model name or path (default: packaged MiniLM)")
    p.add_argument("--k", type=int, default=None, help="depth (default 500; hybrid 100)")
    p.add_argument("--cache-dir", default=None, help="embedding cache (default: $FRESHSTACK_CACHE or ~/.cache)")
    p.add_argument("--out", required=True, help="run file to write (.trec, or .json)")
    p.add_argument("--progress", action="store_true", help="show progress bars")


def run(args: argparse.Namespace) -> int:
    merged: dict[str, dict[str, float]] = {}
    for name in resolve_topics(args.repo, args.topic, args.revision):
        kw = {"show_progress": args.progress, "cache_dir": args.cache_dir}  # the cache serves dense methods only
        topic = load_topic(args.repo, name, args.revision)
        # wall time of the whole retrieval (model loading, encoding, search, fusion): the method's own
        # timings leave parts out (a hybrid records only its fusion step)
        with timed() as took:
            result = run_method(topic, args.method, model=args.model, k=args.k, **kw)
        merged.update(result.as_scores())
        queries = plural(len(result.run), "query", "queries")
        print(f"{name}: {args.method} over {queries} in {math.ceil(took['seconds'] * 10) / 10:.1f} s")  # never less
    write_run(merged, args.out, tag=f"freshstack-hf-{args.method}")
    print(f"wrote {args.out}")
    return 0
