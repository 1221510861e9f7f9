"""The goals the project set its benchmarks (issue 31's table), judged where each figure is measured and gathered
into one table at the end of `make bench`, so a reader sees every goal's verdict without scrolling through the
sections. Each section runs in its own process (`benchmarks/__main__.py`), so verdicts also go to the JSON-lines
file named by `FRESHSTACK_BENCH_GOALS` when set, where the parent reads them back."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

GOALS_FILE = "FRESHSTACK_BENCH_GOALS"


@dataclass(frozen=True, slots=True)
class Goal:
    what: str
    measured: str
    goal: str
    ok: bool
    key: str = ""  # the figure it judges (`benchmarks.figures`), so a page shows the verdict beside the figure


JUDGED: list[Goal] = []


def judge(what: str, measured: str, goal: str, ok: bool, key: str = "") -> str:
    """Record a goal's verdict and return it as printed beside the figure: `goal ...: ok` or `... MISSED`."""
    verdict = Goal(what, measured, goal, ok, key)
    JUDGED.append(verdict)
    if path := os.environ.get(GOALS_FILE):
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(verdict)) + "\n")
    return f"goal {goal}: {'ok' if ok else 'MISSED'}"


def read_judged(path: Path) -> list[Goal]:
    """The verdicts a section's process wrote to `path` (none if it wrote nothing)."""
    if not path.exists():
        return []
    return [Goal(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]


def table(judged: list[Goal] | None = None) -> str:
    """Every goal judged in this run, one line each."""
    judged = JUDGED if judged is None else judged
    if not judged:
        return ""
    width = max(len(g.what) for g in judged)
    lines = [f"{g.what:<{width}}  {g.measured:<34}  goal {g.goal}: {'ok' if g.ok else 'MISSED'}" for g in judged]
    met = sum(g.ok for g in judged)
    return "\n".join([*lines, f"{met} of {len(judged)} goals met"])
