"""`freshstack-hf refresh`: dated snapshots made, paid for within a budget, checked, published and compared, by one
command. Real components throughout: git repositories whose commits carry dates (three: 2024-01-15, 2024-06-01,
2024-08-10), the project's Laravel dump with questions on every side of the three snapshot dates, the local chat
server (tests/llm_server.py) counting and billing every call, and the CLI's own entry point."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from refresh_topic import (
    D1,
    D2,
    D3,
    MARKER,
    PAID,
    PRICES,
    THIRD,
    Billing,
    about,
    definition,
    make_three_commits,
    prompt,
    refresh,
)
from snapshot_topic import DUMP, SECOND, write_definition

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.repo.revisions import list_revisions

# Builds real topics and refreshes per module: `make test` runs it, `make check` does not.
pytestmark = pytest.mark.slow


def manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def tree(root: Path) -> dict[str, int]:
    """Every path under `root` with its modification time: what "nothing written" compares."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


# ---- three refreshes at three dates --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> dict[str, Any]:
    """Three refreshes of one repo at D1, D2, D3 against one chat server; each refresh's slice of the paid calls."""
    root = tmp_path_factory.mktemp("refresh")
    make_three_commits(root)
    with Billing() as server:
        spec = definition(root, server.base_url, **PRICES)
        repo = root / "freshstack"
        slices, outputs = {}, {}
        for date in (D1, D2, D3):
            start = len(server.answered)
            code, out, err = refresh(spec, date, repo, 5)
            assert code == 0, err
            slices[date] = (start, len(server.answered))
            outputs[date] = out
        yield {"root": root, "repo": repo, "spec": spec, "server": server, "slices": slices, "outputs": outputs}


@pytest.mark.slow
def test_three_refreshes_publish_three_valid_revisions_with_their_spend(three, capsys):
    repo, billing = three["repo"], three["server"]
    assert list_revisions(repo) == [D1, D2, D3]
    previous = None
    for date in (D1, D2, D3):
        folder = Path(f"{repo}@{date}")
        assert main(["validate", str(folder)]) == 0
        record = manifest(folder)["refresh"]
        topic = manifest(folder)["topics"]["laravel"]
        start, end = three["slices"][date]
        # the spend is what the server billed for this refresh's calls, no more, never over the budget
        assert record["calls"] == end - start > 0
        assert record["spent_usd"] == pytest.approx(billing.cost(start, end), abs=1e-6)
        assert record["spent_usd"] <= record["budget_usd"] == 5.0
        assert topic["refresh"]["spent"]["calls"] == end - start
        assert topic["snapshot"]["date"] == date
        assert topic["refresh"]["previous"] == previous
        assert f"published {folder}" in three["outputs"][date]
        if previous:  # the drift report against the previous snapshot is in the revision
            report = json.loads((folder / "drift" / previous / "drift.json").read_text(encoding="utf-8"))
            assert report["old"]["revision"] == previous and report["new"]["revision"] == date
            assert report["new"]["path"] == str(folder)
            assert "laravel" in report["topics"] and (folder / "drift" / previous / "drift.md").is_file()
            assert record["drift"] == [f"drift/{previous}/drift.md"]
        else:
            assert not (folder / "drift").exists()
        previous = date
    capsys.readouterr()


@pytest.mark.slow
def test_later_refreshes_pay_only_for_what_changed(three):
    billing, slices = three["server"], three["slices"]
    keys = [key for key, _, _ in billing.answered]
    assert len(keys) == len(set(keys)), "a request was paid twice"
    changed = {D2: {Path(n).stem for n in SECOND}, D3: {Path(n).stem for n in THIRD}}
    seen: set[str] = set()  # questions whose nuggets and pooling prompts were paid for in an earlier refresh
    judged: set[str] = set()
    for date in (D1, D2, D3):
        start, end = slices[date]
        bodies = [body for _, body, _ in billing.answered[start:end]]
        asked = {q for b in bodies if prompt(b)[0] in PAID for q in about(prompt(b)[1])}
        assert asked and not asked & seen, f"{date}: carried questions asked again: {asked & seen}"
        carried_judge = [p for s, p in map(prompt, bodies) if s == build_prompts.JUDGE_SYSTEM and about(p) & judged]
        if date != D1:
            # a carried question is judged again only on documents whose text is new at this date
            docs = {m for p in carried_judge for m in MARKER.findall(p.split("<documents>", 1)[-1])}
            assert docs and docs <= changed[date], docs - changed[date]
            plan = manifest(Path(f"{three['repo']}@{date}"))["topics"]["laravel"]["refresh"]["questions"]
            assert plan["carried"] == len(seen) and plan["new"] == len(asked)
        seen |= asked
        judged |= {q for s, p in map(prompt, bodies) if s == build_prompts.JUDGE_SYSTEM for q in about(p)}
    # the later refreshes cost less than building each snapshot from nothing would: D1's calls for fewer questions
    assert slices[D3][1] - slices[D3][0] < slices[D1][1] - slices[D1][0]


