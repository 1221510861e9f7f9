"""Figures published elsewhere (the official FreshStack leaderboard), read for the reference view.

These numbers were not computed here: they come from a file the operator passes with `--reported PATH`
(the FreshStack leaderboard's JSON, e.g. its oct-2024 figures) and are kept in memory only, never written to
the store, so they can never be mistaken for, or deduplicated against, a submission. They are shown only in
their own tab (`REFERENCE_TAB`, built by `leaderboard.reference`), headed with `SOURCE`, never in the table of
systems computed here. Model sizes in that file are strings ("9B", "434M", "-"); `parse_size`
turns them into parameter counts so they sort and plot with the computed rows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import parse_measure
from leaderboard.sanitize import MAX_NAME, sanitize_link, sanitize_text

GROUP_LABEL = "reported (official oct-2024 data, not computed here)"
REFERENCE_TAB = "Reference (published)"
SOURCE = "FreshStack paper (Thakur et al., 2025, arXiv:2504.13128) / https://fresh-stack.github.io"
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_KEY_RE = re.compile(r"^(.+?)_(\d+)$")  # the file's measure keys: alpha_ndcg_10, coverage_20, recall_50


def parse_size(text: str | int | float | None) -> int | None:
    """Parameters from "9B", "434M", "1.5B" or a number; None for "-", "" or anything unreadable."""
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return int(text) if text > 0 else None
    match = _SIZE_RE.match(text)
    if not match:
        return None
    return int(float(match.group(1)) * _SCALE[match.group(2).lower()]) or None


def format_size(params: int | float | None) -> str:
    """The short form tables show: 22.7M, 1.5B, 9B; empty when unknown."""
    if params is None or params != params or params <= 0:  # None, NaN or nonsense
        return ""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= scale:
            value = params / scale
            return f"{value:.1f}".rstrip("0").rstrip(".") + unit if value < 100 else f"{value:.0f}{unit}"
    return str(int(params))


@dataclass(frozen=True, slots=True)
class ReportedSystem:
    """One published row: its figures per topic (`scores[topic][measure id]`) and the info the file gives."""

    key: str  # "r1", "r2", ... in file order: ids that cannot collide with the store's integer ids
    name: str
    size: int | None
    size_text: str
    category: str  # the file's own type: open_source, proprietary, upper_baseline
    date: str
    link: str | None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)


def _measure_id(key: str) -> str:
    match = _KEY_RE.match(key)
    return parse_measure(f"{match.group(1)}@{match.group(2)}" if match else key).id


def load_reported(path: str | Path) -> list[ReportedSystem]:
    """Read the official leaderboard JSON (`{"leaderboardData": [{"info": ..., "datasets": ...}]}`).

    The file's own "average" entry is not among the topics' scores: `leaderboard.reference.published_averages`
    reads it for the reference view.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FreshStackError(f"--reported {path}: file not found") from None
    except (OSError, ValueError) as exc:
        raise FreshStackError(f"--reported {path}: not a readable JSON file ({exc})") from None
    entries = data.get("leaderboardData") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise FreshStackError(f"{path}: expected a list under 'leaderboardData' (the official leaderboard JSON)")
    systems = []
    for i, entry in enumerate(entries):
        where = f"{path} entry {i}"
        try:
            info, datasets = entry["info"], entry["datasets"]
            scores = {
                str(topic).lower(): {_measure_id(k): float(v) for k, v in values.items()}
                for topic, values in datasets.items()
                if topic != "average"
            }
            link = info.get("link") or None
            systems.append(
                ReportedSystem(
                    key=f"r{i + 1}",
                    name=sanitize_text(info["name"], MAX_NAME),
                    size=parse_size(str(info.get("size", ""))),
                    size_text=str(info.get("size", "")),
                    category=sanitize_text(info.get("type", ""), 40),
                    date=sanitize_text(info.get("date", ""), 20),
                    link=sanitize_link(link) if link else None,
                    scores=scores,
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError, FreshStackError) as exc:
            raise FreshStackError(f"{where}: {exc!s}; expected info{{name,size,type,date,link}} and datasets") from exc
    return systems
