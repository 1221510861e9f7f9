"""A store dialect, added in full: a toy one registered under its own URL scheme runs a slice of the store's own
tests (systems with their blobs, the queue's claims and leases, the rate limit, the audit log's guard, moderation,
an older store's kinds widened, a backup restored), and every one of them went through it.

The toy is SQLite underneath (a subclass of the SQLite dialect: `toysqlite:///FILE` connects to the file) that
records each call of the dialect's own methods, so the test sees that the store reaches the database only
through the dialect it chose from the URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
import test_leaderboard_moderation as moderation_tests
import test_leaderboard_queue as queue_tests
import test_leaderboard_store as store_tests
import test_store_blobs as blob_tests
from store_rows import META, topic_scores

from leaderboard.export.board_export import export_board
from leaderboard.export.board_import import import_board, row_counts
from leaderboard.store import dialect
from leaderboard.store.dialect import SQLite, register_dialect
from leaderboard.store.store import Store

SCHEME = "toysqlite"
DIALECT_METHODS = (
    "engine",
    "insert_or_ignore",
    "now",
    "lock",
    "snapshot",
    "install_append_only_guard",
    "widen_kinds",
    "reset_sequences",
)


class ToySQLite(SQLite):
    """SQLite under another scheme, recording every call of a dialect method (class-wide: the store makes one)."""

    calls: ClassVar[list[str]] = []

    def engine_url(self) -> Any:
        return self.url.set(drivername="sqlite")


def _recording(name: str) -> Any:
    method = getattr(SQLite, name)

    def recorded(self: ToySQLite, *args: Any, **kwargs: Any) -> Any:
        ToySQLite.calls.append(name)
        return method(self, *args, **kwargs)

    return recorded


for _name in DIALECT_METHODS:
    setattr(ToySQLite, _name, _recording(_name))


@pytest.fixture
def toy_url(tmp_path, monkeypatch) -> Iterator[str]:
    """A store URL of the toy dialect, registered for this test only."""
    monkeypatch.setattr(dialect, "DIALECTS", dict(dialect.DIALECTS))
    register_dialect(SCHEME, ToySQLite)
    ToySQLite.calls = []
    yield f"{SCHEME}:///{tmp_path / 'toy' / 'leaderboard.db'}"


@pytest.fixture
def toy_store(toy_url) -> Iterator[Store]:
    with Store(toy_url) as store:
        store.create_all()
        yield store


# A slice of the store's own tests, each run as written on a store of the toy dialect.
ON_A_STORE = [
    store_tests.test_add_system_is_idempotent_by_content_hash,
    store_tests.test_rate_limit_counts_per_identity_in_a_sliding_window,
    queue_tests.test_expired_lease_returns_the_job_and_the_zombie_cannot_write,
    queue_tests.test_release_requeues_and_fail_is_final,
    queue_tests.test_save_results_is_all_or_nothing,
    moderation_tests.test_moderation_refuses_what_it_cannot_do_and_changes_nothing,
    moderation_tests.test_job_outcomes_are_logged_with_the_worker_as_identity,
    moderation_tests.test_the_audit_log_is_append_only_in_the_database_itself,
]
ON_A_URL = [
    blob_tests.test_blobs_are_stored_with_their_row_deduplicated_and_dropped_with_the_last_row,
    blob_tests.test_a_row_that_cannot_be_stored_leaves_no_blob,
    store_tests.test_a_store_made_before_a_system_kind_existed_is_widened_in_place,
]


@pytest.mark.slow
@pytest.mark.parametrize("case", ON_A_STORE, ids=lambda case: case.__name__)
def test_the_store_tests_pass_on_a_registered_dialect(case, toy_store):
    case(toy_store)
    assert {"engine", "install_append_only_guard", "widen_kinds", "now"} <= set(ToySQLite.calls)


@pytest.mark.parametrize("case", ON_A_URL, ids=lambda case: case.__name__)
def test_the_store_tests_opening_a_url_pass_on_a_registered_dialect(case, toy_url):
    case(toy_url)
    assert "engine" in ToySQLite.calls


def test_a_hidden_system_leaves_the_board_on_a_registered_dialect(toy_store, tmp_path):
    moderation_tests.test_a_hidden_system_leaves_every_board_read_and_comes_back(toy_store, tmp_path)


def test_every_write_goes_through_the_dialect_chosen_from_the_url(toy_store):
    assert type(toy_store.db.dialect) is ToySQLite and toy_store.engine.url.drivername == "sqlite"
    ToySQLite.calls.clear()
    system, created = toy_store.add_system(name="s", kind="model", content_hash="m", job=("model", {}))
    assert created and ToySQLite.calls == ["now", "insert_or_ignore"]
    ToySQLite.calls.clear()
    assert toy_store.rate_limit.check("ip:1", 10)
    assert ToySQLite.calls == ["lock", "now"]  # serialised per identity, on the store's clock
    ToySQLite.calls.clear()
    job = toy_store.queue.claim_job("w1", 60)
    assert toy_store.queue.finish_job(job.id, "w1", {"t": topic_scores()}, META)
    assert ToySQLite.calls == ["now", "now", "now"]  # claim, finish, and the finish's audit row
    assert toy_store.get_system(system.id).status == "scored"


def test_a_backup_restores_into_an_empty_store_of_a_registered_dialect(toy_store, toy_url, tmp_path):
    toy_store.add_system(name="s", kind="run", content_hash="h", results={"t": topic_scores()}, meta=META)
    toy_store.audit.append("ip:1", "submit:run", "scored")
    export_board(toy_store, tmp_path / "backup")
    assert "snapshot" in ToySQLite.calls
    restored_url = toy_url.replace("leaderboard.db", "restored.db")
    import_board(restored_url, tmp_path / "backup", by="local:test")
    assert "reset_sequences" in ToySQLite.calls
    with Store(restored_url) as restored:
        assert row_counts(restored) == row_counts(toy_store) | {"audit_log": 2}  # and the import's own row
        assert restored.results_for(1) == toy_store.results_for(1)


def test_a_url_no_dialect_serves_is_refused_naming_the_supported_ones(tmp_path):
    from freshstack_hf.errors import FreshStackError

    with pytest.raises(FreshStackError, match=r"only sqlite:///FILE and postgresql://\.\.\. URLs are supported"):
        Store(f"{SCHEME}:///{tmp_path / 'lb.db'}")  # not registered outside the fixture
