"""The README's Python examples, run as written against a small repo laid out where they look for it."""

import ast
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _python_blocks(section: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_evaluate_example_prints_real_scores(tmp_path):
    """The example once scored a made-up query id and printed 0.0; run against a real run, it must not."""
    from freshstack_hf.baselines import bm25
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.runs import write_run
    from freshstack_hf.synth import SynthConfig, synth_topic

    blocks = [b for b in _python_blocks(_section("Evaluate a run")) if "evaluate(" in b]
    assert len(blocks) == 1, "expected one Python example that calls evaluate() under 'Evaluate a run'"
    code = blocks[0]
    repo, topic_name = re.search(r'load_topic\("([^"]+)", "([^"]+)"\)', code).groups()
    run_path = re.search(r'load_run\("([^"]+)"\)', code)[1]

    topic = synth_topic(topic_name, SynthConfig(queries=8, docs=300, seed=3))
    write_topics(tmp_path / repo, [topic], source={"kind": "synthetic", "seed": 3})
    write_run(bm25(topic).as_scores(), tmp_path / run_path, tag="bm25")

    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "RunCoverageWarning" not in r.stderr, r.stderr
    printed = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert set(printed) == {"alpha_ndcg@10", "coverage@20"}
    for measure, value in printed.items():
        assert isinstance(value, float) and value > 0, f"the README example prints {measure} {value!r}"


def test_dataset_score_example_runs_and_alpha_travels_with_the_measure(tmp_path):
    from freshstack_hf.baselines import bm25
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.runs import write_run
    from freshstack_hf.synth import SynthConfig, synth_topic

    blocks = [b for b in _python_blocks(_section("Evaluate a run")) if "Dataset(" in b]
    assert len(blocks) == 1, "expected one Python example that opens a Dataset under 'Evaluate a run'"
    code = blocks[0]
    repo = re.search(r'Dataset\("([^"]+)"\)', code)[1]
    run_path = re.search(r'load_run\("([^"]+)"\)', code)[1]
    topic = synth_topic("pylibs", SynthConfig(queries=8, docs=300, seed=4))
    write_topics(tmp_path / repo, [topic], source={"kind": "synthetic", "seed": 4})
    write_run(bm25(topic).as_scores(), tmp_path / run_path, tag="bm25")

    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    revision, printed = r.stdout.strip().splitlines()[-1].split(" ", 1)
    assert revision.startswith("local-")
    values = ast.literal_eval(printed)
    assert set(values) >= {"alpha_ndcg@10", "alpha_ndcg(alpha=0.2)@10", "coverage@20"}
    assert all(v > 0 for v in values.values()) and values["alpha_ndcg(alpha=0.2)@10"] != values["alpha_ndcg@10"]


def test_the_extension_recipes_name_what_exists():
    """Every file the "Extend it" section points a maintainer to is there, and its backend, measure family and
    retrieval method sketches register (the method's run is BM25 cut to ten)."""
    from freshstack_hf.baselines import METHODS, Resources, compute, unregister_method
    from freshstack_hf.llm.registry import transport_kind, unregister
    from freshstack_hf.metrics import parse_measure, unregister_family
    from freshstack_hf.synth import SynthConfig, synth_topic

    section = _section("Extend it")
    root = README.parent
    paths = set(re.findall(r"`((?:freshstack_hf|leaderboard|tests)/[\w/]+\.py)`", section))
    assert len(paths) >= 8 and all((root / p).is_file() for p in paths), sorted(
        p for p in paths if not (root / p).is_file()
    )
    backend, family, method = _python_blocks(section)
    try:
        exec(compile(backend, "README.md", "exec"), {})
        assert transport_kind("anthropic+https://api.anthropic.com") == "anthropic"
        exec(compile(family, "README.md", "exec"), {})
        assert parse_measure("first_rel@10").name == "First rel.@10"
        exec(compile(method, "README.md", "exec"), {})
        topic = synth_topic("pylibs", SynthConfig(queries=4, docs=60, seed=2))
        runs = compute(topic, ["bm25_top10"], Resources())
        assert METHODS["bm25_top10"].inputs == ("bm25",) and runs.keys() == {"bm25", "bm25_top10"}
        assert runs["bm25_top10"].run == {q: hits[:10] for q, hits in runs["bm25"].run.items()}
    finally:
        unregister("anthropic")
        unregister_family("first_rel")
        unregister_method("bm25_top10")
