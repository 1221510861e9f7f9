"""What one stage cost: the difference of a backend's cumulative counters before and after it ran.

Backends count since they were made (one per build process), so a stage's own calls, cache hits, tokens and
cost are the delta; a resumed build reports the replayed calls as cache hits, which is what they were.
"""

from __future__ import annotations

from typing import Any


def delta(before: Any, after: Any) -> Any:
    """Numbers subtracted, mappings recursed, everything else (names, thresholds) taken from `after`."""
    if isinstance(after, dict):
        before = before if isinstance(before, dict) else {}
        return {k: delta(before.get(k), v) for k, v in after.items()}
    if isinstance(after, bool) or not isinstance(after, int | float):
        return after
    if isinstance(before, int | float) and not isinstance(before, bool):
        value = after - before
        return round(value, 6) if isinstance(value, float) else value
    return after


def backend_record(backend: Any, before: dict[str, Any]) -> dict[str, Any]:
    """The manifest's account of who made a stage's output and at what cost."""
    return {
        "backend": getattr(backend, "name", type(backend).__name__),
        "kind": getattr(backend, "kind", "unknown"),
        "usage": delta(before, backend.stats()),
    }


def made_by(record: dict[str, Any]) -> str:
    """` (backend), N calls, M cached` for a stage summary: who answered and what it cost; empty when nobody did."""
    who = f" ({record['backend']})" if record.get("backend") else ""
    usage = record.get("usage") or {}
    calls, hits = usage_total(usage, "calls"), usage_total(usage, "cache_hits")
    return who + (f", {calls} calls, {hits} cached" if (calls or hits) else "")


def usage_total(usage: Any, *keys: str) -> int:
    """The counters `keys` summed over a per-stage usage mapping of any depth (a stage may report per sub-stage)."""
    if isinstance(usage, dict):
        return sum(
            v if k in keys and isinstance(v, int) and not isinstance(v, bool) else usage_total(v, *keys)
            for k, v in usage.items()
        )
    return 0
