"""Submissions without Gradio: strict validation, scoring by the library, dedupe, rate limit, model queueing.

The dataset is a small synthetic repo (2 topics x 6 queries x 300 short docs, with `top_ranked` lists) and
runs are real BM25 runs written as TREC files, so every number is checked against the library's own.
"""

from __future__ import annotations

import pytest
from hub_models import COMMIT, HubCache
from submission_files import merged, write_trec

from freshstack_hf._version import __version__
from freshstack_hf.baselines import retrievers
from freshstack_hf.metrics import MEASURES
from freshstack_hf.metrics.scoring import score_run
from freshstack_hf.repo.dataset import Dataset
from leaderboard.store.records import SCHEMA_VERSION
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter, model_content_hash
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter


@pytest.fixture
def submitter(store, lb_dataset, tmp_path) -> RunSubmitter:
    return RunSubmitter(store, lb_dataset, rate_limit=100, resamples=2000)


def test_a_valid_run_is_scored_by_the_library_and_stored_with_its_provenance(submitter, store, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "bm25.trec", merged(bm25_runs))
    outcome = submitter.submit(path, name="BM25 <b>run</b>", link="https://example.org/x", identity="ip:1")
    assert outcome.status == "scored", outcome
    ctx = submitter.dataset
    expected = score_run({t: ctx.qrels(t) for t in ctx.topics}, merged(bm25_runs, None), MEASURES, resamples=2000)
    rows = store.results_for(outcome.system_id)
    assert len(rows) == len(ctx.topics) * len(MEASURES)
    for r in rows:
        assert r["value"] == expected.topics[r["topic"]].metrics[r["measure"]]
        assert r["per_query"] == {q: s[r["measure"]] for q, s in expected.topics[r["topic"]].per_query.items()}
        if r["measure"] in ("alpha_ndcg@10", "coverage@20", "recall@50"):
            interval = expected.intervals[r["topic"]][r["measure"]]
            assert (r["ci_low"], r["ci_high"]) == (interval.low, interval.high)
        assert (r["schema_version"], r["evaluator_version"]) == (SCHEMA_VERSION, __version__)
        assert r["dataset_revision"] == ctx.revision and r["parameters"]["format"] == "trec"
    system = store.get_system(outcome.system_id)
    assert system.name == "BM25 run" and system.kind == "run" and system.link == "https://example.org/x"
    archived = store.blobs.ranking_of(system.id)
    assert set(archived) == set(ctx.topics)
    assert all(len(docs) <= 100 for run in archived.values() for docs in run.values())
    assert outcome.details["average"]["alpha_ndcg@10"] == pytest.approx(expected.average["alpha_ndcg@10"])


def test_a_malformed_run_is_refused_with_its_line_numbers_and_nothing_is_stored(submitter, store, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "bad.trec", merged(bm25_runs), depth=3)
    lines = path.read_text().splitlines()
    lines[2] = "only three columns"
    lines[4] = lines[4].rsplit(" ", 2)[0] + " not-a-number tag"
    path.write_text("\n".join(lines) + "\n")
    outcome = submitter.submit(path, name="bad", identity="ip:1", display_name="bad.trec")
    assert outcome.status == "refused"
    assert [p.split(":")[0] for p in outcome.problems] == ["bad.trec line 3", "bad.trec line 5"]
    assert str(tmp_path) not in outcome.markdown()  # the server's temp path is not shown
    assert store.leaderboard_rows() == []


def test_unknown_query_and_doc_ids_are_refused(submitter, store, bm25_runs, tmp_path):
    run = merged(bm25_runs)
    qid = next(iter(run))
    run["no-such-query"] = {"doc": 1.0}
    run[qid] = {**run[qid], "<img src=x onerror=alert(1)>": 99.0}
    outcome = submitter.submit(write_trec(tmp_path / "ids.trec", run), name="ids", identity="ip:1")
    assert outcome.status == "refused"
    assert any("unknown query 'no-such-query'" in p for p in outcome.problems)
    assert any("unknown doc" in p and "line 1:" in p for p in outcome.problems)
    assert "<img" not in outcome.markdown() and "&lt;img" in outcome.markdown()
    assert store.leaderboard_rows() == []


def test_scopes_one_topic_auto_and_all(submitter, bm25_runs, tmp_path):
    alpha_only = write_trec(tmp_path / "alpha.trec", bm25_runs["alpha"])
    both = write_trec(tmp_path / "both.trec", merged(bm25_runs))
    refused = submitter.submit(both, name="x", scope="alpha", identity="ip:1")
    assert refused.status == "refused" and all("unknown query" in p for p in refused.problems)
    assert submitter.submit(alpha_only, name="a", scope="alpha", identity="ip:1").details["topics"] == ["alpha"]
    assert submitter.submit(alpha_only, name="a", identity="ip:1").details["topics"] == ["alpha"]  # auto
    scored_all = submitter.submit(alpha_only, name="a", scope="all", identity="ip:1")
    assert scored_all.details["topics"] == ["alpha", "beta"]  # beta's queries are absent: they score 0
    beta = {r["measure"]: r["value"] for r in submitter.store.results_for(scored_all.system_id) if r["topic"] == "beta"}
    assert beta["alpha_ndcg@10"] == 0.0
    assert submitter.submit(alpha_only, name="a", scope="nope", identity="ip:1").status == "refused"


