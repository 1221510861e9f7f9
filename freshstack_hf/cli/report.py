"""The report shape `evaluate` and `evaluate-answers` share: who was scored, the paired columns, the JSON document.

Both commands score one file or compare two, and a reader who knows one report reads the other: the same lines
naming what was scored, the same A / B / B-A / p columns for a comparison, the same `--json` document (one file's
scores with the settings, or each file's under one key with the comparison and the settings), and stdout holding
either the table or the JSON so `--json -` pipes cleanly. Each command keeps only what differs: its measures and
how its rows are laid out.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from freshstack_hf.cli.common import p_value_cell, write_json

if TYPE_CHECKING:
    from freshstack_hf.metrics.uncertainty import PairedTest

PAIRED_HEADER = f"{'A':<21}  {'B':<21}  {'B-A':>7}  {'p':>6}"


def add_json_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="PATH", help="write full-precision results as JSON to PATH ('-' = stdout)")


def scored_lines(noun: str, scored: Sequence[tuple[str, str]]) -> list[str]:
    """`run: NAME (PATH)` for one file, `run A: ...` and `run B: ...` for two (`noun` names what a file holds)."""
    labels = [" A", " B"] if len(scored) == 2 else [""]
    return [f"{noun}{label}: {name} ({source})" for label, (name, source) in zip(labels, scored, strict=True)]


def paired_cells(a: str, b: str | None, test: PairedTest | None) -> str:
    """A comparison row's cells: A, B, the difference B - A and the paired test's p-value (`-` where untested)."""
    diff = f"{test.diff:>+7.3f}  {p_value_cell(test.p_value):>6}" if test else f"{'-':>7}  {'-':>6}"
    return f"{a:<21}  {b or '-':<21}  {diff}"


def report_document(
    scored: Sequence[Mapping[str, Any]], key: str, comparison: Mapping[str, Any] | None, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The `--json` document: one file's scores and the settings; for two, each file's under `key`, then the
    comparison and the settings."""
    if comparison is None:
        return {**scored[0], "settings": settings}
    return {key: list(scored), "comparison": comparison, "settings": settings}


def emit(table: Callable[[], str], document: Callable[[], dict[str, Any]], target: str | None) -> None:
    """The table on stdout unless the JSON goes there (`--json -`), and the JSON where `--json` says."""
    if target != "-":
        print(table())
    if target:
        write_json(document(), target)
