"""Each bench section's figures as one JSON record, the single source of every figure the docs quote.

A section names each figure a page quotes as it measures it (`figure(key, value, unit, fmt)`), and judges its goals
as before (`benchmarks.goals.judge`, with the key of the figure a goal is about). `python -m benchmarks` runs each
section in a process of its own and, when the section is done, writes what that process recorded to
`bench-out/<section>.json`: the date, the machine, the command, the git commit the bench ran at, the figures and
the goals with their verdicts. `make figures` copies those records to `docs/figures/`, where the docs hook
(`docs/hooks.py`) renders the pages' `{{ figure: section.key }}` placeholders from them: a figure is typed nowhere,
so two pages cannot quote two values of it, and a goal missed reads MISSED on the page.

A figure keeps its value and unit apart (`value`, `unit`) beside the text a page shows (`text`, formatted as the
section prints it), so a reader of the record can compare runs and a page never rounds a figure differently.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import goals

OUT = Path("bench-out")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "figures"
ATTACHED = ("x", "%")  # units written against the number: 1.40x, 87%

FIGURES: dict[str, dict[str, Any]] = {}
DETAIL: dict[str, Any] = {}  # anything else a section keeps beside its figures (the probe's per-rule tables)


def shown(value: float | str, unit: str, fmt: str) -> str:
    """The figure as a page shows it: `0.74 s`, `8,936 tokens`, `1.40x`."""
    number = value if isinstance(value, str) else format(value, fmt)
    if not unit:
        return number
    return f"{number}{unit}" if unit in ATTACHED else f"{number} {unit}"


def figure(key: str, value: float | str, unit: str = "", fmt: str = ".2f", what: str = "") -> float | str:
    """Record one figure of this section's run (a number, or a short text for a verdict such as "one row") and
    return the value, so a section can record where it computes."""
    FIGURES[key] = {"value": value, "unit": unit, "text": shown(value, unit, fmt), "what": what}
    return value


def machine() -> str:
    """What a figure was measured on: the core count first, the thing that decides most of them."""
    return (
        f"{os.cpu_count()} CPU cores ({platform.machine()}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def commit() -> str:
    """The git commit the bench ran at ("+ changes" when the work tree differed from it), or "unknown"."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + (" + changes" if dirty.stdout.strip() else "")


def record(section: str) -> dict[str, Any]:
    """This process's figures and goals as the section's record."""
    return {
        "bench": section,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": f"python -m benchmarks {section}",
        "commit": commit(),
        "figures": FIGURES,
        "goals": [asdict(g) for g in goals.JUDGED],
        **({"detail": DETAIL} if DETAIL else {}),
    }


def write(section: str, out: Path = OUT) -> Path:
    """`bench-out/<section>.json`, written whole (a section that failed half-way leaves the last good record)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{section}.json"
    fresh = path.with_suffix(".json.new")
    fresh.write_text(json.dumps(record(section), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    fresh.replace(path)
    print(f"figures written to {path}", file=sys.stderr)
    return path


def publish(out: Path = OUT, docs: Path = DOCS) -> list[Path]:
    """`make figures`: every section's last record copied where the docs read them."""
    docs.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in sorted(out.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "figures" not in data or "bench" not in data:
            continue  # not a section's record
        target = docs / path.name
        target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        copied.append(target)
    return copied


if __name__ == "__main__":
    written = publish()
    print("\n".join(f"copied {p}" for p in written) or f"no record under {OUT}/: run `make bench` first")
