"""Private material at rest: files and folders readable by their owner alone, made so when they are created.

A build's work folder holds what a topic's public revision must never show (with an embargo, every embargoed
question's title, body, answer, nuggets and judgments; always, the LLM answers paid for), and a local private repo
holds the embargoed questions themselves. Both must be readable by their owner alone from the moment each file
exists: a file made world-readable and narrowed afterwards can be opened in between, and a reader keeps what it
opened. And they are written by many hands: our atomic writers, pyarrow, SQLite (its `-wal` and `-shm` files
too), git (clones, exported trees). The one switch all of them obey is the process's umask, so `owner_only()` sets
it to 077 for the block that builds (folders 0700, files 0600, whatever the umask was; a read-only file git makes
stays read-only, 0400), and `as_published()` hands the user's own umask back for the writes that make a PUBLIC
revision inside such a block, which stays as a published revision always was.

The umask is the process's, so the block must be the only writer of the process while it runs (a build is: its
threads write its own files). A folder that exists already, one the user made or an earlier version left, is
never re-moded: what is made inside it is private, the folder stays as it is.

`OWNER_ONLY` is for the few files made outside such a block and private wherever they are (the LLM response cache,
the spend ledger): created with it in `os.open`, so they are never more open than 0600.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

PRIVATE_UMASK = 0o077
OWNER_ONLY = 0o600  # a file's mode
OWNER_ONLY_DIR = 0o700  # a folder's mode

_outer: list[int] = []  # the umask of each open `owner_only` block, outermost first: the user's is the first


@contextlib.contextmanager
def owner_only() -> Iterator[None]:
    """Everything this process creates inside the block is readable by its owner alone (umask 077); nested blocks
    keep it, and the umask the process had is back afterwards."""
    before = os.umask(PRIVATE_UMASK)
    _outer.append(before)
    try:
        yield
    finally:
        _outer.pop()
        os.umask(before)


@contextlib.contextmanager
def as_published() -> Iterator[None]:
    """Inside an `owner_only` block, the user's own umask for the block: a public revision (and the folder it is
    published into) is made as it would be without an embargo. Outside one, nothing changes."""
    if not _outer:
        yield
        return
    before = os.umask(_outer[0])
    try:
        yield
    finally:
        os.umask(before)


def private_file(path: str | os.PathLike[str]) -> None:
    """Create `path` empty, readable by its owner alone, unless it exists (an existing file keeps its mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, OWNER_ONLY)
    os.close(fd)
