"""The records of the RAG track: an answer's sentences with the doc ids they cite, one file's answers.

Kept apart from reading and checking files (`parse.py`), so the scorers, the baselines and the leaderboard share
them without the parser. Citations are doc ids here, whatever the file held (TREC RAG indexes into `references`
are resolved when read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Sentence:
    """One answer sentence and the doc ids it cites (indexes already resolved through `references`)."""

    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """A generated answer to one query: its sentences, the ranked references and the line it came from."""

    query_id: str
    sentences: tuple[Sentence, ...]
    references: tuple[str, ...] = ()
    row: int | None = None

    @property
    def text(self) -> str:
        """The answer as one text, sentences joined by a space (what the judge reads)."""
        return " ".join(s.text.strip() for s in self.sentences if s.text.strip())

    @property
    def cited(self) -> tuple[str, ...]:
        """Distinct cited doc ids in first-citation order; references never cited do not count as citations."""
        return tuple(dict.fromkeys(d for s in self.sentences for d in s.citations))

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True, slots=True)
class AnswerSet:
    """All answers of one file, keyed by query id."""

    answers: dict[str, Answer]
    source: str
    run_id: str = ""
    fmt: str = ""
    skipped: int = 0  # answers to `other_query_ids` (another topic's queries), left out unchecked

    @property
    def name(self) -> str:
        """A short label for tables: the run id, else the file name."""
        return self.run_id or Path(self.source).name
