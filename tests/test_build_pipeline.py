"""The whole build on real material, offline: a Laravel dump written for the tests + the real laravel/docs snapshot.

The dump (tests/fixtures/laravel_dump/Posts.xml) holds 12 questions in the real Stack Exchange format: 8 on
Laravel 10/11 with accepted answers, and one each unanswered, off-topic, outside the window and with its
accepted answer missing, which the question stage must drop.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline.offline.judge_rule import RELEASED_AGREEMENT

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "laravel_dump" / "Posts.xml"
KEPT_QUESTIONS = {"1001", "1003", "1005", "1007", "1009", "1011", "1013", "1015"}


def write_definition(tmp_path: Path, shared_data: Path, **over) -> Path:
    data = {
        "topic": "laravel",
        "questions": {
            "source": str(FIXTURE),
            "tags": ["laravel-10", "laravel-11"],
            "since": "2023-01-01",
            "until": "2024-10-31",
        },
        "corpus": {
            "max_tokens": 2048,
            "repositories": [
                {
                    "source": str(shared_data / "github" / "laravel-docs.tar.gz"),
                    "url": "https://github.com/laravel/docs",
                    "keyword": "docs",
                    "commit": "86077535bbfdc2ab29cd9f202ee1ab3e7e6e18e6",
                }
            ],
        },
        "pooling": {"depth": 10},
    }
    data.update(over)
    path = tmp_path / "laravel.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    """One offline build shared by the tests below (it takes a little while: MiniLM encodes the corpus)."""
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not shared.is_dir():
        pytest.skip(f"real external data not found at {shared}")
    tmp = tmp_path_factory.mktemp("build")
    definition = write_definition(tmp, shared)
    out = tmp / "freshstack"
    code = main(["build", str(definition), "--out", str(out), "--quiet"])
    assert code == 0
    return tmp, definition, out


@pytest.mark.slow
def test_offline_build_writes_a_valid_repo(built):
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.reader import load_topic

    tmp, _, out = built
    assert validate_repo(out) == []
    topic = load_topic(out, "laravel")
    assert set(topic.query_ids) <= KEPT_QUESTIONS and topic.query_ids
    assert topic.nuggets and all(n.text.strip() for n in topic.nuggets)
    assert any(j.relevance for j in topic.judgments) and any(j.relevance == 0 for j in topic.judgments)
    assert all(d.doc_id.startswith("docs/") and d.repo == "docs" for d in topic.docs)
    assert all(d.commit == "86077535bbfdc2ab29cd9f202ee1ab3e7e6e18e6" for d in topic.docs)
    work = tmp / "freshstack-work" / "laravel"
    questions = json.loads((work / "questions" / "record.json").read_text())
    kept_ids = set(pq.read_table(work / "questions" / "questions.parquet").column("query_id").to_pylist())
    assert kept_ids == KEPT_QUESTIONS
    assert questions["fingerprint"]


@pytest.mark.slow
def test_card_and_manifest_say_the_judgments_are_heuristic(built):
    _, _, out = built
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Heuristic judgments" in card and "offline-heuristic" in card
    assert "86077535bbfdc2ab29cd9f202ee1ab3e7e6e18e6" in card
    # how far the offline judge is from real GPT-4o judgments, with the pair count, in the card's own words
    measured = re.search(r"measured against (\d+) pairs of the FreshStack oct-2024 langchain judgments", card)
    assert measured and int(measured.group(1)) == RELEASED_AGREEMENT["pairs"]
    assert re.search(r"kappa -?\d\.\d\d, precision \d\.\d\d, recall \d\.\d\d", card)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["topics"]["laravel"]
    assert entry["source"]["heuristic_judgments"] is True
    stages = entry["build"]["stages"]
    assert {"questions", "corpus", "nuggets", "pools", "judgments", "filter"} <= set(stages)
    assert stages["judgments"]["backend"] == "offline-heuristic"
    assert stages["filter"]["kept"] == entry["stats"]["queries"]
    # the BM25 list's quality, recomputed from the written list and judgments (candidates.list_quality's figure)
    from freshstack_hf.metrics import evaluate, qrels_from_topic
    from freshstack_hf.repo.reader import load_candidates, load_topic
    from freshstack_hf.runs.run import from_ids

    qrels = qrels_from_topic(load_topic(out, "laravel"))
    written = evaluate(qrels, from_ids(load_candidates(out, "laravel", "bm25")), ["alpha_ndcg@10"])
    assert entry["candidates"]["quality"]["bm25"]["alpha_ndcg@10"] == written.metrics["alpha_ndcg@10"]


@pytest.mark.slow
def test_load_dataset_reads_the_built_topic(built, monkeypatch):
    import datasets

    tmp, _, _ = built
    monkeypatch.chdir(tmp)
    queries = datasets.load_dataset("freshstack", "laravel", split="test")
    corpus = datasets.load_dataset("freshstack", "laravel-corpus", split="corpus")
    assert queries.num_rows >= 1 and corpus.num_rows > 100
    assert set(queries["query_id"]) <= KEPT_QUESTIONS


@pytest.mark.slow
def test_second_run_is_up_to_date_and_changes_nothing(built, capsys):
    _tmp, definition, out = built
    before = snapshot(out)
    assert main(["build", str(definition), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert text.count("up to date") == 8  # the candidate lists included: nothing is made again
    assert snapshot(out) == before


def _stage_lines(text: str) -> dict[str, str]:
    return {line.split("]")[1].split(":")[0].strip(): line for line in text.splitlines() if line.startswith("[")}


def _data(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted((out / "data").rglob("*.parquet"))}


@pytest.mark.slow
def test_a_killed_build_resumes_with_the_candidate_lists_it_made(built, capsys):
    """Killed inside `write`: the lists are not made again. Killed inside `candidates` (a list file written, no
    record): they are made again, and the repo comes out byte for byte the same."""
    tmp, definition, out = built
    work = tmp / "freshstack-work" / "laravel"
    written = _data(out)
    (work / "write" / "record.json").unlink()
    assert main(["build", str(definition), "--out", str(out), "--quiet"]) == 0
    lines = _stage_lines(capsys.readouterr().out)
    assert "up to date" in lines["candidates"] and "done in" in lines["write"]
    assert _data(out) == written
    (work / "candidates" / "record.json").unlink()
    (work / "candidates" / "top_ranked.parquet").unlink()
    (work / "write" / "record.json").unlink()
    assert main(["build", str(definition), "--out", str(out), "--quiet"]) == 0
    lines = _stage_lines(capsys.readouterr().out)
    assert "up to date" in lines["filter"] and "done in" in lines["candidates"] and "done in" in lines["write"]
    assert _data(out) == written


@pytest.mark.slow
def test_changing_judging_reruns_only_from_judgments(built, capsys, tmp_path):
    tmp, definition, out = built
    data = yaml.safe_load(definition.read_text())
    data["judging"] = {"docs_per_call": 5}
    changed = tmp_path / "laravel.yaml"
    changed.write_text(yaml.safe_dump(data), encoding="utf-8")
    work = tmp / "freshstack-work" / "laravel"
    assert (
        main(
            [
                "build",
                str(changed),
                "--out",
                str(out),
                "--work",
                str(work),
                "--quiet",
                "--stages",
                "questions,corpus,nuggets,pools,judgments",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    status = {line.split("]")[1].split(":")[0].strip(): line for line in lines if line.startswith("[")}
    for stage in ("questions", "corpus", "nuggets", "pools"):
        assert "up to date" in status[stage]
    assert "done in" in status["judgments"]


@pytest.mark.slow
def test_dry_run_writes_nothing(tmp_path, shared_data, capsys):
    definition = write_definition(tmp_path, shared_data)
    out = tmp_path / "freshstack"
    assert main(["build", str(definition), "--out", str(out), "--dry-run"]) == 0
    text = capsys.readouterr().out
    for stage in ("questions", "corpus", "nuggets", "pools", "judgments", "filter", "candidates", "write"):
        assert f"{stage}:" in text
    assert not out.exists()


@pytest.mark.slow
def test_a_failed_build_leaves_the_previous_repo_untouched(built, tmp_path, capsys):
    """A dump that is not XML: exit 2, the file named, the existing repo byte-for-byte as it was."""
    _tmp, definition, out = built
    before = snapshot(out)
    bad = tmp_path / "Posts.xml"
    bad.write_text("this is not xml at all\n", encoding="utf-8")
    data = yaml.safe_load(definition.read_text())
    data["questions"]["source"] = str(bad)
    changed = tmp_path / "laravel.yaml"
    changed.write_text(yaml.safe_dump(data), encoding="utf-8")
    code = main(["build", str(changed), "--out", str(out), "--work", str(tmp_path / "work"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert str(bad) in err and "Traceback" not in err
    assert snapshot(out) == before


def test_missing_repository_path_is_a_clear_error(tmp_path, capsys):
    data = {
        "topic": "laravel",
        "questions": {"source": str(FIXTURE), "tags": ["laravel-11"]},
        "corpus": {"repositories": [{"source": str(tmp_path / "no-such-repo"), "keyword": "docs"}]},
    }
    definition = tmp_path / "t.yaml"
    definition.write_text(yaml.safe_dump(data), encoding="utf-8")
    code = main(["build", str(definition), "--out", str(tmp_path / "freshstack"), "--quiet", "--stages", "corpus"])
    err = capsys.readouterr().err
    assert code == 2 and "no-such-repo" in err and "Traceback" not in err
    assert not (tmp_path / "freshstack").exists()
    assert os.path.isdir(tmp_path / "freshstack-work")  # the work folder may exist; the repo may not