def test_a_duplicate_is_not_scored_twice_nor_counted_against_the_limit(store, lb_dataset, bm25_runs, tmp_path):
    submitter = RunSubmitter(store, lb_dataset, rate_limit=1, resamples=100)
    path = write_trec(tmp_path / "r.trec", merged(bm25_runs))
    first = submitter.submit(path, name="first", identity="ip:1")
    copy = tmp_path / "copy.trec"
    copy.write_bytes(path.read_bytes())
    again = submitter.submit(copy, name="second name", identity="ip:1")
    assert (first.status, again.status, again.system_id) == ("scored", "duplicate", first.system_id)
    assert "already submitted" in again.message and f"#{first.system_id}" in again.message
    assert len(store.leaderboard_rows()) == 1
    assert len(store.results_for(first.system_id)) == len(lb_dataset.topics) * len(MEASURES)
    same_ranking = write_trec(tmp_path / "tagged.trec", merged(bm25_runs), tag="other")  # another file, one ranking
    assert submitter.submit(same_ranking, name="tag", identity="ip:1").status == "duplicate"
    other = merged(bm25_runs)
    query = next(iter(other))
    other[query] = dict(list(other[query].items())[:-1])  # one doc fewer: another ranking
    write_trec(path, other, tag="other")
    assert submitter.submit(path, name="third", identity="ip:1").status == "rate_limited"
    assert submitter.submit(path, name="third", identity="ip:2").status == "scored"


def test_size_cap_and_text_fields(store, lb_dataset, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "r.trec", merged(bm25_runs))
    small = RunSubmitter(store, lb_dataset, max_file_bytes=100)
    refused = small.submit(path, name="x").message
    assert "is over 2,500 bytes" in refused and "100-byte cap (--max-file-mb)" in refused  # read to 25x the cap
    submitter = RunSubmitter(store, lb_dataset, resamples=100)
    bad_link = submitter.submit(path, name="x", link="javascript:alert(1)")
    assert bad_link.status == "refused" and "not an http(s) URL" in bad_link.message
    assert submitter.submit(path, name="<script>x</script>").status == "refused"  # empty once cleaned
    assert submitter.submit(None, name="x").status == "refused"
    assert store.leaderboard_rows() == []


def test_model_submissions_are_queued_once(store, lb_dataset, tmp_path):
    submitter = ModelSubmitter(store, lb_dataset, rate_limit=10)
    outcome = submitter.submit("org/embedder", revision=COMMIT, track="nano", link="https://hf.co/org/embedder")
    assert outcome.status == "queued", outcome
    (job,) = store.queue.list_jobs()
    assert job.kind == "model" and job.system_id == outcome.system_id
    assert job.payload["model"] == "org/embedder" and job.payload["track"] == "nano"
    assert job.payload["revision"] == COMMIT  # the worker loads that commit
    assert job.payload["dataset_revision"] == lb_dataset.revision and job.payload["topics"] == lb_dataset.topics
    system = store.get_system(outcome.system_id)
    assert system.name == "org/embedder" and system.status == "queued"
    assert system.content_hash == model_content_hash("nano", "org/embedder", COMMIT, lb_dataset.revision)
    assert submitter.submit("org/embedder", revision=COMMIT, track="nano").status == "duplicate"
    assert submitter.submit("org/embedder", revision=COMMIT, track="full").status == "queued"  # another track
    assert len(store.queue.list_jobs()) == 2
    for model, revision in [("../../etc/passwd", ""), ("a b/c", ""), ("/etc", ""), ("org/x", "bad rev"), ("", "")]:
        assert submitter.submit(model, revision=revision).status == "refused", model
    assert submitter.submit("org/x", track="tiny").status == "refused"


def test_an_uncached_hub_branch_is_refused_offline_with_the_fix(store, lb_dataset, tmp_path, monkeypatch):
    """Offline, a Hub model the board's cache lacks cannot be pinned to a commit (`model_source.pinned_commit`):
    refused, naming the commit id or a download as the fix, and nothing stored; a commit id is its own pin."""
    HubCache(tmp_path / "hub", monkeypatch)  # empty
    submitter = ModelSubmitter(store, lb_dataset, rate_limit=10)
    for revision in ("", "v1", "main"):
        refused = submitter.submit("org/embedder", revision=revision)
        assert refused.status == "refused" and refused.message == (
            f"model org/embedder at {revision or 'its default branch'} is not in this board's Hugging Face cache "
            "and the Hub is offline (HF_HUB_OFFLINE), so the board cannot pin the commit it would measure: give "
            "that commit's full id (40 hex digits) as the revision, or download the model into the board's cache "
            "(hf download org/embedder)"
        )
    assert store.leaderboard_rows() == [] and store.queue.list_jobs() == []
    assert submitter.submit("org/embedder", revision=COMMIT).status == "queued"


