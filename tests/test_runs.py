"""Run files: both formats, round trips, and the exact messages of strict and lenient checking."""

from __future__ import annotations

import gzip
import json

import pytest

from freshstack_hf.errors import ValidationError
from freshstack_hf.runs import check_run, detect_format, load_run, parse_json, parse_trec, write_run

QUERIES = {"q1", "q2"}
DOCS = {"d1", "d2", "d3", "repo/a b.py_0_10"}


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_doc_ids_may_contain_spaces(tmp_path):
    path = write(
        tmp_path, "run.trec", "q1 Q0 repo/a b.py_0_10 1 2.5 bm25\nq1 Q0 d1 2 1.0 bm25\n\nq2 Q0 d2 1 0.5 bm25\n"
    )
    loaded = load_run(path, query_ids=QUERIES, doc_ids=DOCS, strict=True)
    assert loaded.run == {"q1": {"repo/a b.py_0_10": 2.5, "d1": 1.0}, "q2": {"d2": 0.5}}
    assert (loaded.tag, loaded.fmt, loaded.warnings, loaded.name) == ("bm25", "trec", (), "bm25")


def test_malformed_lines_are_errors_in_both_modes_with_line_numbers(tmp_path):
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.5 t\nq1 d2 1 2.0\nq1 Q0 d3 2 high t\nq2 Q0 d1 first 1 t\n")
    for strict in (False, True):
        with pytest.raises(ValidationError) as info:
            load_run(path, strict=strict)
        assert [str(p) for p in info.value.problems] == [
            f"{path} line 2: expected 6 columns (query_id Q0 doc_id rank score tag), found 4",
            f"{path} line 3: score 'high' is not a finite number",
            f"{path} line 4: rank 'first' is not an integer",
        ]
    assert str(info.value).splitlines()[0] == f"run {path} is not valid: 3 problems"


def test_non_finite_scores_are_malformed():
    _, problems = parse_trec(["q1 Q0 d1 1 nan t", "q1 Q0 d2 2 inf t"], "r")
    assert [p.message for p in problems] == ["score 'nan' is not a finite number", "score 'inf' is not a finite number"]


STRICT_TEXT = "\n".join(
    [
        "q1 Q0 d1 1 3.0 t",
        "q1 Q0 d1 2 2.0 t",  # repeated
        "q1 Q0 nowhere 3 1.0 t",  # unknown doc
        "q9 Q0 d1 1 1.0 t",  # unknown query
        "q9 Q0 d2 2 0.5 t",
        "q2 Q0 d1 1 3.0 t",
        "q2 Q0 d2 2 2.0 t",
        "q2 Q0 d3 3 1.0 t",  # past depth 2
    ]
)


def test_strict_mode_reports_every_problem_in_file_order(tmp_path):
    path = write(tmp_path, "run.trec", STRICT_TEXT)
    with pytest.raises(ValidationError) as info:
        load_run(path, query_ids=QUERIES, doc_ids=DOCS, max_depth=2, strict=True)
    assert str(info.value) == "\n".join(
        [
            f"run {path} is not valid: 4 problems",
            f"  - {path} line 2: doc 'd1' appears twice for query 'q1'",
            f"  - {path} line 3: unknown doc 'nowhere' for query 'q1'",
            f"  - {path} line 4: unknown query 'q9' (2 lines)",
            f"  - {path} line 8: query 'q2' has 3 docs, more than the allowed depth 2",
        ]
    )


def test_lenient_mode_repairs_and_counts(tmp_path):
    path = write(tmp_path, "run.trec", STRICT_TEXT)
    loaded = load_run(path, query_ids=QUERIES, doc_ids=DOCS, max_depth=2)
    assert loaded.run == {"q1": {"d1": 3.0, "nowhere": 1.0}, "q2": {"d1": 3.0, "d2": 2.0}}
    assert loaded.warnings == (
        "dropped 2 lines of 1 unknown query: 'q9'",
        "1 doc id not in the corpus (1 query), scored as non-relevant",
        "1 repeated doc ignored, the first occurrence kept",
        "1 query had more than 2 docs; the top 2 kept",
    )
    assert len(loaded.problems) == 4


def test_a_reranking_run_may_rank_only_its_own_query_candidates(tmp_path):
    """d3 is a candidate of q2, not of q1; q9's docs are reported as an unknown query, once, not per doc."""
    candidates = {"q1": {"d1", "d2"}, "q2": {"d2", "d3"}}
    text = "q1 Q0 d2 1 2.0 t\nq1 Q0 d3 2 1.0 t\nq2 Q0 d3 1 2.0 t\nq2 Q0 d1 2 1.0 t\nq9 Q0 d1 1 1.0 t\n"
    path = write(tmp_path, "rerank.trec", text)
    with pytest.raises(ValidationError) as info:
        load_run(path, query_ids=QUERIES, doc_ids=DOCS, strict=True, candidates=candidates)
    fix = "a reranking run may only reorder the query's own top_ranked candidates"
    assert [str(p) for p in info.value.problems] == [
        f"{path} line 2: doc 'd3' is not among the candidates of query 'q1' ({fix})",
        f"{path} line 4: doc 'd1' is not among the candidates of query 'q2' ({fix})",
        f"{path} line 5: unknown query 'q9' (1 line)",
    ]
    lenient = load_run(path, query_ids=QUERIES, doc_ids=DOCS, candidates=candidates)
    assert lenient.run == {"q1": {"d2": 2.0}, "q2": {"d3": 2.0}}
    assert "2 docs outside their query's candidates dropped" in lenient.warnings
    assert load_run(path, query_ids=QUERIES, doc_ids=DOCS).run["q1"] == {"d2": 2.0, "d3": 1.0}  # no candidates given


