"""Import of the official release schema, written here as fixtures in that schema (no download)."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freshstack_hf import load_topic
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.official import export_official, import_official

NUGGET = pa.struct(
    [
        ("_id", pa.string()),
        ("text", pa.string()),
        ("relevant_corpus_ids", pa.list_(pa.string())),
        ("non_relevant_corpus_ids", pa.list_(pa.string())),
    ]
)
QUERIES = pa.schema(
    [
        ("query_id", pa.string()),
        ("query_title", pa.string()),
        ("query_text", pa.string()),
        ("answer_id", pa.int64()),  # an integer in some exports: must come back as an integer
        ("answer_text", pa.string()),
        ("metadata", pa.struct([("date", pa.string()), ("tags", pa.list_(pa.string()))])),
        ("nuggets", pa.list_(NUGGET)),
    ]
)
CORPUS = pa.schema(
    [
        ("_id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        (
            "metadata",
            pa.struct(
                [("url", pa.string()), ("start_byte", pa.int64()), ("end_byte", pa.int64()), ("commit_id", pa.string())]
            ),
        ),
    ]
)


def _official(tmp_path):
    ids = ["langchain/docs/intro.md_0_120", "langchain/docs/intro.md_120_300", "langchain_core/src/a.py_0_80"]
    corpus = pa.table(
        {
            "_id": ids,
            "title": ["", "", ""],
            "text": ["LangChain intro", "Runnable interface", "def invoke(self): ..."],
            "metadata": [
                {
                    "url": f"https://github.com/x/{i}",
                    "start_byte": int(i.split("_")[-2]),
                    "end_byte": int(i.split("_")[-1]),
                    "commit_id": "abc",
                }
                for i in ids
            ],
        },
        schema=CORPUS,
    )
    queries = pa.table(
        {
            "query_id": ["78256389", "78256390"],
            "query_title": ["How to stream?", "Invoke fails"],
            "query_text": ["I tried ```python\nchain.stream()\n```", "Error with invoke"],
            "answer_id": [78256400, 78256500],
            "answer_text": ["Use astream.", "Call invoke with a dict."],
            "metadata": [{"date": "2024-03-01", "tags": ["langchain", "python"]}, {"date": "2024-03-02", "tags": []}],
            "nuggets": [
                [
                    {
                        "_id": "78256389_0",
                        "text": "Use astream",
                        "relevant_corpus_ids": [ids[1]],
                        "non_relevant_corpus_ids": [ids[0]],
                    },
                    {
                        "_id": "78256389_1",
                        "text": "Runnables stream",
                        "relevant_corpus_ids": [ids[1], ids[2]],
                        "non_relevant_corpus_ids": [],
                    },
                ],
                [
                    {
                        "_id": "78256390_0",
                        "text": "Pass a dict",
                        "relevant_corpus_ids": [ids[2]],
                        "non_relevant_corpus_ids": [ids[0], ids[1]],
                    }
                ],
            ],
        },
        schema=QUERIES,
    )
    pq.write_table(queries, tmp_path / "queries.parquet")
    pq.write_table(corpus, tmp_path / "corpus.parquet")
    return queries, corpus


def test_import_is_lossless_and_valid(tmp_path):
    queries, corpus = _official(tmp_path)
    repo = tmp_path / "freshstack"
    import_official(str(tmp_path / "queries.parquet"), str(tmp_path / "corpus.parquet"), "langchain", repo)
    assert validate_repo(repo) == []
    topic = load_topic(repo, "langchain")
    assert topic.qrels["78256389"] == {
        "langchain/docs/intro.md_120_300": 2,
        "langchain/docs/intro.md_0_120": 0,
        "langchain_core/src/a.py_0_80": 1,
    }
    doc = topic.docs[2]
    assert (doc.repo, doc.path, doc.start_byte, doc.end_byte, doc.commit) == (
        "langchain_core",
        "src/a.py",
        0,
        80,
        "abc",
    )
    q_out, c_out = export_official(repo, "langchain", tmp_path / "back")
    assert pq.read_table(q_out).equals(queries, check_metadata=False)
    assert pq.read_table(c_out).equals(corpus, check_metadata=False)


def test_import_reports_missing_columns(tmp_path):
    _official(tmp_path)
    pq.write_table(pa.table({"query_id": ["1"]}), tmp_path / "bad.parquet")
    with pytest.raises(FreshStackError, match=r"lacks column\(s\) \['query_title', 'query_text', 'nuggets'\]"):
        import_official(str(tmp_path / "bad.parquet"), str(tmp_path / "corpus.parquet"), "langchain", tmp_path / "r")
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_import_source_must_exist(tmp_path):
    with pytest.raises(FreshStackError, match="neither a file, a folder nor a Hub id"):
        import_official("nothing-here", "nothing", "langchain", tmp_path / "r")


def _with_dangling_judgment(tmp_path):
    """The fixture with one nugget naming a corpus id the corpus lacks: a data problem, not an unreadable source."""
    queries, _ = _official(tmp_path)
    rows = queries.to_pylist()
    rows[1]["nuggets"][0]["relevant_corpus_ids"].append("langchain/docs/gone.md_0_10")
    pq.write_table(pa.Table.from_pylist(rows, schema=QUERIES), tmp_path / "queries.parquet")
    return ["--queries", str(tmp_path / "queries.parquet"), "--corpus", str(tmp_path / "corpus.parquet")]


def test_cli_import_with_data_problems_writes_warns_and_exits_0(tmp_path, capsys):
    from freshstack_hf.cli.main import main

    repo = tmp_path / "freshstack"
    code = main(["import-official", *_with_dangling_judgment(tmp_path), "--topic", "langchain", "--out", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0
    assert f"imported langchain: 2 queries, 3 docs, 3 nuggets -> {repo}" in out
    assert err.startswith(f"warning: {repo} was written, but topic langchain has problems in its source data")
    assert "nugget '78256390_0' judges corpus id 'langchain/docs/gone.md_0_10', which is not in langchain-corpus" in err
    assert load_topic(repo, "langchain").qrels["78256390"]["langchain_core/src/a.py_0_80"] == 1  # written as given
    assert validate_repo(repo) != []  # and `validate` still reports what the warning said


def test_cli_import_strict_writes_nothing_and_exits_2(tmp_path, capsys):
    from freshstack_hf.cli.main import main

    repo = tmp_path / "freshstack"
    args = ["import-official", *_with_dangling_judgment(tmp_path), "--topic", "langchain", "--out", str(repo)]
    assert main([*args, "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: official topic langchain not imported (nothing written): 1 problem")
    assert "langchain/docs/gone.md_0_10" in err
    assert not repo.exists()


def test_cli_import_of_clean_data_is_silent_and_help_says_which_behaviour(tmp_path, capsys):
    from freshstack_hf.cli.main import build_parser, main

    _official(tmp_path)
    files = ["--queries", str(tmp_path / "queries.parquet"), "--corpus", str(tmp_path / "corpus.parquet")]
    assert main(["import-official", *files, "--topic", "langchain", "--out", str(tmp_path / "r"), "--strict"]) == 0
    assert capsys.readouterr().err == ""
    assert validate_repo(tmp_path / "r") == []
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = " ".join(sub.choices["import-official"].format_help().split())
    assert "the topic is written as given, the problems are listed, and the exit code is 0" in text
    assert "With --strict the topic is checked first and nothing is written if it has a problem (exit 2)" in text
