"""One source for every figure (issue 46, point 5): the bench's records in docs/figures/ are what the pages quote.

A bench section records its figures and goals (`benchmarks.figures`, `benchmarks.goals`) and `python -m benchmarks`
writes them, with the date, the machine, the command and the commit, to `bench-out/SECTION.json`; `make figures`
copies them to docs/figures/, and the docs hook renders each `{{ figure: SECTION.KEY }}` from them. These tests
check that chain with the real writer and the real hook, and that no page (README and docs/, rendered as the site
renders them, output blocks aside) quotes a figure of a section in that section's context with a value the section's
record does not hold, with a planted contradiction caught as the control.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from typing import Any

import pytest
from docs_pages import ROOT, pages

FIGURES = ROOT / "docs" / "figures"

# The words that put a paragraph in a section's context: where it speaks of that section's measurements, every
# number it quotes with a unit (below) must be one the section's record holds (a figure, or a goal's threshold).
CONTEXT = {
    "release": ("benchmarks release", "release's size", "1,000-deep", "as deep as the release"),
    "build_corpus": ("benchmarks build_corpus", "corpus stage"),
    "eval": ("benchmarks eval", "EvaluateRetrieval"),
    "dense": ("benchmarks dense", "SentenceTransformer.encode"),
    "visitors": ("benchmarks visitors", "visitors"),
    "snapshots": ("benchmarks snapshots",),
    "refresh": ("benchmarks refresh", "What a refresh costs"),
    "leaderboard": ("benchmarks leaderboard",),
    "live": ("benchmarks live",),
    "probe": ("benchmarks probe",),
    "store": ("benchmarks store", "in the store against"),
}
NUMBER = r"(?<![\w.,/-])(\d[\d,]*(?:\.\d+)?)"
QUANTITY = re.compile(
    NUMBER + r"(?:(x|%)(?![\w]| (?:confidence|interval))|\s(s|ms|MB|MiB|GiB|calls|tokens|files/s)(?![\w/]))"
)  # 0.62x and 87% written against the number (not a 95% interval's level); 0.74 s, 8,936 tokens with a space
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)


def load_hooks() -> Any:
    """docs/hooks.py, the module mkdocs loads for the site (it is not a package module)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def allowed_numbers(record: dict[str, Any]) -> set[float]:
    """Every number a section's record generates: its figures' values as shown, and its goals' thresholds."""
    found = set()
    for figure in record["figures"].values():
        found |= {_number(n) for n in re.findall(NUMBER, figure["text"])}
    for goal in record["goals"]:
        found |= {_number(n) for n in re.findall(NUMBER, goal["goal"])}
    return found


def contradictions(markdown: str, where: str, records: dict[str, dict[str, Any]]) -> list[str]:
    """`where:line: literal` for each number quoted with a unit, in a paragraph in a section's context, that no
    record of those sections generates. Fenced blocks are left out: a command's output is compared with what the
    command prints by the docs tests, and an example's numbers are not the bench's."""
    text = FENCE.sub(lambda m: "\n" * m[0].count("\n"), markdown)
    found = []
    line = 1
    for paragraph in re.split(r"(\n\s*\n)", text):
        if not paragraph.strip():
            line += paragraph.count("\n")
            continue
        sections = [name for name, words in CONTEXT.items() if any(w in paragraph for w in words)]
        allowed = set().union(*(allowed_numbers(records[name]) for name in sections if name in records))
        if sections:
            for match in QUANTITY.finditer(paragraph):
                if _number(match[1]) not in allowed:
                    at = line + paragraph.count("\n", 0, match.start())
                    found.append(f"{where}:{at}: {match[0]!r} ({'/'.join(sections)})")
        line += paragraph.count("\n")
    return found


@pytest.fixture(scope="module")
def hooks() -> Any:
    return load_hooks()


@pytest.fixture(scope="module")
def records(hooks) -> dict[str, dict[str, Any]]:
    return hooks.records()


def test_every_record_says_when_where_and_how_it_was_measured(records):
    assert set(records) >= set(CONTEXT), sorted(set(CONTEXT) - set(records))
    for name, record in records.items():
        assert record["bench"] == name and record["command"].startswith("python -m benchmarks"), name
        assert re.match(r"\d{4}-\d\d-\d\d", record["date"]) and "CPU cores" in record["machine"], name
        assert re.fullmatch(r"[0-9a-f]{40}( \+ changes)?", record["commit"]), name
        for key, figure in record["figures"].items():
            assert {"value", "unit", "text", "what"} <= set(figure) and figure["text"], (name, key)
        for goal in record["goals"]:
            assert isinstance(goal["ok"], bool) and goal["key"], (name, goal)


