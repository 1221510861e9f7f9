"""`freshstack-hf drift-board OLD NEW --store URL`: the drift report with every system a leaderboard stores.

The library's `drift` compares the baselines and the run files it is given; a leaderboard holds more systems than
anyone has files for: every uploaded run and every model row, each with its ranking kept in the store (read from
it, on any machine). Each archived ranking is re-scored on both snapshots (unchanged documents keep their ids), so
the rank agreement covers the systems the board shows. A model row's ranking is the one its worker computed on the
corpus it was submitted against; re-encoding the other snapshot's corpus is a new submission on that snapshot.

Example:
  freshstack-hf drift-board out/freshstack@2024-10-31 out/freshstack@2025-10-31 \\
      --store sqlite:///lb/leaderboard.db --out drift/
  freshstack-hf leaderboard --dataset out/freshstack@2025-10-31 --drift drift/drift.json
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli import drift
from freshstack_hf.drift.systems import SystemPair
from leaderboard.defaults import RUNS_DIR_HELP
from leaderboard.store.archive import open_store
from leaderboard.store.store import Store

NAME = "drift-board"
HELP = "the drift report between two snapshots, with every system the leaderboard stores"


def add_arguments(p: argparse.ArgumentParser) -> None:
    drift.add_arguments(p)
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)


def stored_pairs(store: Store) -> list[SystemPair]:
    """Every finished system whose ranking is archived (uploads, model rows, stored baselines) as a drift pair, topics
    merged into one run (query ids are unique across topics); a system without an archived ranking cannot be
    re-scored and is left out. Names are made unique with the row id, as two submitters may pick the same name."""
    pairs = []
    for system, runs in store.blobs.rankings(scored_only=True):
        merged = {qid: docs for topic_run in runs.values() for qid, docs in topic_run.items()}
        pairs.append(SystemPair(f"{system.name} (#{system.id})", f"leaderboard:{system.kind}", merged, merged))
    return pairs


def run(args: argparse.Namespace) -> int:
    def extra():
        with open_store(args.store, args.runs_dir, announce=True) as store:
            return stored_pairs(store)

    return drift.run(args, extra=extra)
