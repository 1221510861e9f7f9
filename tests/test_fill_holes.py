"""`freshstack-hf fill-holes`: a run's unjudged top-10 documents are judged into a new qrels revision.

Issue 18's acceptance, offline: a system whose top 10 holds unjudged documents reaches Judged@10 = 1.0 after one
fill (judged by the real `openai` client against the local chat server, requests counted); the older revision's
folder is byte-identical and still gives exactly the older numbers; a second fill sends no request; the offline
heuristic judge needs no endpoint; bad input exits 2 and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from freshstack_hf.cli.main import main
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.revisions import list_revisions
from freshstack_hf.runs import write_run

CHAT = "POST /v1/chat/completions"
MEASURES = ["judged@10", "alpha_ndcg@10", "coverage@20", "recall@50"]


@pytest.fixture
def repo(synth_repo, tmp_path) -> Path:
    copy = tmp_path / "freshstack"
    shutil.copytree(synth_repo, copy)
    return copy


def _holey_run(repo: Path, topic: str = "alpha") -> dict[str, dict[str, float]]:
    """Per query: its first 4 judged documents, then 6 documents nobody judged for it (all in the corpus)."""
    t = Dataset(repo).topic(topic)
    judged: dict[str, list[str]] = {}
    for j in t.judgments:
        judged.setdefault(j.query_id, [])
        if j.doc_id not in judged[j.query_id]:
            judged[j.query_id].append(j.doc_id)
    corpus = sorted(t.doc_ids)
    run = {}
    for i, qid in enumerate(t.query_ids):
        fresh = [d for d in corpus[i * 7 :] if d not in judged.get(qid, [])][:6]
        ranked = judged.get(qid, [])[:4] + fresh
        run[qid] = {d: float(20 - r) for r, d in enumerate(ranked)}
    return run


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _scores(repo: Path, revision: str | None, run) -> dict[str, float]:
    return dict(Dataset(repo, revision).score(run, topics=["alpha"], measures=MEASURES, resamples=0).average)


def _fill(repo: Path, run_file: Path, *extra: str) -> tuple[int, dict]:
    out = run_file.with_suffix(f".{len(list(run_file.parent.glob('*.json')))}.json")
    code = main(
        ["fill-holes", str(repo), "--topic", "alpha", "--run", str(run_file), "--quiet", "--json", str(out), *extra]
    )
    return code, (json.loads(out.read_text()) if out.is_file() else {})


@pytest.mark.slow
def test_one_fill_judges_every_hole_and_keeps_the_old_revision(repo, llm_server, tmp_path, capsys):
    run = _holey_run(repo)
    run_file = write_run(run, tmp_path / "holey.trec", tag="holey")
    old_digest, old_scores = _tree_digest(repo), _scores(repo, None, run)
    assert old_scores["judged@10"] == pytest.approx(0.4)  # 4 judged of 10, every query

    code, record = _fill(repo, run_file, "--base-url", llm_server.base_url, "--model", "judge-m")
    assert code == 0
    sent = llm_server.by_path[CHAT]
    assert record["holes"] == 6 * 12 and record["not_in_corpus"] == 0 and record["queries_ranked"] == 12
    nuggets = Dataset(repo).topic("alpha").query_nuggets
    assert record["pairs"] == sum(6 * len(nuggets[q]) for q in run)
    assert record["requests"] == sent == record["calls"] > 0  # 6 holes a query fit one call of 20 documents
    assert record["revision"] == "main.fill1" and record["base_revision"] == "main"
    assert record["before"] == pytest.approx(old_scores) and record["after"]["judged@10"] == 1.0

    new = repo.with_name("freshstack@main.fill1")
    assert Path(record["revision_folder"]) == new and list_revisions(repo) == ["main.fill1"]
    assert _scores(repo, "main.fill1", run) == pytest.approx(record["after"])
    assert validate_repo(new) == []  # official config, qrels and nugget qrels agree
    # The base is untouched, byte for byte, and still gives exactly the old numbers.
    assert _tree_digest(repo) == old_digest and _scores(repo, None, run) == old_scores
    # Every hole now has a judgment for every nugget of its query; the base's judgments are all kept.
    base_t, new_t = Dataset(repo).topic("alpha"), Dataset(new).topic("alpha")
    pairs = {(j.nugget_id, j.doc_id) for j in new_t.judgments}
    assert {(j.nugget_id, j.doc_id) for j in base_t.judgments} <= pairs
    assert len(pairs) == len(base_t.judgments) + record["pairs"]
    assert sum(j.relevance for j in new_t.judgments) == sum(j.relevance for j in base_t.judgments) + record["supported"]
    fill = json.loads((new / "manifest.json").read_text())["fills"]
    assert len(fill) == 1 and fill[0]["system"] == {
        "name": "holey",
        "run_sha256": hashlib.sha256(run_file.read_bytes()).hexdigest(),
    }
    assert fill[0]["base_revision"] == "main" and fill[0]["k"] == 10 and fill[0]["pairs"] == record["pairs"]
    assert "judge-m" in fill[0]["judge"] and fill[0]["date"][:2] == "20"

    # A second fill on the new revision finds no hole: no request, nothing written.
    code, again = _fill(repo, run_file, "--revision", "main.fill1", "--base-url", llm_server.base_url)
    assert code == 0 and again["holes"] == 0 and again["revision"] is None and again["requests"] == 0
    assert llm_server.by_path[CHAT] == sent and list_revisions(repo) == ["main.fill1"]
    # Filling the old base again is answered by the judge's cache: no request either.
    code, repeat = _fill(repo, run_file, "--base-url", llm_server.base_url, "--model", "judge-m")
    assert code == 0 and repeat["requests"] == 0 and repeat["cache_hits"] == record["calls"]
    assert llm_server.by_path[CHAT] == sent and repeat["revision"] == "main.fill2"
    assert repeat["after"] == pytest.approx(record["after"])


@pytest.mark.slow
def test_the_text_report_names_the_revision_and_the_moves(repo, tmp_path, capsys):
    run_file = write_run(_holey_run(repo), tmp_path / "holey.trec", tag="holey")
    assert main(["fill-holes", str(repo), "--topic", "alpha", "--run", str(run_file), "--offline", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "Loading weights" not in err  # the offline judge's model loads quietly too
    assert "72 holes in the top 10" in out and "by offline-heuristic" in out
    assert "judged@10             0.400 -> 1.000  (+0.600)" in out
    assert f"new revision: {repo.with_name('freshstack@main.fill1')}" in out


def test_a_run_with_no_hole_says_so_once_and_names_no_judge(repo, tmp_path, capsys):
    run = {q: dict(list(docs.items())[:4]) for q, docs in _holey_run(repo).items()}  # its judged documents only
    run_file = write_run(run, tmp_path / "judged.trec", tag="judged")
    out = tmp_path / "record.json"
    args = ["fill-holes", str(repo), "--topic", "alpha", "--run", str(run_file), "--offline", "--json", str(out)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("no holes") == 1, captured
    record = json.loads(out.read_text())
    assert record["holes"] == 0 and record["revision"] is None and record["judge"] is None  # no judge was asked
    assert list_revisions(repo) == []


@pytest.mark.slow
def test_the_offline_judge_needs_no_endpoint(repo, tmp_path, monkeypatch):
    monkeypatch.delenv("FRESHSTACK_LLM_BASE_URL", raising=False)
    run_file = write_run(_holey_run(repo), tmp_path / "holey.trec", tag="holey")
    code, record = _fill(repo, run_file, "--offline", "--name", "filled", "--k", "5")
    assert code == 0 and record["judge"] == "offline-heuristic" and record["requests"] == 0
    assert record["holes"] == 12 and record["after"]["judged@5"] == 1.0  # ranks 5..10 stay out: 1 hole a query
    assert list_revisions(repo) == ["filled"] and validate_repo(repo.with_name("freshstack@filled")) == []


@pytest.mark.parametrize(
    ("flags", "flag"),
    [
        (["--topic", "gamma"], "--topic"),
        (["--revision", "2020-01-01"], "--revision"),
        (["--name", "taken"], "--name"),
        (["--name", "bad/name"], "--name"),
        (["--k", "0"], "--k"),
        (["--beta-run"], "--run"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(repo, tmp_path, capsys, flags, flag):
    run = _holey_run(repo)
    if flags == ["--beta-run"]:  # a run of the other topic's queries only
        run, flags = _holey_run(repo, "beta"), []
    run_file = write_run(run, tmp_path / "run.trec")
    repo.with_name("freshstack@taken").mkdir()
    before = sorted(p.name for p in repo.parent.iterdir())
    args = ["fill-holes", str(repo), "--topic", "alpha", "--run", str(run_file), "--offline", "--quiet"]
    if "--topic" in flags:
        args[3] = flags[1]
        flags = []
    assert main([*args, *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and flag in err
    assert sorted(p.name for p in repo.parent.iterdir()) == before


@pytest.mark.slow
def test_a_failed_write_leaves_no_revision(repo, tmp_path, monkeypatch):
    import freshstack_hf.holes.revision as revision

    def broken(topic):
        raise OSError("disk full")

    monkeypatch.setattr(revision, "nugget_qrels_table", broken)
    run_file = write_run(_holey_run(repo), tmp_path / "holey.trec")
    digest, before = _tree_digest(repo), sorted(p.name for p in repo.parent.iterdir())
    with pytest.raises(OSError, match="disk full"):
        main(["fill-holes", str(repo), "--topic", "alpha", "--run", str(run_file), "--offline", "--quiet"])
    assert sorted(p.name for p in repo.parent.iterdir()) == before  # no staging folder left either
    assert _tree_digest(repo) == digest and list_revisions(repo) == []
