"""Serve the FreshStack leaderboard: it answers at once, and a worker in the same process scores what is queued.

Baselines (BM25, dense, RRF hybrid; a reranked hybrid with --cross-encoder; the Answers tab's extractive row) are
computed once per dataset revision and stored. On start each missing row is stored at once in state queued, with
a job on the store's queue, and the app serves right away: the table shows those rows as queued or running, a
line above it says what is still being computed, and the rows fill in when a worker has scored them. A restart
finds the stored rows and queues nothing (a row still queued or running is not queued twice; a failed one is
queued again).

By default a worker in this process claims every job of the store's queue once the board serves: the baseline rows
(each with `BASELINE_TIME_CAP_SECONDS`, as a corpus is encoded on a CPU), then models and rerankers submitted on the
Submit tab, runs re-scored on a new snapshot, answers to judge: the board started as the README starts it scores
what it is given, on the same machine. --no-worker runs none here, leaving every job to the workers sharing the
store (`freshstack-hf worker --store URL`: GPU machines on a PostgreSQL store, a Space that must not score models
on its CPU). The start and the About tab say which (`leaderboard.defaults.scoring_plan`). The old spellings are
kept: --no-baseline-worker (no worker here, what it always meant) is --no-worker, and --worker, now the default,
changes nothing.

Every system the store holds for another dataset revision is measured on the served one too (`worker.jobs.measure_on`):
models and rerankers are queued again for the workers (each live scoring counted against its owner's
--live-per-week, as a submission's), uploaded runs' archived rankings re-scored, each once, so one store serves every
published snapshot with every system on each.

Reported figures (--reported, e.g. the official leaderboard's JSON) are shown in a tab of their own, "Reference
(published)", never in the main table, and never stored.

Example:
  freshstack-hf leaderboard --dataset out/freshstack --port 7860
  freshstack-hf leaderboard --dataset out/freshstack --store postgresql://lb@db/leaderboard \\
      --reported freshstack-official-leaderboard.json --max-file-mb 50 --rate-limit 5
  freshstack-hf leaderboard --dataset out/freshstack --store postgresql://lb@db/leaderboard --no-worker
  freshstack-hf leaderboard --dataset out/freshstack --no-baselines --host 0.0.0.0 --port 8080
  freshstack-hf leaderboard --dataset out/freshstack@2025-10-31 --drift drift/drift.json   # + a Drift tab
  freshstack-hf leaderboard --dataset out/freshstack --oauth --admin alice --admin bob   # sign-in, Admin tab
  HF_TOKEN=hf_... freshstack-hf leaderboard --dataset ORG/freshstack --board-url https://ORG-board.hf.space

--ephemeral says, on every page, that the board's store is lost when the app restarts (the Space's app passes it
when FRESHSTACK_EPHEMERAL=1 accepts a store off persistent storage): visitors then know not to count on what
they submit.

--board-url names the board's public address. With it, a submitter may tick "propose these results to my model's
page": once the row is scored, a thread of this process (which holds the operator's token, HF_TOKEN) opens a pull
request with the row's verified results on the model's Hub repo (`leaderboard.model_pages`), logged as
board:model_page; `freshstack-hf admin eval-results` does it for every row. The Reference tab shows what model repos
report on the benchmark's Hub dataset (the served Hub id, or --dataset-id for a folder) beside the board's values,
read in the background (never when HF_HUB_OFFLINE is set).

--oauth takes submissions from signed-in Hugging Face users only (their name is their rate-limit identity). On
a Space that is the Space's own sign-in; anywhere else Gradio mocks it: whoever signs in is the account this
machine is logged in to (`hf auth login`), which Gradio asks the Hub about once at start.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
from typing import Any

from freshstack_hf.baselines.registry import METHODS, board_methods
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import (
    LIVE_RELEASE,
    LIVE_RELEASES,
    LIVE_SCORES_PER_WEEK,
    MAX_UPLOAD_MB,
    RATE_LIMIT_PER_HOUR,
    RUNS_DIR_HELP,
    scoring_plan,
)
from leaderboard.live_release import release_plan
from leaderboard.model_pages.pull_requests import Proposer
from leaderboard.model_pages.verified import Target, served_dataset_id
from leaderboard.store.archive import open_store
from leaderboard.store.records import SystemState
from leaderboard.store.store import Store
from leaderboard.worker.jobs import BASELINE_JOB_KINDS, evaluate_job, measure_on, queue_baselines
from leaderboard.worker.worker import run_worker

NAME = "leaderboard"
HELP = "serve the Gradio leaderboard (a worker in the same process scores its baselines and submitted models)"
EPHEMERAL_NOTICE = (
    "This board is ephemeral: its store is not kept, so every submission and result is lost when the app restarts "
    "(on a Space: every restart, rebuild or update). Operator: keep them with a PostgreSQL store (the "
    "FRESHSTACK_STORE secret) or the Space's persistent storage."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    _served_arguments(p)
    _baseline_arguments(p)
    _submission_arguments(p)
    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)
    _access_arguments(p)
    _worker_arguments(p)
    _public_arguments(p)


def _served_arguments(p: argparse.ArgumentParser) -> None:
    """What the board serves (the dataset, the store, the files of its Reference and Drift tabs) and where."""
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


def _baseline_arguments(p: argparse.ArgumentParser) -> None:
    """Which baseline rows the board queues when it starts, and with which models."""
    p.add_argument("--no-baselines", action="store_true", help="do not queue missing baseline rows")
    p.add_argument(
        "--baselines",
        default=",".join(board_methods()),
        help=f"baseline methods to compute, of {', '.join(METHODS)} "
        "(default: %(default)s; --cross-encoder adds its row)",
    )
    p.add_argument("--dense-model", help="dense baseline model (default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--cross-encoder", help="cross-encoder for a reranked-hybrid row (local folder or cached id)")
    p.add_argument("--cache-dir", help="embedding cache for the dense baseline (default: $FRESHSTACK_CACHE)")


def _submission_arguments(p: argparse.ArgumentParser) -> None:
    """What a submission may be and how often: the upload cap, the hourly rate limit and the live quota, and when a
    live score is shown."""
    p.add_argument(
        "--max-file-mb",
        type=float,
        default=MAX_UPLOAD_MB,
        help="upload cap in MB: an answers file; of a run, its top 100 per query that the board keeps (a run may "
        "hold 25 times this much text, 1,000 docs per query; default: %(default)s)",
    )
    p.add_argument(
        "--rate-limit",
        type=int,
        default=RATE_LIMIT_PER_HOUR,
        help="submissions per hour per identity, 0 = off (default: %(default)s)",
    )
    p.add_argument(
        "--live-per-week",
        type=int,
        default=LIVE_SCORES_PER_WEEK,
        metavar="N",
        help="models and rerankers per identity scored live on the embargoed questions in any 7 days, the board's "
        "re-measuring of a stored one on a new snapshot included (each live score tells a prober two decimals of a "
        "mean; later ones are scored on the public questions only); 0 = nothing is scored live (default: "
        "%(default)s)",
    )
    p.add_argument(
        "--live-release",
        choices=LIVE_RELEASES,
        default=LIVE_RELEASE,
        help="when a live score is shown: hold = once the embargo of its questions has ended, so probing with "
        "crafted models learns nothing of them; open = as soon as it is measured, which lets a submitter with "
        "several identities read the embargoed judgments back (default: %(default)s)",
    )


def _access_arguments(p: argparse.ArgumentParser) -> None:
    """Who may submit what: local model folders, the Hugging Face sign-in, the admins."""
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


def _worker_arguments(p: argparse.ArgumentParser) -> None:
    """Whether a worker runs in the board's process (it does unless --no-worker; the other two are old spellings)."""
    worker = p.add_mutually_exclusive_group()
    worker.add_argument(
        "--no-worker",
        action="store_true",
        help="run no worker in this process: baselines, submitted models and rerankers are scored by the workers "
        "sharing the store (freshstack-hf worker --store URL; e.g. GPU machines, a Space on PostgreSQL)",
    )
    worker.add_argument(
        "--no-baseline-worker", dest="no_worker", action="store_true", help="the old spelling of --no-worker"
    )
    worker.add_argument(
        "--worker",
        action="store_true",
        help="accepted for compatibility: a worker runs in this process by default (--no-worker turns it off)",
    )


