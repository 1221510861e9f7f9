"""The embargo (`pipeline.embargo`): a snapshot's newest questions go to a private repo, never to the public revision,
and the refresh after their embargo ends publishes them, judged once. Real components throughout: the refresh tests'
git repository with three dated commits, the Laravel dump fixture, the CLI's entry point, local folders as repos,
the tests' chat server counting every paid call, and `huggingface_hub` answered from folders (`FakeHub`).

With a 45-day embargo (shorter than the 122 and 62 days between the snapshots) the dump's kept questions move
like this: 1011 (asked 2024-06-02) is embargoed at D2 (2024-06-30: window after 2024-05-16) and published at D3
(its embargo ended on 2024-07-17); the offline build also keeps 1015 (asked 2024-07-19), embargoed at D3."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from refresh_topic import D1, D2, D3, MARKER, PRICES, THIRD, Billing, about, definition, make_three_commits, prompt
from refresh_topic import refresh as run_refresh
from snapshot_topic import write_definition
from test_refresh import FakeHub

from freshstack_hf.cli.main import main
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.config.definitions import load_definitions
from freshstack_hf.pipeline.config.topic import load_topic_config
from freshstack_hf.pipeline.embargo import Embargo
from freshstack_hf.repo.revisions import list_revisions

# Builds real topics and refreshes per module: `make test` runs it, `make check` does not.
pytestmark = pytest.mark.slow

DAYS = 45


def embargoed(spec: Path, days: int = DAYS, private: str = "./private/freshstack") -> Path:
    """The refresh tests' definition with an embargo (a local private folder beside the YAML by default)."""
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data.update(embargo_days=days, private_repo=private)
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    return spec


def manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def query_ids(folder: Path) -> list[str]:
    return pq.read_table(folder / "data" / "laravel" / "queries.parquet").column("_id").to_pylist()


def every_text(folder: Path) -> str:
    """Everything a reader of the folder can see: each file as text, each parquet file decoded row by row."""
    parts = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            parts.append(json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False, default=str))
        else:
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return " ".join(" ".join(parts).split())


def secrets(private: Path) -> tuple[set[str], set[str]]:
    """The embargoed questions of a private revision: their ids, and every 8-word fragment of their titles, bodies,
    answers and nuggets (whitespace made single, as in `every_text`)."""
    rows = pq.read_table(private / "data" / "laravel" / "queries_official.parquet").to_pylist()
    nuggets = pq.read_table(private / "data" / "laravel" / "nuggets.parquet").to_pylist()
    texts = [r[k] for r in rows for k in ("query_title", "query_text", "answer_text")] + [n["text"] for n in nuggets]
    fragments = set()
    for text in texts:
        words = text.split()
        fragments |= {" ".join(words[i : i + 8]) for i in range(max(0, len(words) - 7))}
    return {r["query_id"] for r in rows}, fragments


def leaks(public: Path, ids: set[str], fragments: set[str]) -> list[str]:
    """Which embargoed ids (as whole numbers) and text fragments the public folder shows."""
    text = every_text(public)
    found = [i for i in ids if re.search(rf"(?<!\d){re.escape(i)}(?!\d)", text)]
    return found + [f for f in fragments if f in text]


# ---- the dates -----------------------------------------------------------------------------------------------------


def test_a_question_is_embargoed_within_the_days_before_the_snapshot_and_released_after():
    e = Embargo(45, "2024-06-30")
    assert e.start == "2024-05-16"
    assert not e.holds("2024-05-16T23:59:59")  # 45 days before: old enough
    assert e.holds("2024-05-17T00:00:00") and e.holds("2024-06-30T23:00:00")
    assert not e.holds("2024-07-01T00:00:00")  # after the snapshot: not in it at all
    assert e.ends("2024-06-02T12:00:00") == "2024-07-17"
    assert e.until == "2024-08-14"  # the snapshot's date plus the days: no question's own date is told
    assert e.public_summary(["2024-06-02", "2024-01-01"]) == {"days": 45, "questions": 1, "until": "2024-08-14"}


# ---- the definitions ---------------------------------------------------------------------------------------------


