"""The one listing of a repo's dated snapshots (`repo.revisions.dated_revisions`), read by `refresh` and by the board's
Over time view: local `REPO@DATE` folders and Hub tags count only when named by a real calendar date."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from drift_repos import new_topic, old_topic, write_snapshot
from over_time_board import QUALITY

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.revisions import dated_revisions, is_date, previous_revision
from freshstack_hf.repo.targets import HubTarget, LocalTarget
from leaderboard.tracks.retrieval.views.over_time import snapshots_of

NOT_DATES = ("2025-13-45", "2024-02-30", "2023-02-29", "2024-2-01", "20240201", "2024-06-30.fill1", "latest")


def test_only_real_calendar_days_are_dates():
    assert all(is_date(d) for d in ("2024-02-29", "2025-10-31", "2000-02-29"))
    assert not any(is_date(d) for d in NOT_DATES)


def test_local_folders_named_by_impossible_dates_are_no_snapshots(tmp_path):
    write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY)
    write_snapshot(tmp_path / "freshstack@2025-10-31", new_topic(), QUALITY)
    for name in NOT_DATES:  # each a complete revision folder: only its name is wrong
        write_snapshot(tmp_path / f"freshstack@{name}", new_topic(), QUALITY)
    assert dated_revisions(tmp_path / "freshstack") == ["2024-10-31", "2025-10-31"]
    # the Over time view draws the same snapshots, and the refresh carries over from the same previous one
    snapshots = snapshots_of(Dataset(tmp_path / "freshstack", "2025-10-31"))
    assert [s.label for s in snapshots] == ["2024-10-31", "2025-10-31"]
    assert LocalTarget(tmp_path / "freshstack").revisions() == ["2024-10-31", "2025-10-31"]
    assert previous_revision(tmp_path / "freshstack", "drifty", "2026-01-01") == tmp_path / "freshstack@2025-10-31"
    assert dated_revisions(tmp_path / "nothing-here") == []


def test_hub_tags_named_by_impossible_dates_are_no_snapshots(monkeypatch):
    """Through `huggingface_hub`'s `HfApi.list_repo_refs`, answered here (no Hub is reachable)."""
    import huggingface_hub
    from huggingface_hub.utils import RepositoryNotFoundError

    tags = ["2025-10-31", *NOT_DATES, "2024-10-31"]
    refs = SimpleNamespace(tags=[SimpleNamespace(name=t) for t in tags])
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", lambda self, repo_id, **_: refs)
    assert dated_revisions("me/freshstack", hub=True) == ["2024-10-31", "2025-10-31"]
    assert HubTarget("me/freshstack", base=None).revisions() == ["2024-10-31", "2025-10-31"]  # type: ignore[arg-type]

    def missing(self, repo_id, **_):
        raise RepositoryNotFoundError("404", response=SimpleNamespace(headers={}, request=None))

    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", missing)
    assert dated_revisions("me/freshstack", hub=True) == []  # the first refresh creates it

    def unreachable(self, repo_id, **_):
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", unreachable)
    with pytest.raises(FreshStackError, match=r"could not list the revisions of me/freshstack on the Hub \(no netw"):
        dated_revisions("me/freshstack", hub=True)
    with pytest.raises(FreshStackError, match=r"HF_TOKEN and the network, or refresh a local folder"):
        HubTarget("me/freshstack", base=None).revisions()  # type: ignore[arg-type]  # the refresh's own fix
