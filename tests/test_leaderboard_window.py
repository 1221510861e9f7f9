"""Cutoff dates on the leaderboard: stored with the system (SQLite and PostgreSQL, older stores widened), taken
from the Submit form or a model card, and the After-cutoff table, which must equal re-scoring each run on the
questions asked after its cutoff (`Dataset.score(after=...)`)."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import create_engine, text
from submission_files import merged, write_trec

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.windows import question_day
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import Base
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.submissions.cutoff import card_cutoff
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.table_columns import column
from leaderboard.tracks.retrieval.tables.window_table import ALL_QUESTIONS, TOTAL, WindowSource, questions_column


@pytest.fixture
def store(store_on_each_backend):
    return store_on_each_backend


def median_day(dataset) -> date:
    days = sorted(question_day(q.date) for t in dataset.topics for q in dataset.topic(t).queries)
    return days[len(days) // 2]


def test_cutoff_is_stored_checked_and_a_job_fills_it_only_where_none_was_given(store):
    given, _ = store.add_system(name="a", kind="model", content_hash="h1", cutoff=" 2024-06-30 ", job=("model", {}))
    blank, _ = store.add_system(name="b", kind="model", content_hash="h2", job=("model", {}))
    assert (store.get_system(given.id).cutoff, store.get_system(blank.id).cutoff) == ("2024-06-30", None)
    with pytest.raises(FreshStackError, match=r"cutoff '30/06/2024' is not a date: give the day as YYYY-MM-DD"):
        store.add_system(name="c", kind="run", content_hash="h3", cutoff="30/06/2024")
    assert store.find_system("h3") is None
    meta = ResultMeta("rev", __version__)
    results = {"t": {"metrics": {"alpha_ndcg@10": 0.5}}}
    for _ in range(2):
        job = store.queue.claim_job("w", 60)
        assert store.queue.finish_job(job.id, "w", results, meta, cutoff="2023-01-01")
    assert store.get_system(given.id).cutoff == "2024-06-30"  # the submitter's date wins over the card's
    assert store.get_system(blank.id).cutoff == "2023-01-01"


def test_an_older_store_without_the_cutoff_column_opens_with_its_rows(store_url):
    engine = create_engine(store_url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:  # the layout before cutoffs: the same tables, less the column
        Base.metadata.create_all(conn)
        conn.execute(text("ALTER TABLE systems DROP COLUMN cutoff"))
        conn.execute(
            text(
                "INSERT INTO systems (name, kind, description, created_at, identity, content_hash, status) "
                "VALUES ('old', 'run', '', CURRENT_TIMESTAMP, '', 'old-hash', 'scored')"
            )
        )
    engine.dispose()
    with Store(store_url) as s:
        s.create_all()
        s.create_all()  # a second open finds the column and leaves it
        old = s.find_system("old-hash")
        assert (old.name, old.cutoff) == ("old", None)
        new, created = s.add_system(name="new", kind="run", content_hash="new-hash", cutoff="2024-01-31")
        assert created and s.get_system(new.id).cutoff == "2024-01-31"


@pytest.mark.filterwarnings("ignore::freshstack_hf.metrics.engine.RunCoverageWarning")  # "undated" skips beta
def test_after_cutoff_table_equals_rescoring_each_run_after_its_own_cutoff(store, lb_dataset, bm25_runs, tmp_path):
    submitter = RunSubmitter(store, lb_dataset, rate_limit=100, resamples=0)
    run = merged(bm25_runs)
    day = median_day(lb_dataset)
    with_cutoff = submitter.submit(write_trec(tmp_path / "a.trec", run), name="dated", cutoff=day.isoformat())
    partial = {q: docs for q, docs in run.items() if q in lb_dataset.query_ids(["alpha"])}
    plain = submitter.submit(write_trec(tmp_path / "b.trec", partial), name="undated", scope="all")
    refused = submitter.submit(write_trec(tmp_path / "c.trec", run), name="bad", cutoff="June 2024")
    assert (with_cutoff.status, plain.status, refused.status) == ("scored", "scored", "refused")
    assert "cutoff (YYYY-MM-DD) 'June 2024' is not a date" in refused.message

    frame = WindowSource(store, lb_dataset).frame().set_index("system")
    assert set(frame.index) == {"dated", "undated"}
    windowed = lb_dataset.score(run, measures=HEADLINE, resamples=0, after=day)
    total = 0
    for t in lb_dataset.topics:
        asked = lb_dataset.window(t, day).asked
        assert 0 < asked < len(lb_dataset.qrels(t))
        assert frame.loc["dated", questions_column(t)] == asked
        total += asked
        for m in HEADLINE:
            assert frame.loc["dated", column(t, m)] == pytest.approx(windowed.topics[t].metrics[m.id], abs=1e-12)
    assert frame.loc["dated", "cutoff"] == day.isoformat() and frame.loc["dated", TOTAL] == total
    for m in HEADLINE:
        assert frame.loc["dated", column(AVERAGE, m)] == pytest.approx(windowed.average[m.id], abs=1e-12)

    # No cutoff: every question, marked; the stored values as they are.
    full = lb_dataset.score(partial, measures=HEADLINE, resamples=0)
    assert frame.loc["undated", "cutoff"] == ALL_QUESTIONS
    judged = {t: len(lb_dataset.qrels(t)) for t in lb_dataset.topics}
    assert frame.loc["undated", TOTAL] == sum(judged.values())
    for t in lb_dataset.topics:
        assert frame.loc["undated", questions_column(t)] == judged[t]
        for m in HEADLINE:
            assert frame.loc["undated", column(t, m)] == pytest.approx(full.topics[t].metrics[m.id], abs=1e-12)


def test_model_card_cutoff_keys_in_order(tmp_path):
    card = tmp_path / "README.md"
    assert card_cutoff(tmp_path) is None
    card.write_text("---\nlicense: mit\nrelease_date: 2024-09-01\nknowledge_cutoff: '2024-03-31'\n---\n# A model\n")
    assert card_cutoff(tmp_path) == "2024-03-31"  # a training or knowledge cutoff before a release date
    card.write_text("---\nrelease_date: 2024-09-01T10:00:00\n---\n")
    assert card_cutoff(tmp_path) == "2024-09-01"
    card.write_text("---\ntraining_cutoff: sometime in 2024\n---\n")
    assert card_cutoff(tmp_path) is None
    card.write_text("# no front matter\nrelease_date: 2024-09-01\n")
    assert card_cutoff(tmp_path) is None
