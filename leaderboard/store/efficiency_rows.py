"""What the worker measured while scoring a system (`tracks.retrieval.efficiency`), read back for the board.

The figures live in the `parameters` JSON of a system's result rows, the same on every row of one result set, so
one row per system is read (its first), and only the `efficiency` key of the JSON is fetched: the page's read stays
small whatever else the parameters record. Only the kinds a worker or a corpus encoding measures are read; a run
file's parameters never put figures on the board, whatever they say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, func, select

from leaderboard.store.schema import results, systems

MEASURED_KINDS = ("model", "baseline")  # a worker's model rows, and baselines that encode a corpus


def efficiency_by_system(conn: Connection) -> dict[int, dict[str, Any]]:
    """{system id: its recorded `efficiency`} for the systems of `MEASURED_KINDS` that record one."""
    first = (
        select(func.min(results.c.id))
        .join(systems, systems.c.id == results.c.system_id)
        .where(systems.c.kind.in_(MEASURED_KINDS))
        .group_by(results.c.system_id)
    )
    query = select(results.c.system_id, results.c.parameters["efficiency"]).where(results.c.id.in_(first))
    return {sid: dict(cost) for sid, cost in conn.execute(query) if isinstance(cost, Mapping) and cost}