def test_more_than_twenty_problems_are_counted(tmp_path):
    path = write(tmp_path, "run.trec", "".join(f"q1 Q0 d{i} {i} x t\n" for i in range(25)))
    with pytest.raises(ValidationError) as info:
        load_run(path)
    lines = str(info.value).splitlines()
    assert lines[0] == f"run {path} is malformed: 25 problems"
    assert lines[-1] == "  ... and 5 more"
    assert len(lines) == 22


def test_json_runs_and_their_problems(tmp_path):
    path = write(tmp_path, "run.json", json.dumps({"q1": {"d1": 2, "d2": 1.5}, "q2": {"d3": 0.1}}))
    assert load_run(path, query_ids=QUERIES, doc_ids=DOCS, strict=True).run == {
        "q1": {"d1": 2.0, "d2": 1.5},
        "q2": {"d3": 0.1},
    }
    _, problems = parse_json('{"q1": {"d1": "high", "d2": true}, "q2": [1, 2]}', "r.json")
    assert [str(p) for p in problems] == [
        "r.json: query 'q1' doc 'd1': score 'high' is not a number",
        "r.json: query 'q1' doc 'd2': score True is not a number",
        "r.json: query 'q2': expected a JSON object {query_id: {doc_id: score}}",
    ]
    assert [str(p) for p in parse_json("[1, 2]", "r.json")[1]] == [
        "r.json: expected a JSON object {query_id: {doc_id: score}}"
    ]
    assert [str(p) for p in parse_json('{"q1": {"d1": 1,}}', "r.json")[1]] == [
        "r.json line 1: invalid JSON: Expecting property name enclosed in double quotes"
    ]


def test_json_repeated_keys_are_seen(tmp_path):
    path = write(tmp_path, "run.json", '{"q1": {"d1": 2, "d1": 1}}')
    with pytest.raises(ValidationError, match="doc 'd1' appears twice for query 'q1'"):
        load_run(path, strict=True)
    assert load_run(path).run == {"q1": {"d1": 2.0}}


def test_format_detection(tmp_path):
    assert detect_format(tmp_path / "x.json", "") == "json"
    assert detect_format(tmp_path / "x.json.gz", "") == "json"
    assert detect_format(tmp_path / "x.run", '  {"q1": {}}') == "json"
    assert detect_format(tmp_path / "x.txt", "q1 Q0 d1 1 1.0 t") == "trec"


@pytest.mark.parametrize("name", ["out.trec", "out.json", "out.trec.gz", "out.json.gz"])
def test_round_trip_keeps_scores_exactly(tmp_path, name):
    run = {"q1": {"repo/a  b.py_0_10": 0.1 + 0.2, "d1": 1 / 3, "d2": 1 / 3}, "q2": {"d3": -2.5e-17}}
    path = write_run(run, tmp_path / name, tag="mine")
    loaded = load_run(path, strict=True)
    assert loaded.run == run
    if name.endswith(".gz"):
        with gzip.open(path, "rt") as handle:
            assert handle.read(1) in "q{"


def test_trec_writer_ranks_with_the_tie_rule(tmp_path):
    path = write_run({"q1": {"a": 1.0, "b": 1.0, "c": 2.0}}, tmp_path / "r.trec", tag="t")
    assert path.read_text().splitlines() == ["q1 Q0 c 1 2.0 t", "q1 Q0 b 2 1.0 t", "q1 Q0 a 3 1.0 t"]


def test_trec_writer_refuses_ids_that_would_not_read_back(tmp_path):
    from freshstack_hf.errors import FreshStackError

    with pytest.raises(FreshStackError, match="contains spaces"):
        write_run({"q 1": {"d": 1.0}}, tmp_path / "r.trec")
    with pytest.raises(FreshStackError, match="one word"):
        write_run({"q1": {"d": 1.0}}, tmp_path / "r.trec", tag="my run")
    assert not (tmp_path / "r.trec").exists()


def test_check_run_in_memory():
    loaded = check_run({"q1": {"d1": 1.0, "zz": 0.5}, "q7": {"d1": 1.0}}, query_ids=QUERIES, doc_ids=DOCS)
    assert loaded.run == {"q1": {"d1": 1.0, "zz": 0.5}}
    assert loaded.warnings[0] == "dropped 1 line of 1 unknown query: 'q7'"
    with pytest.raises(ValidationError, match=r"run run is malformed: 1 problem\n  - run: query 'q1' doc 'd1'"):
        check_run({"q1": {"d1": "x"}})


def test_missing_file_is_a_user_error(tmp_path):
    from freshstack_hf.errors import FreshStackError

    with pytest.raises(FreshStackError, match="run file not found"):
        load_run(tmp_path / "nope.trec")
