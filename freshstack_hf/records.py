"""Typed, immutable records of a FreshStack topic.

Field names follow ir_measures / ir_datasets (`query_id`, `doc_id`, `nugget_id`, `relevance`, `score`) so
a judgment converts 1:1 to `ir_measures.Qrel(query_id, doc_id, relevance, iteration=nugget_id)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Doc:
    """A corpus chunk. Id form (official): `{repo_keyword}/{path}_{start_byte}_{end_byte}`."""

    doc_id: str
    text: str
    url: str = ""
    repo: str = ""
    path: str = ""
    start_byte: int = 0
    end_byte: int = 0
    commit: str = ""
    title: str = ""


@dataclass(frozen=True, slots=True)
class Query:
    """A Stack Overflow question with its accepted answer. `text` is what retrievers see (title + body)."""

    query_id: str
    title: str
    body: str
    answer_id: str = ""
    answer_text: str = ""
    date: str = ""
    tags: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The official retrieval text: `title + " " + body` (the freshstack DataLoader's convention)."""
        return f"{self.title} {self.body}"


@dataclass(frozen=True, slots=True)
class Nugget:
    """An atomic fact of the accepted answer. Id form: `{query_id}_{k}` with k 0-based."""

    nugget_id: str
    query_id: str
    text: str
    importance: str = ""  # "vital" / "okay" as TREC RAG's nuggetizer grades them; "" when not graded


@dataclass(frozen=True, slots=True)
class NuggetJudgment:
    """A binary support judgment: does `doc_id` support `nugget_id`? 0 rows are judged non-relevant."""

    query_id: str
    nugget_id: str
    doc_id: str
    relevance: int

    def to_ir_measures(self):  # -> ir_measures.Qrel, imported lazily
        """ir_measures carries subtopics (nuggets) in `iteration`, the ndeval convention."""
        import ir_measures

        return ir_measures.Qrel(self.query_id, self.doc_id, self.relevance, self.nugget_id)


@dataclass(frozen=True, slots=True)
class LengthStats:
    """Average, median and 75th percentile of a length distribution (in whitespace tokens)."""

    avg: float = 0.0
    p50: float = 0.0
    p75: float = 0.0


@dataclass(frozen=True, slots=True)
class TopicStats:
    """The split statistics a dataset card shows for one topic."""

    topic: str
    queries: int
    corpus: int
    nuggets: int
    judgments: int
    relevant_judgments: int
    relevant_docs_per_query: float
    relevant_docs_per_nugget: float
    nuggets_per_query: float
    query_length: LengthStats = field(default_factory=LengthStats)
    doc_length: LengthStats = field(default_factory=LengthStats)
    answer_length: LengthStats = field(default_factory=LengthStats)
