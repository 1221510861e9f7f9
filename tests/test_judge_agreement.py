"""`freshstack-hf judge-agreement`: a judge re-judges a repo's judged pairs through the build's judging code.

Against the local chat server (the real `openai` client over HTTP): a judge that answers the repo's own labels
agrees perfectly (kappa 1.0, every score unchanged), one that answers at random agrees by chance (kappa near 0).
"""

from __future__ import annotations

import json
import random
import re
import shutil

import pytest

from freshstack_hf.cli.main import main
from freshstack_hf.llm.document_cut import cut_document
from freshstack_hf.pipeline.build_prompts import JUDGE_SYSTEM
from freshstack_hf.pipeline.judge_agreement import agreement_counts
from freshstack_hf.repo.reader import load_topic


def _labels(repo, topic: str) -> dict[tuple[str, str], int]:
    """(nugget text, document text as the judge sees it) -> the repo's label."""
    t = load_topic(repo, topic)
    nugget = {n.nugget_id: n.text for n in t.nuggets}
    text = {d.doc_id: cut_document(d.text, 1024) for d in t.docs}
    return {(nugget[j.nugget_id], text[j.doc_id]): int(j.relevance > 0) for j in t.judgments}


def _judge(answer):
    """A responder for judge prompts: `answer(nugget text, document text) -> bool` decides each pair."""

    def respond(messages, body):
        user = messages[-1]["content"]
        assert messages[0]["content"] == JUDGE_SYSTEM
        nuggets = re.findall(r"^(\d+)\. (.*)$", user.split("<nuggets>\n", 1)[1].split("\n</nuggets>", 1)[0], re.M)
        docs = re.findall(r'<document id="(\d+)">\n(.*?)\n</document>', user, re.S)
        rows = [{"doc": int(i), "supported_nuggets": [int(j) for j, n in nuggets if answer(n, d)]} for i, d in docs]
        return json.dumps({"judgments": rows})

    return respond


@pytest.fixture
def repo(synth_repo, tmp_path):
    copy = tmp_path / "freshstack"
    shutil.copytree(synth_repo, copy)
    return copy


@pytest.mark.slow
def test_a_judge_that_answers_the_reference_agrees_perfectly(repo, llm_server, capsys):
    labels = _labels(repo, "alpha")
    llm_server.responder = _judge(lambda n, d: bool(labels.get((n, d), 0)))
    out = repo.parent / "agreement.json"
    args = ["judge-agreement", str(repo), "--topic", "alpha", "--base-url", llm_server.base_url, "--quiet"]
    assert main([*args, "--model", "m", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["pairs"] == len(labels) > 100 and report["skipped_pairs"] == 0
    assert report["kappa"] == 1.0 and report["accuracy"] == 1.0 and report["precision"] == report["recall"] == 1.0
    assert report["calls"] == llm_server.by_path["POST /v1/chat/completions"] > 0
    assert "kappa 1.000" in capsys.readouterr().out
    # A second run is answered from the cache: no call is paid twice.
    calls = llm_server.by_path["POST /v1/chat/completions"]
    assert main([*args, "--model", "m"]) == 0 and llm_server.by_path["POST /v1/chat/completions"] == calls


def test_a_random_judge_agrees_by_chance(repo, llm_server):
    rng = random.Random(11)
    llm_server.responder = _judge(lambda n, d: rng.random() < 0.5)
    out = repo.parent / "agreement.json"
    args = ["judge-agreement", str(repo), "--topic", "alpha", "--base-url", llm_server.base_url, "--quiet"]
    assert main([*args, "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["pairs"] > 100 and abs(report["kappa"]) < 0.2 and 0.3 < report["accuracy"] < 0.7


def test_agreement_counts_by_hand():
    # 6 pairs: tp 2, fp 1, fn 1, tn 2 -> observed 4/6; expected (3*3 + 3*3)/36 = 0.5; kappa (2/3 - 1/2)/(1/2) = 1/3
    r = agreement_counts([1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 0, 0])
    assert r["kappa"] == pytest.approx(1 / 3) and r["accuracy"] == pytest.approx(4 / 6)
    assert r["precision"] == pytest.approx(2 / 3) and r["recall"] == pytest.approx(2 / 3)


def test_bad_topic_is_refused_by_name(repo, capsys):
    assert main(["judge-agreement", str(repo), "--topic", "nope", "--offline"]) == 2
    assert "no topic 'nope'" in capsys.readouterr().err
