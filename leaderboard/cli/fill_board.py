"""`freshstack-hf fill-board`: fill a stored system's holes with the board's judge, as a worker job or at once.

The system's archived ranking (the store keeps one behind every scored row) is read, its top-k documents that
no judgment covers are judged at `FRESHSTACK_JUDGE_BASE_URL` / `FRESHSTACK_JUDGE_MODEL` (key
`FRESHSTACK_JUDGE_API_KEY`; the offline judge when none is named), and the verdicts become a new qrels revision
beside the dataset (`DIR@REV.fillN`); the served revision is never rewritten. By default the fill is queued for a
worker (`freshstack-hf worker`, on any machine that reaches the store and has the dataset: the ranking comes from
the store, and the fill goes back to it, so the board writes the revision beside its own dataset); `--now` runs it
here and prints every stored system's scores old -> new. The board's Holes tab shows the same table.

Example:
  freshstack-hf fill-board --store sqlite:///lb/leaderboard.db --dataset out/freshstack --system 7 --topic langchain
  FRESHSTACK_JUDGE_BASE_URL=http://127.0.0.1:8000/v1 FRESHSTACK_JUDGE_MODEL=judge \\
      freshstack-hf fill-board --dataset out/freshstack --system 7 --topic langchain --now
"""

from __future__ import annotations

import argparse

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import RUNS_DIR_HELP
from leaderboard.fills import board_fill_name, fill_payload, fill_stored_system, moves_table
from leaderboard.store.archive import open_store
from leaderboard.store.records import SystemState
from leaderboard.worker.jobs import FILL_JOB_KIND

NAME = "fill-board"
HELP = "judge a stored system's unjudged top-k documents into a new qrels revision (a worker job, or --now)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    p.add_argument("--dataset", required=True, help="the dataset repo folder the board serves")
    p.add_argument("--revision", help="the served revision of it (DIR@REVISION beside it)")
    p.add_argument("--system", type=int, required=True, help="the stored system's id (the table's # column)")
    p.add_argument("--topic", required=True, help="the topic to fill")
    p.add_argument("--k", type=int, default=10, help="depth of the ranking to fill (default: 10)")
    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)
    p.add_argument("--now", action="store_true", help="judge here and now instead of queueing a worker job")


def run(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise FreshStackError(f"--k must be a positive cutoff, not {args.k}")
    dataset = Dataset(args.dataset, args.revision, [args.topic])
    with open_store(args.store, args.runs_dir, announce=True) as store:
        system = store.get_system(args.system)
        if system is None or system.status != SystemState.SCORED:
            raise FreshStackError(f"--system {args.system}: no scored system with that id in {store.db.shown()}")
        runs = store.blobs.ranking_of(system.id) or {}
        if not runs.get(args.topic):
            raise FreshStackError(
                f"--system {args.system} ({system.name!r}): the store keeps no ranking of it on topic {args.topic!r}"
            )
        if not args.now:
            name = board_fill_name(store, dataset)
            job = store.queue.enqueue(system.id, FILL_JOB_KIND, fill_payload(dataset, args.topic, system, args.k, name))
            print(f"queued fill job #{job.id} for {system.name!r} on {args.topic}; a worker judges it")
            return 0
        record, moves = fill_stored_system(store, dataset, system.id, args.topic, k=args.k)
    if record.revision is None:
        print(f"{system.name!r} has no unjudged document in its top {args.k} on {args.topic}: nothing to fill")
        return 0
    print(f"{record.holes} holes judged by {record.judge} ({record.requests} requests) -> {record.revision_folder}")
    for row in moves_table(moves, record.revision):
        cells = ", ".join(f"{m} {row[m]}" for m in row if m not in ("id", "system", "qrels revision"))
        print(f"  #{row['id']} {row['system']}: {cells}")
    return 0
