"""The online backend: the build's LLM stages answered by a model through the registry's transport.

It only turns the Backend protocol's items into prompts (from `build_prompts.py`) and parsed answers back into the
protocol's shapes; which model answers, and how (the `openai` client's cache, retries, concurrency, Batch mode and
accounting, or another registered transport), is `freshstack_hf.llm.registry`'s choice, so this file stays a thin,
readable map from stage to prompt.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import open_transport
from freshstack_hf.llm.transport import ChatRequest
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.backends import QA, JudgeTask, NuggetText


class OnlineBackend:
    """Backend protocol over a transport; judged documents arrive cut by the stage (`judging.max_doc_tokens`)."""

    kind = "online"

    def __init__(self, config: LLMConfig, cache_path: Path, show_progress: bool = False) -> None:
        self.config = config
        self.client = open_transport(config, cache_path, show_progress=show_progress)
        self.name = self.client.describe()
        self.prompt_version = build_prompts.PROMPT_VERSION

    def nuggets(self, items: list[QA]) -> list[list[NuggetText]]:
        requests = [ChatRequest(build_prompts.nugget_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(requests, stage="nuggets", parse=build_prompts.parse_nuggets, desc="nuggets")

    def subquestions(self, items: list[QA]) -> list[list[str]]:
        requests = [ChatRequest(build_prompts.subquestion_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(
            requests, stage="subquestions", parse=build_prompts.parse_subquestions, desc="sub-questions"
        )

    def closed_book(self, items: list[QA]) -> list[str]:
        requests = [ChatRequest(build_prompts.closed_book_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(
            requests, stage="closed_book", parse=build_prompts.parse_closed_book, desc="closed-book answers"
        )

    def judge(self, tasks: list[JudgeTask]) -> list[list[list[bool]]]:
        requests, parsers = [], []
        for task in tasks:
            if len(task.doc_ids) != len(task.doc_texts):
                raise ValueError(f"query {task.query_id}: {len(task.doc_ids)} doc ids for {len(task.doc_texts)} texts")
            requests.append(
                ChatRequest(
                    build_prompts.judge_messages(task),
                    label=f"{task.query_id} (docs {task.doc_ids[0]}..)" if task.doc_ids else task.query_id,
                )
            )
            parsers.append(
                partial(build_prompts.parse_judgments, n_docs=len(task.doc_texts), n_nuggets=len(task.nuggets))
            )
        # a task with no documents or no nuggets needs no call: its matrix is empty rows
        live = [i for i, t in enumerate(tasks) if t.doc_texts and t.nuggets]
        answers = self.client.chat_many(
            [requests[i] for i in live], stage="judgments", parse=[parsers[i] for i in live], desc="judgments"
        )
        out: list[list[list[bool]]] = [[[False] * len(t.nuggets) for _ in t.doc_texts] for t in tasks]
        for i, matrix in zip(live, answers, strict=True):
            out[i] = matrix
        return out

    def stats(self) -> dict[str, Any]:
        return self.client.stats()