@pytest.mark.slow
def test_the_same_refresh_twice_does_nothing_the_second_time(three):
    server = three["server"]
    before, calls, requests = tree(three["root"]), len(server.answered), server.requests
    code, out, _ = refresh(three["spec"], D3, three["repo"], 5)
    assert code == 0
    assert f"nothing to do: revision {D3} of {three['repo']} is published already with laravel" in out
    assert server.requests == requests and len(server.answered) == calls
    assert tree(three["root"]) == before


# ---- the budget ------------------------------------------------------------------------------------------------------


def test_a_budget_below_the_estimate_refuses_and_writes_nothing(tmp_path, llm_server):
    make_three_commits(tmp_path)
    spec = definition(tmp_path, llm_server.base_url, **PRICES)
    before = tree(tmp_path)
    code, out, err = refresh(spec, D1, tmp_path / "freshstack", "0.05")
    assert code == 2
    assert "estimated at ~$0.07" in err and "over --budget-usd 0.05: refused, nothing was written" in err
    assert "Give --budget-usd 0.07 or more" in err
    assert "LLM requests: about 16" in out  # the plan was printed first
    assert llm_server.requests == 0 and tree(tmp_path) == before

    code, out, err = refresh(spec, D1, tmp_path / "freshstack", "1", "--dry-run")  # fits: a plan, still nothing
    assert code == 0, err
    assert "within --budget-usd 1" in out and "dry run: nothing was built" in out
    assert llm_server.requests == 0 and tree(tmp_path) == before


def test_the_spend_cap_reserves_the_worst_case_and_its_ledger_outlives_the_process(tmp_path):
    from freshstack_hf.llm.budget import BudgetExhausted, SpendCap, worst_case_cost

    # every prompt byte counts as a token, plus framing, and the whole output allowance
    worst = worst_case_cost([{"role": "user", "content": "héllo"}], 100, 1.0, 2.0)
    assert worst == pytest.approx(((16 + 6 + 16) * 1.0 + 100 * 2.0) / 1e6)
    ledger = tmp_path / "spend.jsonl"
    cap = SpendCap(1.0, ledger)
    held = cap.reserve(0.6, "a call")
    with pytest.raises(BudgetExhausted, match=r"\$0.0000 of \$1.00 spent.*up to \$0.5000"):
        cap.reserve(0.5, "another")  # 0.6 held: a second call might not fit
    with cap.scope(topic="t"):
        cap.settle(held, 0.25, stage="nuggets", prompt_tokens=10, completion_tokens=5)
    cap.release(cap.reserve(0.7, "a call that failed"))  # nothing paid
    ledger.open("a").write('{"usd": 0.5, "torn')  # a kill in the middle of a line
    again = SpendCap(1.0, ledger)  # the next run starts from what was really paid
    assert again.spent == pytest.approx(0.25) and again.left == pytest.approx(0.75)
    assert again.totals(topic="t") == {
        "usd": 0.25,
        "calls": 1,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "runs": 1,
        "by_stage": {"nuggets": {"calls": 1, "usd": 0.25}},
    }
    with pytest.raises(BudgetExhausted):
        again.reserve(0.8)
    again.settle(again.reserve(0.1), 0.05, stage="judgments")  # after the torn line, on a line of its own
    assert SpendCap(1.0, ledger).spent == pytest.approx(0.30)


