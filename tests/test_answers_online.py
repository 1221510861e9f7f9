"""The answer judge through the real `openai` client against the local chat-completions server, and the CLI.

The fake server's judge (tests/fake_llm_answers.py `assign_labels`) supports a nugget whose words all appear in the
answer and partly supports one with half of them, so the labels of the hand-made answers are known:
answers A, query 101: [support, partial_support, not_support] (grades vital, vital, okay);
answers A, query 102: [support, not_support] (both okay, so no Vital).
"""

from __future__ import annotations

import json

import pytest
from answers_topic import answers_a, answers_b, handmade_topic, write_repo

from freshstack_hf.answers import LLMJudge, parse_answers, score_answers
from freshstack_hf.answers.measures import ALL, ALL_STRICT, CITATION_IDS, CITATION_RECALL, VITAL, VITAL_STRICT
from freshstack_hf.answers.rag_prompts import ASSIGN_SYSTEM
from freshstack_hf.cli.main import main

TOPIC = handmade_topic()
KNOWN = {"query_ids": set(TOPIC.query_ids), "doc_ids": TOPIC.doc_ids}


def judge_bodies(server) -> list[dict]:
    return [b for b in server.chat_bodies if b["messages"][0]["content"] == ASSIGN_SYSTEM]


def test_llm_judge_scores_answers_and_a_second_scoring_makes_no_request(tmp_path, llm_server):
    answers = parse_answers(answers_a(), **KNOWN)
    cache = tmp_path / "judge.sqlite"
    judge = LLMJudge(llm_server.base_url, "test-model", cache, max_concurrency=2)
    scores = score_answers([TOPIC], answers, judge, resamples=200)
    assert scores.judge == f"openai:test-model@{llm_server.base_url}"
    topic = scores.topics["handmade"]
    assert scores.assignments["handmade"] == {
        "101": ["support", "partial_support", "not_support"],
        "102": ["support", "not_support"],
    }
    assert topic.per_query["101"] == pytest.approx(
        {"citation_recall": 1 / 3, "citation_precision": 1 / 3, "citation_unjudged": 1 / 3}
        | {ALL: (1 + 0.5) / 3, ALL_STRICT: 1 / 3, VITAL: (1 + 0.5) / 2, VITAL_STRICT: 1 / 2}
    )
    assert topic.metrics[ALL] == pytest.approx((0.5 + 0.5) / 2)
    assert topic.metrics[ALL_STRICT] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert topic.metrics[VITAL] == pytest.approx(0.75) and topic.metrics[VITAL_STRICT] == pytest.approx(0.5)
    # one batched request per answered query with nuggets (103 has none), every nugget in it
    bodies = judge_bodies(llm_server)
    assert len(bodies) == 2 and llm_server.requests == 2
    assert all(b["model"] == "test-model" and b["temperature"] == 0.0 for b in bodies)
    prompts = " ".join(b["messages"][1]["content"] for b in bodies)
    assert "3. Use supervisor to keep the worker running" in prompts and "Point the env file at redis." in prompts
    assert scores.judge_stats["calls"] == 2 and scores.judge_stats["labels"]["partial_support"] == 1

    again = score_answers([TOPIC], answers, LLMJudge(llm_server.base_url, "test-model", cache), resamples=200)
    assert llm_server.requests == 2  # every label came from the cache
    assert again.topics["handmade"].per_query == topic.per_query
    assert again.judge_stats["cache_hits"] == 2 and again.judge_stats["calls"] == 0


def test_llm_judge_survives_faults_and_re_asks_after_a_bad_reply(tmp_path, llm_server):
    llm_server.fail("429", "500", "malformed")
    answers = parse_answers(answers_a(), **KNOWN)
    judge = LLMJudge(llm_server.base_url, "test-model", tmp_path / "judge.sqlite", max_concurrency=1)
    scores = score_answers([TOPIC], answers, judge, resamples=100)
    assert scores.assignments["handmade"]["101"] == ["support", "partial_support", "not_support"]
    assert scores.judge_stats["retries"] == 2 and scores.judge_stats["reasks"] == 1


def test_unanswered_queries_cost_no_request(tmp_path, llm_server):
    answers = parse_answers(answers_b(), **KNOWN)  # answers 101 only
    scores = score_answers([TOPIC], answers, LLMJudge(llm_server.base_url, "m", tmp_path / "c.sqlite"), resamples=100)
    assert llm_server.requests == 1
    assert scores.topics["handmade"].per_query["102"] == {
        "citation_recall": 0.0,
        "citation_precision": 0.0,
        "citation_unjudged": 0.0,
        ALL: 0.0,
        ALL_STRICT: 0.0,
    }


@pytest.fixture
def answer_repo(tmp_path):
    repo = write_repo(tmp_path)
    (tmp_path / "a.jsonl").write_text(answers_a())
    (tmp_path / "b.json").write_text(answers_b())
    return repo