def _public_arguments(p: argparse.ArgumentParser) -> None:
    """How the board presents itself: its public address and the benchmark's Hub id (for model pages and the
    Hub's reports), and whether its store outlives a restart."""
    p.add_argument(
        "--board-url",
        default="",
        metavar="URL",
        help="the board's public address: results proposed to model pages link their rows' Detail views there "
        "(without it, nothing is proposed)",
    )
    p.add_argument(
        "--dataset-id",
        default="",
        metavar="ORG/NAME",
        help="the benchmark's Hub dataset id, when --dataset is a folder (default: --dataset, when it is a Hub id): "
        "the results on model pages name it, and the Reference tab shows the Hub's reports on it",
    )
    p.add_argument(
        "--ephemeral",
        action="store_true",
        help="the store is lost on restart (e.g. a Space without persistent storage): every page says so",
    )


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# The baselines encode whole corpora, hours on a CPU (a five-topic release, about 250,000 chunks at 8 chunks/s, is
# nine hours): the in-app worker gives their jobs this long, and keeps the worker's usual cap for the others.
BASELINE_TIME_CAP_SECONDS = 48 * 3600.0


def _evaluate(args: argparse.Namespace, dataset: Dataset) -> Any:
    """The in-app worker's evaluate function: the app's dataset and embedding cache."""
    options = {"dataset": str(dataset.folder), "cache_dir": args.cache_dir}
    return functools.partial(evaluate_job, **options)


