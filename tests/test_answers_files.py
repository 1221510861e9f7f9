"""Answer files: both formats read into the same records, and every problem refused with its line number."""

from __future__ import annotations

import gzip
import json

import pytest
from answers_topic import D, answers_a, answers_b, handmade_topic

from freshstack_hf.answers import read_answers
from freshstack_hf.answers.parse import detect_format, parse_answers
from freshstack_hf.errors import FreshStackError, Problem, ValidationError

TOPIC = handmade_topic()
KNOWN = {"query_ids": set(TOPIC.query_ids), "doc_ids": TOPIC.doc_ids}


def test_trec_rag_jsonl_resolves_citation_indexes_to_doc_ids(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(answers_a())
    answers = read_answers(path, **KNOWN)
    assert answers.fmt == "trec-rag" and answers.run_id == "extractive-a" and answers.name == "extractive-a"
    a101 = answers.answers["101"]
    assert a101.row == 1 and answers.answers["103"].row == 3
    assert a101.sentences[1].citations == (D[3], D[1])
    assert a101.cited == (D[1], D[3], D[7])  # distinct, first-citation order; D[4] is a reference never cited
    assert a101.references == (D[1], D[3], D[7], D[4])
    assert a101.text.startswith("Run php artisan queue:work") and a101.words == 10 + 6 + 1


def test_json_mapping_and_gzip(tmp_path):
    path = tmp_path / "b.json.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(answers_b())
    answers = read_answers(path, **KNOWN)
    assert answers.fmt == "json" and answers.name == "b.json.gz"
    assert list(answers.answers) == ["101"]
    assert answers.answers["101"].cited == (D[2], D[4]) and answers.answers["101"].row == 2


def test_format_detection():
    assert detect_format(answers_b()) == "json"
    assert detect_format(answers_a()) == "trec-rag"
    one_line = answers_a().splitlines()[0]
    assert detect_format(one_line) == "trec-rag"  # a one-line JSONL file is one TREC RAG record, not a mapping
    assert detect_format('{"101": {"text": "x", "citations": []}}') == "json"


def test_every_problem_of_a_jsonl_file_is_listed_with_its_line():
    lines = [
        json.dumps({"topic_id": "101", "references": [D[1]], "answer": [{"text": "ok", "citations": [0]}]}),
        '{"topic_id": "102", "references": [',  # line 2: broken JSON
        json.dumps({"topic_id": "999", "references": [], "answer": [{"text": "who?", "citations": []}]}),
        json.dumps({"topic_id": "102", "references": ["nope"], "answer": [{"text": "x", "citations": [3]}]}),
        json.dumps({"topic_id": "103", "references": [], "answer": []}),
        "",  # blank lines are skipped, but still counted
        json.dumps({"topic_id": "104", "references": [], "answer": [{"text": "one two three four five six"}]}),
        json.dumps({"topic_id": "101", "references": [], "answer": [{"text": "again", "citations": []}]}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"references": [], "answer": [{"text": "no topic", "citations": []}]}),
        json.dumps({"topic_id": "105", "references": [D[1]], "answer": [{"text": "x", "citations": ["0"]}]}),
    ]
    known = {"query_ids": {"101", "102", "103", "104", "105"}, "doc_ids": TOPIC.doc_ids}
    with pytest.raises(ValidationError) as info:
        parse_answers("\n".join(lines) + "\n", source="bad.jsonl", max_words=5, **known)
    found = [(p.row, p.message) for p in info.value.problems]
    assert found == [
        (2, found[0][1]),
        (3, "unknown query '999'"),
        (4, "answer sentence 1 cites index 3, but references has 1 doc id(s) (valid indexes 0 to 0)"),
        (4, "unknown doc 'nope' (query '102'): not in the topic's corpus"),
        (5, "query '103': the answer is empty"),
        (7, "query '104': the answer has 6 words, more than the cap of 5"),
        (8, "query '101' is answered twice (first on line 1)"),
        (9, "each line must be a JSON object with topic_id, references and answer"),
        (10, '"topic_id" is missing or not a string'),
        (11, 'answer sentence 1: "citations" must be a list of indexes into "references"'),
    ]
    assert found[0][1].startswith("not valid JSON")
    assert all(isinstance(p, Problem) and p.unit == "line" and p.where == "bad.jsonl" for p in info.value.problems)
    assert "answer file bad.jsonl is not valid: 10 problems" in str(info.value)
    assert "bad.jsonl line 7: query '104'" in str(info.value)


