"""Issue 45's leak test, at rest: after a refresh with an embargo, nothing embargoed where it could be read.

Three places, each searched after real refreshes (the refresh tests' git repository and Laravel dump, the CLI's
entry point, the tests' chat server billing every call, `huggingface_hub` answered from folders):

* the machine's own disk: the work folder (stage outputs, memos, clones, the LLM response cache, the spend ledger)
  and a local private repo's revisions are readable by their owner alone, every folder 0700 and every file 0600
  (git's read-only object files 0400), whatever the umask, while the public revision is made as the umask says;
* the public revision: its manifest, card and drift report count the public questions alone (every count equals
  the one a build of only those questions makes), say "until" as the snapshot's date plus the embargo's days, and
  name no private repo, no work folder and no local path; an invalid private revision's error counts its problems
  and names where they are, never an embargoed id;
* the GitHub Actions cache: the workflow `refresh --write-workflow` writes for an embargo, its steps run here as a
  runner would run them (bash, openssl, tar), caches one file, an encrypted pack holding no embargoed id or 8-word
  fragment of an embargoed question, answer or nugget; decrypted on a fresh "runner", the work folder lets the
  stopped refresh go on where it stopped, paying no call twice. Without the key secret the workflow is refused.

Each search has its control: the same search finds the embargoed ids and texts in the plaintext work folder and the
private revision, so it can fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from refresh_topic import D1, D2, Billing, definition, make_three_commits
from refresh_topic import refresh as run_refresh
from test_embargo import embargoed, every_text, leaks, manifest, query_ids, secrets
from test_refresh import FakeHub
from test_refresh_schedule import WORKFLOW, evaluate, run_cli, run_step_argv, step

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline.embargo import Embargo
from freshstack_hf.pipeline.inputs import EMBARGOED_CANDIDATE_LISTS
from freshstack_hf.pipeline.work_folder import snapshot_work
from freshstack_hf.repo.card import render_card

pytestmark = pytest.mark.slow

DAYS = 45
PRIVATE = "./held-questions/secret-stash"  # a local private repo whose name no public file may show
HUB_PRIVATE = "me/secret-held"
KEY_SECRET = "FRESHSTACK_CACHE_KEY"
UMASK = 0o002  # group-writable by default (Debian's user private groups): the private part must not follow it
VOLATILE = {"fingerprint", "finished_at", "seconds_total", "seconds", "mb_per_s"}  # no count: when and how fast


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    before = os.umask(value)
    try:
        yield
    finally:
        os.umask(before)


def modes(folder: Path) -> dict[str, int]:
    """Every folder's and file's permission bits under `folder` (itself included), by relative path."""
    return {str(p.relative_to(folder)): p.stat().st_mode & 0o777 for p in [folder, *folder.rglob("*")]}


def not_owner_only(folder: Path) -> dict[str, str]:
    """What under `folder` is not its owner's alone: a folder not 0700, a file not 0600 (inside a git directory,
    where git makes its object files read-only and its hook samples executable, any mode without group or other
    bits)."""
    found = {}
    for name, mode in modes(folder).items():
        path = folder / name
        in_git = any(part.endswith(".git") or part == ".git" for part in Path(name).parts)
        if mode & 0o077 or (not in_git and mode != (0o700 if path.is_dir() else 0o600)):
            found[name] = oct(mode)
    return found


def flat(record: Any, prefix: str = "") -> dict[str, Any]:
    """A record as {dotted path: leaf value} (a list's items by their index)."""
    if isinstance(record, list):
        record = dict(enumerate(record))
    if isinstance(record, dict):
        return {k: v for key, value in record.items() for k, v in flat(value, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): record}


# ---- on this machine: modes, the public account, errors -----------------------------------------------------------


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> dict[str, Any]:
    """Refreshes at D1 and D2 with a 45-day embargo under a group-writable umask, paid through the chat server, a
    corpus cloned from a URL (`file://`) so the work folder holds a clone; and a build of the public questions alone
    at D2 (no embargo, the question window cut where the embargo starts), to compare counts with."""
    root = tmp_path_factory.mktemp("at-rest")
    make_three_commits(root)
    with Billing() as server, umask(UMASK):
        spec = embargoed(definition(root, server.base_url, input_price_per_million=2.5, output_price_per_million=10.0))
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        data["corpus"]["repositories"][0]["source"] = (root / "docs").as_uri()  # cloned into the work folder
        data["private_repo"] = PRIVATE
        spec.write_text(yaml.safe_dump(data), encoding="utf-8")
        outputs = {}
        for date in (D1, D2):
            code, out, err = run_refresh(spec, date, root / "pub" / "freshstack", 5)  # `pub`: made by the refresh
            assert code == 0, err
            outputs[date] = out
        alone = root / "alone"
        alone.mkdir()
        start = Embargo(DAYS, D2).start
        data.update(embargo_days=0, private_repo="")
        data["questions"]["until"] = start
        (alone / "laravel.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        args = ["build", str(alone / "laravel.yaml"), "--out", str(alone / "freshstack"), "--quiet"]
        assert main([*args, "--snapshot", D1, "--snapshot", D2]) == 0
    private = root / "held-questions" / f"secret-stash@{D2}"
    public = root / "pub" / f"freshstack@{D2}"
    return {"root": root, "public": public, "private": private, "alone": alone, "out": outputs}


def test_the_work_folder_and_the_private_repo_are_their_owners_alone(refreshed):
    root = refreshed["root"]
    work, private = root / "pub" / "freshstack-work", refreshed["private"]
    assert (work / "laravel" / "llm-cache.sqlite").is_file() and (work / f"refresh@{D2}" / "spend.jsonl").is_file()
    assert list((work / "laravel").rglob("*.git")), "the corpus was cloned into the work folder"
    assert not_owner_only(work) == {}
    assert not_owner_only(private) == {}
    assert not_owner_only(private.parent) == {}  # the private repo's folder: made here, so made private
    # the control: the same walk finds what the umask made of the public revision, which stays as it always was
    public = modes(refreshed["public"])
    assert set(public.values()) == {0o775, 0o664}, public
    assert (root / "pub").stat().st_mode & 0o777 == 0o775  # the folder the repo sits in: made as the umask says
    # and the work folder does hold the embargoed questions: the modes are all that keeps them
    ids, fragments = secrets(private)
    assert ids and set(leaks(work, ids, fragments)) & ids


def test_the_public_revision_counts_the_public_questions_alone(refreshed):
    public, alone = refreshed["public"], refreshed["alone"] / f"freshstack@{D2}"
    mine, theirs = (manifest(f)["topics"]["laravel"] for f in (public, alone))
    assert query_ids(public) == query_ids(alone)  # the same public questions
    compared = 0
    for name, record in mine["build"]["stages"].items():
        other = flat(theirs["build"]["stages"][name])
        for key, value in flat(record).items():
            if key.split(".")[-1] in VOLATILE or key.startswith("usage.") or isinstance(value, str):
                continue
            assert value == other[key], f"{name}.{key}: {value} in the public revision, {other[key]} built alone"
            compared += 1
    assert compared > 40
    # the counts that would tell the embargoed questions apart: each of them is a public one's
    held = manifest(refreshed["private"])["topics"]["laravel"]["build"]["stages"]
    for stage, key in (("filter", "kept"), ("judgments", "supported_pairs"), ("nuggets", "nuggets")):
        assert mine["build"]["stages"][stage][key] == theirs["build"]["stages"][stage][key] < held[stage][key]
    assert not any(isinstance(v, int | float) for k, v in flat(mine["build"]["stages"]).items() if "usage" in k)
    assert set(mine["reuse"]) == {"files_reused", "files_chunked"}
    taken = theirs["build"]["stages"]["questions"]["kept"]
    assert mine["refresh"]["questions"]["total"] == taken and "spent" not in mine["refresh"]
    assert not set(manifest(public)["refresh"]) & {"spent_usd", "calls", "estimate_usd", "budget_usd", "runs"}
    # the whole account, LLM spend included, is the private revision's
    whole = manifest(refreshed["private"])
    assert whole["refresh"]["calls"] > 0 and whole["topics"]["laravel"]["refresh"]["spent"]["calls"] > 0
    # the card is the manifest's and says where the usage went; the embargo: how many, until the date + 45 days
    card = (public / "README.md").read_text(encoding="utf-8")
    assert card == render_card(manifest(public))
    assert "so they are recorded with them, in the private revision" in card
    assert "| stage | made by | calls |" not in card  # the LLM usage table, which would count every question
    assert mine["embargo"] == {"days": DAYS, "questions": 1, "until": "2024-08-14"}
    assert manifest(refreshed["private"])["topics"]["laravel"]["embargo"]["ends"] == {"1011": "2024-07-17"}
    drift = json.loads((public / "drift" / D1 / "drift.json").read_text(encoding="utf-8"))
    assert drift["topics"]["laravel"]["embargo"] == mine["embargo"]


def test_no_public_file_names_a_private_repo_or_a_local_path(refreshed):
    root, public = refreshed["root"], refreshed["public"]
    text = every_text(public)
    for secret in ("secret-stash", "held-questions", "freshstack-work", str(root), "/tmp/"):
        assert secret not in text, secret
    assert leaks(public, *secrets(refreshed["private"])) == []
    # the control: the private revision's own manifest keeps them, as it may
    assert str(root) in every_text(refreshed["private"]) and "secret-stash" in every_text(refreshed["private"])


def test_an_invalid_private_revision_is_refused_naming_counts_never_ids(tmp_path):
    """A private revision that does not validate (here: an embargoed question's candidate list naming a document
    twice, as a corrupted work file would make it) stops the refresh; its error says how many problems and where."""
    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path), private=PRIVATE)
    repo = tmp_path / "freshstack"
    assert run_refresh(spec, D2, repo, 1)[0] == 0
    shutil.rmtree(f"{repo}@{D2}")  # as if the run had stopped before publishing
    shutil.rmtree(tmp_path / "held-questions" / f"secret-stash@{D2}")
    lists = EMBARGOED_CANDIDATE_LISTS["top_ranked"].path(snapshot_work(tmp_path / "freshstack-work" / "laravel", D2))
    table = pq.read_table(lists)
    rows = table.to_pylist()
    (held,) = [row["query-id"] for row in rows]
    for row in rows:
        row["corpus-ids"] = [row["corpus-ids"][0], *row["corpus-ids"]]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), lists)

    code, out, err = run_refresh(spec, D2, repo, 1)
    assert code == 2, out
    assert (
        f"the private revision {D2}" in err
        and "not valid; nothing published: 1 problem (1 in laravel-top_ranked)" in err
    )
    assert "freshstack-hf validate" in err
    assert not re.search(rf"(?<!\d){held}(?!\d)", out + err)  # the problem names it; the error does not
    # the control: where the maintainer reads them, on this machine, the problem names the question
    staged = next((tmp_path / "freshstack-work" / f"refresh@{D2}").glob("private-*/secret-stash@*"))
    done = subprocess.run(
        [sys.executable, "-m", "freshstack_hf", "validate", str(staged)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and f"query {held!r} lists a corpus id twice" in done.stdout + done.stderr


# ---- the GitHub Actions cache --------------------------------------------------------------------------------------


def run_script(workflow: dict[str, Any], name: str, cwd: Path, key: str) -> subprocess.CompletedProcess[str]:
    """Step `name` of the refresh job run as a runner runs it (`bash -e`, the step's environment, the key secret)."""
    found = step(workflow, name)
    env = {k: evaluate(str(v), {}, {KEY_SECRET: key}, {}) for k, v in found.get("env", {}).items()}
    return subprocess.run(
        ["bash", "-e", "-c", found["run"]],
        cwd=cwd,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def cached_paths(workflow: dict[str, Any]) -> set[str]:
    """Every path any `actions/cache` step of any job names."""
    paths = set()
    for job in workflow["jobs"].values():
        for found in job["steps"]:
            if found.get("uses", "").startswith("actions/cache"):
                paths |= {p.strip() for p in str(found["with"]["path"]).splitlines() if p.strip()}
    return paths


def shows(blob: bytes, ids: set[str], fragments: set[str]) -> list[str]:
    """The embargoed ids (as whole numbers) and fragments a cached file holds as bytes, read as text."""
    text = " ".join(blob.decode("latin-1").split())
    found = [i for i in ids if re.search(rf"(?<!\d){re.escape(i)}(?!\d)", text)]
    return found + [f for f in fragments if f in text]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_three_commits(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_actions_cache_keeps_only_the_encrypted_work_folder_and_a_stopped_run_goes_on(project, monkeypatch):
    hub = FakeHub(project / "hub")
    hub.install(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    prices = {"input_price_per_million": 0.5, "output_price_per_million": 20.0}
    key = "a test key, long and random enough for this test"
    with Billing(reasoning=True) as billing:
        embargoed(definition(project, billing.base_url, **prices), private=HUB_PRIVATE)
        args = ["refresh", "laravel.yaml", "--repo", "me/freshstack", "--budget-usd", "0.4"]
        code, out, err = run_cli(*args, "--write-workflow", WORKFLOW, "--cache-key-secret", KEY_SECRET)
        assert code == 0, err
        assert f"set the secrets HF_TOKEN, OPENAI_API_KEY, {KEY_SECRET}" in out
        workflow = yaml.safe_load((project / WORKFLOW).read_text(encoding="utf-8"))
        assert cached_paths(workflow) == {"freshstack-work.tar.enc"}  # the keep-cache job's restore included
        pack, work = project / "freshstack-work.tar.enc", project / "freshstack-work"

        # a run whose secret is not set stops before the refresh
        refused = run_script(workflow, "Check the cache key", project, "")
        assert refused.returncode != 0 and f"the repository secret {KEY_SECRET} is not set" in refused.stdout
        assert run_script(workflow, "Check the cache key", project, key).returncode == 0

        # a first run: nothing restored, the refresh stops at the budget cap, the folder is encrypted for the save
        assert run_script(workflow, "Decrypt the work folder", project, key).returncode == 0 and not work.exists()
        argv, _ = run_step_argv(workflow, project, inputs={"date": D2})
        code, out, err = run_cli(*argv)
        assert code == 2 and "stopped at the budget cap" in err, out + err
        first = len(billing.answered)
        done = run_script(workflow, "Encrypt the work folder", project, key)
        assert done.returncode == 0, done.stderr
        assert pack.read_bytes().startswith(b"Salted__") and not_owner_only(work) == {}

        # a fresh runner: only the cached pack is there; decrypted, the refresh goes on with a larger budget
        shutil.rmtree(work)
        assert run_script(workflow, "Decrypt the work folder", project, "a wrong key").returncode != 0
        assert not work.exists() and pack.exists()  # nothing half-restored
        assert run_script(workflow, "Decrypt the work folder", project, key).returncode == 0
        assert work.is_dir() and not pack.exists() and not_owner_only(work) == {}
        argv, _ = run_step_argv(workflow, project, inputs={"date": D2, "budget_usd": "5"})
        code, out, err = run_cli(*argv)
        assert code == 0, err
        assert "resuming: $" in out and f"spent at {D2} by earlier runs" in out
        assert run_script(workflow, "Encrypt the work folder", project, key).returncode == 0
    keys = [request for request, _, _ in billing.answered]
    assert len(keys) == len(set(keys)) > first > 0, "a call paid before the save was paid again"

    held = hub.tags[(HUB_PRIVATE, D2)]
    assert not_owner_only(project / f"secret-held@{D2}") == {}  # the private Hub repo's local mirror, too
    ids, fragments = secrets(held)
    assert ids and len(fragments) > 20
    for path in cached_paths(workflow):
        assert shows((project / path).read_bytes(), ids, fragments) == []
    # the controls: the plaintext folder the pack holds shows them, and so does the same search of it as a tar
    assert set(leaks(work, ids, fragments)) & ids
    plain = subprocess.run(["tar", "-c", "-f", "-", "freshstack-work"], cwd=project, capture_output=True, check=True)
    assert set(shows(plain.stdout, ids, fragments)) & ids
    # and the public revision published on the Hub names neither the private repo nor a local path
    public = hub.tags[("me/freshstack", D2)]
    assert query_ids(held) and not set(query_ids(held)) & set(query_ids(public))
    text = every_text(public)
    assert "secret-held" not in text and str(project) not in text and leaks(public, ids, fragments) == []


def test_a_workflow_for_an_embargo_without_a_place_for_its_private_parts_is_refused(project):
    embargoed(definition(project), private=HUB_PRIVATE)
    before = sorted(p.name for p in project.iterdir())
    args = ["refresh", "laravel.yaml", "--repo", "me/freshstack", "--budget-usd", "40", "--write-workflow", WORKFLOW]
    code, _, err = run_cli(*args)
    assert code == 2 and "refused; nothing was written: 1 problem" in err
    assert "topic 'laravel': embargo_days 45: the work folder the workflow caches would hold every embargoed" in err
    assert "pass --cache-key-secret NAME and set the repository secret NAME" in err
    code, _, err = run_cli(*args, "--cache-key-secret", "GITHUB_KEY")
    assert code == 2 and "--cache-key-secret GITHUB_KEY: is not a name GitHub gives a secret" in err
    embargoed(project / "laravel.yaml", private="./private/freshstack")  # gone with the runner
    code, _, err = run_cli(*args, "--cache-key-secret", KEY_SECRET)
    assert code == 2 and "private_repo" in err and "a GitHub-hosted runner keeps nothing of a run but its cache" in err
    assert "name a private Hub dataset (private_repo: ORG/NAME)" in err
    assert sorted(p.name for p in project.iterdir()) == before and not (project / ".github").exists()
