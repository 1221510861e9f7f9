"""The online backend: the build's LLM stages answered by an OpenAI-compatible endpoint through `LLMClient`.

It only turns the Backend protocol's items into prompts (from `prompts.py`) and parsed answers back into the
protocol's shapes; caching, retries, concurrency, Batch mode and accounting all live in the client, so this file
stays a thin, readable map from stage to prompt.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from freshstack_hf.llm.client import ChatRequest, LLMClient
from freshstack_hf.pipeline import prompts
from freshstack_hf.pipeline.backends import QA, JudgeTask, NuggetText
from freshstack_hf.pipeline.config import LLMConfig


class OnlineBackend:
    """Backend protocol over `LLMClient`; judged documents arrive cut by the stage (`judging.max_doc_tokens`)."""

    kind = "online"

    def __init__(self, config: LLMConfig, cache_path: Path, show_progress: bool = False) -> None:
        self.config = config
        self.client = LLMClient(config, cache_path, show_progress=show_progress)
        self.name = f"openai:{config.model}@{config.base_url}"
        self.prompt_version = prompts.PROMPT_VERSION

    def nuggets(self, items: list[QA]) -> list[list[NuggetText]]:
        requests = [ChatRequest(prompts.nugget_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(requests, stage="nuggets", parse=prompts.parse_nuggets, desc="nuggets")

    def subquestions(self, items: list[QA]) -> list[list[str]]:
        requests = [ChatRequest(prompts.subquestion_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(
            requests, stage="subquestions", parse=prompts.parse_subquestions, desc="sub-questions"
        )

    def closed_book(self, items: list[QA]) -> list[str]:
        requests = [ChatRequest(prompts.closed_book_messages(qa), label=qa.query_id) for qa in items]
        return self.client.chat_many(
            requests, stage="closed_book", parse=prompts.parse_closed_book, desc="closed-book answers"
        )

    def judge(self, tasks: list[JudgeTask]) -> list[list[list[bool]]]:
        requests, parsers = [], []
        for task in tasks:
            if len(task.doc_ids) != len(task.doc_texts):
                raise ValueError(f"query {task.query_id}: {len(task.doc_ids)} doc ids for {len(task.doc_texts)} texts")
            requests.append(
                ChatRequest(
                    prompts.judge_messages(task),
                    label=f"{task.query_id} (docs {task.doc_ids[0]}..)" if task.doc_ids else task.query_id,
                )
            )
            parsers.append(partial(prompts.parse_judgments, n_docs=len(task.doc_texts), n_nuggets=len(task.nuggets)))
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
