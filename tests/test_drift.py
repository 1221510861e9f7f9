"""`freshstack-hf drift OLD NEW`: two snapshots whose differences the test lists itself (`drift_repos.CHANGES`), and
the report must find exactly them; tau must equal scipy's on the same scores; bad input exits 2 writing nothing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_runner import cli
from drift_repos import CHANGES, EXPECTED_SUPPORT, QUERIES, TOPIC, make_snapshots
from scipy.stats import kendalltau

from freshstack_hf.drift import drift_report, kendall_tau_b, ranks
from freshstack_hf.drift.compare import CARRYOVER, JUDGMENTS
from freshstack_hf.drift.markdown import markdown
from freshstack_hf.drift.rank_agreement import agreement
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE

MEASURES = [m.id for m in HEADLINE]
RESAMPLES = 500  # enough to check the interval's behaviour, fast


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> tuple[Path, Path]:
    return make_snapshots(tmp_path_factory.mktemp("drift"))


@pytest.fixture(scope="module")
def report(snapshots) -> dict:
    return drift_report(*snapshots, resamples=RESAMPLES)


def test_document_fates_equal_the_tests_own_list(report):
    docs = report["topics"][TOPIC]["documents"]
    assert docs["counts"] == {"unchanged": 3, "changed": 3, "moved": 2, "deleted": 2}
    assert docs["counts"] == dict(Counter(fate for fate, _ in CHANGES.values()))
    found = {d["doc_id"]: (d["fate"], d["new_id"]) for d in docs["docs"]}
    assert found == CHANGES
    details = {d["doc_id"]: d["detail"] for d in docs["docs"]}
    assert details["lib/b.py_0_50"] == "offsets shifted"
    assert details["lib/a.py_50_100"] == "id kept, text edited"
    assert details["docs/faq.md_0_50"] == "repo gone" and details["lib/d.py_0_50"] == "file gone"


def test_each_class_names_the_repositories_and_commits_it_came_from(report):
    """A document moved to another repository names both: docs@b -> manual@d, never docs with manual's commit."""
    commits = report["topics"][TOPIC]["documents"]["commits"]
    assert commits["moved"] == [
        {"repo": "docs", "old_commit": "b" * 40, "new_repo": "manual", "new_commit": "d" * 40, "documents": 1},
        {"repo": "lib", "old_commit": "a" * 40, "new_repo": "lib", "new_commit": "c" * 40, "documents": 1},
    ]
    assert commits["deleted"] == [
        {"repo": "docs", "old_commit": "b" * 40, "new_repo": "", "new_commit": "", "documents": 1},  # repo gone
        {"repo": "lib", "old_commit": "a" * 40, "new_repo": "lib", "new_commit": "c" * 40, "documents": 1},
    ]
    moved = next(d for d in report["topics"][TOPIC]["documents"]["docs"] if d["doc_id"] == "docs/guide.md_0_50")
    assert (moved["repo"], moved["old_commit"], moved["new_repo"], moved["new_commit"]) == (
        "docs",
        "b" * 40,
        "manual",
        "d" * 40,
    )
    text = markdown(report)
    assert "| moved | docs | bbbbbbbbbb | manual | dddddddddd | 1 |" in text
    assert "| deleted | docs | bbbbbbbbbb | - | - | 1 |" in text
    snap = report["topics"][TOPIC]["snapshot"]
    assert snap["old"]["date"] == "2024-10-31" and snap["new"]["commits"]["manual"] == "d" * 40


def test_answerability_from_the_new_judgments(report):
    a = report["topics"][TOPIC]["answerability"]
    assert a["source"] == JUDGMENTS
    assert {q: r["supported"] for q, r in a["questions"].items()} == EXPECTED_SUPPORT
    assert a["old_questions"] == len(QUERIES) and a["answerable"] == 3 and a["answerable_share"] == 0.75
    assert a["unanswerable"] == ["q3"]
    assert a["mean_supported_nugget_share"] == pytest.approx((1 + 1 + 0 + 0.5) / 4)


def test_answerability_from_the_builds_carryover_record(tmp_path):
    carry = {
        "previous": "2024-10-31",
        "questions": {"q1": {"nuggets": 2, "supported": 2}, "q2": {"nuggets": 2, "supported": 0}},
        "unanswerable": ["q2"],
        "migrations": [{"query_id": "q2", "old_id": "lib/c.py_0_50", "new_id": "lib/src/c.py_0_50"}],
    }
    old, new = make_snapshots(tmp_path, new_extra={"carryover": carry})
    a = drift_report(old, new, resamples=0)["topics"][TOPIC]["answerability"]
    assert a["source"] == CARRYOVER and a["previous"] == "2024-10-31"
    assert a["answerable"] == 1 and a["answerable_share"] == 0.25  # q3, q4 not in the record: not carried
    assert a["unanswerable"] == ["q2", "q3", "q4"] and a["questions"]["q3"]["carried"] is False
    assert a["migrations"] == carry["migrations"]


