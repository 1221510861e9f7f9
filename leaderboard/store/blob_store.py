"""Everything a row depends on beyond its scores, kept in the store itself: content-addressed blobs (`blobs`).

A board used to keep the rankings behind rows and the uploaded answer files in a folder (`--runs-dir`). A folder
cannot be shared between a Space and GPU workers elsewhere, and a Space without paid storage loses it on every
restart; so these live in the database now, beside the rows that need them:

* `blobs`: one row per distinct content, keyed by the sha256 of its canonical bytes (`ranking_blob` for rankings;
  an answers file's own text), stored compressed (zstd). The same content stored twice is one row.
* `blob_refs`: which system needs which blob, under a role (`ranking`, `answers`, `fill:<revision>`). A blob is
  written in the same transaction as the row that needs it (`Store.add_system`, `finish_job`, `save_results`), so
  a row never exists without its blob, and a blob no row refers to is removed in the transaction that dropped its
  last reference (a deleted system's), so no blob outlives what it was kept for.
* Reading verifies the hash: a blob whose bytes changed is an error naming it, never a silently wrong ranking.

A local folder (`--runs-dir`) is now only an optional cache of verified blobs (`BlobCache`): deleting it loses
nothing. `Store.blobs` is this part of the store.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import BigInteger, Connection, DateTime, ForeignKey, LargeBinary, String, delete, func, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from freshstack_hf.errors import FreshStackError
from leaderboard.store.blobs import Blob, BlobCache
from leaderboard.store.database import Database
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.ranking_blob import Rankings, decode_ranking
from leaderboard.store.records import SystemRecord, SystemState, system_record
from leaderboard.store.schema import LISTED, Base, jobs, systems

RANKINGS_KEPT = 16  # decoded rankings kept in memory per store (each is a whole board row's top 100)


class BlobRow(Base):
    """One distinct content, compressed; `size` is the length of the uncompressed bytes its sha256 is of."""

    __tablename__ = "blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    media: Mapped[str] = mapped_column(String(16))
    codec: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(BigInteger)
    stored_size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    data: Mapped[bytes] = mapped_column(LargeBinary)  # last: a scan of the small columns never reads it


class BlobRef(Base):
    """System `system_id` needs blob `sha256` as its `role`."""

    __tablename__ = "blob_refs"

    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String(64), primary_key=True)
    sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)


blobs = BlobRow.__table__
blob_refs = BlobRef.__table__


class BlobStore:
    """The blobs of one store (`Store.blobs`), with the optional local cache (`cache_dir`, `--runs-dir`) and the
    rankings last decoded (`RANKINGS_KEPT`)."""

    def __init__(self, db: Database, cache_dir: str | Path | None = None) -> None:
        self.db = db
        self.cache = BlobCache(cache_dir) if cache_dir else None
        self._rankings: OrderedDict[str, Rankings] = OrderedDict()
        self._rankings_lock = threading.Lock()

    # ---- writing (inside the caller's transaction) ----------------------------------------------------------
    def store_in(self, conn: Connection, system_id: int, stored: Mapping[str, Blob], now: datetime) -> None:
        """Insert `stored` ({role: blob}) and point `system_id`'s roles at them; a role already held is re-pointed
        and the blob it held is dropped when nothing else needs it."""
        if not stored:
            return
        self.db.lock(conn, "blobs")  # a blob is never collected while another transaction links it
        replaced = set()
        for role, blob in stored.items():
            row = {"sha256": blob.sha256, "media": blob.media, "codec": blob.codec, "size": blob.size}
            row |= {"stored_size": len(blob.data), "created_at": now, "data": blob.data}
            conn.execute(self.db.dialect.insert_or_ignore(blobs, "sha256", **row))
            held = conn.execute(
                select(blob_refs.c.sha256).where(blob_refs.c.system_id == system_id, blob_refs.c.role == role)
            ).scalar()
            if held == blob.sha256:
                continue
            if held is not None:
                conn.execute(delete(blob_refs).where(blob_refs.c.system_id == system_id, blob_refs.c.role == role))
                replaced.add(held)
            ref = {"system_id": system_id, "role": role, "sha256": blob.sha256, "created_at": now}
            conn.execute(insert(blob_refs).values(**ref))
        self._collect(conn, replaced)

    def drop_in(self, conn: Connection, system_id: int) -> list[str]:
        """Remove every reference of `system_id` and the blobs only it needed; returns the removed blobs' hashes
        (`forget` them once the transaction has committed)."""
        self.db.lock(conn, "blobs")
        held = conn.execute(select(blob_refs.c.sha256).where(blob_refs.c.system_id == system_id)).scalars().all()
        conn.execute(delete(blob_refs).where(blob_refs.c.system_id == system_id))
        return self._collect(conn, set(held))

    def _collect(self, conn: Connection, candidates: set[str]) -> list[str]:
        """Delete those of `candidates` no reference points at any more."""
        if not candidates:
            return []
        still = set(conn.execute(select(blob_refs.c.sha256).where(blob_refs.c.sha256.in_(candidates))).scalars())
        gone = sorted(candidates - still)
        if gone:
            conn.execute(delete(blobs).where(blobs.c.sha256.in_(gone)))
        return gone

    def forget(self, removed: Iterable[str]) -> None:
        """Drop removed blobs from the local cache too."""
        if self.cache is not None:
            for sha in removed:
                self.cache.drop(sha)

    # ---- reading ----------------------------------------------------------------------------------------------
    def get(self, sha256: str) -> bytes:
        """The verified content of blob `sha256` (the local cache first, when there is one)."""
        if self.cache is not None and (found := self.cache.get(sha256)) is not None:
            return found
        with self.db.read() as conn:
            row = conn.execute(
                select(blobs.c.media, blobs.c.size, blobs.c.data, blobs.c.codec).where(blobs.c.sha256 == sha256)
            ).first()
        if row is None:
            raise FreshStackError(f"no blob {sha256} in this store: the row that needed it was deleted")
        data = Blob(sha256, row.media, row.size, bytes(row.data), row.codec).raw()
        if self.cache is not None:
            self.cache.put(sha256, data)
        return data

    def refs_of(self, system_id: int) -> dict[str, str]:
        """{role: sha256} of the blobs system `system_id` needs."""
        query = select(blob_refs.c.role, blob_refs.c.sha256).where(blob_refs.c.system_id == system_id)
        with self.db.read() as conn:
            return dict(conn.execute(query.order_by(blob_refs.c.role)).all())

    def refs_like(self, prefix: str) -> list[tuple[int, str, str]]:
        """(system id, role, sha256) of every reference whose role starts with `prefix` (e.g. the fills)."""
        query = select(blob_refs.c.system_id, blob_refs.c.role, blob_refs.c.sha256)
        query = query.where(blob_refs.c.role.startswith(prefix, autoescape=True)).order_by(blob_refs.c.role)
        with self.db.read() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def system_blob(self, system_id: int, role: str) -> bytes | None:
        """The content system `system_id` keeps as `role`, or None when it keeps none."""
        sha = self.refs_of(system_id).get(role)
        return None if sha is None else self.get(sha)

    def _decoded_ranking(self, sha256: str) -> Rankings:
        with self._rankings_lock:
            found = self._rankings.get(sha256)
            if found is not None:
                self._rankings.move_to_end(sha256)
                return found
        runs = decode_ranking(self.get(sha256))
        with self._rankings_lock:
            self._rankings[sha256] = runs
            while len(self._rankings) > RANKINGS_KEPT:
                self._rankings.popitem(last=False)
        return runs

    def ranking_of(self, system_id: int) -> Rankings | None:
        """The archived top of system `system_id`'s ranking ({topic: {query: {doc: score}}}), or None.

        Callers read it and never change it: the decoded ranking is shared with later callers."""
        sha = self.refs_of(system_id).get(RANKING)
        return None if sha is None else self._decoded_ranking(sha)

    def rankings(self, *, scored_only: bool = False) -> Iterator[tuple[SystemRecord, Rankings]]:
        """(system, ranking) of every listed system whose ranking the store keeps, in id order (`scored_only`:
        finished rows only). Rows a moderator hid or deleted are left out, as on every board read."""
        query = (
            select(systems, blob_refs.c.sha256.label("ranking_sha256"))
            .join(blob_refs, (blob_refs.c.system_id == systems.c.id) & (blob_refs.c.role == RANKING))
            .where(LISTED)
            .order_by(systems.c.id)
        )
        if scored_only:
            query = query.where(systems.c.status == SystemState.SCORED)
        with self.db.read() as conn:
            found = [(system_record(row), row.ranking_sha256) for row in conn.execute(query)]
        for system, sha in found:
            yield system, self._decoded_ranking(sha)

    def systems_lacking(self, role: str) -> list[tuple[int, str, dict[str, Any]]]:
        """(id, content hash, payload of each of its jobs) of every system not deleted that keeps no blob as `role`
        (what an older runs archive may still hold, `archive.import_archive_folder`)."""
        held = select(blob_refs.c.system_id).where(blob_refs.c.role == role)
        alive = systems.c.moderation.is_(None) | (systems.c.moderation != "deleted")
        query = select(systems.c.id, systems.c.content_hash).where(alive, systems.c.id.not_in(held))
        with self.db.read() as conn:
            found = conn.execute(query.order_by(systems.c.id)).all()
            payloads = conn.execute(select(jobs.c.system_id, jobs.c.payload).order_by(jobs.c.id)).all()
        by_system: dict[int, list[dict[str, Any]]] = {}
        for sid, payload in payloads:
            by_system.setdefault(sid, []).append(payload if isinstance(payload, dict) else {})
        return [(sid, content_hash, by_system.get(sid, [])) for sid, content_hash in found]

    def attach(self, system_id: int, stored: Mapping[str, Blob]) -> None:
        """Point roles of an existing system at blobs, in one transaction (an older archive's files, on import)."""
        with self.db.write() as conn:
            self.store_in(conn, system_id, stored, self.db.now(conn))

    def usage(self) -> list[dict[str, Any]]:
        """Per reference: system, role, media, raw and stored bytes, and how many systems share the blob."""
        shared = select(blob_refs.c.sha256, func.count().label("n")).group_by(blob_refs.c.sha256).subquery()
        query = (
            select(blob_refs.c.system_id, blob_refs.c.role, blobs.c.sha256, blobs.c.media, blobs.c.size)
            .add_columns(blobs.c.stored_size, shared.c.n)
            .join(blobs, blobs.c.sha256 == blob_refs.c.sha256)
            .join(shared, shared.c.sha256 == blob_refs.c.sha256)
            .order_by(blob_refs.c.system_id, blob_refs.c.role)
        )
        with self.db.read() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]