def test_cli_scores_with_the_judge_then_rescoring_makes_zero_requests(tmp_path, answer_repo, llm_server, capsys):
    argv = [
        "evaluate-answers",
        str(answer_repo),
        "--answers",
        str(tmp_path / "a.jsonl"),
        "--judge-base-url",
        llm_server.base_url,
        "--judge-model",
        "test-model",
        "--cache",
        str(tmp_path / "judge.sqlite"),
        "--resamples",
        "300",
        "--json",
        str(tmp_path / "scores.json"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"judge: openai:test-model@{llm_server.base_url}" in out
    first = next(line for line in out.splitlines() if line.startswith("handmade"))
    assert first.split()[:5] == ["handmade", "2", "q", "Cit.", "recall"] and first.endswith("0.667 [0.333, 1.000]")
    assert "All strict" in out and "Vital strict" in out
    data = json.loads((tmp_path / "scores.json").read_text())
    assert data["judge"]["name"] == f"openai:test-model@{llm_server.base_url}"
    metrics = data["topics"]["handmade"]["metrics"]
    assert metrics[CITATION_RECALL] == pytest.approx(2 / 3) and metrics[VITAL] == pytest.approx(0.75)
    assert data["topics"]["handmade"]["assignments"]["102"] == ["support", "not_support"]
    assert data["settings"]["max_words"] == 400
    seen = llm_server.requests
    assert seen == 2

    assert main(argv) == 0
    assert llm_server.requests == seen  # the second scoring is answered by the cache alone
    assert json.loads((tmp_path / "scores.json").read_text())["topics"] == data["topics"]


def test_cli_compares_two_answer_files(tmp_path, answer_repo, capsys):
    argv = ["evaluate-answers", str(answer_repo), "--answers", str(tmp_path / "a.jsonl")]
    argv += ["--answers", str(tmp_path / "b.json"), "--offline", "--resamples", "300", "--json", "-"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # --json - : stdout is the JSON alone
    assert "judge: offline-heuristic (word overlap, no LLM" in captured.err
    assert [f["answers"]["name"] for f in data["files"]] == ["extractive-a", "b.json"]
    recall = data["comparison"]["topics"]["handmade"][CITATION_RECALL]
    assert recall["diff"] == pytest.approx(1 / 3 - 2 / 3)
    assert set(data["comparison"]["average"]) >= {CITATION_RECALL, ALL}

    argv.remove("--json")
    argv.remove("-")
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "answers A: extractive-a" in table and "answers B: b.json" in table and "B-A" in table
    assert "judge: offline-heuristic (word overlap, no LLM: All and Vital are indicative only)" in table
    assert " -0.333 " in table


def test_cli_refuses_a_malformed_file_with_its_lines_and_writes_nothing(tmp_path, answer_repo, llm_server, capsys):
    lines = answers_a().splitlines()
    bad = [
        lines[0],
        "{oops",
        lines[1].replace('"102"', '"424242"'),
        lines[2].replace('"citations": [0]', '"citations": [5]'),
    ]
    (tmp_path / "bad.jsonl").write_text("\n".join(bad) + "\n")
    out = tmp_path / "scores.json"
    argv = ["evaluate-answers", str(answer_repo), "--answers", str(tmp_path / "bad.jsonl")]
    argv += ["--answers", str(tmp_path / "b.json"), "--judge-base-url", llm_server.base_url, "--judge-model", "m"]
    argv += ["--cache", str(tmp_path / "judge.sqlite"), "--json", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert "answers refused, nothing scored: 3 problems" in err
    assert f"{tmp_path / 'bad.jsonl'} line 2: not valid JSON" in err
    assert f"{tmp_path / 'bad.jsonl'} line 3: unknown query '424242'" in err
    assert f"{tmp_path / 'bad.jsonl'} line 4: answer sentence 1 cites index 5" in err
    assert not out.exists() and not (tmp_path / "judge.sqlite").exists()
    assert llm_server.requests == 0


def test_cli_option_errors_exit_2(tmp_path, answer_repo, capsys):
    base = ["evaluate-answers", str(answer_repo), "--answers", str(tmp_path / "a.jsonl")]
    assert main([*base, "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", ""]) == 2
    assert "needs a model name" in capsys.readouterr().err
    assert main([*base, "--offline", "--no-judge"]) == 2
    assert main([*base, "--answers", "x", "--answers", "y"]) == 2
    assert "give one --answers file" in capsys.readouterr().err
    assert main([*base, "--no-judge", "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "judge: none (citation scores only)" in out and "All" not in out.split("judge:")[1]


@pytest.mark.slow
def test_cli_scores_one_topic_of_a_whole_dataset_answer_file(tmp_path, synth_repo, capsys):
    from freshstack_hf import load_topic
    from freshstack_hf.answers import extractive_answers, to_trec_rag
    from freshstack_hf.baselines import retrievers

    path = tmp_path / "all.jsonl"
    with path.open("w") as out:
        for name in ("alpha", "beta"):
            topic = load_topic(synth_repo, name)
            ranked = {q: [d for d, _ in docs] for q, docs in retrievers.bm25(topic, k=10).run.items()}
            out.write(to_trec_rag(extractive_answers(topic, ranked)))
    argv = ["evaluate-answers", str(synth_repo), "--answers", str(path), "--topic", "alpha", "--no-judge"]
    assert main([*argv, "--resamples", "200", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert f"note: {path}: 12 answer(s) to other topics' queries left out" in captured.err
    data = json.loads(captured.out)
    assert list(data["topics"]) == ["alpha"] and len(data["topics"]["alpha"]["per_query"]) == 12
    assert data["judge"] is None and set(data["topics"]["alpha"]["metrics"]) == set(CITATION_IDS)
    assert main([*argv[:-3], "--no-judge", "--resamples", "200", "--json", "-"]) == 0  # every topic: none left out
    assert "left out" not in capsys.readouterr().err
