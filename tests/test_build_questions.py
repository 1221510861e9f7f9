"""The `questions` build stage on real dumps, against counts made here independently (xml.etree / csv / json)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from question_stage import run_questions, stage_context

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.sources import dump as source_dump
from freshstack_hf.pipeline.sources.posts import iso_date, parse_tags
from freshstack_hf.pipeline.stages import questions

GENAI_TAGS = ("chatgpt", "gpt-4", "stable-diffusion")


def _expected_dump(path: Path, tags, since: str = "", until: str = "") -> dict:
    """The filter steps counted with xml.etree over the whole file (fine for these small dumps)."""
    rows = [r.attrib for r in ET.parse(path).getroot().iter("row")]
    answers = {r["Id"]: r for r in rows if r.get("PostTypeId") == "2"}
    steps = Counter(rows=len(rows))
    kept = []
    for r in rows:
        if r.get("PostTypeId") != "1":
            continue
        steps["questions"] += 1
        qtags = {t.lower() for t in re.findall(r"[^<>|]+", r.get("Tags", ""))}
        if not qtags & set(tags):
            continue
        steps["tag"] += 1
        day = r["CreationDate"].split("T")[0]
        if (since and day < since) or (until and day > until):
            continue
        steps["window"] += 1
        if not r.get("AcceptedAnswerId"):
            continue
        steps["accepted_id"] += 1
        if r["AcceptedAnswerId"] in answers:
            kept.append((int(r["Id"]), r["AcceptedAnswerId"], qtags))
    kept.sort()
    return {"steps": steps, "ids": [str(k[0]) for k in kept], "answers": [k[1] for k in kept], "kept": kept}


def _check_counts(record: dict, expected: dict) -> None:
    c, s = record["counts"], expected["steps"]
    assert (c["rows_scanned"], c["questions"], c["with_topic_tag"], c["in_window"], c["with_accepted_answer_id"]) == (
        s["rows"], s["questions"], s["tag"], s["window"], s["accepted_id"])  # fmt: skip
    assert c["accepted_answer_present"] == len(expected["ids"])


# ---- real Stack Exchange dumps -------------------------------------------------------------------------------


def test_genai_dump_matches_independent_count(tmp_path, shared_data):
    path = shared_data / "stackexchange" / "genai.Posts.xml"
    record, rows, cooc = run_questions(tmp_path, path, GENAI_TAGS, since="2023-07-01", until="2023-12-31")
    expected = _expected_dump(path, GENAI_TAGS, "2023-07-01", "2023-12-31")
    _check_counts(record, expected)
    assert expected["ids"], "the window should keep some genai questions"
    assert [r["query_id"] for r in rows] == expected["ids"]
    assert [r["answer_id"] for r in rows] == expected["answers"]
    assert record["format"] == "stackexchange" and record["bytes_read"] == path.stat().st_size
    assert record["counts"]["kept"] == len(rows)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", r["date"]) for r in rows)
    assert all("&lt;" not in r["body"] and "<p>" not in r["answer_text"] for r in rows)
    # co-occurrence: every tag of the kept questions except the topic's, counted here independently
    counts = Counter(t for _, _, tags in expected["kept"] for t in tags if t not in GENAI_TAGS)
    top = sorted(counts, key=lambda t: (-counts[t], t))[:25]
    assert [e["tag"] for e in cooc["cooccurring"]] == top
    assert [e["count"] for e in cooc["cooccurring"]] == [counts[t] for t in top]
    assert cooc["questions"] == len(rows)
    assert [e["tag"] for e in record["cooccurrence_top10"]] == top[:10]


def test_history_meta_dump_and_max_questions(tmp_path, shared_data):
    path = shared_data / "stackexchange" / "history.meta.Posts.xml"
    all_tags = Counter(
        t for r in ET.parse(path).getroot().iter("row") for t in re.findall(r"<([^>]+)>", r.get("Tags", ""))
    )
    tags = tuple(t for t, _ in all_tags.most_common(3))
    expected = _expected_dump(path, tags)
    record, rows, _ = run_questions(tmp_path / "a", path, tags)
    _check_counts(record, expected)
    assert [r["query_id"] for r in rows] == expected["ids"] and len(rows) > 5
    capped, capped_rows, _ = run_questions(tmp_path / "b", path, tags, max_questions=5)
    assert [r["query_id"] for r in capped_rows] == expected["ids"][:5]
    assert capped["counts"]["kept"] == 5 and capped["counts"]["accepted_answer_present"] == len(expected["ids"])


def test_pipe_tag_syntax_and_mixed_case(tmp_path, shared_data):
    """The same dump with `|a|b|` tags (newer dumps), some uppercased, gives the same questions."""
    src = (shared_data / "stackexchange" / "genai.Posts.xml").read_text(encoding="utf-8-sig")

    def pipes(m: re.Match) -> str:
        tags = re.findall(r"&lt;(.*?)&gt;", m.group(1))
        return 'Tags="|' + "|".join(t.upper() if i % 2 else t for i, t in enumerate(tags)) + '|"'

    piped = tmp_path / "Posts.xml"
    piped.write_text(re.sub(r'Tags="([^"]*)"', pipes, src), encoding="utf-8")
    assert 'Tags="|' in piped.read_text()
    _, rows, _ = run_questions(tmp_path, piped, GENAI_TAGS)
    expected = _expected_dump(shared_data / "stackexchange" / "genai.Posts.xml", GENAI_TAGS)
    assert [r["query_id"] for r in rows] == expected["ids"]
    assert all(t == t.lower() for r in rows for t in r["tags"])


def test_parse_tags_and_dates():
    assert parse_tags("<python><LangChain>") == ("python", "langchain")
    assert parse_tags("|python|langchain|") == ("python", "langchain")
    assert parse_tags("a|B") == ("a", "b")
    assert parse_tags(["X", "y"]) == ("x", "y") and parse_tags("") == ()
    assert iso_date("2023-07-17T19:24:01.893") == "2023-07-17T19:24:01"
    assert iso_date("2022-08-02 16:16:31.810000 UTC") == "2022-08-02T16:16:31"
    assert iso_date(1689621841) == "2023-07-17T19:24:01"
    with pytest.raises(ValueError):
        iso_date("yesterday")


def test_answer_before_question_second_pass(tmp_path):
    xml = tmp_path / "Posts.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<posts>\n'
        '  <row Id="5" PostTypeId="2" ParentId="9" CreationDate="2024-01-02T00:00:00.000" Score="3" '
        'Body="&lt;pre&gt;&lt;code&gt;x = 1&#xA;&lt;/code&gt;&lt;/pre&gt;" />\n'
        '  <row Id="9" PostTypeId="1" AcceptedAnswerId="5" CreationDate="2024-01-01T10:00:00.000" Score="2" '
        'Title="Q &amp; A" Body="&lt;p&gt;Why?&lt;/p&gt;" Tags="&lt;godot&gt;&lt;gdscript&gt;" />\n'
        '  <row Id="10" PostTypeId="1" AcceptedAnswerId="77" CreationDate="2024-01-01T10:00:00.000" Score="2" '
        'Title="lost answer" Body="" Tags="&lt;godot&gt;" />\n'
        "</posts>\n",
        encoding="utf-8",
    )
    record, rows, _ = run_questions(
        tmp_path, xml, ["godot"], since="2024-01-01", until="2024-01-01"
    )  # inclusive bounds
    assert record["passes"] == 2
    assert record["counts"]["with_accepted_answer_id"] == 2 and record["counts"]["kept"] == 1
    (row,) = rows
    assert (row["query_id"], row["answer_id"], row["title"]) == ("9", "5", "Q & A")
    assert row["answer_text"] == "```\nx = 1\n```" and row["answer_has_code"] and not row["body_has_code"]
    assert (row["score"], row["answer_score"], row["tags"]) == (2, 3, ["godot", "gdscript"])


@pytest.mark.slow
def test_7z_archive_with_py7zr(tmp_path, shared_data, monkeypatch):
    py7zr = pytest.importorskip("py7zr")
    plain = shared_data / "stackexchange" / "genai.Posts.xml"
    archive = tmp_path / "genai.stackexchange.com.7z"
    with py7zr.SevenZipFile(archive, "w") as z:
        z.write(plain, "Posts.xml")
    monkeypatch.setattr(source_dump.shutil, "which", lambda _name: None)  # force the py7zr path
    ctx = stage_context(tmp_path, archive, GENAI_TAGS)
    assert questions.plan(ctx).details["format"] == "stackexchange"
    record = questions.run(ctx)
    rows = pq.read_table(ctx.work / "questions" / "questions.parquet").to_pylist()
    assert [r["query_id"] for r in rows] == _expected_dump(plain, GENAI_TAGS)["ids"]
    assert record["bytes_read"] == plain.stat().st_size  # the XML inside, not the archive
    assert not list(tmp_path.glob(".posts-7z-*")), "the extracted Posts.xml must be removed"


@pytest.mark.slow
def test_7z_streamed_through_a_7z_binary(tmp_path, shared_data, monkeypatch):
    """With a `7z` on PATH the member is streamed from its stdout (a stand-in binary here: it logs its arguments)."""
    py7zr = pytest.importorskip("py7zr")
    plain = shared_data / "stackexchange" / "genai.Posts.xml"
    archive = tmp_path / "genai.7z"
    with py7zr.SevenZipFile(archive, "w") as z:
        z.write(plain, "Posts.xml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "7z"
    fake.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat {plain}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    _, rows, _ = run_questions(tmp_path, archive, GENAI_TAGS)
    assert [r["query_id"] for r in rows] == _expected_dump(plain, GENAI_TAGS)["ids"]
    assert (tmp_path / "args").read_text().split() == ["x", "-so", str(archive), "Posts.xml"]


# ---- bad input ------------------------------------------------------------------------------------------------


def test_not_xml_names_the_file(tmp_path):
    bad = tmp_path / "Posts.xml"
    bad.write_text("Id,Title\n1,hello\n")
    with pytest.raises(FreshStackError, match=re.escape(str(bad))) as err:
        questions.run(stage_context(tmp_path, bad, ["x"]))
    assert "line 1" in str(err.value) and "questions.format" in str(err.value)
    other = tmp_path / "Users.xml"
    other.write_text('<?xml version="1.0"?>\n<users><row Id="1" /></users>\n')
    with pytest.raises(FreshStackError, match="without a <posts> root"):
        questions.run(stage_context(tmp_path, other, ["x"]))


def test_truncated_xml_names_file_and_line(tmp_path, shared_data):
    src = (shared_data / "stackexchange" / "genai.Posts.xml").read_bytes()
    cut = tmp_path / "Posts.xml"
    cut.write_bytes(src[: len(src) // 2])
    with pytest.raises(FreshStackError, match=re.escape(str(cut)) + r": line \d+: not well-formed XML"):
        questions.run(stage_context(tmp_path, cut, GENAI_TAGS))


def test_csv_missing_column_names_file(tmp_path):
    folder = tmp_path / "bq"
    folder.mkdir()
    (folder / "posts_questions.csv").write_text("id,title,body,creation_date,tags,score\n1,t,b,2024-01-01,a,1\n")
    (folder / "posts_answers.csv").write_text("id,body,parent_id,creation_date,score\n")
    with pytest.raises(FreshStackError, match=re.escape(str(folder / "posts_questions.csv")) + ".*accepted_answer_id"):
        questions.run(stage_context(tmp_path, folder, ["a"]))
    (folder / "posts_answers.csv").unlink()
    with pytest.raises(FreshStackError, match="posts_answers"):
        questions.run(stage_context(tmp_path, folder, ["a"]))


def test_plan_does_not_parse_and_explicit_format_wins(tmp_path, shared_data):
    bad = tmp_path / "dump.txt"
    bad.write_text("not a dump at all")
    with pytest.raises(FreshStackError, match=r"questions\.format"):
        questions.plan(stage_context(tmp_path, bad, ["x"]))
    plan = questions.plan(stage_context(tmp_path, bad, ["x"], format="stackexchange")).details
    assert (plan["format"], plan["bytes"], plan["source"]) == ("stackexchange", bad.stat().st_size, str(bad))
    renamed = tmp_path / "genai.dump"
    shutil.copy(shared_data / "stackexchange" / "genai.Posts.xml", renamed)
    assert (
        questions.plan(stage_context(tmp_path, renamed, ["x"])).details["format"] == "stackexchange"
    )  # sniffed from the bytes
