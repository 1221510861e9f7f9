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

NAME = "drift-board"
HELP = "the drift report between two snapshots, with every system the leaderboard stores"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from freshstack_hf.cli import drift

    drift.add_arguments(p)
    p.add_argument("--store", help="store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)")
    from leaderboard.store.archive import RUNS_DIR_HELP

    p.add_argument("--runs-dir", help=RUNS_DIR_HELP)


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.cli import drift
    from leaderboard.drift_systems import stored_pairs
    from leaderboard.store.archive import open_store

    def extra():
        with open_store(args.store, args.runs_dir) as store:
            return stored_pairs(store)

    return drift.run(args, extra=extra)
