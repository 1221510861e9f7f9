"""Write deterministic synthetic topics with FreshStack's shapes into a dataset repo (for tests and benchmarks).

Example:
  freshstack-hf synth out/freshstack --topics langchain,yolo --queries 50 --docs 5000 --seed 0
  python -c "from datasets import load_dataset; print(load_dataset('out/freshstack', 'langchain'))"
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli.common import plural, split_list, timed, write_json
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.samples.synth import SynthConfig, synth_topic
from freshstack_hf.split_stats import topic_stats
from freshstack_hf.topic import check_topic_name


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", help="dataset repo folder to create or update (other topics in it are kept)")
    p.add_argument("--topics", default="synthetic", help="comma-separated topic names (default: synthetic)")
    p.add_argument("--queries", type=int, default=20, help="queries per topic (default: 20)")
    p.add_argument("--docs", type=int, default=2000, help="corpus documents per topic (default: 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed; same seed, same bytes (default: 0)")
    p.add_argument("--doc-words", type=float, default=100.0, help="median document length in words (default: 100)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    if args.queries < 1 or args.docs < 1 or args.doc_words < 1:
        raise FreshStackError("--queries, --docs and --doc-words must be at least 1")
    names = [check_topic_name(t) for t in split_list(args.topics, "topic")]
    report = {}
    with timed() as total:
        topics = []
        for name in names:
            with timed() as t:
                cfg = SynthConfig(queries=args.queries, docs=args.docs, seed=args.seed, doc_words=args.doc_words)
                topic = synth_topic(name, cfg)
            topics.append(topic)
            s = topic_stats(topic)
            report[name] = {
                "queries": s.queries,
                "docs": s.corpus,
                "nuggets": s.nuggets,
                "judgments": s.judgments,
                "generate_seconds": round(t["seconds"], 3),
            }
        source = {
            "kind": "synthetic",
            "seed": args.seed,
            "queries": args.queries,
            "docs": args.docs,
            "doc_words": args.doc_words,
        }
        write_topics(args.out, topics, source=source)
    if args.json:
        write_json({"out": args.out, "topics": report, "seconds": round(total["seconds"], 3)}, "-")
        return 0
    for name, r in report.items():
        counts = [plural(r["queries"], "query", "queries"), plural(r["docs"], "doc"), plural(r["nuggets"], "nugget")]
        print(f"{name}: {', '.join(counts)}, {plural(r['judgments'], 'judgment')}")
    print(f"wrote {args.out} in {total['seconds']:.1f} s")
    return 0