def test_tau_equals_scipy_on_the_reported_scores_and_ranks_change(report):
    topic = report["topics"][TOPIC]
    systems = topic["systems"]
    assert set(systems) == {"BM25", "dense", "RRF hybrid"}
    for m in MEASURES:
        names = sorted(systems)
        old = [systems[s]["old"][m] for s in names]
        new = [systems[s]["new"][m] for s in names]
        agree = topic["agreement"][m]
        assert agree["kendall_tau"] == pytest.approx(kendalltau(old, new).statistic, abs=1e-12)
        assert agree["kendall_tau"] == pytest.approx(-1 / 3)
        assert agree["ranks"]["BM25"] == {"old": 1, "new": 3, "change": -2}
        assert agree["ranks"]["dense"] == {"old": 2, "new": 1, "change": 1}
        low, high = agree["ci95"]
        assert low <= agree["kendall_tau_common_queries"] <= high and agree["common_queries"] == len(QUERIES)


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_b_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=9).astype(float)  # few distinct values: ties on each side and on both
    b = rng.integers(0, 4, size=9).astype(float)
    assert kendall_tau_b(a, b) == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
    batch = kendall_tau_b(np.stack([a, b]), np.stack([b, a]))
    assert batch.tolist() == pytest.approx([kendalltau(a, b).statistic] * 2, abs=1e-12)


def test_tau_is_none_where_scipy_is_nan():
    assert np.isnan(kendalltau([1, 1, 1], [1, 2, 3]).statistic)
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None
    assert kendall_tau_b([0.5], [0.7]) is None
    assert ranks({"a": 0.3, "b": 0.5, "c": 0.3, "d": 0.1}) == {"a": 2, "b": 1, "c": 2, "d": 4}


def test_the_interval_is_seeded_and_paired():
    per_query_old = {"x": {"q1": 0.9, "q2": 0.1, "q3": 0.5}, "y": {"q1": 0.2, "q2": 0.3, "q3": 0.4}}
    per_query_new = {"x": {"q1": 0.8, "q2": 0.2, "q3": 0.5, "q9": 1.0}, "y": {"q1": 0.1, "q2": 0.3, "q3": 0.3}}
    means = {s: float(np.mean(list(v.values()))) for s, v in per_query_old.items()}
    new_means = {s: float(np.mean(list(v.values()))) for s, v in per_query_new.items()}
    one = agreement(means, new_means, per_query_old, per_query_new, resamples=300, seed=3)
    two = agreement(means, new_means, per_query_old, per_query_new, resamples=300, seed=3)
    assert one == two and one.common_queries == 3  # q9 is judged by the new snapshot only
    assert one.low is not None and -1.0 <= one.low <= one.high <= 1.0


def test_a_run_given_once_is_scored_on_both_snapshots(snapshots, tmp_path):
    run = tmp_path / "mine.trec"
    rows = [f"{q} Q0 {d} {r + 1} {10 - r} mine" for q in QUERIES for r, d in enumerate(sorted(CHANGES)[:5])]
    run.write_text("\n".join(rows) + "\n")
    out = drift_report(*snapshots, runs=[["mine", str(run)]], baselines=False, resamples=0)
    mine = out["topics"][TOPIC]["systems"]["mine"]
    assert mine["source"] == f"run:{run}"
    assert mine["old"]["recall@50"] > mine["new"]["recall@50"] > 0  # only its unchanged ids still count
    assert out["topics"][TOPIC]["agreement"]["recall@50"]["kendall_tau"] is None  # one system: no ordering


def test_topics_not_shared_is_an_error_naming_both(snapshots, tmp_path):
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    other = write_topics(tmp_path / "other", [synth_topic("other", SynthConfig(queries=3, docs=40, seed=1))])
    with pytest.raises(FreshStackError, match=rf"{snapshots[0]} has {TOPIC}, {other} has other"):
        drift_report(snapshots[0], other)
    with pytest.raises(FreshStackError, match="--topic nope is not in both"):
        drift_report(*snapshots, topics=["nope"])


def test_cli_writes_json_markdown_and_svg(snapshots, tmp_path):
    out = tmp_path / "out"
    done = cli("drift", str(snapshots[0]), str(snapshots[1]), "--out", str(out), "--resamples", "200")
    assert done.returncode == 0, done.stderr
    assert "3/4 old questions answerable" in done.stdout
    data = json.loads((out / "drift.json").read_text())
    assert data["topics"][TOPIC]["documents"]["counts"]["moved"] == 2
    assert data["settings"]["resamples"] == 200
    md = (out / "drift.md").read_text()
    assert "](drift.svg)" in md and "| moved | 2 | 20.0% |" in md and "| BM25 | 0.991 | 0.000 |" in md
    svg = ET.fromstring((out / "drift.svg").read_text())
    assert svg.tag.endswith("svg") and len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) == 3 * 3 + 3


def test_cli_report_path_puts_the_plot_beside_it(snapshots, tmp_path):
    done = cli("drift", *map(str, snapshots), "--report", str(tmp_path / "r.md"), "--resamples", "0")
    assert done.returncode == 0, done.stderr
    assert "](r.svg)" in (tmp_path / "r.md").read_text() and (tmp_path / "r.svg").is_file()


@pytest.mark.slow
def test_cli_different_topics_exit_2_and_write_nothing(snapshots, tmp_path):
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    other = write_topics(tmp_path / "other", [synth_topic("other", SynthConfig(queries=3, docs=40, seed=1))])
    out = tmp_path / "out"
    done = cli("drift", str(snapshots[0]), str(other), "--out", str(out), "--json", str(tmp_path / "d.json"))
    assert done.returncode == 2
    assert done.stderr.count("error:") == 1 and str(other) in done.stderr and str(snapshots[0]) in done.stderr
    assert "share no topic" in done.stderr and not out.exists() and not (tmp_path / "d.json").exists()
    not_repo = cli("drift", str(tmp_path / "nowhere"), str(other))
    assert not_repo.returncode == 2 and "no such folder" in not_repo.stderr
