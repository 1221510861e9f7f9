"""Topic definitions: every problem named by file and dotted key, all at once, before any stage runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from freshstack_hf.cli.main import main
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.pipeline.config.topic import load_topic_config, parse_topic

TOPICS = Path(__file__).resolve().parents[1] / "scripts" / "topics"


def minimal(**over) -> dict:
    data = {
        "topic": "laravel",
        "questions": {"source": "Posts.xml", "tags": ["laravel-11"]},
        "corpus": {"repositories": [{"source": "https://github.com/laravel/docs", "commit": "724c31c"}]},
    }
    data.update(over)
    return data


def test_minimal_definition_gets_defaults_and_relative_paths(tmp_path):
    cfg = parse_topic(minimal(), "t.yaml", tmp_path)
    assert cfg.questions.source == str(tmp_path / "Posts.xml")
    assert cfg.corpus.repositories[0].keyword == "docs"
    assert cfg.corpus.repositories[0].url == "https://github.com/laravel/docs"
    assert cfg.corpus.max_tokens == 2048
    assert cfg.llm.offline and cfg.llm.temperature == 0.1
    assert cfg.judging.docs_per_call == 20


def test_every_problem_is_reported_with_its_key(tmp_path):
    data = minimal(
        questions={"source": "x", "tags": [], "since": "2024-13-01", "formt": "auto"},
        corpus={"repositories": [{"source": "a", "commit": "not a sha!", "snapshot_date": "2024-01-01"}, {"url": "b"}]},
        llm={"temperature": "hot"},
    )
    with pytest.raises(ValidationError) as err:
        parse_topic(data, "t.yaml", tmp_path)
    text = str(err.value)
    for key in (
        "t.yaml: questions.tags",
        "t.yaml: questions.since",
        "t.yaml: questions.formt",
        "t.yaml: corpus.repositories[0].commit",
        "t.yaml: corpus.repositories[0].snapshot_date",
        "t.yaml: corpus.repositories[1].source",
        "t.yaml: llm.temperature",
    ):
        assert key in text, key
    assert "did you mean `format`?" in text


def test_missing_sections_and_bad_topic_name(tmp_path):
    with pytest.raises(ValidationError) as err:
        parse_topic({"topic": "My-Topic"}, "t.yaml", tmp_path)
    text = str(err.value)
    assert "t.yaml: topic" in text and "t.yaml: questions" in text and "t.yaml: corpus" in text


def test_environment_variables_are_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_DUMP", "/data/so/Posts.xml")
    cfg = parse_topic(minimal(questions={"source": "${MY_DUMP}", "tags": ["x"]}), "t.yaml", tmp_path)
    assert cfg.questions.source == "/data/so/Posts.xml"
    cfg = parse_topic(minimal(questions={"source": "${NOPE_X:-d/Posts.xml}", "tags": ["x"]}), "t.yaml", tmp_path)
    assert cfg.questions.source == str(tmp_path / "d" / "Posts.xml")
    with pytest.raises(ValidationError, match="environment variable NOPE_Y is not set"):
        parse_topic(minimal(questions={"source": "${NOPE_Y}", "tags": ["x"]}), "t.yaml", tmp_path)


def test_hf_tokenizer_path_is_relative_to_the_definition(tmp_path):
    corpus = {
        "chunker": "sections",
        "tokenizer": "hf:tok/tokenizer.json",
        "repositories": [{"source": "r", "keyword": "r"}],
    }
    cfg = parse_topic(minimal(corpus=corpus), "t.yaml", tmp_path)
    assert cfg.corpus.tokenizer == f"hf:{tmp_path / 'tok' / 'tokenizer.json'}"


def test_duplicate_keywords_are_refused(tmp_path):
    repos = [{"source": "https://github.com/a/docs"}, {"source": "https://github.com/b/docs"}]
    with pytest.raises(ValidationError, match=r"repositories\[1\].keyword"):
        parse_topic(minimal(corpus={"repositories": repos}), "t.yaml", tmp_path)


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("topic: x\nquestions: [unclosed\n", encoding="utf-8")
    with pytest.raises(FreshStackError, match=r"bad.yaml: not valid YAML at line \d+"):
        load_topic_config(path)


def test_official_topics_parse_with_the_known_commits():
    configs = {p.stem: load_topic_config(p) for p in sorted(TOPICS.glob("*.yaml"))}
    assert set(configs) == {"langchain", "yolo", "laravel", "angular", "godot"}
    repos = {r.url: r for c in configs.values() for r in c.corpus.repositories}
    assert repos["https://github.com/laravel/docs"].commit == "724c31ccd3edce6b6dfe5e0dd2a594a47217f078"
    angular = repos["https://github.com/angular/angular"]
    assert angular.commit == "7d9b38e97bbef0c6f6e3761e7cd86457c1e0f2e1" and angular.subdir == "adev/src/content"
    ultra = repos["https://github.com/ultralytics/ultralytics"]
    assert ultra.commit == "8d203cf40dadb9343241d2f65bd4c84820f27430" and ultra.subdir == "docs/en"
    pinned = {r.url for r in repos.values() if r.commit}
    assert all(r.snapshot_date == "2024-10-31" for r in repos.values() if r.url not in pinned)
    # the paper's Table 2 lists 10, 5, 9, 4 and 6 repositories
    counts = {name: len(c.corpus.repositories) for name, c in configs.items()}
    assert counts == {"langchain": 10, "yolo": 5, "laravel": 9, "angular": 4, "godot": 6}
    # the released langchain corpus holds notebooks as raw text (tests/test_release_chunker.py)
    assert configs["langchain"].corpus.notebooks == "text" and configs["godot"].corpus.notebooks == "script"


def test_notebooks_mode_is_checked(tmp_path):
    base = minimal()["corpus"]
    assert parse_topic(minimal(corpus={**base, "notebooks": "text"}), "t.yaml", tmp_path).corpus.notebooks == "text"
    with pytest.raises(ValidationError, match=r"corpus.notebooks.*one of script, text"):
        parse_topic(minimal(corpus={**base, "notebooks": "json"}), "t.yaml", tmp_path)
    with pytest.raises(ValidationError, match=r"corpus.notebooks.*applies to `chunker: freshstack-0.0.6` only"):
        parse_topic(minimal(corpus={**base, "chunker": "sections", "notebooks": "text"}), "t.yaml", tmp_path)


def test_cli_reports_a_bad_definition_with_exit_2(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    path.write_text("topic: x\nquestions: {source: a}\n", encoding="utf-8")
    assert main(["build", str(path), "--out", str(tmp_path / "repo")]) == 2
    err = capsys.readouterr().err
    assert "questions.tags" in err and "corpus" in err and "Traceback" not in err
    assert not (tmp_path / "repo").exists()
    assert main(["build", str(tmp_path), "--out", str(tmp_path / "repo")]) == 2
    assert "it is a folder" in capsys.readouterr().err
