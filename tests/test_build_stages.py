"""What every build stage declares, and what the runner does with it: one order, declared outputs checked before a
stage counts as done, a summary line per stage, and the LLM settings applied once (flags over environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from freshstack_hf.cli.main import main
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline import inputs
from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.runner import CONFIG_SECTIONS, parse_stages, run_build
from freshstack_hf.pipeline.stages import ORDER, stage_module

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "laravel_dump" / "Posts.xml"


def definition(tmp_path: Path) -> dict:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "queues.md").write_text("# Queues\n\nRun `php artisan queue:work` to process jobs.\n", encoding="utf-8")
    return {
        "topic": "laravel",
        "questions": {"source": str(FIXTURE), "tags": ["laravel-10", "laravel-11"]},
        "corpus": {"repositories": [{"source": str(docs), "keyword": "docs", "commit": "v1"}]},
    }


def test_every_stage_declares_its_inputs_outputs_and_summary():
    seen: set[str] = set()
    files: list[inputs.StageFile] = []
    for name in ORDER:
        module = stage_module(name)
        assert name == module.NAME
        assert isinstance(module.VERSION, int)
        assert set(module.READS) <= set(CONFIG_SECTIONS) | seen, f"{name} reads a later stage"
        assert all(isinstance(f, inputs.StageFile) and f.stage == name for f in module.OUTPUTS)
        assert all(callable(getattr(module, fn)) for fn in ("run", "plan", "summary"))
        files += [*module.OUTPUTS, *getattr(module, "EMBARGO_OUTPUTS", ())]  # the latter: under an embargo only
        seen.add(name)
    declared = {v for v in vars(inputs).values() if isinstance(v, inputs.StageFile)} - set(inputs.SHARED_FILES)
    assert set(files) == declared and len(files) == len(declared)  # each work file written by one stage
    assert parse_stages("write,questions") == ["questions", "write"]  # the one order, whatever was asked


def test_each_summary_reads_its_record():
    usage = {"usage": {"judgments": {"calls": 3, "cache_hits": 2}}, "backend": "offline-heuristic"}
    lines = {
        "questions": stage_module("questions").summary({"kept": 8}),
        "corpus": stage_module("corpus").summary({"chunks": 532, "files": 103}),
        "judgments": stage_module("judgments").summary({"pairs": 40, "supported_pairs": 9, **usage}),
        "filter": stage_module("filter").summary(
            {"questions": 8, "after_no_support_filter": 7, "after_unsupported_nugget_filter": 5}
        ),
    }
    assert lines == {
        "questions": "8 questions kept",
        "corpus": "532 chunks from 103 files",
        "judgments": "40 judgments, 9 supported (offline-heuristic), 3 calls, 2 cached",
        "filter": "8 -> 7 (no support) -> 5 (an unsupported nugget) questions",
    }


def test_a_stage_that_skips_a_declared_output_is_not_recorded_done(tmp_path, monkeypatch):
    config = parse_topic(definition(tmp_path), "laravel.yaml", tmp_path)
    out, work = tmp_path / "freshstack", tmp_path / "work"
    questions = stage_module("questions")
    monkeypatch.setattr(questions, "run", lambda ctx: {"kept": 0})  # writes neither declared file
    with pytest.raises(FreshStackError, match=r"stage `questions` finished without writing .*questions\.parquet"):
        run_build(config, out, work=work, stages=["questions"], show_progress=False, echo=lambda _line: None)
    assert not (work / "questions" / "record.json").exists()
    monkeypatch.undo()
    run_build(config, out, work=work, stages=["questions"], show_progress=False, echo=lambda _line: None)
    assert inputs.QUESTIONS.path(work).is_file() and inputs.COOCCURRENCE.path(work).is_file()
    assert json.loads((work / "questions" / "record.json").read_text())["files"] == [
        "questions.parquet",
        "cooccurrence.json",
    ]


def test_build_flags_win_over_the_environment(tmp_path, monkeypatch, capsys):
    """FRESHSTACK_LLM_* is applied once, before the flags: `--model` must reach the stages (it used to be
    overwritten by the environment a second time inside the runner)."""
    path = tmp_path / "laravel.yaml"
    path.write_text(yaml.safe_dump(definition(tmp_path)), encoding="utf-8")
    monkeypatch.setenv("FRESHSTACK_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("FRESHSTACK_LLM_MODEL", "model-from-env")
    args = ["build", str(path), "--out", str(tmp_path / "out"), "--dry-run", "--json", "--stages", "nuggets"]
    assert main([*args, "--model", "model-from-flag"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["nuggets"]["backend"] == "model-from-flag"
    assert main(args) == 0  # without the flag, the environment's model
    assert json.loads(capsys.readouterr().out)["nuggets"]["backend"] == "model-from-env"
