"""A new LLM backend is one class and one registry line: a toy transport answers a build's judgments and an
answer judgment through the same code paths a build and `evaluate-answers` use.

The toy reads the prompts it is sent and answers by a rule no other judge follows: a nugget is supported exactly
when its text contains the word MARKER (and, for the build's judge, the document contains it too). So the
judgments and labels asserted below can only have come from the toy, and only if the prompts reached it whole.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from answers_topic import answers_a, handmade_topic

from freshstack_hf.answers import make_judge, parse_answers, score_answers
from freshstack_hf.answers.rag_prompts import ASSIGN_SYSTEM, NOT_SUPPORT, SUPPORT
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import OFFLINE, OPENAI, register, transport_kind, unregister
from freshstack_hf.llm.transport import ChatRequest, Parsers, Requests, endpoint_label
from freshstack_hf.pipeline.accounting import backend_record
from freshstack_hf.pipeline.build_prompts import JUDGE_SYSTEM
from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.pipeline.stages.judgments import judge_tasks

MARKER = "the"


def has_marker(text: str) -> bool:
    return MARKER in re.findall(r"[a-z]+", text.lower())


def numbered(user: str, tag: str) -> list[str]:
    """The numbered lines between <tag> and </tag>, in order."""
    block = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.S)
    assert block, f"no <{tag}> block in the prompt"
    return [re.sub(r"^\d+\. ", "", line) for line in block.group(1).splitlines()]


class ToyTransport:
    """A backend that needs no endpoint: it answers the build's judge and the answer judge by the MARKER rule."""

    kind = "toy"
    opened: ClassVar[list[LLMConfig]] = []  # every config the registry handed to the toy, to check what reached it

    def __init__(self, config: LLMConfig, cache_path: Path, *, show_progress: bool = False) -> None:
        self.config = config
        self.calls: Counter[str] = Counter()
        ToyTransport.opened.append(config)

    def describe(self) -> str:
        return f"toy:{self.config.model}"

    def chat_many(self, requests: Requests, *, stage: str, parse: Parsers[Any], desc: str = "") -> list[Any]:
        parsers = list(parse) if isinstance(parse, Sequence) else [parse] * len(requests)
        out = []
        for request, parser in zip(requests, parsers, strict=True):
            messages = request.messages if isinstance(request, ChatRequest) else request
            self.calls[stage] += 1
            out.append(parser(self.reply(messages[0]["content"], messages[-1]["content"])))
        return out

    def reply(self, system: str, user: str) -> str:
        nuggets = numbered(user, "nuggets")
        if system == JUDGE_SYSTEM:
            docs = re.findall(r'<document id="(\d+)">\n(.*?)\n</document>', user, re.S)
            supported = [j for j, text in enumerate(nuggets, 1) if has_marker(text)]
            rows = [{"doc": int(i), "supported_nuggets": supported if has_marker(d) else []} for i, d in docs]
            return "Reading each document.\n" + json.dumps({"judgments": rows})
        if system == ASSIGN_SYSTEM:
            return json.dumps({"labels": [SUPPORT if has_marker(text) else NOT_SUPPORT for text in nuggets]})
        raise AssertionError(f"the toy only judges; it was asked: {system[:60]!r}")

    def stats(self) -> dict[str, dict[str, Any]]:
        return {stage: {"calls": n} for stage, n in self.calls.items()}


@pytest.fixture
def toy():
    """The toy registered for the test only: `toy+URL` base URLs choose it, and nothing else changes."""
    ToyTransport.opened.clear()
    register("toy", ToyTransport)
    try:
        yield ToyTransport
    finally:
        unregister("toy")
    assert transport_kind("toy+memory") == OPENAI  # gone: a `toy+` URL is an ordinary endpoint again


def test_the_registry_chooses_by_base_url(toy):
    assert transport_kind("") == OFFLINE
    assert transport_kind("http://127.0.0.1:8000/v1") == OPENAI
    assert transport_kind("toy+memory") == "toy"
    assert transport_kind("elsewhere+http://127.0.0.1:8000/v1") == OPENAI  # an unregistered prefix is no kind
    assert endpoint_label("gpt-4o", "https://api.openai.com/v1") == "openai:gpt-4o@https://api.openai.com/v1"
    with pytest.raises(ValueError, match="already registered"):
        register("toy", ToyTransport)
    with pytest.raises(ValueError, match="cannot be removed"):
        unregister(OPENAI)


def test_a_build_judges_through_the_registered_toy(toy, tmp_path):
    definition = {
        "topic": "toy",
        "questions": {"source": "posts.xml", "tags": ["laravel"]},
        "corpus": {"repositories": [{"source": "docs", "commit": "86077535"}]},
        "llm": {"base_url": "toy+memory", "model": "toy-1"},
    }
    config = parse_topic(definition, "toy.yaml", tmp_path)
    backend = StageContext(config, tmp_path / "work", tmp_path / "repo", show_progress=False).backend()
    assert [c.base_url for c in toy.opened] == ["memory"] and toy.opened[0].model == "toy-1"
    nuggets = {
        "q1": ("Set the queue connection", "Run queue:work", "Keep the worker alive"),
        "q2": ("Clear config cache",),
    }
    text_of = {
        "d1": "The worker reads the queue.",
        "d2": "queue:work runs jobs",
        "d3": "Supervisor keeps the process alive.",
        "d4": "php artisan config:clear",
    }
    docs = {"q1": ["d1", "d2", "d3"], "q2": ["d4"]}
    tasks = judge_tasks({"q1": "How?", "q2": "Why?"}, nuggets, docs, text_of, per_call=2, max_doc_tokens=64)
    assert [(t.query_id, t.doc_ids) for t in tasks] == [("q1", ("d1", "d2")), ("q1", ("d3",)), ("q2", ("d4",))]

    before = backend.stats()
    matrices = backend.judge(tasks)

    expected = [
        [[has_marker(text_of[d]) and has_marker(n) for n in task.nuggets] for d in task.doc_ids] for task in tasks
    ]
    assert matrices == expected
    assert matrices[0] == [[True, False, True], [False, False, False]]  # d1 has the marker, d2 has none
    assert matrices[1] == [[True, False, True]] and matrices[2] == [[False]]
    record = backend_record(backend, before)
    assert record == {"backend": "toy:toy-1", "kind": "online", "usage": {"judgments": {"calls": 3}}}


def test_answers_are_judged_through_the_registered_toy(toy, tmp_path):
    topic = handmade_topic()
    answers = parse_answers(answers_a(), query_ids=set(topic.query_ids), doc_ids=topic.doc_ids)
    judge = make_judge("toy+memory", "judge-1", tmp_path / "judge.sqlite")
    assert [(c.base_url, c.model, c.temperature) for c in toy.opened] == [("memory", "judge-1", 0.0)]

    scores = score_answers([topic], answers, judge, resamples=50)

    by_query: dict[str, list[str]] = {}
    for nugget in topic.nuggets:
        by_query.setdefault(nugget.query_id, []).append(SUPPORT if has_marker(nugget.text) else NOT_SUPPORT)
    assignments = scores.assignments["handmade"]
    assert assignments == by_query
    assert assignments == {"101": [NOT_SUPPORT, SUPPORT, SUPPORT], "102": [NOT_SUPPORT, SUPPORT]}
    assert scores.judge == "toy:judge-1"
    assert scores.judge_stats["calls"] == 2  # one request per answered query with nuggets (103 has none)
