"""What the LLM layer does with replies and settings, with no endpoint: the build's strict parsers and the local
repair tried before a re-ask, the FRESHSTACK_LLM_* overrides, and a response cache that survives SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from freshstack_hf.llm.cache import ResponseCache, request_key
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.repair import ParseError, repair_json
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.backends import NuggetText
from freshstack_hf.pipeline.choose import effective_config, make_backend
from freshstack_hf.pipeline.online import OnlineBackend

# ---- parsers --------------------------------------------------------------------------------------------


def test_judgment_parser_rejects_bad_shapes():
    ok = '{"judgments": [{"doc": 1, "supported_nuggets": [2]}, {"doc": 2, "supported_nuggets": []}]}'
    assert build_prompts.parse_judgments("Doc 1 states it.\n" + ok, 2, 2) == [[False, True], [False, False]]
    with pytest.raises(ParseError, match=r"documents \[2\] are missing"):
        build_prompts.parse_judgments('{"judgments": [{"doc": 1, "supported_nuggets": [1]}]}', 2, 2)
    with pytest.raises(ParseError, match="names nugget 3"):
        build_prompts.parse_judgments(ok.replace("[2]", "[3]"), 2, 2)
    with pytest.raises(ParseError, match="judged twice"):
        build_prompts.parse_judgments(ok.replace('"doc": 2', '"doc": 1'), 2, 2)
    with pytest.raises(ParseError, match="does not exist"):
        build_prompts.parse_judgments(ok.replace('"doc": 2', '"doc": 5'), 2, 2)


def test_parsers_accept_fenced_and_trailing_comma_json():
    fenced = '```json\n{"nuggets": [{"text": "Use  Http::timeout", "importance": "Vital"},],}\n```'
    assert build_prompts.parse_nuggets(fenced) == [NuggetText("Use Http::timeout", "vital")]
    assert build_prompts.parse_subquestions('Here:\n```\n["a?", "b?",]\n```') == ["a?", "b?"]
    cot = 'Doc 1 {maybe}.\n```json\n{"judgments": [{"doc": 1, "supported_nuggets": [1,],},]}\n```'
    assert build_prompts.parse_judgments(cot, 1, 1) == [[True]]
    assert json.loads(repair_json('x ```json\n{"a": [1, 2,],}\n``` y')) == {"a": [1, 2]}


def test_other_parsers_reject_bad_shapes():
    with pytest.raises(ParseError, match="importance"):
        build_prompts.parse_nuggets('{"nuggets": [{"text": "a", "importance": "high"}]}')
    with pytest.raises(ParseError):
        build_prompts.parse_nuggets('{"nuggets": []}')
    with pytest.raises(ParseError, match="2 to 5"):
        build_prompts.parse_subquestions('["only one"]')
    with pytest.raises(ParseError):
        build_prompts.parse_closed_book("   ")


# ---- configuration ---------------------------------------------------------------------------------------


def test_timing_variables_that_are_no_number_are_named(monkeypatch):
    """The retry waits and the Batch poll read their seconds the same way: a typo is an error naming the variable."""
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.llm.batch import wait_for_batch
    from freshstack_hf.llm.retry import RetryPolicy

    monkeypatch.setenv("FRESHSTACK_LLM_BATCH_POLL", "30s")
    with pytest.raises(FreshStackError, match=r"FRESHSTACK_LLM_BATCH_POLL='30s' is not a number of seconds"):
        wait_for_batch(None, "judgments", "batch-1")
    monkeypatch.setenv("FRESHSTACK_LLM_BACKOFF", "fast")
    with pytest.raises(FreshStackError, match=r"FRESHSTACK_LLM_BACKOFF='fast' is not a number of seconds"):
        RetryPolicy(LLMConfig(), lambda *args, **kw: None)


def test_environment_overrides(monkeypatch, tmp_path):
    base = LLMConfig()
    monkeypatch.delenv("FRESHSTACK_LLM_BASE_URL", raising=False)
    assert effective_config(base) == base
    monkeypatch.setenv("FRESHSTACK_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("FRESHSTACK_LLM_MODEL", "local-model")
    monkeypatch.setenv("FRESHSTACK_LLM_BATCH", "1")
    eff = effective_config(base)
    assert (eff.base_url, eff.model, eff.batch) == ("http://127.0.0.1:9/v1", "local-model", True)
    made = make_backend(eff, tmp_path / "cache.sqlite")
    assert isinstance(made, OnlineBackend) and made.kind == "online"
    assert made.name == "openai:local-model@http://127.0.0.1:9/v1"
    # the environment is applied once, by whoever starts the build: the backend follows the config it is given
    assert make_backend(base, tmp_path / "cache.sqlite").kind == "offline"


# ---- the cache survives SIGKILL ---------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys, time
    from freshstack_hf.llm.cache import ResponseCache, request_key
    cache = ResponseCache(sys.argv[1])
    for i in range(10_000):
        request = {"endpoint": "chat.completions", "model": "m", "messages": [{"role": "user", "content": str(i)}]}
        cache.put(request_key(request), request, {"choices": [{"message": {"content": f"answer {i}"}}]})
        print(i, flush=True)
        time.sleep(0.002)
    """
)


def test_cache_entries_survive_sigkill(tmp_path):
    path = tmp_path / "cache.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    finished = -1
    assert proc.stdout is not None
    for line in proc.stdout:
        finished = int(line)
        if finished >= 30:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    cache = ResponseCache(path)
    for i in range(finished + 1):  # every put the writer reported is there, whole
        request = {"endpoint": "chat.completions", "model": "m", "messages": [{"role": "user", "content": str(i)}]}
        assert cache.get(request_key(request))["choices"][0]["message"]["content"] == f"answer {i}"