def test_json_mapping_problems_carry_the_line_of_their_query():
    text = (
        "{\n"
        '  "101": {"text": "fine", "citations": ["' + D[1] + '"]},\n'
        '  "102": {"text": "", "citations": []},\n'
        '  "555": {"text": "x", "citations": []},\n'
        '  "103": {"text": "x", "citations": ["ghost-doc"]},\n'
        '  "101": "just text"\n'
        "}\n"
    )
    with pytest.raises(ValidationError) as info:
        parse_answers(text, source="b.json", **KNOWN)
    assert [(p.row, p.message) for p in info.value.problems] == [
        (3, "query '102': the answer is empty"),
        (4, "unknown query '555'"),
        (5, "unknown doc 'ghost-doc' (query '103'): not in the topic's corpus"),
        (6, """query '101': expected {"text": "...", "citations": [doc ids]}"""),
    ]


def test_broken_json_mapping_names_the_line_of_the_break():
    text = '{\n  "101": {"text": "fine", "citations": []},\n  "102": {"text": "x" "citations": []}\n}\n'
    with pytest.raises(ValidationError) as info:
        parse_answers(text, source="b.json", fmt="json", **KNOWN)
    (problem,) = info.value.problems
    assert problem.row == 3 and problem.message.startswith("not valid JSON")


def test_empty_file_and_missing_file(tmp_path):
    with pytest.raises(ValidationError, match="holds no answers"):
        parse_answers("\n\n", source="empty.jsonl")
    with pytest.raises(FreshStackError, match="answer file not found"):
        read_answers(tmp_path / "missing.jsonl")


def test_without_a_topic_nothing_is_unknown_and_no_cap_means_no_cap():
    long = {"topic_id": "x", "references": ["any"], "answer": [{"text": "word " * 1000, "citations": [0]}]}
    answers = parse_answers(json.dumps(long), max_words=None)
    assert answers.answers["x"].words == 1000


def test_trec_rag_writer_round_trips_both_formats():
    from freshstack_hf.answers import to_trec_rag

    for text in (answers_a(), answers_b()):
        first = parse_answers(text, **KNOWN)
        again = parse_answers(to_trec_rag(first, run_id="rt"), **KNOWN)
        assert again.fmt == "trec-rag" and again.run_id == "rt"
        assert {q: (a.sentences, a.cited) for q, a in again.answers.items()} == {
            q: (a.sentences, a.cited) for q, a in first.answers.items()
        }
    # references never cited are kept, in their order
    assert parse_answers(to_trec_rag(parse_answers(answers_a(), **KNOWN)), **KNOWN).answers["101"].references == (
        D[1],
        D[3],
        D[7],
        D[4],
    )


def test_answers_to_other_topics_queries_are_left_out_not_refused():
    # scoring only query 101's topic: 102 and 103 belong to "another topic" and are skipped unchecked
    answers = parse_answers(answers_a(), query_ids={"101"}, doc_ids=TOPIC.doc_ids, other_query_ids={"102", "103"})
    assert list(answers.answers) == ["101"] and answers.skipped == 2
    broken = answers_a().replace('"topic_id": "102", "references": [', '"topic_id": "102", "references": ["x", ')
    assert parse_answers(broken, query_ids={"101"}, doc_ids=TOPIC.doc_ids, other_query_ids={"102", "103"}).skipped == 2
    with pytest.raises(ValidationError) as info:  # without the other topics named, they are unknown queries
        parse_answers(answers_a(), query_ids={"101"}, doc_ids=TOPIC.doc_ids)
    assert [p.message for p in info.value.problems] == ["unknown query '102'", "unknown query '103'"]
    with pytest.raises(ValidationError, match=r"holds no answers for these topics \(3 for others\)"):
        parse_answers(answers_a(), query_ids={"999"}, other_query_ids={"101", "102", "103"})
