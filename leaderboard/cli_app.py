"""Serve the FreshStack leaderboard: computes the missing baseline rows, then serves the Gradio app.

Baselines (BM25, dense, RRF hybrid; a reranked hybrid with --cross-encoder) are computed once per dataset
revision and stored; a restart finds them and starts at once. Reported figures (--reported, e.g. the official
leaderboard's JSON) are shown in a tab of their own, "Reference (published)", never in the main table, and
never stored. Model submissions are queued for evaluation workers: start some with
`freshstack-hf worker --store URL`, or pass --worker to run one here.

Example:
  freshstack-hf leaderboard --dataset out/freshstack --port 7860
  freshstack-hf leaderboard --dataset out/freshstack --store postgresql://lb@db/leaderboard \\
      --reported freshstack-official-leaderboard.json --max-file-mb 50 --rate-limit 5 --worker
  freshstack-hf leaderboard --dataset out/freshstack --no-baselines --host 0.0.0.0 --port 8080
  freshstack-hf leaderboard --dataset out/freshstack@2025-10-31 --drift drift/drift.json   # + a Drift tab
  freshstack-hf leaderboard --dataset out/freshstack --oauth --admin alice --admin bob   # sign-in, Admin tab

--oauth takes submissions from signed-in Hugging Face users only (their name is their rate-limit identity). On
a Space that is the Space's own sign-in; anywhere else Gradio mocks it: whoever signs in is the account this
machine is logged in to (`hf auth login`), which Gradio asks the Hub about once at start.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

NAME = "leaderboard"
HELP = "serve the Gradio leaderboard (computes baseline rows on first start)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, help="dataset repo folder or Hub id")
    p.add_argument(
        "--revision", help="dataset revision: a Hub tag or commit, or a dated snapshot of a folder (DIR@REVISION)"
    )
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=int, default=7860, help="port (default: %(default)s)")
    p.add_argument("--reported", metavar="PATH", help="official leaderboard JSON, shown in its own Reference tab")
    p.add_argument(
        "--drift",
        action="append",
        default=[],
        metavar="REPORT.json",
        help="a report of `freshstack-hf drift OLD NEW --json`, shown in a Drift tab (repeatable)",
    )
    p.add_argument("--no-baselines", action="store_true", help="do not compute missing baseline rows")
    p.add_argument(
        "--baselines", default="bm25,dense,hybrid", help="baseline methods to compute (default: %(default)s)"
    )
    p.add_argument("--dense-model", help="dense baseline model (default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--cross-encoder", help="cross-encoder for a reranked-hybrid row (local folder or cached id)")
    p.add_argument("--cache-dir", help="embedding cache for the dense baseline (default: $FRESHSTACK_CACHE)")
    p.add_argument("--max-file-mb", type=float, default=20.0, help="upload size cap in MB (default: %(default)s)")
    p.add_argument(
        "--rate-limit", type=int, default=10, help="submissions per hour per identity, 0 = off (default: %(default)s)"
    )
    p.add_argument("--runs-dir", help="archive of runs behind rows and answers to judge (default: <data dir>/runs)")
    p.add_argument(
        "--model-root", action="append", default=[], metavar="DIR", help="accept local model folders under DIR"
    )
    p.add_argument("--oauth", action="store_true", help="require Hugging Face sign-in to submit (on Spaces)")
    p.add_argument(
        "--admin",
        action="append",
        default=[],
        metavar="USER",
        help="a Hugging Face user who sees the Admin tab (hide, unhide, delete; the audit log); needs --oauth",
    )
    p.add_argument("--worker", action="store_true", help="also run one evaluation worker in this process")


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _start_worker(store: Any, dataset: str, archive: Any) -> threading.Event:
    """A worker thread; its jobs run in spawned child processes that drop secret-looking variables."""
    import functools

    from leaderboard.jobs import evaluate_job
    from leaderboard.worker import run_worker

    stop = threading.Event()
    evaluate = functools.partial(evaluate_job, dataset=dataset, archive_dir=str(archive.root))
    thread = threading.Thread(
        target=run_worker,
        args=(store, evaluate),
        kwargs={"stop": stop, "archive": archive},
        name="leaderboard-worker",
        daemon=True,
    )
    thread.start()
    return stop


def run(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.repo.dataset import Dataset
    from leaderboard.archive import RunArchive, runs_dir
    from leaderboard.store import Store
    from leaderboard.tracks.retrieval import drift
    from leaderboard.tracks.retrieval.baseline_rows import compute_baselines
    from leaderboard.tracks.retrieval.published import load_reported

    if args.max_file_mb <= 0 or args.rate_limit < 0:
        raise FreshStackError("--max-file-mb must be > 0 and --rate-limit >= 0")
    if args.admin and not args.oauth:
        raise FreshStackError("--admin needs --oauth: admins are recognised by their Hugging Face sign-in")
    if args.oauth:
        from leaderboard.sign_in import check_sign_in

        _say(f"sign-in: {check_sign_in()}")
    dataset = Dataset(args.dataset, args.revision)  # user errors first, before anything is created
    _say(f"dataset: {dataset.source} ({', '.join(dataset.topics)}; revision {dataset.revision})")
    if args.reported:
        _say(f"reported: {len(load_reported(args.reported))} published rows from {args.reported}")
    for path in args.drift:  # a bad report is a user error before anything is created
        _say(f"drift: {drift.title(drift.load_report(path))} from {path}")
    store = Store(args.store)
    stop = None
    try:
        store.create_all()
        _say(f"store: {store!r}")
        archive = RunArchive(runs_dir(args.runs_dir))
        if not args.no_baselines:
            methods = [m.strip() for m in args.baselines.split(",") if m.strip()]
            compute_baselines(
                store,
                dataset,
                methods=methods,
                model=args.dense_model,
                cross_encoder=args.cross_encoder,
                cache_dir=args.cache_dir,
                archive=archive,
                say=_say,
                show_progress=True,
            )
            from leaderboard.tracks.answers.answer_baselines import compute_answer_baselines
            from leaderboard.tracks.answers.judge_endpoint import JudgeEndpoint

            compute_answer_baselines(  # the Answers tab's extractive row, from the hybrid when it is computed
                store,
                dataset,
                retrieval="hybrid" if "hybrid" in methods else "bm25",
                model=args.dense_model,
                cache_dir=args.cache_dir,
                judge=JudgeEndpoint.from_env(),
                generator=JudgeEndpoint.generator_from_env(),
                archive=archive,
                say=_say,
                show_progress=True,
            )
        from leaderboard.app import build_app, launch_app

        stop = _start_worker(store, str(dataset.folder), archive) if args.worker else None
        demo = build_app(
            dataset,
            store,
            reported_path=args.reported,
            max_file_mb=args.max_file_mb,
            rate_limit=args.rate_limit,
            archive_dir=archive.root,
            model_roots=args.model_root,
            oauth=args.oauth,
            drift_reports=args.drift,
            admins=args.admin,
        )
        print(f"leaderboard: http://{args.host}:{args.port}/", flush=True)
        launch_app(demo, host=args.host, port=args.port, max_file_mb=args.max_file_mb, quiet=True)
    finally:
        if stop is not None:
            stop.set()
        store.close()
    return 0