def test_an_embargo_needs_a_private_repo_and_whole_days(tmp_path):
    spec = definition(tmp_path)
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    spec.write_text(yaml.safe_dump({**data, "embargo_days": 30}), encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        load_topic_config(spec)
    assert f"{spec}: private_repo" in str(info.value)
    assert "embargo_days: 30 needs a private repo" in str(info.value)
    spec.write_text(yaml.safe_dump({**data, "embargo_days": -1, "private_repo": "./p"}), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"embargo_days.*must be 0 or more days, got -1"):
        load_topic_config(spec)
    spec.write_text(yaml.safe_dump({**data, "embargo_days": 30, "private_repo": "me/held"}), encoding="utf-8")
    config = load_topic_config(spec)
    assert (config.embargo_days, config.private_repo) == (30, "me/held")  # a Hub id stays an id
    spec.write_text(yaml.safe_dump({**data, "embargo_days": 30, "private_repo": "./held"}), encoding="utf-8")
    assert load_topic_config(spec).private_repo == str((tmp_path / "held").resolve())  # a folder, from the YAML's


def test_a_definitions_list_sets_the_embargo_of_every_topic(tmp_path):
    spec = definition(tmp_path)
    sub = tmp_path / "lists"
    sub.mkdir()
    listing = sub / "topics.yaml"
    listing.write_text(f"topics: [{spec}]\nembargo_days: 20\nprivate_repo: ./held\n", encoding="utf-8")
    (config,) = load_definitions(listing)
    assert (config.embargo_days, config.private_repo) == (20, str((sub / "held").resolve()))
    listing.write_text(f"topics: [{spec}]\nembargo_days: 20\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="embargo_days: 20 needs a private repo"):
        load_definitions(listing)
    listing.write_text(f"topics: [{spec}]\nembargo: 20\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"embargo.*unknown key"):
        load_definitions(listing)


# ---- three refreshes, offline ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> dict[str, Any]:
    """Three offline refreshes with a 45-day embargo into local folders; between the first two, the plan of a
    200-day embargo (`--dry-run --json`, writing nothing)."""
    root = tmp_path_factory.mktemp("embargo")
    make_three_commits(root)
    spec = embargoed(definition(root))
    repo, outputs = root / "freshstack", {}
    for date in (D1, D2, D3):
        if date == D2:
            long = embargoed(definition(root), days=200)
            code, out, err = run_refresh(long, D2, repo, 1, "--dry-run", "--json")
            assert code == 0, err
            outputs["plan"] = json.loads(out)
            embargoed(definition(root))  # back to 45 days (the same file)
        code, out, err = run_refresh(spec, date, repo, 1)
        assert code == 0, err
        outputs[date] = out
    return {"root": root, "repo": repo, "private": root / "private" / "freshstack", "outputs": outputs}


def test_questions_move_from_the_private_repo_to_the_public_one_when_their_embargo_ends(three):
    repo, private = three["repo"], three["private"]
    assert list_revisions(repo) == [D1, D2, D3]
    assert list_revisions(private) == [D2, D3]  # D1 embargoed nothing the build kept: no private revision
    public = {d: query_ids(Path(f"{repo}@{d}")) for d in (D1, D2, D3)}
    held = {d: query_ids(Path(f"{private}@{d}")) for d in (D2, D3)}
    assert public == {D1: ["1013"], D2: ["1007", "1013"], D3: ["1007", "1011", "1013"]}
    assert held == {D2: ["1011"], D3: ["1015"]}
    assert "embargo: no question of laravel is embargoed at 2024-02-29" in three["outputs"][D1]
    for date in (D2, D3):
        folder, hidden = Path(f"{repo}@{date}"), Path(f"{private}@{date}")
        assert main(["validate", str(hidden)]) == 0  # a repo of its own: `evaluate` reads it as is
        record = manifest(hidden)
        assert record["public"] == {"repo": str(repo), "revision": date, "location": str(folder)}
        assert (
            record["topics"]["laravel"]["embargo"]["ends"]
            == {
                D2: {"1011": "2024-07-17"},
                D3: {"1015": "2024-09-02"},
            }[date]
        )
        assert f"published the embargoed questions of laravel to {hidden} (private)" in three["outputs"][date]


def test_the_public_revision_says_how_many_and_until_when_never_which(three):
    repo, private = three["repo"], three["private"]
    for date, until in ((D2, "2024-08-14"), (D3, "2024-10-15")):  # the date plus 45 days
        folder = Path(f"{repo}@{date}")
        assert manifest(folder)["topics"]["laravel"]["embargo"] == {"days": DAYS, "questions": 1, "until": until}
        sentence = f"Embargo: 45 days; 1 question asked within 45 days before this snapshot is embargoed until {until}"
        assert sentence in (folder / "README.md").read_text(encoding="utf-8")
        previous = {D2: D1, D3: D2}[date]
        drift = folder / "drift" / previous
        assert sentence in (drift / "drift.md").read_text(encoding="utf-8")
        assert json.loads((drift / "drift.json").read_text(encoding="utf-8"))["topics"]["laravel"]["embargo"] == {
            "days": DAYS,
            "questions": 1,
            "until": until,
        }
        ids, fragments = secrets(Path(f"{private}@{date}"))
        assert ids and len(fragments) > 20
        assert leaks(folder, ids, fragments) == []
    # the same search finds a question once it is published: 1011, embargoed at D2, is public at D3
    released, fragments = secrets(Path(f"{private}@{D2}"))
    assert sorted(leaks(Path(f"{repo}@{D3}"), released, fragments)[:1]) == ["1011"]


def test_the_plan_says_when_an_embargo_outlasts_a_refresh_and_leaves_few_questions(three):
    plan = three["outputs"]["plan"]
    assert plan["status"] == "planned"
    embargo = plan["topics"]["laravel"]["plan"]["embargo"]
    assert embargo["days"] == 200 and embargo["start"] == "2023-12-13"
    assert embargo["questions"] + embargo["public"] == plan["topics"]["laravel"]["plan"]["questions"]
    notes = "\n".join(embargo["notes"])
    assert (
        "the embargo (200 days) is longer than the 122 days since the previous snapshot 2024-02-29: allowed: "
        "questions stay private across more than one refresh" in notes
    )
    assert f"the embargo leaves {embargo['public']} public questions (fewer than 10" in notes
    assert f"the embargo leaves {embargo['questions']} private questions (fewer than 10" in notes
    assert list_revisions(three["private"]) == [D2, D3]  # the plan wrote nothing


def test_build_snapshots_write_each_dates_embargoed_questions_beside_the_private_repo(tmp_path, capsys):
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path))
    out = tmp_path / "out" / "freshstack"
    assert main(["build", str(spec), "--out", str(out), "--snapshot", D2, "--snapshot", D3, "--quiet"]) == 0
    capsys.readouterr()
    private = tmp_path / "private" / "freshstack"
    assert query_ids(Path(f"{out}@{D2}")) == ["1007", "1013"] and query_ids(Path(f"{private}@{D2}")) == ["1011"]
    assert query_ids(Path(f"{out}@{D3}")) == ["1007", "1011", "1013"] and query_ids(Path(f"{private}@{D3}")) == ["1015"]
    assert leaks(Path(f"{out}@{D3}"), *secrets(Path(f"{private}@{D3}"))) == []


def test_an_embargo_that_would_leave_the_public_revision_empty_publishes_nothing(tmp_path):
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path), days=100)  # at D1 the one question kept (1013, 2023-11-30) is held
    code, _, err = run_refresh(spec, D1, tmp_path / "freshstack", 1)
    assert code == 2
    assert "every question kept at 2024-02-29 is embargoed (asked after 2023-11-21)" in err
    assert "shorten embargo_days (100)" in err
    assert list_revisions(tmp_path / "freshstack") == [] and not (tmp_path / "private").exists()


