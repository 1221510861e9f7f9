"""The build against an OpenAI-compatible endpoint: the real `openai` client talking HTTP to a local fake server.

Faults are injected (429, 500, malformed JSON, timeouts) and the build still finishes; a second run makes zero
requests; a build killed with SIGKILL during judging resumes without repeating any call whose answer it had.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline import build_prompts

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "laravel_dump" / "Posts.xml"
JUDGE_STAGES = "questions,corpus,nuggets,pools,judgments"


def definition(tmp_path: Path, shared_data: Path, base_url: str, **llm) -> Path:
    data = {
        "topic": "laravel",
        "questions": {"source": str(FIXTURE), "tags": ["laravel-10", "laravel-11"], "since": "2023-01-01"},
        "corpus": {
            "repositories": [
                {
                    "source": str(shared_data / "github" / "laravel-docs.tar.gz"),
                    "url": "https://github.com/laravel/docs",
                    "keyword": "docs",
                    "commit": "86077535bbfdc2ab29cd9f202ee1ab3e7e6e18e6",
                }
            ],
        },
        "llm": {"base_url": base_url, "model": "test-model", "max_concurrency": 4, "timeout": 0.5, **llm},
        "pooling": {"depth": 10, "retrievers": ["bm25"]},
    }
    path = tmp_path / "laravel.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def judge_prompts(bodies) -> list[str]:
    return [b["messages"][-1]["content"] for b in bodies if b["messages"][0]["content"] == build_prompts.JUDGE_SYSTEM]


@pytest.mark.slow
def test_build_survives_faults_and_a_second_run_makes_no_request(tmp_path, shared_data, llm_server, capsys):
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.reader import load_topic

    llm_server.fail("429", "500", "malformed", "timeout", "garbage_body", "429")
    path = definition(tmp_path, shared_data, llm_server.base_url)
    out = tmp_path / "freshstack"
    assert main(["build", str(path), "--out", str(out), "--quiet"]) == 0
    assert llm_server.by_fault["timeout"] == 1 and llm_server.by_fault["429"] == 2
    assert validate_repo(out) == []
    topic = load_topic(out, "laravel")
    assert topic.nuggets and {n.importance for n in topic.nuggets} <= {"vital", "okay"}
    manifest = json.loads((out / "manifest.json").read_text())
    stages = manifest["topics"]["laravel"]["build"]["stages"]
    assert stages["judgments"]["backend"] == f"openai:test-model@{llm_server.base_url}"
    assert stages["judgments"]["usage"]["judgments"]["calls"] > 0
    assert stages["nuggets"]["usage"]["nuggets"]["retries"] >= 1
    card = (out / "README.md").read_text()
    assert "Heuristic judgments" not in card and "test-model" in card
    capsys.readouterr()

    seen = llm_server.requests
    assert main(["build", str(path), "--out", str(out), "--quiet", "--no-resume"]) == 0
    assert llm_server.requests == seen  # every stage re-ran, every LLM answer came from the cache
    assert "calls" in capsys.readouterr().out


@pytest.mark.slow
def test_sigkill_during_judging_loses_no_finished_judgment(tmp_path, shared_data, llm_server):
    llm_server.latency = 0.25
    path = definition(tmp_path, shared_data, llm_server.base_url, max_concurrency=2, timeout=5.0)
    work = tmp_path / "work"
    cmd = [
        sys.executable,
        "-m",
        "freshstack_hf",
        "build",
        str(path),
        "--out",
        str(tmp_path / "freshstack"),
        "--work",
        str(work),
        "--quiet",
        "--stages",
        JUDGE_STAGES,
    ]
    env = {**os.environ, "FRESHSTACK_LLM_BACKOFF": "0.01"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while len(judge_prompts(llm_server.chat_bodies)) < 4:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "judging never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first_run = len(llm_server.chat_bodies)
    assert not (work / "judgments" / "record.json").exists()

    with sqlite3.connect(work / "llm-cache.sqlite") as db:
        cached = [json.loads(r[0]) for r in db.execute("SELECT request FROM responses")]
    finished = set(judge_prompts(cached))
    assert finished, "no judgment call had finished before the kill"

    llm_server.latency = 0.0
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    again = judge_prompts(llm_server.chat_bodies[first_run:])
    assert again, "the resumed run judged nothing"
    assert not finished & set(again)  # no finished call was paid twice
    # and nothing before judging was asked again either: nuggets and pools came from the cache
    assert all(b["messages"][0]["content"] == build_prompts.JUDGE_SYSTEM for b in llm_server.chat_bodies[first_run:])
    record = json.loads((work / "judgments" / "record.json").read_text())
    assert record["usage"]["judgments"]["cache_hits"] >= len(finished)


@pytest.mark.slow
def test_unauthorized_endpoint_is_one_clear_error(tmp_path, shared_data, llm_server, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm_server.fail(*["401"] * 20)
    # A generous timeout: on a loaded machine a 0.5 s one can expire before the 401 arrives, and a timeout is
    # retried, which would count a second 401 that the client never refused to send.
    path = definition(tmp_path, shared_data, llm_server.base_url, max_concurrency=1, timeout=10.0)
    out = tmp_path / "freshstack"
    code = main(["build", str(path), "--out", str(out), "--quiet", "--stages", "questions,corpus,nuggets"])
    err = capsys.readouterr().err
    assert code == 2
    assert llm_server.base_url in err and "OPENAI_API_KEY" in err and "Traceback" not in err
    assert llm_server.by_fault["401"] == 1  # refused at once, not retried
    assert not out.exists()


@pytest.mark.slow
def test_garbage_answers_end_in_one_clear_error(tmp_path, shared_data, llm_server, capsys):
    llm_server.fail(*["garbage_body"] * 200)
    path = definition(tmp_path, shared_data, llm_server.base_url, max_retries=2)
    code = main(
        ["build", str(path), "--out", str(tmp_path / "freshstack"), "--quiet", "--stages", "questions,corpus,nuggets"]
    )
    err = capsys.readouterr().err
    assert code == 2 and llm_server.base_url in err and "Traceback" not in err


@pytest.mark.slow
def test_pooling_with_an_endpoint_embedding_model(tmp_path, shared_data, llm_server):
    """`pooling.dense_model: openai:MODEL` retrieves with the endpoint's embeddings, cached like chat answers."""
    path = definition(tmp_path, shared_data, llm_server.base_url)
    data = yaml.safe_load(path.read_text())
    data["pooling"] = {
        "depth": 5,
        "retrievers": ["dense"],
        "dense_model": "openai:test-embed",
        "techniques": ["answer"],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = [
        "build",
        str(path),
        "--out",
        str(tmp_path / "freshstack"),
        "--quiet",
        "--stages",
        "questions,corpus,nuggets,pools",
    ]
    assert main(args) == 0
    embedded = llm_server.by_path["POST /v1/embeddings"]
    assert embedded > 0
    pools = pq.read_table(tmp_path / "freshstack-work" / "laravel" / "pools" / "pools.parquet")
    assert pools.num_rows > 0 and set(pools.column("techniques").to_pylist()[0]) == {"answer"}
    record = json.loads((tmp_path / "freshstack-work" / "laravel" / "pools" / "record.json").read_text())
    assert record["dense_model"] == "openai:test-embed"
    assert main([*args, "--no-resume"]) == 0
    assert llm_server.by_path["POST /v1/embeddings"] == embedded  # every embedding came from the cache


@pytest.mark.slow
def test_judged_documents_reach_the_endpoint_as_written(tmp_path, shared_data, llm_server):
    """Code keeps its line breaks and indentation in the request body the server receives; a long document is cut
    at `judging.max_doc_tokens` cl100k tokens (no hidden cap, the YAML value), and the prompt says so."""
    import re

    from freshstack_hf import cl100k
    from freshstack_hf.llm.document_cut import CUT_MARK, cut_document

    path = definition(tmp_path, shared_data, llm_server.base_url)
    data = yaml.safe_load(path.read_text())
    data["judging"] = {"max_doc_tokens": 300}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    work = tmp_path / "work"
    args = ["build", str(path), "--out", str(tmp_path / "out"), "--work", str(work), "--quiet"]
    assert main([*args, "--stages", JUDGE_STAGES]) == 0
    chunks = pq.read_table(work / "corpus" / "chunks.parquet", columns=["text"]).column("text").to_pylist()
    as_sent = {cut_document(text, 300) for text in chunks}
    bodies = judge_prompts(llm_server.chat_bodies)
    assert bodies
    docs = [d for body in bodies for d in re.findall(r'<document id="\d+">\n(.*?)\n</document>', body, re.S)]
    assert docs and all(doc in as_sent for doc in docs)  # each document byte for byte as the corpus holds it
    indented = [d for d in docs if re.search(r"\n {4}\S", d)]
    assert indented, "no judged document with indented code"
    cut = [d for d in docs if d.endswith(CUT_MARK)]
    assert cut and all(cl100k.count(d.removesuffix(CUT_MARK)) <= 300 for d in cut)
    assert all("longer than 300 tokens" in body for body in bodies)
