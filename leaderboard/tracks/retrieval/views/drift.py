"""The Drift view's content, as plain functions (tested without Gradio): a drift report (the JSON `freshstack-hf
drift OLD NEW --json` writes) read and checked, and turned into the Markdown, the plot and one table of every
system's scores and ranks on both snapshots.

The page shows reports made elsewhere rather than computing one: a drift study compares two dataset revisions, and a
leaderboard serves one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshstack_hf.drift.markdown import MEASURE_NAMES, markdown, system_rows
from freshstack_hf.drift.svg import drift_svg
from freshstack_hf.errors import FreshStackError

COLUMNS = ["topic", "measure", "system", "old", "new", "change", "rank old", "rank new", "rank change"]


def load_report(path: str | Path) -> dict[str, Any]:
    """A drift report from its JSON file, or an error naming the file and how to make a good one."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FreshStackError(
            f"--drift {path}: no such file; write one with `freshstack-hf drift OLD NEW --json`"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FreshStackError(f"--drift {path}: not a readable JSON file ({exc})") from exc
    missing = [
        k for k in ("report_version", "old", "new", "settings", "topics") if not isinstance(data, dict) or k not in data
    ]
    if missing:
        raise FreshStackError(
            f"--drift {path}: not a drift report (no {', '.join(missing)}); write one with "
            "`freshstack-hf drift OLD NEW --json PATH`"
        )
    return data


def title(report: Mapping[str, Any]) -> str:
    """`old -> new`, by revision name where the folders carry one."""
    old, new = report["old"], report["new"]
    return f"{old.get('revision') or old['path']} -> {new.get('revision') or new['path']}"


def rows(report: Mapping[str, Any]) -> list[list[Any]]:
    """Every system's old and new score, change and ranks, per topic and headline measure (3 decimals)."""
    out = []
    for name, topic in report["topics"].items():
        for measure in topic["agreement"]:
            label = MEASURE_NAMES.get(measure, measure)
            out += [[name, label, *row] for row in system_rows(topic, measure)]
    return out


def content(report: Mapping[str, Any]) -> tuple[str, str, list[list[Any]]]:
    """(Markdown, SVG, table rows) of one report: what the Drift tab shows for it."""
    return markdown(report), drift_svg(report), rows(report)