def test_a_plain_build_with_an_embargo_is_refused(tmp_path):
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path))
    with pytest.raises(FreshStackError, match="counts back from a snapshot's date, and this build has none"):
        from freshstack_hf.pipeline.runner import run_build

        run_build(load_topic_config(spec), tmp_path / "out", show_progress=False, echo=lambda _: None)
    assert not (tmp_path / "private").exists() and not (tmp_path / "out").exists()


def test_a_refresh_stopped_between_its_two_publications_goes_on(tmp_path):
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path))
    repo, private = tmp_path / "freshstack", tmp_path / "private" / "freshstack"
    assert run_refresh(spec, D2, repo, 1)[0] == 0
    shutil.rmtree(f"{repo}@{D2}")  # as if the run had stopped after publishing the private revision
    before = (Path(f"{private}@{D2}") / "manifest.json").stat().st_mtime_ns
    code, out, err = run_refresh(spec, D2, repo, 1)
    assert code == 0, err
    assert f"embargo: {private}@{D2} was published by an earlier run of this refresh; kept" in out
    assert query_ids(Path(f"{repo}@{D2}")) == ["1007", "1013"] and query_ids(Path(f"{private}@{D2}")) == ["1011"]
    assert (Path(f"{private}@{D2}") / "manifest.json").stat().st_mtime_ns == before  # written once


