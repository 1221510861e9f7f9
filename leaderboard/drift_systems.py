"""The leaderboard's stored systems as drift pairs: each archived ranking, to be scored on both snapshots."""

from __future__ import annotations

from freshstack_hf.drift.systems import SystemPair
from leaderboard.store.store import Store


def stored_pairs(store: Store) -> list[SystemPair]:
    """Every finished system whose ranking is archived (uploads, model rows, stored baselines), topics merged
    into one run (query ids are unique across topics); a system without an archived ranking cannot be re-scored
    and is left out. Names are made unique with the row id, as two submitters may pick the same name."""
    pairs: list[SystemPair] = []
    for system, runs in store.blobs.rankings(scored_only=True):
        merged = {qid: docs for topic_run in runs.values() for qid, docs in topic_run.items()}
        pairs.append(SystemPair(f"{system.name} (#{system.id})", f"leaderboard:{system.kind}", merged, merged))
    return pairs
