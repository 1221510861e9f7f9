from dataclasses import replace

import pytest

from freshstack_hf.errors import Problem, ValidationError, format_problems
from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic
from freshstack_hf.topic_check import validate_topic


def _good() -> Topic:
    return Topic(
        "t",
        queries=[Query("10", "T", "B", answer_text="A"), Query("11", "T", "B", answer_text="A")],
        nuggets=[Nugget("10_0", "10", "n0"), Nugget("10_1", "10", "n1"), Nugget("11_0", "11", "n")],
        docs=[
            Doc("r/a.md_0_5", "x", repo="r", path="a.md", start_byte=0, end_byte=5),
            Doc("r/a.md_5_9", "y", repo="r", path="a.md", start_byte=5, end_byte=9),
        ],
        judgments=[
            NuggetJudgment("10", "10_0", "r/a.md_0_5", 1),
            NuggetJudgment("10", "10_1", "r/a.md_5_9", 1),
            NuggetJudgment("11", "11_0", "r/a.md_0_5", 1),
            NuggetJudgment("11", "11_0", "r/a.md_5_9", 0),
        ],
    )


def _messages(topic: Topic) -> list[str]:
    return [str(p) for p in validate_topic(topic)]


def test_valid_topic_has_no_problem():
    assert validate_topic(_good()) == []


def test_every_problem_reported_with_config_row_and_value():
    g = _good()
    bad = Topic(
        "t",
        queries=[*g.queries, Query("10", "dup", "x", answer_text="A"), Query("12", "", "", answer_text="")],
        nuggets=[Nugget("10_0", "10", "n0"), Nugget("10_5", "10", "n1"), Nugget("11_0", "11", "")],
        docs=[*g.docs, Doc("r/a.md_0_5", "dup"), Doc("r/b.md_0_3", "  ", repo="r", path="b.md", end_byte=3)],
        judgments=[
            NuggetJudgment("10", "10_0", "r/a.md_0_5", 1),
            NuggetJudgment("10", "10_5", "r/missing_0_1", 1),
            NuggetJudgment("11", "11_0", "r/a.md_5_9", 0),
            NuggetJudgment("11", "11_0", "r/a.md_5_9", 1),
        ],
    )
    msgs = _messages(bad)
    expected = [
        "t row 2: duplicate query_id '10' (first at row 0) (give every query a unique id)",
        "t row 3: query '12' has empty title and text",
        "t row 3: query '12' has an empty answer_text",
        "t-corpus row 2: duplicate _id 'r/a.md_0_5' (first at row 0) (corpus ids must be unique)",
        "t-corpus row 3: document 'r/b.md_0_3' has empty text (drop empty chunks)",
        "t row 0: malformed nugget _id '10_5' in query '10' (expected 10_1 ({query_id}_{k}, k 0-based in order))",
        "t row 1: nugget '11_0' has empty text",
        "t row 3: query '12' has no nugget (drop the query or generate its nuggets)",
        "t row 0: nugget '10_5' judges corpus id 'r/missing_0_1', which is not in t-corpus "
        "(fix the id or add the document to the corpus)",
        "t row 1: nugget '11_0' lists 'r/a.md_5_9' as both relevant and non-relevant",
    ]
    for line in expected:
        assert line in msgs, f"missing: {line}\n got: {msgs}"


def test_nugget_without_relevant_doc_and_id_metadata_mismatch():
    g = _good()
    docs = [replace(g.docs[0], doc_id="r/a.md_0_6"), g.docs[1]]
    judgments = [replace(j, doc_id="r/a.md_0_6") if j.doc_id == "r/a.md_0_5" else j for j in g.judgments]
    judgments = [j for j in judgments if j.nugget_id != "10_1"]
    msgs = _messages(Topic("t", g.queries, g.nuggets, docs, judgments))
    assert msgs == [
        "t-corpus row 0: _id 'r/a.md_0_6' disagrees with its metadata (expected 'r/a.md_0_5') "
        "(ids follow {repo}/{path}_{start_byte}_{end_byte}; fix the id or the metadata)",
        "t row 0: nugget '10_1' has no relevant document (judge more documents or drop the nugget)",
    ]


def test_validation_error_shows_first_20_and_counts_the_rest():
    problems = [Problem("cfg", f"bad value {i}", i) for i in range(27)]
    text = str(ValidationError(problems, "repo is not valid"))
    lines = text.splitlines()
    assert lines[0] == "repo is not valid: 27 problems"
    assert lines[1] == "  - cfg row 0: bad value 0"
    assert lines[20] == "  - cfg row 19: bad value 19"
    assert lines[21] == "  ... and 7 more"
    assert len(lines) == 22
    assert format_problems([Problem("x", "y")], "t") == "t: 1 problem\n  - x: y"


def test_topic_names_are_split_name_safe():
    from freshstack_hf.errors import FreshStackError

    with pytest.raises(FreshStackError, match="invalid topic name 'Lang-Chain'"):
        Topic("Lang-Chain")
