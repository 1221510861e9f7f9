"""`freshstack-hf remeasure --store URL --dataset REPO --revision D`: every system the board stores, measured on D.

Run it after `freshstack-hf refresh` published revision D (the board's start does the same for the revision it
serves): each model and reranker of another revision is submitted again on D, at the commit or weights the board
accepted it with, its live scoring counted against its owner's --live-per-week as a submission's is (give the value
the board runs with); each uploaded run's archived ranking is queued for re-scoring on D (marked "(re-scored)": a
file cannot be re-run, and is never scored live), and with --baselines the board's baseline rows of D stored or
queued. Workers sharing the store compute the jobs (`freshstack-hf worker --store URL`,
the board's built-in one for the re-scoring and the baselines); running it twice queues nothing the second time.

Example:
  freshstack-hf refresh topics.yaml --date 2025-10-31 --repo out/freshstack --budget-usd 40
  freshstack-hf remeasure --store postgresql://lb@db/leaderboard --dataset out/freshstack --revision 2025-10-31 \
      --live-per-week 3
  freshstack-hf worker --store postgresql://lb@db/leaderboard --dataset out/freshstack
"""

from __future__ import annotations

import argparse

from freshstack_hf.baselines.registry import METHODS, board_methods
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import LIVE_SCORES_PER_WEEK, RUNS_DIR_HELP
from leaderboard.store.archive import open_store
from leaderboard.worker.jobs import measure_on

NAME = "remeasure"
HELP = "queue every stored system of the leaderboard on a (new) dataset revision"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    p.add_argument("--dataset", required=True, help="dataset repo folder or Hub id")
    p.add_argument("--revision", help="the revision to measure on: a Hub tag or commit, or DIR@REVISION's REVISION")
    p.add_argument(
        "--baselines",
        nargs="?",
        const=",".join(board_methods()),
        metavar="METHODS",
        help=f"also store or queue the board's baseline rows of the revision, of {', '.join(METHODS)} "
        f"(default: {','.join(board_methods())})",
    )
    p.add_argument(
        "--live-per-week",
        type=int,
        default=LIVE_SCORES_PER_WEEK,
        metavar="N",
        help="the board's live quota (its `leaderboard --live-per-week`): a model or reranker queued again is "
        "scored live only while its owner has had fewer than N live scorings in 7 days, and counts as one; past it, "
        "on the public questions only; 0 = none live (default: %(default)s)",
    )
    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)


def run(args: argparse.Namespace) -> int:
    if args.live_per_week < 0:
        raise FreshStackError("--live-per-week must be >= 0 (0: nothing re-measured is scored live)")
    dataset = Dataset(args.dataset, args.revision)
    methods = [m.strip() for m in (args.baselines or "").split(",") if m.strip()]
    with open_store(args.store, args.runs_dir, announce=True) as store:
        done = measure_on(store, dataset, baselines=bool(methods), methods=methods, live_per_week=args.live_per_week)
    print(done.summary())
    for line in [*done.queued, *done.rescoring]:
        print(f"  queued: {line}")
    for line in done.skipped:
        print(f"  not measured again: {line}")
    return 0
