"""The LLM client layer with the real `openai` client against the local fake server (tests/llm_server.py)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm import batch as batch_mod
from freshstack_hf.llm.cache import request_key
from freshstack_hf.llm.client import ChatRequest, LLMClient
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.repair import ParseError
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.backends import QA, JudgeTask, NuggetText
from freshstack_hf.pipeline.online import OnlineBackend

QAS = [
    QA(
        f"q{i}",
        f"How do I set the {topic} in Laravel?",
        "I tried several things and nothing works.",
        f"Call the {topic} method on the builder. Pass the value in seconds. It raises an exception when exceeded.",
    )
    for i, topic in enumerate(["timeout", "retry count", "base url", "user agent", "proxy", "cookie jar"])
]


def config(server, **kw) -> LLMConfig:
    return LLMConfig(**{"base_url": server.base_url, "model": "fake-4o", "timeout": 5.0, "max_retries": 4, **kw})


def backend(server, tmp_path: Path, name: str = "cache.sqlite", **kw) -> OnlineBackend:
    return OnlineBackend(config(server, **kw), tmp_path / name)


def cached_responses(path: Path) -> int:
    """Entries in an LLM response cache file, read with sqlite3 (the cache itself only gets and puts)."""
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def chat_requests(server) -> int:
    return server.by_path["POST /v1/chat/completions"]


def test_second_run_is_served_from_the_cache(llm_server, tmp_path):
    first = backend(llm_server, tmp_path).nuggets(QAS)
    assert all(n and all(isinstance(x, NuggetText) for x in n) for n in first)
    assert first[0][0].text == "Call the timeout method on the builder."
    made = llm_server.requests
    assert made == len(QAS)
    again = backend(llm_server, tmp_path)
    assert again.nuggets(QAS) == first
    assert llm_server.requests == made
    assert again.stats()["nuggets"]["cache_hits"] == len(QAS)
    assert again.stats()["nuggets"]["calls"] == 0


def test_whole_request_is_the_key(llm_server, tmp_path):
    backend(llm_server, tmp_path).closed_book(QAS[:2])
    backend(llm_server, tmp_path, temperature=0.7).closed_book(QAS[:2])  # another parameter: another request
    assert chat_requests(llm_server) == 4
    assert cached_responses(tmp_path / "cache.sqlite") == 4


@pytest.mark.slow
def test_transient_faults_are_retried_and_counted(llm_server, tmp_path):
    clean = backend(llm_server, tmp_path, "clean.sqlite").nuggets(QAS[:1])
    llm_server.timeout_sleep = 1.5
    llm_server.fail("429", "500", "garbage_body", "timeout", "malformed")
    b = backend(llm_server, tmp_path, timeout=0.75)
    assert b.nuggets(QAS[:1]) == clean
    stats = b.stats()["nuggets"]
    assert stats["retries"] == 4  # 429, 500, garbage body, timeout
    assert stats["reasks"] == 1  # the malformed answer, re-asked with the parser's message
    assert stats["errors"] == 0
    assert sum(llm_server.by_fault.values()) == 5
    reask = llm_server.chat_bodies[-1]["messages"]
    assert reask[-1]["role"] == "user" and "could not be used" in reask[-1]["content"]


def test_retry_after_is_honoured(llm_server, tmp_path, monkeypatch):
    from freshstack_hf.llm import retry

    waits: list[float] = []
    monkeypatch.setattr(retry, "time", SimpleNamespace(sleep=waits.append))  # the policy's waits, not the server's
    llm_server.retry_after = "0.4"
    llm_server.fail("429")
    b = backend(llm_server, tmp_path)
    b.closed_book(QAS[:1])
    assert waits == [0.4]  # one retry, after the 0.4 s asked for (the backoff alone would wait at most 0.01 s)
    assert b.stats()["closed_book"]["retries"] == 1 and chat_requests(llm_server) == 2


def test_rejected_key_stops_at_once(llm_server, tmp_path, monkeypatch):
    monkeypatch.delenv("FRESHSTACK_TEST_KEY", raising=False)
    llm_server.fail("401")
    b = backend(llm_server, tmp_path, api_key_env="FRESHSTACK_TEST_KEY")
    with pytest.raises(FreshStackError) as err:
        b.nuggets(QAS[:1])
    assert llm_server.base_url in str(err.value) and "FRESHSTACK_TEST_KEY" in str(err.value)
    assert "not set" in str(err.value)
    assert llm_server.requests == 1
    assert b.stats()["nuggets"]["retries"] == 0


def test_persistent_garbage_body_gives_up_with_the_url_stage_and_query(llm_server, tmp_path):
    llm_server.fail(*["garbage_body"] * 5)
    with pytest.raises(FreshStackError) as err:
        backend(llm_server, tmp_path).subquestions(QAS[:1])
    message = str(err.value)
    assert llm_server.base_url in message and "subquestions" in message and "q0" in message
    assert llm_server.requests == 5  # max_retries=4: five attempts


def test_unreachable_endpoint_is_retried_then_named(tmp_path, monkeypatch):
    import socket

    monkeypatch.setenv("FRESHSTACK_LLM_BACKOFF", "0.01")
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    b = OnlineBackend(LLMConfig(base_url=url, model="m", max_retries=2, timeout=2.0), tmp_path / "c.sqlite")
    with pytest.raises(FreshStackError, match="after 3 attempts") as err:
        b.closed_book(QAS[:1])
    assert url in str(err.value) and "closed_book" in str(err.value)
    assert b.stats()["closed_book"]["retries"] == 2 and b.stats()["closed_book"]["errors"] == 1


def test_persistent_unparseable_answers_give_up_after_the_follow_ups(tmp_path, monkeypatch):
    from llm_server import FakeOpenAI

    monkeypatch.setenv("FRESHSTACK_LLM_BACKOFF", "0.01")
    with FakeOpenAI(lambda messages, body: "I would rather not answer in JSON.") as server:
        with pytest.raises(FreshStackError) as err:
            backend(server, tmp_path).nuggets(QAS[:1])
        assert "nuggets" in str(err.value) and "q0" in str(err.value) and server.base_url in str(err.value)
        assert server.requests == 3  # the request and two follow-ups, each its own cached request
        assert cached_responses(tmp_path / "cache.sqlite") == 3


def test_batch_mode_end_to_end_and_rerun_is_free(llm_server, tmp_path):
    b = backend(llm_server, tmp_path, batch=True, input_price_per_million=2.0, output_price_per_million=8.0)
    result = b.nuggets(QAS[:3])
    assert result == backend(llm_server, tmp_path, "sync.sqlite").nuggets(QAS[:3])
    paths = llm_server.by_path
    assert paths["POST /v1/files"] == 1 and paths["POST /v1/batches"] == 1
    assert paths["GET /v1/files/{id}/content"] == 1 and paths["GET /v1/batches/{id}"] == 2
    assert chat_requests(llm_server) == 3  # only the synchronous comparison run
    stats = b.stats()["nuggets"]
    assert stats["batch_calls"] == 3 and stats["calls"] == 3
    full = (stats["prompt_tokens"] * 2.0 + stats["completion_tokens"] * 8.0) / 1e6
    assert stats["cost"] == pytest.approx(full / 2, rel=1e-4)
    uploaded = [json.loads(x) for x in llm_server.files["file-1"].decode().splitlines()]
    assert {x["url"] for x in uploaded} == {"/v1/chat/completions"} and all(
        "endpoint" not in x["body"] for x in uploaded
    )
    made = llm_server.requests
    again = backend(llm_server, tmp_path, batch=True)
    assert again.nuggets(QAS[:3]) == result
    assert llm_server.requests == made
    assert json.loads((tmp_path / "cache.sqlite.batches.json").read_text()) == {}


def test_killed_batch_build_resumes_the_same_batch(llm_server, tmp_path, monkeypatch):
    real_wait = batch_mod.wait_for_batch

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed while polling")

    monkeypatch.setattr(batch_mod, "wait_for_batch", killed)
    with pytest.raises(KeyboardInterrupt):
        backend(llm_server, tmp_path, batch=True).closed_book(QAS[:4])
    state = json.loads((tmp_path / "cache.sqlite.batches.json").read_text())
    assert list(state) == ["batch-1"] and len(state["batch-1"]["keys"]) == 4
    monkeypatch.setattr(batch_mod, "wait_for_batch", real_wait)
    answers = backend(llm_server, tmp_path, batch=True).closed_book(QAS[:4])
    assert all(a.startswith("From memory:") for a in answers)
    assert llm_server.by_path["POST /v1/batches"] == 1
    assert chat_requests(llm_server) == 0


def test_failed_batch_lines_fall_back_to_synchronous_calls(llm_server, tmp_path):
    b = backend(llm_server, tmp_path, batch=True)
    failing = b.client.chat_request(build_prompts.subquestion_messages(QAS[1]))
    llm_server.batch_fail_ids = {request_key(failing)}
    result = b.subquestions(QAS[:3])
    assert len(result) == 3 and all(2 <= len(q) <= 5 for q in result)
    assert chat_requests(llm_server) == 1
    assert b.stats()["subquestions"]["batch_calls"] == 2


def test_concurrency_is_bounded(llm_server, tmp_path):
    llm_server.latency = 0.05
    b = backend(llm_server, tmp_path, max_concurrency=3)
    many = [
        QA(f"c{i}", f"Question number {i} about queues", "", f"Answer {i} uses the queue worker.") for i in range(12)
    ]
    out = b.closed_book(many)
    assert [a.split()[4] for a in out] == [str(i) for i in range(12)]  # results in request order
    assert 2 <= llm_server.max_in_flight <= 3


def test_tokens_and_cost_come_from_the_server_usage(llm_server, tmp_path):
    from fake_llm_answers import task_responder
    from llm_server import _usage

    b = backend(llm_server, tmp_path, input_price_per_million=3.0, output_price_per_million=12.0)
    b.subquestions(QAS[:3])
    expected = [_usage(body["messages"], task_responder(body["messages"], body)) for body in llm_server.chat_bodies]
    p = sum(u["prompt_tokens"] for u in expected)
    c = sum(u["completion_tokens"] for u in expected)
    stats = b.stats()["subquestions"]
    assert (stats["prompt_tokens"], stats["completion_tokens"]) == (p, c) and p > 0
    assert stats["cost"] == pytest.approx((p * 3.0 + c * 12.0) / 1e6, rel=1e-4)


def test_judgments_through_the_backend(llm_server, tmp_path):
    task = JudgeTask(
        "q0",
        QAS[0].question,
        ("The timeout method sets seconds", "Cookies persist in a jar"),
        ("a", "b", "c"),
        (
            "Use the timeout method; seconds are the unit.",
            "A jar keeps cookies persist.",
            "Unrelated text about trains",
        ),
    )
    matrix = backend(llm_server, tmp_path).judge([task, JudgeTask("q1", "x", (), (), ())])
    assert matrix[0] == [[True, False], [False, True], [False, False]]
    assert matrix[1] == []
    assert chat_requests(llm_server) == 1  # the empty task costs nothing


def test_judge_prompt_keeps_documents_as_written_and_names_the_cut():
    from freshstack_hf import cl100k
    from freshstack_hf.llm.document_cut import CUT_MARK, cut_document

    code = "def f(x):\n    if x:\n        return 1\n    return 2\n" * 300
    cut = cut_document(code, 100)
    assert cut.endswith(CUT_MARK) and code.startswith(cut.removesuffix(CUT_MARK))
    assert cl100k.count(cut.removesuffix(CUT_MARK)) <= 100 and cut_document("short text", 100) == "short text"
    task = JudgeTask("q", "question", ("n",), ("d",), (cut,), doc_token_limit=100)
    text = build_prompts.judge_messages(task)[1]["content"]
    assert f'<document id="1">\n{cut}\n</document>' in text and "longer than 100 tokens" in text


def test_embeddings_are_cached_per_text(llm_server, tmp_path):
    client = LLMClient(config(llm_server), tmp_path / "cache.sqlite")
    vectors = client.embed_many(["alpha beta", "gamma delta", "alpha beta"], "fake-embed", batch_size=1)
    assert vectors.shape == (3, 16) and (vectors[0] == vectors[2]).all() and not (vectors[0] == vectors[1]).all()
    assert llm_server.by_path["POST /v1/embeddings"] == 2  # the repeated text is sent once
    again = LLMClient(config(llm_server), tmp_path / "cache.sqlite").embed_many(["gamma delta"], "fake-embed")
    assert (again[0] == vectors[1]).all() and llm_server.by_path["POST /v1/embeddings"] == 2


def test_client_repairs_before_re_asking(tmp_path, monkeypatch):
    from llm_server import FakeOpenAI

    monkeypatch.setenv("FRESHSTACK_LLM_BACKOFF", "0.01")

    def strict(text: str) -> list:
        value = json.loads(text) if text.startswith("[") else None
        if not isinstance(value, list):
            raise ParseError("not a bare JSON list")
        return value

    with FakeOpenAI(lambda messages, body: "Sure:\n```json\n[1, 2,]\n```") as server:
        client = LLMClient(config(server), tmp_path / "cache.sqlite")
        out = client.chat_many([ChatRequest([{"role": "user", "content": "x"}], label="q9")], stage="s", parse=strict)
        assert out == [[1, 2]]
        assert client.stats()["s"]["repairs"] == 1 and server.requests == 1
