"""Where a build's work lives, and the lock that keeps it to one build at a time.

The runner, the planners and the refresh all need to know where a topic's work folder is (a plan reads its caches,
a refresh resumes in it), so the rule lives here, below all of them, and none of them has to import another to
find it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from freshstack_hf.errors import FreshStackError


def default_work_dir(out: Path, topic: str) -> Path:
    """Beside the repo, not inside it: the work folder must never be published."""
    return out.parent / f"{out.name}-work" / topic


def snapshot_work(shared: Path, date: str) -> Path:
    """The work folder of a topic's dated snapshot, inside the folder its snapshots share: the same for `build
    --snapshot DATE` and `refresh --date DATE`, so either resumes what the other left."""
    return Path(shared) / "snapshots" / date


@contextlib.contextmanager
def work_lock(work: Path) -> Iterator[None]:
    """One build per work folder at a time: two would interleave stage files and double-pay calls."""
    import fcntl  # POSIX only: imported where the lock is taken, so the module itself imports anywhere

    work.mkdir(parents=True, exist_ok=True)
    handle = open(work / ".lock", "w")  # noqa: SIM115  (held for the block)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise FreshStackError(f"{work}: another build is running on this work folder; wait for it") from exc
        yield
    finally:
        handle.close()
