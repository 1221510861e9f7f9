"""The plain `Post` record every questions reader yields, and the field parsers the readers share.

Kept apart from `sources` (which dispatches to the readers) so that the readers can import the record without an
import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

WantQuestion = Callable[[str], bool]
WantAnswer = Callable[[str], bool]
Progress = Callable[[int], None]


@dataclass(slots=True)
class Post:
    """One question or answer; `body` is the raw HTML, `date` ISO `YYYY-MM-DDTHH:MM:SS`, tags lowercased."""

    id: int
    is_question: bool
    date: str
    score: int
    body: str
    title: str = ""
    tags: tuple[str, ...] = ()
    accepted_answer_id: int | None = None
    parent_id: int | None = None


@dataclass
class ScanStats:
    rows: int = 0  # every post row scanned, questions and answers
    questions: int = 0
    bytes_read: int = 0
    # The newest creation date (ISO) of any post scanned, whatever its tags: how recent the source is, which a
    # refresh checks against the last snapshot (a dump older than it cannot hold the questions since).
    newest: str = ""

    def saw(self, value: object) -> None:
        """Keep `value` (a reader's own spelling of a creation date) when it is the newest yet; an unreadable date
        is skipped here and reported by the row's own check when the row is kept."""
        try:
            when = iso_date(value)
        except (TypeError, ValueError):
            return
        if when > self.newest:
            self.newest = when


def parse_tags(raw: str | list | tuple | None) -> tuple[str, ...]:
    """`<a><b>` (dump), `|a|b|` (newer dumps) or `a|b` (BigQuery), or a list (API) -> lowercased tags."""
    if not raw:
        return ()
    if isinstance(raw, list | tuple):
        return tuple(str(t).strip().lower() for t in raw if str(t).strip())
    raw = raw.strip()
    if raw.startswith("<"):
        return tuple(t.lower() for t in raw[1:-1].split("><") if t)
    return tuple(t.strip().lower() for t in raw.split("|") if t.strip())


def iso_date(value: object) -> str:
    """Dump (`2023-07-17T19:24:01.893`), BigQuery (`2022-08-02 16:16:31.81 UTC`) or unix seconds -> ISO seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    text = str(value).strip()
    if text.isdigit():
        return iso_date(int(text))
    text = text[:19].replace(" ", "T")
    if len(text) == 10:
        text += "T00:00:00"
    datetime.fromisoformat(text)  # ValueError on anything else
    return text


def to_int(value: object) -> int | None:
    """An id or score from XML/CSV/JSON text; empty means absent (BigQuery writes `73247188` or `7.3247188E7`)."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    return int(text) if text.lstrip("-").isdigit() else int(float(text))
