"""The main job on the embedded default: build a synthetic topic, validate it, load it with `datasets`, show stats.

Everything runs offline on this machine. The repo lands in OUT/freshstack, so from OUT
`load_dataset("freshstack", "demo")` works exactly as it would for a Hub repo named freshstack.

Example:
  freshstack-hf demo --out demo-out
  cd demo-out && python -c "from datasets import load_dataset; print(load_dataset('freshstack', 'demo'))"
"""

from __future__ import annotations

import argparse

NAME = "demo"
HELP = "run the end-to-end demo on a synthetic topic"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="working folder (default: demo-out)")
    p.add_argument("--topic", default="demo", help="synthetic topic name (default: demo)")
    p.add_argument("--queries", type=int, default=40, help="queries (default: 40)")
    p.add_argument("--docs", type=int, default=4000, help="corpus documents (default: 4000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


def run(args: argparse.Namespace) -> int:
    import contextlib
    import os
    from pathlib import Path

    from freshstack_hf.errors import ValidationError
    from freshstack_hf.repo.card import stats_table
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.manifest import read_manifest
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.synth import SynthConfig, synth_topic

    out = Path(args.out)
    repo = out / "freshstack"
    print(f"[1/3] building synthetic topic {args.topic!r} ({args.queries} queries, {args.docs:,} docs) in {repo}")
    topic = synth_topic(args.topic, SynthConfig(queries=args.queries, docs=args.docs, seed=args.seed))
    write_topics(repo, [topic], source={"kind": "synthetic", "seed": args.seed})
    problems = validate_repo(repo)
    if problems:
        raise ValidationError(problems, f"{repo} is not valid")
    print(f"[2/3] validated {repo}: no problems")

    import datasets

    datasets.disable_progress_bars()
    with contextlib.chdir(out):
        ds = datasets.load_dataset("freshstack", args.topic, split="test")
        corpus = datasets.load_dataset("freshstack", f"{args.topic}-corpus", split="corpus")
    print(
        f"[3/3] load_dataset('freshstack', {args.topic!r}) from {out}{os.sep}: {ds.num_rows} queries, "
        f"columns {ds.column_names}; corpus {corpus.num_rows:,} docs"
    )
    print()
    print(stats_table(read_manifest(repo)))
    print()
    print("next steps:")
    print(f"  freshstack-hf validate {repo}")
    print(f"  freshstack-hf publish {repo} --repo-id me/freshstack --dry-run")
    return 0
