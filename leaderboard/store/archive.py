"""Opening a board's store, and moving what older releases kept in a folder into it.

Before the store held blobs (`leaderboard.store.blobs`), the ranking behind each row was a gzipped JSON file in the runs
archive (`--runs-dir`, by default `<data dir>/runs`), named by a hash of the row's content hash, and the answers
judge jobs read were gzipped files under its `answers/` folder, named by their own sha256. `open_store` imports
every such file a stored system still lacks into the store, on every open (app, worker, admin and board commands),
so nothing archived is lost and the folder is left as it was: from then on it is only an optional local cache.
The import is idempotent and cheap once done (a system that has its blob is skipped without touching the folder).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from freshstack_hf.errors import FreshStackError
from leaderboard.defaults import STORE_ENV, default_data_dir, default_store_url
from leaderboard.store.blobs import Blob, sha256_of
from leaderboard.store.dialect import shown_url
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.schema import ANSWERS_BLOB
from leaderboard.store.store import Store

log = logging.getLogger(__name__)

ANSWERS_FOLDER = "answers"  # under an older runs archive's root


def default_runs_dir() -> Path:
    """Where older releases archived runs by default (`<data dir>/runs`), shared by the app and its workers."""
    return default_data_dir() / "runs"


def legacy_ranking_path(root: str | Path, content_hash: str) -> Path:
    """Where an older release archived the ranking of the row with `content_hash`."""
    return Path(root) / f"{hashlib.sha256(content_hash.encode()).hexdigest()[:32]}.json.gz"


@dataclass(frozen=True, slots=True)
class ImportedArchive:
    rankings: int = 0
    answers: int = 0

    def __bool__(self) -> bool:
        return bool(self.rankings or self.answers)


def import_archive_folder(store: Store, folder: str | Path) -> ImportedArchive:
    """Store every ranking and answers file of an older runs archive at `folder` that a stored system lacks."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        return ImportedArchive()
    rankings = answers = 0
    for sid, content_hash, _ in store.blobs.systems_lacking(RANKING):
        path = legacy_ranking_path(root, content_hash)
        if path.is_file():
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                store.blobs.attach(sid, {RANKING: Blob.ranking(json.load(fh))})
            rankings += 1
    for sid, _, payloads in store.blobs.systems_lacking(ANSWERS_BLOB):
        named = [p["answers_sha256"] for p in payloads if isinstance(p.get("answers_sha256"), str)]
        path = next((p for sha in named if (p := root / ANSWERS_FOLDER / f"{sha}.jsonl.gz").is_file()), None)
        if path is None:
            continue
        with gzip.open(path, "rb") as fh:
            data = fh.read()
        if sha256_of(data) != path.name.split(".")[0]:
            raise FreshStackError(
                f"{path}: the archived answers do not match their hash; restore the file from a backup, or move it "
                "out of the folder (the judge job that names it then fails, saying so)"
            )
        store.blobs.attach(sid, {ANSWERS_BLOB: Blob.of(data, ANSWERS_BLOB)})
        answers += 1
    done = ImportedArchive(rankings, answers)
    if done:
        log.warning("store: imported %d ranking(s) and %d answers file(s) from %s", rankings, answers, root)
    return done


def open_store(url: str | None = None, runs_dir: str | Path | None = None, *, announce: bool = False) -> Store:
    """The store at `url` (default: `$FRESHSTACK_STORE`, else the SQLite file in the data dir), its tables migrated
    to this release and an older runs archive imported into it.

    `runs_dir` (`--runs-dir`) is the optional local cache of blobs; the archive of an older release is looked for
    there, else in the default folder where older releases kept it. `announce` (the commands) says on stderr which
    store is used, password hidden, before it is opened: a default the user did not type is then never a surprise,
    and stdout stays the command's own (`--json`). A store that cannot be reached is a user error naming it."""
    url = url or default_store_url()
    if announce:
        announce_store(url)
    try:
        store = Store(url, cache_dir=runs_dir)
    except OSError as exc:  # a SQLite file's folder that cannot be made
        raise unopenable(url, exc) from None
    try:
        try:
            with store.engine.connect():  # the first connection: refused, unreachable, wrong password, not a file
                pass
        except DBAPIError as exc:
            raise unopenable(url, exc.orig or exc) from None
        store.create_all()
        import_archive_folder(store, Path(runs_dir).expanduser() if runs_dir else default_runs_dir())
    except BaseException:
        store.close()
        raise
    return store


def announce_store(url: str) -> None:
    """Say which store a command uses, in one line on stderr, password hidden."""
    print(f"store: {shown_url(url)}", file=sys.stderr, flush=True)


def unopenable(url: str, exc: BaseException) -> FreshStackError:
    """The error of a store URL that cannot be opened: the URL (password hidden), the database's reason (first
    line, the password scrubbed should a driver quote it) and the fix."""
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    password = _password(url)
    if password:
        reason = reason.replace(password, "***")
    return FreshStackError(
        f"cannot open the store {shown_url(url)}: {reason}; give --store a URL this machine reaches "
        f"(sqlite:///path/to/leaderboard.db, or postgresql://user:password@host/database with the server up and the "
        f"password right), or set ${STORE_ENV} to one"
    )


def _password(url: str) -> str | None:
    try:
        return make_url(url).password
    except ArgumentError:
        return None
