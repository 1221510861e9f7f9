"""What an LLM stage asks of a backend, in bulk: nuggets, sub-questions, closed-book answers, support judgments.

Two kinds answer it: the online backend (`online.py`: prompts sent through the transport that
`freshstack_hf.llm.registry` opens for the endpoint, by default the `openai` client layer with its cache, retries
and accounting) and the offline heuristic backend (`offline`: no endpoint at all, so a build always finishes).
Stages only see this protocol, so the manifest can say which backend made each stage and a topic built offline
can later be re-judged online by changing one YAML section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

IMPORTANCE = ("vital", "okay")


@dataclass(frozen=True, slots=True)
class QA:
    """A question with its accepted answer, as the nugget and pooling stages read it."""

    query_id: str
    title: str
    body: str
    answer: str

    @property
    def question(self) -> str:
        return f"{self.title}\n\n{self.body}".strip()


@dataclass(frozen=True, slots=True)
class NuggetText:
    """A generated nugget before it gets its id; importance is "vital", "okay" or "" (not graded)."""

    text: str
    importance: str = ""


@dataclass(frozen=True, slots=True)
class JudgeTask:
    """One judgment call: all nuggets of a question against up to `docs_per_call` documents (the paper's n+k)."""

    query_id: str
    question: str
    nuggets: tuple[str, ...]
    doc_ids: tuple[str, ...]
    doc_texts: tuple[str, ...]  # as written; already cut to `doc_token_limit` cl100k tokens (0: not cut)
    doc_token_limit: int = 0
    # The documents whole, as the retrievers read them: the offline judge embeds these (its vectors then come from
    # the embedding cache the pools stage filled) rather than the cut texts, which no retriever ever encoded.
    whole_docs: tuple[str, ...] = ()


class Backend(Protocol):
    """Each method takes a list and returns one result per item, in order."""

    name: str  # "offline-heuristic" or the transport's `describe()`: what the manifest and card show
    kind: str  # "offline" or "online"

    def nuggets(self, items: list[QA]) -> list[list[NuggetText]]: ...

    def subquestions(self, items: list[QA]) -> list[list[str]]: ...

    def closed_book(self, items: list[QA]) -> list[str]: ...

    def judge(self, tasks: list[JudgeTask]) -> list[list[list[bool]]]:
        """Per task, a matrix `[doc index][nugget index] -> supports?`."""
        ...

    def stats(self) -> dict[str, Any]:
        """Per-stage accounting since creation: calls, cache hits, retries, tokens, cost."""
        ...
