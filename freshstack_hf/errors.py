"""The one exception type users see, and a collector for reporting many problems at once.

Users fix data in batches: a validator that stops at the first bad row makes them re-run once per row, so
problems are collected, then raised together with the first few shown and the total counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SHOWN_PROBLEMS = 20


class FreshStackError(Exception):
    """A problem the user can fix (bad input, missing file, wrong option). The CLI maps it to exit code 2."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect found in user data: where it is (file/config, row or line), what is wrong and how to fix it."""

    where: str
    message: str
    row: int | None = None
    fix: str = ""
    unit: str = "row"  # "line" for text files such as runs, where editors count lines from 1

    def __str__(self) -> str:
        loc = self.where if self.row is None else f"{self.where} {self.unit} {self.row}"
        text = f"{loc}: {self.message}"
        return f"{text} ({self.fix})" if self.fix else text


def format_problems(problems: Iterable[Problem], title: str, shown: int = SHOWN_PROBLEMS) -> str:
    """Render problems as one message: a title with the total, the first `shown` lines, and a tail count."""
    items = list(problems)
    lines = [f"{title}: {len(items)} problem{'s' if len(items) != 1 else ''}"]
    lines += [f"  - {p}" for p in items[:shown]]
    if len(items) > shown:
        lines.append(f"  ... and {len(items) - shown} more")
    return "\n".join(lines)


class ValidationError(FreshStackError):
    """Raised with every problem found, so one run of the validator reports them all."""

    def __init__(self, problems: Iterable[Problem], title: str = "validation failed") -> None:
        self.problems, self.title = list(problems), title
        super().__init__(format_problems(self.problems, title))

    def __reduce__(self) -> tuple[type[ValidationError], tuple[list[Problem], str]]:
        # Pickled with its problems (a child process's refusal reaches the parent whole), not its message alone.
        return type(self), (self.problems, self.title)