@pytest.mark.slow
def test_the_spend_stops_at_the_cap_and_a_larger_budget_goes_on(tmp_path):
    make_three_commits(tmp_path)
    prices = {"input_price_per_million": 0.5, "output_price_per_million": 20.0}
    repo = tmp_path / "freshstack"
    with Billing(reasoning=True) as billing:
        spec = definition(tmp_path, billing.base_url, **prices)
        code, out, err = refresh(spec, D1, repo, "0.3")
        assert code == 2
        assert "estimate: ~$0.11" in out  # the plan fit the budget; the bills did not
        assert "topic 'laravel': the refresh stopped at the budget cap" in err and "larger --budget-usd" in err
        assert not list_revisions(repo)  # nothing published
        ledger = [json.loads(x) for x in (tmp_path / "freshstack-work" / f"refresh@{D1}" / "spend.jsonl").open()]
        first = len(billing.answered)
        spent = sum(x["usd"] for x in ledger)
        assert len(ledger) == first > 0 and spent == pytest.approx(billing.cost(0, first, prices), abs=1e-6)
        assert 0.2 < spent <= 0.3  # stopped near the cap, never over it

        code, out, err = refresh(spec, D1, repo, "2")
        assert code == 0, err
        assert f"resuming: ${spent:.4f} spent at {D1} by earlier runs" in out
    keys = [key for key, _, _ in billing.answered]
    assert len(keys) == len(set(keys)) > first  # went on, repeating no call
    record = manifest(Path(f"{repo}@{D1}"))["refresh"]
    assert record["spent_usd"] == pytest.approx(billing.cost(prices=prices), abs=1e-6)
    assert 0.3 < record["spent_usd"] <= 2.0 and record["runs"] == 2 and record["calls"] == len(keys)


# ---- a killed refresh ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_killed_refresh_resumes_without_repeating_a_call(tmp_path):
    make_three_commits(tmp_path)
    repo = tmp_path / "freshstack"
    with Billing(kill_after=6) as billing:
        spec = definition(tmp_path, billing.base_url, max_concurrency=1, **PRICES)  # one call in flight at the kill
        args = ["refresh", str(spec), "--date", D1, "--repo", str(repo), "--budget-usd", "5", "--quiet"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "freshstack_hf", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        billing.victim = proc.pid
        output = proc.communicate(timeout=120)[0].decode()
        assert proc.returncode == -signal.SIGKILL, output
        assert billing.killed.is_set() and len(billing.answered) == 6
        assert not list_revisions(repo)  # killed before publishing: nothing published

        code, out, err = refresh(spec, D1, repo, 5)
        assert code == 0, err
    keys = [key for key, _, _ in billing.answered]
    assert len(keys) == len(set(keys)) > 6, "a call paid before the kill was paid again"
    assert "resuming:" in out
    record = manifest(Path(f"{repo}@{D1}"))["refresh"]
    assert record["calls"] == len(keys) and record["runs"] == 2  # both runs' calls, each once
    assert record["spent_usd"] == pytest.approx(billing.cost(), abs=1e-6)
    assert main(["validate", f"{repo}@{D1}"]) == 0


# ---- bad input -------------------------------------------------------------------------------------------------------


@pytest.fixture
def published(tmp_path) -> tuple[Path, Path]:
    """An offline refresh at D2 already published: (definition, repo)."""
    make_three_commits(tmp_path)
    spec = definition(tmp_path)
    code, _, err = refresh(spec, D2, tmp_path / "freshstack", 1)
    assert code == 0, err
    return spec, tmp_path / "freshstack"


def refused(spec: Path, repo: Path, date: str, budget: float | str, *expected: str) -> None:
    """Exit 2 with a message naming the topic and each expected piece; nothing published, nothing written."""
    root = repo.parent
    before = tree(root)
    code, _, err = refresh(spec, date, repo, budget)
    assert code == 2
    assert f"topic 'laravel' ({spec})" in err
    for piece in expected:
        assert piece in err, err
    assert list_revisions(repo) == [D2] and tree(root) == before


def test_a_date_before_the_last_snapshot_is_refused(published):
    spec, repo = published
    earlier = f"--date {D1} is earlier than the last published snapshot {D2}"
    refused(spec, repo, D1, 1, earlier, f"give a --date after {D2}")


def test_a_budget_of_zero_is_refused(published):
    spec, repo = published
    refused(spec, repo, D3, 0, "--budget-usd 0 leaves nothing to spend", "give a positive --budget-usd")
    refused(spec, repo, D3, -5, "--budget-usd -5 leaves nothing to spend")


def test_a_vanished_repository_is_refused(published):
    spec, repo = published
    (repo.parent / "docs").rename(repo.parent / "moved-away")
    refused(
        spec, repo, D3, 1, "corpus.repositories[0].source", "does not exist (the repository vanished?)", "fix `source:`"
    )


def test_a_vanished_clone_url_is_refused(tmp_path):
    """A repository given as a clone URL: the refresh fetches the clone it keeps, and a remote that is gone is named."""
    remote = make_three_commits(tmp_path / "remote")
    spec = write_definition(tmp_path, corpus={"repositories": [{"source": f"file://{remote}", "keyword": "docs"}]})
    assert refresh(spec, D1, tmp_path / "freshstack", 1)[0] == 0
    shutil.rmtree(tmp_path / "remote")
    code, _, err = refresh(spec, D2, tmp_path / "freshstack", 1)
    assert code == 2 and f"topic 'laravel' ({spec})" in err
    assert "cannot fetch" in err and "the repository vanished" in err and "fix `source:`" in err
    assert list_revisions(tmp_path / "freshstack") == [D1]


def test_a_dump_older_than_the_last_snapshot_is_refused(published):
    spec, repo = published
    rows = [r for r in DUMP.read_text(encoding="utf-8").splitlines() if 'CreationDate="2024-0' not in r]
    old = repo.parent / "old-dump" / "Posts.xml"  # the posts up to 2023 only
    old.parent.mkdir()
    old.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["questions"]["source"] = str(old)
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    refused(
        spec,
        repo,
        D3,
        1,
        f"is older than the last snapshot {D2}: its newest post is from 2023-",
        f"download a Stack Exchange dump made after {D2}",
    )


def test_bad_definitions_and_dates_are_named(tmp_path):
    make_three_commits(tmp_path)
    spec = definition(tmp_path)
    listing = tmp_path / "topics.yaml"
    listing.write_text("topics: [laravel.yaml, missing.yaml]\n", encoding="utf-8")
    code, _, err = refresh(listing, D1, tmp_path / "freshstack", 1)
    assert code == 2 and "topics[1]" in err and "'missing.yaml': no such file" in err
    listing.write_text("topics: [laravel.yaml, laravel.yaml]\n", encoding="utf-8")
    assert refresh(listing, D1, tmp_path / "freshstack", 1)[0] == 2
    listing.write_text("nothing: here\n", encoding="utf-8")
    code, _, err = refresh(listing, D1, tmp_path / "freshstack", 1)
    assert code == 2 and "`topics:` listing definition files" in err
    code, _, err = refresh(spec, "2999-01-01", tmp_path / "freshstack", 1)
    assert code == 2 and "--date: 2999-01-01 is in the future" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "laravel.yaml", "topics.yaml"]


