"""Nugget assignment: for each nugget of a query, does the answer support, partially support or not support it.

Two judges answer the same `assign(tasks)` call:

* `LLMJudge`: one batched request per query through the transport the registry opens for its endpoint
  (`freshstack_hf.llm.registry`, shared with the build: for an OpenAI-compatible endpoint the `LLMClient`, with
  its SQLite cache keyed by the whole request, retries with backoff, bounded concurrency, JSON repair and
  re-asks), so scoring the same answers twice costs nothing the second time;
* `OfflineJudge`: a word-overlap heuristic with no endpoint, so tests and quick local runs always finish. Its
  numbers are indicative only, and every score carries the judge's `name` so they are never mistaken for an
  LLM's.

A task with no nuggets needs no call, and neither does an empty answer (nothing can be supported): both are
labelled without asking, identically by both judges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from freshstack_hf.answers.rag_prompts import (
    NOT_SUPPORT,
    PARTIAL,
    PROMPT_VERSION,
    SUPPORT,
    assign_messages,
    parse_assignments,
)
from freshstack_hf.defaults import cache_root
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.offline_text import lexical_share, terms
from freshstack_hf.llm.registry import OFFLINE, open_transport, transport_kind
from freshstack_hf.llm.transport import OFFLINE_LABEL, ChatRequest

OFFLINE_NAME = OFFLINE_LABEL
SUPPORT_SHARE = 0.5  # offline: share of a nugget's weighted terms found in the answer for `support`
PARTIAL_SHARE = 0.25  # ... and for `partial_support`


@dataclass(frozen=True, slots=True)
class AssignTask:
    """One query to judge: its question, its nuggets' texts in order, and the answer's text ("" = no answer)."""

    query_id: str
    question: str
    nuggets: tuple[str, ...]
    answer: str


class Judge(Protocol):
    name: str

    def assign(self, tasks: Sequence[AssignTask]) -> list[list[str]]: ...

    def stats(self) -> dict[str, Any]: ...


def _needs_call(task: AssignTask) -> bool:
    return bool(task.nuggets and task.answer.strip())


class OfflineJudge:
    """Labels from the weighted share of a nugget's terms that the answer contains (the build's term rules)."""

    name = OFFLINE_NAME
    prompt_version = ""

    def __init__(self) -> None:
        self._calls = 0

    def assign(self, tasks: Sequence[AssignTask]) -> list[list[str]]:
        out: list[list[str]] = []
        for task in tasks:
            if not _needs_call(task):
                out.append([NOT_SUPPORT] * len(task.nuggets))
                continue
            self._calls += 1
            answer = set(terms(task.answer))
            out.append([offline_label(lexical_share(terms(n), answer)) for n in task.nuggets])
        return out

    def stats(self) -> dict[str, Any]:
        return {"judge": self.name, "judged_queries": self._calls}


def offline_label(share: float) -> str:
    """The offline rule: >= 0.5 of the nugget's terms present is support, >= 0.25 partial, less is none."""
    if share >= SUPPORT_SHARE:
        return SUPPORT
    return PARTIAL if share >= PARTIAL_SHARE else NOT_SUPPORT


class LLMJudge:
    """Labels from a chat model behind an endpoint (OpenAI-compatible, or `KIND+URL` for another registered
    transport); the key is read from `api_key_env`."""

    prompt_version = PROMPT_VERSION
    stage = "answer_judge"

    def __init__(
        self,
        base_url: str,
        model: str,
        cache_path: str | Path,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        max_concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 6,
        show_progress: bool = False,
    ) -> None:
        config = LLMConfig(
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            temperature=0.0,  # one label per nugget, as repeatable as the endpoint allows
            max_concurrency=max_concurrency,
            timeout=timeout,
            max_retries=max_retries,
            max_output_tokens=512,
        )
        self.client = open_transport(config, cache_path, show_progress=show_progress)
        self.name = self.client.describe()

    def assign(self, tasks: Sequence[AssignTask]) -> list[list[str]]:
        live = [i for i, t in enumerate(tasks) if _needs_call(t)]
        requests = [
            ChatRequest(assign_messages(tasks[i].question, tasks[i].nuggets, tasks[i].answer), label=tasks[i].query_id)
            for i in live
        ]
        parsers = [partial(parse_assignments, n_nuggets=len(tasks[i].nuggets)) for i in live]
        answers = self.client.chat_many(requests, stage=self.stage, parse=parsers, desc="answer judge")
        out = [[NOT_SUPPORT] * len(t.nuggets) for t in tasks]
        for i, labels in zip(live, answers, strict=True):
            out[i] = labels
        return out

    def stats(self) -> dict[str, Any]:
        return {"judge": self.name, **self.client.stats().get(self.stage, {})}


def make_judge(
    base_url: str = "",
    model: str = "",
    cache_path: str | Path | None = None,
    **options: Any,
) -> OfflineJudge | LLMJudge:
    """`LLMJudge` when an endpoint is named, else the offline heuristic (the registry's choice, as for a build)."""
    if transport_kind(base_url) == OFFLINE:
        return OfflineJudge()
    if not model:
        raise FreshStackError(f"a judge endpoint ({base_url}) needs a model name: pass --judge-model")
    return LLMJudge(base_url, model, cache_path or default_judge_cache(), **options)


def default_judge_cache() -> Path:
    """The judge's response cache: beside the embedding cache, under $FRESHSTACK_CACHE (else ~/.cache)."""

    return cache_root() / "llm" / "answer-judge.sqlite"


def label_counts(assignments: Sequence[Sequence[str]]) -> dict[str, int]:
    """How many nuggets got each label (for reports: a judge that says `support` to everything shows here)."""
    counts = Counter(label for labels in assignments for label in labels)
    return {label: counts.get(label, 0) for label in (SUPPORT, PARTIAL, NOT_SUPPORT)}
