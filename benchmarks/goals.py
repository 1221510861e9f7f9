"""The goals the project set its benchmarks (issue 31's table), judged where each figure is measured and gathered
into one table at the end of `make bench`, so a reader sees every goal's verdict without scrolling through the
sections."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Goal:
    what: str
    measured: str
    goal: str
    ok: bool


JUDGED: list[Goal] = []


def judge(what: str, measured: str, goal: str, ok: bool) -> str:
    """Record a goal's verdict and return it as printed beside the figure: `goal ...: ok` or `... MISSED`."""
    JUDGED.append(Goal(what, measured, goal, ok))
    return f"goal {goal}: {'ok' if ok else 'MISSED'}"


def table() -> str:
    """Every goal judged in this run, one line each."""
    if not JUDGED:
        return ""
    width = max(len(g.what) for g in JUDGED)
    lines = [f"{g.what:<{width}}  {g.measured:<34}  goal {g.goal}: {'ok' if g.ok else 'MISSED'}" for g in JUDGED]
    met = sum(g.ok for g in JUDGED)
    return "\n".join([*lines, f"{met} of {len(JUDGED)} goals met"])