def test_a_topics_list_refreshes_every_topic_into_one_revision(tmp_path):
    make_three_commits(tmp_path)
    definition(tmp_path)
    data = yaml.safe_load((tmp_path / "laravel.yaml").read_text(encoding="utf-8"))
    data.update(topic="laravel11", questions={**data["questions"], "tags": ["laravel-11"]})
    (tmp_path / "laravel11.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    listing = tmp_path / "topics.yaml"
    listing.write_text("topics:\n  - laravel.yaml\n  - laravel11.yaml\n", encoding="utf-8")
    code, out, err = refresh(listing, D2, tmp_path / "freshstack", 1, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "published" and set(result["topics"]) == {"laravel", "laravel11"}
    folder = tmp_path / f"freshstack@{D2}"
    assert sorted(manifest(folder)["topics"]) == ["laravel", "laravel11"]
    assert manifest(folder)["refresh"]["topics"] == ["laravel", "laravel11"]
    assert result["spent_usd"] == 0.0  # offline: no paid call


# ---- a Hub repo ------------------------------------------------------------------------------------------------------


class FakeHub:
    """The few Hub calls a refresh makes (through `huggingface_hub`, as a networked user's would), answered from
    folders: each upload is a commit folder, each tag names one."""

    def __init__(self, root: Path) -> None:
        self.root, self.repos, self.tags, self.uploads = root, set(), {}, []
        self.private: dict[str, bool] = {}  # each repo's visibility, as created (an existing repo keeps its own)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import huggingface_hub

        hub = self

        class Api:
            def __init__(self, token: str | None = None) -> None:
                self.token = token

            def list_repo_refs(self, repo_id: str, *, repo_type: str | None = None, **_: Any) -> Any:
                from types import SimpleNamespace

                from huggingface_hub.utils import RepositoryNotFoundError

                if repo_id not in hub.repos:
                    raise RepositoryNotFoundError("404", response=SimpleNamespace(headers={}, request=None))
                return SimpleNamespace(tags=[SimpleNamespace(name=t) for (r, t) in hub.tags if r == repo_id])

            def create_repo(self, repo_id: str, *, private: bool = False, **_: Any) -> None:
                hub.repos.add(repo_id)
                hub.private.setdefault(repo_id, private)

            def repo_info(self, repo_id: str, **_: Any) -> Any:
                from types import SimpleNamespace

                from huggingface_hub.utils import RepositoryNotFoundError

                if repo_id not in hub.repos:
                    raise RepositoryNotFoundError("404", response=SimpleNamespace(headers={}, request=None))
                return SimpleNamespace(id=repo_id, private=hub.private.get(repo_id, False))

            def upload_folder(self, *, folder_path: str, repo_id: str, **options: Any) -> Any:
                from types import SimpleNamespace

                commit = hub.root / f"commit-{len(hub.uploads)}"
                shutil.copytree(folder_path, commit, ignore=shutil.ignore_patterns(".*"))
                hub.uploads.append((repo_id, options))
                return SimpleNamespace(oid=str(commit), commit_url=f"https://hub.test/{repo_id}/commit/{commit.name}")

            def create_tag(self, repo_id: str, *, tag: str, revision: str, **_: Any) -> None:
                hub.tags[(repo_id, tag)] = Path(revision)

        def hf_hub_download(repo_id: str, filename: str, *, revision: str, **_: Any) -> str:
            return str(hub.tags[(repo_id, revision)] / filename)

        def snapshot_download(repo_id: str, *, revision: str, local_dir: str, **_: Any) -> str:
            shutil.copytree(hub.tags[(repo_id, revision)], local_dir)
            return local_dir

        monkeypatch.setattr(huggingface_hub, "HfApi", Api)
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", hf_hub_download)
        monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)


def test_a_hub_repo_is_refreshed_through_tags(tmp_path, monkeypatch):
    make_three_commits(tmp_path)
    spec = definition(tmp_path)
    hub = FakeHub(tmp_path / "hub")
    hub.install(monkeypatch)
    monkeypatch.chdir(tmp_path)
    mirror = tmp_path / "mirror"
    code, _, err = refresh(spec, D1, "me/freshstack", 1, "--out", str(mirror))
    assert code == 2 and "needs a Hugging Face token: set HF_TOKEN" in err and not hub.uploads

    monkeypatch.setenv("HF_TOKEN", "hf_test")
    code, out, err = refresh(spec, D1, "me/freshstack", 1, "--out", str(mirror))
    assert code == 0, err
    assert [t for _, t in hub.tags] == [D1] and hub.uploads[0][1]["delete_patterns"] == ["*"]
    assert "published https://hub.test/me/freshstack/commit/" in out
    shutil.rmtree(f"{mirror}@{D1}")  # a fresh machine: the previous snapshot comes from the Hub

    code, out, err = refresh(spec, D2, "me/freshstack", 1, "--out", str(mirror))
    assert code == 0, err
    assert Path(f"{mirror}@{D1}", "manifest.json").is_file()  # downloaded, then carried from
    tagged = hub.tags[("me/freshstack", D2)]
    topic = manifest(tagged)["topics"]["laravel"]
    assert topic["refresh"]["previous"] == D1 and topic["carryover"]["previous"] == D1
    report = json.loads((tagged / "drift" / D1 / "drift.json").read_text(encoding="utf-8"))
    assert report["new"]["path"] == f"me/freshstack@{D2}"

    code, out, _ = refresh(spec, D2, "me/freshstack", 1, "--out", str(mirror))
    assert code == 0 and f"nothing to do: revision {D2} of me/freshstack (Hub)" in out and len(hub.uploads) == 2
    code, _, err = refresh(spec, "2024-04-30", "me/freshstack", 1, "--out", str(mirror))
    assert code == 2 and f"earlier than the last published snapshot {D2} of me/freshstack (Hub)" in err