def _start_worker(store: Store, evaluate: Any, stop: threading.Event) -> threading.Thread:
    """The board's worker: a thread claiming every kind of job until `stop`, the baselines with their long cap; its
    jobs run in spawned child processes that drop secret-looking variables, as a standalone worker's do."""
    caps = {kind: BASELINE_TIME_CAP_SECONDS for kind in BASELINE_JOB_KINDS}
    options = {"stop": stop, "kind_time_caps": caps}
    thread = threading.Thread(target=run_worker, args=(store, evaluate), kwargs=options, name="leaderboard-worker")
    thread.daemon = True
    thread.start()
    return thread


PROPOSE_SECONDS = 60.0  # how often the board looks for scored rows whose submitter asked for a model-page proposal


def _start_proposer(store: Store, target: Target, stop: threading.Event) -> threading.Thread:
    """The board's model-page proposals (`model_pages.pull_requests.Proposer`), in a thread of this process: the one
    that holds the operator's Hugging Face token, where the workers (submitted code beside them) hold none."""
    proposer = Proposer(store, target)

    def loop() -> None:
        while not stop.is_set():
            try:
                for outcome in proposer.run_once():
                    _say(f"model pages: {outcome.line()}")
            except Exception as exc:  # the next pass tries again; the board keeps serving
                _say(f"model pages: this pass failed ({type(exc).__name__}: {exc})")
            stop.wait(PROPOSE_SECONDS)

    thread = threading.Thread(target=loop, name="model-pages", daemon=True)
    thread.start()
    return thread