def test_local_models_only_under_the_operators_roots(store, lb_dataset, tmp_path):
    folder = tmp_path / "models" / "m"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "modeling.py").write_text("print('pwned')")
    assert ModelSubmitter(store, lb_dataset).submit(str(folder)).status == "refused"
    guarded = ModelSubmitter(store, lb_dataset, model_roots=(tmp_path / "models",))
    refused = guarded.submit(str(folder))
    assert refused.status == "refused" and "Python code" in refused.message
    assert guarded.submit(str(tmp_path)).status == "refused"  # outside the root
    assert store.leaderboard_rows() == []


def test_nano_track_needs_candidate_pools(store, synth_repo):
    submitter = ModelSubmitter(store, Dataset(synth_repo))
    assert "top_ranked" in submitter.submit("org/x", track="nano").message


def test_baseline_rows_are_computed_once_per_dataset_revision(store, lb_dataset, tmp_path):
    (first,) = compute_baselines(store, lb_dataset, methods=["bm25"], resamples=100)
    assert first.created and first.name == "BM25"
    said = []
    (again,) = compute_baselines(store, lb_dataset, methods=["bm25"], say=said.append)
    assert (again.system_id, again.created) == (first.system_id, False) and "already stored" in said[0]
    rows = store.results_for(first.system_id)
    expected = retrievers.bm25(lb_dataset.topic("alpha")).as_scores()
    direct = score_run({"alpha": lb_dataset.qrels("alpha")}, expected, MEASURES, resamples=100)
    alpha = {r["measure"]: r for r in rows if r["topic"] == "alpha"}
    assert alpha["alpha_ndcg@10"]["value"] == direct.topics["alpha"].metrics["alpha_ndcg@10"]
    interval = direct.intervals["alpha"]["coverage@20"]
    assert (alpha["coverage@20"]["ci_low"], alpha["coverage@20"]["ci_high"]) == (interval.low, interval.high)
    assert store.blobs.ranking_of(first.system_id) is not None


@pytest.mark.slow
def test_gzipped_runs_are_read_but_gzip_bombs_are_refused(store, lb_dataset, bm25_runs, tmp_path):
    import gzip

    plain = write_trec(tmp_path / "r.trec", merged(bm25_runs))
    packed = tmp_path / "r.trec.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    submitter = RunSubmitter(store, lb_dataset, max_file_bytes=200_000, resamples=100)
    assert submitter.submit(packed, name="gz").status == "scored"
    bomb = tmp_path / "bomb.trec.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (200_000 * 26)))  # a few KB that expand past 25x the cap
    refused = submitter.submit(bomb, name="bomb")
    assert refused.status == "refused" and "once decompressed" in refused.message
    junk = tmp_path / "junk.trec.gz"
    junk.write_bytes(b"not gzip at all")
    assert "not a readable gzip file" in submitter.submit(junk, name="junk").message


def test_problem_lists_are_capped(submitter, tmp_path):
    path = tmp_path / "junk.trec"
    path.write_text("bad line\n" * 250)
    outcome = submitter.submit(path, name="junk")
    assert outcome.message.endswith("250 problem(s)")
    assert len(outcome.problems) == 101 and outcome.problems[-1] == "... and 150 more"


def test_the_leaderboard_command_has_help_with_an_example_and_refuses_bad_options(capsys, tmp_path):
    from freshstack_hf.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["leaderboard", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "Example:" in out and "--reported" in out and "--max-file-mb" in out and "--rate-limit" in out
    assert (
        main(["leaderboard", "--dataset", str(tmp_path / "missing"), "--store", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    )
    assert "not found" in capsys.readouterr().err
    assert main(["leaderboard", "--dataset", "x", "--max-file-mb", "0"]) == 2


def test_stored_scores_use_the_seed_they_record(lb_dataset, bm25_runs):
    """The seed in a row's parameters is the one its intervals were drawn with (not only the default's)."""
    from freshstack_hf.metrics import HEADLINE
    from leaderboard.scoring import score_for_store

    topics = lb_dataset.topics
    one, two = (score_for_store(lb_dataset, bm25_runs, topics, by_topic=True, resamples=300, seed=s) for s in (1, 2))
    assert (one.parameters["seed"], two.parameters["seed"]) == (1, 2)
    options = {"by_topic": True, "measures": MEASURES, "interval_measures": HEADLINE, "resamples": 300}
    assert two.results == lb_dataset.score(bm25_runs, seed=2, **options).stored()
    assert one.results == lb_dataset.score(bm25_runs, seed=1, **options).stored()
    assert one.results != two.results  # same values, intervals from other resamples
