"""The questions stage on the other layouts: BigQuery exports (real sample rows, sharded CSV, JSONL), Stack Exchange
API pages, and the HTML-to-text conversion every layout's posts go through."""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path

from question_stage import run_questions

from freshstack_hf.pipeline.sources.html_text import has_code, html_to_text

# ---- BigQuery export ----------------------------------------------------------------------------------------


def _sample_rows(shared_data: Path, table: str) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with open(shared_data / "stackoverflow-sample" / f"{table}.tsv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _expected_bigquery(qrows: list[dict], arows: list[dict], tags) -> list[str]:
    answer_ids = {a["id"] for a in arows}
    return sorted(
        (q["id"] for q in qrows if set(q["tags"].split("|")) & set(tags) and q["accepted_answer_id"] in answer_ids),
        key=int,
    )


def test_bigquery_sample_tsv(tmp_path, shared_data):
    qrows, arows = _sample_rows(shared_data, "posts_questions"), _sample_rows(shared_data, "posts_answers")
    tags = tuple(t for t, _ in Counter(t for q in qrows if q["accepted_answer_id"] for t in q["tags"].split("|"))
                 .most_common(6))  # fmt: skip
    record, rows, _ = run_questions(tmp_path, shared_data / "stackoverflow-sample", tags)
    assert record["format"] == "bigquery"
    assert record["counts"]["rows_scanned"] == len(qrows) + len(arows)
    assert record["counts"]["questions"] == len(qrows)
    assert record["counts"]["with_topic_tag"] == sum(bool(set(q["tags"].split("|")) & set(tags)) for q in qrows)
    assert record["counts"]["with_accepted_answer_id"] == sum(
        bool(set(q["tags"].split("|")) & set(tags)) and bool(q["accepted_answer_id"]) for q in qrows
    )
    assert [r["query_id"] for r in rows] == _expected_bigquery(qrows, arows, tags)


def test_bigquery_sharded_csv_with_answers(tmp_path, shared_data):
    """The sample as sharded CSV, with the accepted answers the sample lacks added: multi-line bodies survive."""
    qrows, arows = _sample_rows(shared_data, "posts_questions"), _sample_rows(shared_data, "posts_answers")
    extra = [
        {**arows[0], "id": q["accepted_answer_id"], "parent_id": q["id"], "body": f"<p>fix for {q['id']}</p>\n<p>x</p>"}
        for q in qrows
        if q["accepted_answer_id"]
    ]
    folder = tmp_path / "export"
    folder.mkdir()
    for i, part in enumerate((qrows[:50], qrows[50:])):
        with open(folder / f"posts_questions-00000000000{i}.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(qrows[0]))
            writer.writeheader()
            writer.writerows(part)
    with open(folder / "posts_answers-000000000000.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(arows[0]))
        writer.writeheader()
        writer.writerows(arows + extra)
    tags = sorted({t for q in qrows if q["accepted_answer_id"] for t in q["tags"].split("|")})
    record, rows, _ = run_questions(tmp_path, folder / "posts_questions-000000000000.csv", tags)
    expected = _expected_bigquery(qrows, arows + extra, tags)
    assert len(expected) == len(extra) > 0
    assert [r["query_id"] for r in rows] == expected
    assert all(r["answer_text"] == f"fix for {r['query_id']}\n\nx" for r in rows)
    assert record["bytes_read"] == sum(p.stat().st_size for p in folder.iterdir())


def test_bigquery_jsonl(tmp_path):
    folder = tmp_path / "bq"
    folder.mkdir()
    q = {"id": 3, "title": "t", "body": "<p>b</p>", "accepted_answer_id": 4, "creation_date": "2024-05-01 10:00:00 UTC",
         "tags": "laravel|php", "score": 1}  # fmt: skip
    (folder / "posts_questions.jsonl").write_text(json.dumps(q) + "\n" + json.dumps({**q, "id": 8, "tags": "x"}))
    a = {"id": 4, "body": "<p>a</p>", "parent_id": 3, "creation_date": "2024-05-02 00:00:00 UTC", "score": 5}
    (folder / "posts_answers.jsonl").write_text(json.dumps(a) + "\n")
    record, rows, _ = run_questions(tmp_path, folder, ["laravel"])
    assert [(r["query_id"], r["answer_id"], r["answer_score"]) for r in rows] == [("3", "4", 5)]
    assert record["counts"]["questions"] == 2 and record["counts"]["with_topic_tag"] == 1


# ---- Stack Exchange API JSON ---------------------------------------------------------------------------------


def test_api_json(tmp_path):
    folder = tmp_path / "api"
    folder.mkdir()
    page = {
        "items": [
            {"question_id": 11, "title": "Can&#39;t load", "body": "<p>Use <code>x</code></p>", "tags": ["Godot"],
             "accepted_answer_id": 21, "creation_date": 1704103200, "score": 4},
            {"question_id": 12, "title": "embedded", "body": "<p>q</p>", "tags": ["godot", "c#"],
             "creation_date": 1704103200, "score": 0,
             "answers": [{"answer_id": 22, "body": "<pre><code>a</code></pre>", "is_accepted": True, "score": 2}]},
            {"question_id": 13, "title": "old", "body": "", "tags": ["godot"], "accepted_answer_id": 23,
             "creation_date": 1577836800, "score": 0},
        ]
    }  # fmt: skip
    answers = {"items": [{"answer_id": 21, "question_id": 11, "body": "<p>ok</p>", "score": 1,
                          "creation_date": 1704103300}, {"answer_id": 23, "question_id": 13, "body": "<p>no</p>",
                          "creation_date": 1577836900}]}  # fmt: skip
    (folder / "a-answers.json").write_text(json.dumps(answers))  # sorts first: answers before their questions
    (folder / "b-questions.json").write_text(json.dumps(page))
    record, rows, cooc = run_questions(tmp_path, folder, ["godot"], since="2023-01-01")
    assert record["format"] == "api"
    assert [(r["query_id"], r["answer_id"]) for r in rows] == [("11", "21"), ("12", "22")]
    assert (
        rows[0]["title"] == "Can't load" and rows[0]["body"] == "Use `x`" and rows[0]["date"] == "2024-01-01T10:00:00"
    )
    assert rows[1]["answer_text"] == "```\na\n```" and rows[1]["answer_has_code"]
    assert record["counts"]["with_topic_tag"] == 3 and record["counts"]["in_window"] == 2
    assert [(e["tag"], e["count"]) for e in cooc["cooccurring"]] == [("c#", 1)]


# ---- HTML to text ---------------------------------------------------------------------------------------------


def test_html_text_code_lists_links():
    html = (
        "<p>Use   <code>a &lt; b</code>\n now:</p>\n"
        "<pre><code>if (a &lt; b &amp;&amp; c) {\n    return &quot;x&quot;;\n}\n"
        '</code></pre>\n<h2>Steps</h2><ol><li><p>See <a href="https://x.org/d">docs</a></p></li>'
        '<li><a href="https://y.org">https://y.org</a></li></ol><ul><li>a<ul><li>b</li></ul></li></ul>'
        '<blockquote><p>quoted</p></blockquote><p>one<br>two <img src="i.png" alt="diagram"> <img src="j"></p>'
    )
    assert html_to_text(html) == (
        'Use `a < b` now:\n\n```\nif (a < b && c) {\n    return "x";\n}\n```\n\n## Steps\n\n'
        "1. See docs (https://x.org/d)\n2. https://y.org\n\n- a\n  - b\n\n> quoted\n\none\ntwo diagram [image]"
    )
    assert html_to_text("<pre><code>x = '```'\n</code></pre>").startswith("````\n")
    assert html_to_text("plain  &amp;\n text") == "plain & text"
    assert has_code("<pre><code>x</code></pre>") and not has_code("<p><code>x</code></p>") and not has_code("")
