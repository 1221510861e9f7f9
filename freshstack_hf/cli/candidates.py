"""Compute BM25 top-500, dense top-500 and RRF-hybrid top-100 candidate lists and write them into the repo.

Writes configs `T-bm25`, `T-dense`, `T-top_ranked` (and the cross-topic views `bm25`, `dense`,
`reranking_hybrid`), records models, parameters, timings and the safeguard count in manifest.json, and adds a
candidate-quality table to the card. Each topic is committed when done; `--resume` skips finished topics.

Example:
  freshstack-hf candidates out/freshstack --topic all
  freshstack-hf candidates out/freshstack --topic langchain --dense-model path/to/sentence-transformers-model
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from freshstack_hf.baselines.candidates import QUALITY_MEASURES, build_candidates
from freshstack_hf.cli.common import add_repo_argument, plural, print_records, resolve_topics


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p)
    p.add_argument("--dense-model", default="", help="sentence-transformers name or path (default: packaged MiniLM)")
    p.add_argument("--cache-dir", default=None, help="embedding cache (default: $FRESHSTACK_CACHE or ~/.cache)")
    p.add_argument("--resume", action="store_true", help="skip topics that already have candidates")
    p.add_argument("--progress", action="store_true", help="show progress bars")
    p.add_argument("--json", action="store_true", help="print the manifest records as JSON")


def run(args: argparse.Namespace) -> int:
    topics = resolve_topics(args.repo, args.topic)
    records = build_candidates(
        args.repo,
        topics,
        dense_model=args.dense_model,
        cache_dir=args.cache_dir,
        skip_done=args.resume,
        show_progress=args.progress,
    )

    def lines(name: str, rec: dict[str, Any]) -> Iterator[str]:
        yield (
            f"{name}: bm25 {rec['bm25']['seconds']}, dense {rec['dense']['seconds']} "
            f"(encoded {rec['dense']['params']['encoded']:,}, cached {rec['dense']['params']['cached']:,}), "
            f"safeguarded {plural(rec['safeguard']['queries'], 'query', 'queries')}"
        )
        yield f"  {'list':<14}" + "".join(f"{m:>15}" for m in QUALITY_MEASURES)
        for lst, metrics in rec["quality"].items():
            yield f"  {lst:<14}" + "".join(f"{metrics[m]:>15.3f}" for m in QUALITY_MEASURES)

    print_records(records, args.json, lines)
    if not args.json:
        print(f"wrote candidates for {plural(len(records), 'topic')} into {args.repo}")
    return 0