def test_no_page_quotes_a_figure_with_another_value(hooks, records):
    """Every page as the site renders it (placeholders filled from the records; the README as it is, where a
    placeholder would not be rendered, so none may stand there): no number quoted in a section's context that the
    section's record does not generate. The performance page itself is held to the same rule."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not hooks.PLACEHOLDER.search(readme), "the README is not rendered by the hook: quote no figure there"
    found, quoting = [], 0
    for page in pages():
        raw = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        quoting += bool(hooks.PLACEHOLDER.search(raw))
        found += contradictions(hooks.render_figures(raw, name), name, records)
    assert not found, "\n".join(found)
    assert quoting >= 5  # performance, refresh, fresh, deploy, leaderboard quote the records


def test_a_planted_contradiction_is_caught(hooks, records):
    """The control: refresh.md's costs paragraph with the refresh bench's tokens as another page once typed them
    (5,228 against the record's), and a changelog line quoting the release's `evaluate` at 1.71 s, are caught; the
    same paragraphs quoting the record through placeholders pass."""
    paragraph = (
        "`make bench` (`python -m benchmarks refresh`) ... costs {{ figure: refresh.after_calls }} and "
        "{{ figure: refresh.after_tokens }} in {{ figure: refresh.after_s }}."
    )
    assert contradictions(hooks.render_figures(paragraph, "planted"), "planted", records) == []
    rendered = hooks.render_figures(paragraph, "planted")
    typed = rendered.replace(records["refresh"]["figures"]["after_tokens"]["text"], "5,228 tokens")
    assert contradictions(typed, "planted", records) == ["planted:1: '5,228 tokens' (refresh)"]
    changelog = "- `evaluate` at the release's size takes 1.71 s wall (goal < 1 s)."
    assert contradictions(changelog, "changelog", records) == ["changelog:1: '1.71 s' (release)"]
    quoted = "- `evaluate` at the release's size takes {{ figure: release.evaluate_s }} wall (goal < 1 s)."
    assert contradictions(hooks.render_figures(quoted, "changelog"), "changelog", records) == []


def test_the_hook_renders_figures_goals_and_runs_and_refuses_an_unknown_one(hooks, records):
    from mkdocs.exceptions import PluginError

    release = records["release"]
    text = hooks.render_figures(
        "{{ figure: release.evaluate_s }} ({{ goal: release.evaluate_s }}); {{ measured: release }}; "
        "{{ goal: leaderboard.first_rows_cold_s }}; {{ verdicts: leaderboard }}",
        "page.md",
    )
    evaluate_goal = next(g for g in release["goals"] if g["key"] == "evaluate_s")
    assert text.startswith(f"{release['figures']['evaluate_s']['text']} ({evaluate_goal['goal']}: ")
    assert f"`{release['command']}`, {release['date'][:10]}, {release['machine']}" in text
    missed = next(g for g in records["leaderboard"]["goals"] if g["key"] == "first_rows_cold_s")
    assert not missed["ok"] and "< 1 s: **MISSED**; **MISSED**: first table rows visible (cold)" in text
    for wrong in ("{{ figure: release.no_such }}", "{{ figure: nosection.key }}", "{{ goal: release.run_mb }}"):
        with pytest.raises(PluginError, match=r"page\.md"):
            hooks.render_figures(wrong, "page.md")


def test_a_section_run_writes_its_record_and_make_figures_publishes_it(tmp_path, hooks, monkeypatch):
    """`python -m benchmarks` runs each section's `main()` and then `benchmarks.figures.write` in the section's own
    process: what the section recorded, with its goals keyed to its figures, lands in bench-out/SECTION.json, and
    `make figures` (`python -m benchmarks.figures`) copies it where the hook reads it."""
    monkeypatch.syspath_prepend(str(ROOT))  # the checkout's `benchmarks`
    from benchmarks import figures, goals

    code = (
        "from benchmarks.figures import figure, write; from benchmarks.goals import judge; "
        "t = figure('evaluate_s', 1.234, 's', '.2f', 'evaluate'); "
        "judge('evaluate, one run', f'{t:.2f} s', '< 1 s', t < 1, 'evaluate_s'); "
        "figure('ratio', 23.14, 'x', '.1f'); figure('tokens', 8936, 'tokens', ',d'); write('release')"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, env=_env())
    record = json.loads((tmp_path / "bench-out" / "release.json").read_text(encoding="utf-8"))
    assert record["command"] == "python -m benchmarks release" and "CPU cores" in record["machine"]
    assert {k: v["text"] for k, v in record["figures"].items()} == {
        "evaluate_s": "1.23 s",
        "ratio": "23.1x",
        "tokens": "8,936 tokens",
    }
    assert record["goals"] == [
        {"what": "evaluate, one run", "measured": "1.23 s", "goal": "< 1 s", "ok": False, "key": "evaluate_s"}
    ]
    docs = tmp_path / "docs-figures"
    (tmp_path / "bench-out" / "release").mkdir()  # a section's working folder beside the records: not a record
    assert figures.publish(tmp_path / "bench-out", docs) == [docs / "release.json"]
    rendered = hooks.render_figures(
        "{{ figure: release.evaluate_s }} ({{ goal: release.evaluate_s }})", "p", hooks.records(docs)
    )
    assert rendered == "1.23 s (< 1 s: **MISSED**)"
    assert goals.Goal("w", "m", "g", True).key == ""  # a goal judged without a key still reads back


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}
