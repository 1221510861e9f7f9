"""Run a leaderboard evaluation worker: claim queued jobs from the store, evaluate them, store the scores.

Start as many as you like, on as many machines as share the store: each job is claimed by one worker at a
time, and a job whose worker dies goes back to the queue when its lease lapses. SIGTERM or Ctrl-C stops the
worker after its current job; a second one hands the job back at once.

A worker needs only the store URL and the dataset (`--dataset`, the board's Hub id or a copy of its folder): what a
job reads (the ranking a fill starts from, the answers a judge reads) comes from the store, and what it makes (the
ranking behind a model's scores, a fill's judgments) goes back to it with the scores; nothing is shared with the
app's machine. Job kinds (each track registers its own, `leaderboard.worker.jobs`): `model` and `reranker` (a submitted
sentence-transformers model or CrossEncoder, vetted, run and scored), `baseline` and `answers_baseline` (the
baseline rows the leaderboard queued when it started), `fill` (a stored system's holes judged), and the RAG
track's `answers_judge` and `answers_generate` (an LLM judges or writes answers at the endpoint the app named). Job
processes drop every secret-looking variable; the LLM jobs keep only FRESHSTACK_JUDGE_API_KEY, the judge
endpoint's key. A corpus is encoded on every visible GPU when there are several (sentence-transformers'
multi-process pool); --devices names them, a --device naming one (cuda:1) keeps the worker on it.

Live scores: with --private-repo (or $FRESHSTACK_PRIVATE_REPO) naming the private repo of an embargo (a local folder,
or a private Hub dataset read with HF_TOKEN, and still private on the Hub), `model` and `reranker` jobs are also
scored on the embargoed questions of their snapshot, and only rounded aggregates are stored; the token and the
private revision are used by this process alone: a job process is handed the questions' texts and the documents,
seals itself once its model is loaded (Landlock and seccomp: no network, no file beyond what ranking needs) and
returns a ranking, which this process scores. A worker that cannot seal (not Linux, an old kernel, --in-process)
hands no embargoed question to its jobs. Without --private-repo, their live columns record "not measured: no access
to the private split" (nothing, on a snapshot whose public revision embargoes nothing). With --live-runs DIR
(or $FRESHSTACK_LIVE_RUNS) each such job also keeps its ranking of the embargoed questions as one TREC run,
DIR/SNAPSHOT/system-ID-job-ID.trec, for `freshstack-hf evaluate PRIVATE_REPO --revision SNAPSHOT --run FILE` to check
the live score with; it names embargoed questions, so it stays on this machine (each snapshot's folder in DIR readable
by the worker's user alone), as private as the token: nothing of it reaches the store, the log or the board.

Example:
  freshstack-hf worker --store sqlite:///lb/leaderboard.db --dataset out/freshstack
  freshstack-hf worker --store postgresql://lb@db.example.org/leaderboard --lease-seconds 120 --device cuda
  freshstack-hf worker --store postgresql://lb@db.example.org/leaderboard --devices cuda:0,cuda:1
  HF_TOKEN=hf_... freshstack-hf worker --store postgresql://lb@db.example.org/leaderboard --private-repo me/held
  freshstack-hf worker --store sqlite:///lb/leaderboard.db --private-repo out/held --live-runs lb/live-runs
  python -m leaderboard.cli.board_worker --store sqlite:///lb/leaderboard.db --once --json
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import logging
import sys
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.defaults import RUNS_DIR_HELP
from leaderboard.store.archive import open_store
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

NAME = "worker"
HELP = "run an evaluation worker for the leaderboard's job queue"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    p.add_argument("--dataset", help="dataset repo (folder or Hub id) for jobs that name none ($FRESHSTACK_DATASET)")
    p.add_argument("--once", action="store_true", help="run one job (waiting for it if needed), then exit")
    p.add_argument("--exit-when-idle", type=float, metavar="S", help="exit after S seconds with nothing to claim")
    p.add_argument(
        "--poll-seconds", type=float, default=5.0, help="wait between claims when the queue is empty (%(default)s)"
    )
    p.add_argument(
        "--lease-seconds", type=float, default=300.0, help="lease length, renewed every third of it (%(default)s)"
    )
    p.add_argument(
        "--time-cap-seconds", type=float, default=3600.0, help="a job running longer is killed and fails (%(default)s)"
    )
    p.add_argument(
        "--max-model-gb", type=float, default=4.0, help="largest model evaluated, in GB of weights (%(default)s)"
    )
    p.add_argument("--device", help="torch device for models (default: cuda when available)")
    p.add_argument(
        "--devices",
        metavar="LIST",
        help="devices to encode corpora on together, e.g. cuda:0,cuda:1 (default: every visible GPU when there are "
        "several, unless --device names one)",
    )
    p.add_argument("--cache-dir", help="embedding cache, so a retried or repeated job re-encodes nothing")
    p.add_argument(
        "--private-repo",
        metavar="PATH_OR_HUB_ID",
        help="the embargo's private repo (a folder, or a private Hub dataset read with HF_TOKEN): model and reranker "
        "jobs are also scored live on its embargoed questions ($FRESHSTACK_PRIVATE_REPO)",
    )
    p.add_argument(
        "--live-runs",
        metavar="DIR",
        help="keep each job's live ranking of the embargoed questions as a TREC run in DIR/SNAPSHOT/, to check a live "
        "score with `evaluate` on the private repo; keep DIR as private as the token ($FRESHSTACK_LIVE_RUNS; "
        "default: none kept)",
    )
    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)
    p.add_argument("--worker-id", help="name in the job table (default: host:pid:random)")
    p.add_argument(
        "--evaluator",
        metavar="MODULE:FUNCTION",
        help="evaluate function taking a JobRecord and returning a JobOutput (default: leaderboard.worker.jobs)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run jobs in a thread (no isolation, no seal, no live score, no hard cap)",
    )
    p.add_argument("--json", action="store_true", help="print job counts as JSON on exit")


def parse_devices(value: str | None) -> tuple[str, ...] | None:
    """`--devices cuda:0,cuda:1` as a tuple (None when not given: the encoder picks every GPU when several)."""
    if value is None:
        return None
    devices = tuple(d.strip() for d in value.split(",") if d.strip())
    if not devices:
        raise FreshStackError(f"--devices {value!r} names no device: give e.g. cuda:0,cuda:1")
    return devices


def _evaluator(args: argparse.Namespace) -> Any:
    if args.evaluator:
        module, _, name = args.evaluator.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise FreshStackError(f"--evaluator {args.evaluator!r}: {exc}; give MODULE:FUNCTION") from exc
    options = {"dataset": args.dataset, "cache_dir": args.cache_dir, "device": args.device}
    options["devices"] = parse_devices(args.devices)
    return functools.partial(evaluate_job, max_model_bytes=int(args.max_model_gb * 1e9), **options)


def run(args: argparse.Namespace) -> int:
    evaluate = _evaluator(args)
    loop = {"worker_id": args.worker_id, "once": args.once, "max_idle_seconds": args.exit_when_idle}
    loop["private_repo"], loop["live_runs"] = args.private_repo, args.live_runs
    timing = {k: getattr(args, k) for k in ("poll_seconds", "lease_seconds", "time_cap_seconds")}
    with open_store(args.store, args.runs_dir, announce=True) as store:
        stats = run_worker(store, evaluate, isolate=not args.in_process, **loop, **timing)
    if args.json:
        print(json.dumps(vars(stats)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m leaderboard.cli.board_worker`), for machines that run only workers."""
    parser = argparse.ArgumentParser(
        prog="freshstack-hf worker", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(message)s")
    try:
        return run(args)
    except FreshStackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