def test_a_schedule_says_when_an_embargo_outlasts_the_time_between_its_runs(tmp_path, monkeypatch):
    from test_refresh_schedule import LLM, WORKFLOW, run_cli

    from freshstack_hf.pipeline.refresh.schedule import interval_days

    assert [interval_days(c) for c in ("0 6 1 * *", "0 5 * * 1", "30 2 * * *", "*/5 * * * *")] == [28, 7, 1, None]
    make_three_commits(tmp_path)
    embargoed(write_definition(tmp_path, llm=LLM), days=40, private="me/held")
    monkeypatch.chdir(tmp_path)
    args = ["refresh", "laravel.yaml", "--repo", "me/freshstack", "--budget-usd", "40", "--write-workflow", WORKFLOW]
    args += ["--cache-key-secret", "FRESHSTACK_CACHE_KEY"]  # an embargo's work folder is cached only encrypted
    code, out, err = run_cli(*args)  # monthly: 40 days outlast a run
    assert code == 0, err
    assert (
        "note: topic 'laravel': the embargo (40 days) is longer than the 28 days or more between two scheduled "
        "refreshes: allowed: questions stay private across more than one refresh" in out
    )
    embargoed(tmp_path / "laravel.yaml", days=20, private="me/held")
    code, out, err = run_cli(*args, "--force")
    assert code == 0 and "note:" not in out, err


# ---- three refreshes, paid: each question judged once --------------------------------------------------------------


@pytest.mark.slow
def test_a_released_question_is_judged_once(tmp_path):
    make_three_commits(tmp_path)
    with Billing() as server:
        spec = embargoed(definition(tmp_path, server.base_url, **PRICES))
        slices = {}
        for date in (D1, D2, D3):
            start = len(server.answered)
            code, _, err = run_refresh(spec, date, tmp_path / "freshstack", 5)
            assert code == 0, err
            slices[date] = (start, len(server.answered))
    repo, private = tmp_path / "freshstack", tmp_path / "private" / "freshstack"
    assert query_ids(Path(f"{private}@{D2}")) == ["1011"] and "1011" not in query_ids(Path(f"{repo}@{D2}"))
    assert "1011" in query_ids(Path(f"{repo}@{D3}"))
    keys = [key for key, _, _ in server.answered]
    assert len(keys) == len(set(keys)), "a request was paid twice"

    def judged(date: str) -> list[str]:
        bodies = [body for _, body, _ in server.answered[slice(*slices[date])]]
        return [p for s, p in map(prompt, bodies) if s == build_prompts.JUDGE_SYSTEM and "1011" in about(p)]

    assert judged(D2)  # judged while embargoed, once
    # released at D3: judged again only on the documents whose text is new at D3, like any carried question
    docs = {m for p in judged(D3) for m in MARKER.findall(p.split("<documents>", 1)[-1])}
    assert docs and docs <= {Path(n).stem for n in THIRD}, docs  # the changed scheduling.md, the new validation.md


# ---- a private Hub repo ------------------------------------------------------------------------------------------


def test_a_private_hub_repo_the_hub_reports_public_is_refused(tmp_path, monkeypatch):
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path), private="me/held")
    hub = FakeHub(tmp_path / "hub")
    hub.install(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    hub.repos.add("me/held")
    hub.private["me/held"] = False  # someone made it public
    mirror = tmp_path / "mirror"
    code, _, err = run_refresh(spec, D2, "me/freshstack", 1, "--out", str(mirror))
    assert code == 2 and not hub.uploads
    assert "the private repo me/held is public on the Hub" in err and "the embargo would be void; refused" in err
    assert "hf repos settings me/held --repo-type dataset --private" in err
    assert "nothing was written" in err

    hub.private["me/held"] = True
    code, _, err = run_refresh(spec, D2, "me/freshstack", 1, "--out", str(mirror))
    assert code == 0, err
    assert [(repo_id, tag) for repo_id, tag in hub.tags] == [("me/held", D2), ("me/freshstack", D2)]
    held, public = hub.tags[("me/held", D2)], hub.tags[("me/freshstack", D2)]
    assert query_ids(held) == ["1011"] and "1011" not in query_ids(public)
    assert manifest(held)["public"]["location"] == f"me/freshstack@{D2}"
    assert leaks(public, *secrets(held)) == []


def test_publishing_private_to_a_public_hub_repo_is_refused(tmp_path, monkeypatch, three):
    from freshstack_hf.publish import plan_publish, publish

    hub = FakeHub(tmp_path / "hub")
    hub.install(monkeypatch)
    hub.repos.add("me/held")
    hub.private["me/held"] = False
    folder = Path(f"{three['private']}@{D2}")
    with pytest.raises(FreshStackError, match="the private repo me/held is public on the Hub"):
        publish(plan_publish(folder, "me/held", private=True), folder, token="hf_test")
    assert not hub.uploads
    publish(plan_publish(folder, "me/new", private=True), folder, token="hf_test")  # a new repo is made private
    assert hub.private["me/new"] is True and len(hub.uploads) == 1