def _queue_baselines(args: argparse.Namespace, store: Store, dataset: Dataset) -> None:
    """Store every missing baseline row of every track, queued for a worker (cheap: no model is loaded here)."""
    methods = [m.strip() for m in args.baselines.split(",") if m.strip()]
    model, cross_encoder = args.dense_model, args.cross_encoder
    rows = queue_baselines(store, dataset, methods=methods, model=model, cross_encoder=cross_encoder, say=_say)
    stored = sum(r.status == SystemState.SCORED for r in rows)
    _say(f"baselines: {stored} of {len(rows)} rows stored for dataset revision {dataset.revision}")


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    _check_arguments(args)
    dataset = Dataset(args.dataset, args.revision)  # user errors first, before anything is created
    _say(f"dataset: {dataset.source} ({', '.join(dataset.topics)}; revision {dataset.revision})")
    dataset_id, target = _model_pages_target(args, dataset)
    _say(f"live scores: {release_plan(args.live_release)}")
    _check_shown_files(args)
    store = open_store(args.store, args.runs_dir)  # an older release's runs folder is imported here
    stop = threading.Event()
    try:
        _say(f"store: {store!r}" + (" (ephemeral: lost on restart, and every page says so)" if args.ephemeral else ""))
        if not args.no_baselines:
            _queue_baselines(args, store, dataset)
        measure_on(
            store, dataset, live_per_week=args.live_per_week, say=lambda line: _say(f"other revisions' systems: {line}")
        )
        _serve(args, dataset, store, dataset_id, target, stop)
    finally:
        stop.set()
        store.close()
    return 0


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse values the board cannot run with, and with --oauth say whether the sign-in can work, before anything
    is read or created."""
    if args.max_file_mb <= 0 or args.rate_limit < 0 or args.live_per_week < 0:
        raise FreshStackError("--max-file-mb must be > 0, --rate-limit and --live-per-week >= 0")
    if args.admin and not args.oauth:
        raise FreshStackError("--admin needs --oauth: admins are recognised by their Hugging Face sign-in")
    if args.oauth:
        from leaderboard.page.sign_in import check_sign_in  # the page's modules import Gradio

        _say(f"sign-in: {check_sign_in()}")


def _model_pages_target(args: argparse.Namespace, dataset: Dataset) -> tuple[str, Target | None]:
    """The benchmark's Hub id (--dataset-id, else the served Hub dataset's) and, with it, where model-page proposals
    go (None without an id); --board-url without an id is refused."""
    dataset_id = args.dataset_id.strip() or served_dataset_id(dataset.source, dataset.revision) or ""
    target = Target(dataset_id, args.board_url.strip()) if dataset_id else None  # refuses a bad id or address
    if args.board_url and target is None:
        raise FreshStackError("--board-url needs the benchmark's Hub id: --dataset ORG/NAME, or --dataset-id ORG/NAME")
    return dataset_id, target


def _check_shown_files(args: argparse.Namespace) -> None:
    """A bad --reported or --drift file is a user error before anything is created."""
    from leaderboard.page.page import Settings  # the page's modules import Gradio
    from leaderboard.page.tabs import check_inputs

    for line in check_inputs(Settings(reported_path=args.reported, drift_reports=tuple(args.drift))):
        _say(line)


def _serve(
    args: argparse.Namespace,
    dataset: Dataset,
    store: Store,
    dataset_id: str,
    target: Target | None,
    stop: threading.Event,
) -> None:
    """Build the page and serve it; once it answers, start the model-page proposals and the board's own worker, and
    block until the server stops."""
    from leaderboard.page.app import build_app, launch_app  # Gradio

    worker_here = not args.no_worker
    _say(f"worker: {scoring_plan(worker_here)}" + (" (--no-worker)" if args.no_worker else ""))
    demo = build_app(
        dataset,
        store,
        reported_path=args.reported,
        max_file_mb=args.max_file_mb,
        rate_limit=args.rate_limit,
        live_per_week=args.live_per_week,
        live_release=args.live_release,
        model_roots=args.model_root,
        oauth=args.oauth,
        drift_reports=args.drift,
        admins=args.admin,
        notice=EPHEMERAL_NOTICE if args.ephemeral else "",
        score_apart=True,  # a served board: its visitors' reads never take turns with a submission's scoring
        board_url=args.board_url,
        dataset_id=dataset_id,
        worker_here=worker_here,
    )
    print(f"leaderboard: http://{args.host}:{args.port}/", flush=True)
    launch_app(demo, host=args.host, port=args.port, max_file_mb=args.max_file_mb, quiet=True, prevent_thread_lock=True)
    # Serving now; the work starts after, so it never delays the first answer.
    if target is not None and target.board_url:
        _say(f"model pages: proposing the results submitters ask for to {dataset_id}'s model pages")
        _start_proposer(store, target, stop)
    if worker_here:
        _start_worker(store, _evaluate(args, dataset), stop)
    demo.block_thread()
