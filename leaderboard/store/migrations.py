"""Opening a store made by another release: every step that brings an older store to this release's layout, in
the order `migrate` runs them (`Store.create_all`), safe from several processes at once.

* The layout version (`schema.STORE_SCHEMA`, recorded in `store_meta`): a store laid out by a newer release is
  refused before anything changes; one laid out by this release or an older one is migrated, then recorded.
* Tables: created where missing (the blobs, the audit log, `store_meta` of later releases).
* Columns: `create_all` never alters an existing table, so a nullable column added since (`systems.cutoff`, the
  moderation columns, `systems.track`) is added in place, rows and ids kept. Only nullable columns with no default
  are ever added this way, so old rows read NULL ("not given", "listed"), unless the column comes with a fill: the
  statement that gives the rows stored before it their value, run once, in the transaction that adds the column
  (`systems.track`: `fill_tracks`).
* The audit log's append-only guard (the dialect's triggers).
* Kinds: `systems.kind` is guarded by a CHECK listing the kinds the tracks declare (`schema.SYSTEM_KINDS`). A store
  made before a kind existed (e.g. `answers`) refuses it, so its CHECK is widened in place, rows and ids kept. The
  new CHECK allows the current kinds *and* every kind the store's rows already hold, so a kind no track declares
  any more never makes an existing store fail to open; a store that already accepts every current kind is left as
  it is (it may accept more, e.g. `reported` of older releases). How is the dialect's: PostgreSQL alters the
  CHECK, SQLite rebuilds the table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Connection, Table, case, func, insert, inspect, select, update

from freshstack_hf.errors import FreshStackError
from leaderboard.store.audit import APPEND_ONLY, audit_log
from leaderboard.store.database import Database
from leaderboard.store.schema import STORE_SCHEMA, SYSTEM_KINDS, Base, kind_check, store_meta, systems

log = logging.getLogger(__name__)

# The rule by which the Leaderboard table told a model's track before the store kept it (store schema 2 and
# older): a model whose dedupe key starts with this prefix was submitted to the nano track, any other model to the
# full one. Frozen here: it is how rows stored then are read, whatever the tracks declare now.
OLD_NANO_PREFIX, OLD_MODEL_KIND = "model:nano:", "model"


def fill_tracks(conn: Connection) -> int:
    """Give the model rows stored before `systems.track` the track the table used to read from their dedupe key
    (`OLD_NANO_PREFIX`: nano, else full); any other row chooses none and stays NULL. Returns the rows filled.

    Run once, when the column is added (and by the import of an export made before it), so nothing guesses a
    track afterwards. The prefix is compared byte for byte (`substr`, not LIKE, which SQLite folds to one case)."""
    nano = func.substr(systems.c.content_hash, 1, len(OLD_NANO_PREFIX)) == OLD_NANO_PREFIX
    untold = (systems.c.kind == OLD_MODEL_KIND) & systems.c.track.is_(None)
    return conn.execute(update(systems).where(untold).values(track=case((nano, "nano"), else_="full"))).rowcount


# (table, column, the fill of the rows stored before it or None) added after the first release, in the order added.
ADDED_COLUMNS: tuple[tuple[Table, str, Callable[[Connection], int] | None], ...] = (
    (systems, "cutoff", None),
    (systems, "moderation", None),
    (systems, "moderation_reason", None),
    (systems, "moderated_by", None),
    (systems, "moderated_at", None),
    (systems, "track", fill_tracks),
)


def migrate(db: Database, where: object) -> None:
    """Bring the store to this release's layout (tables, columns, the audit guard, system kinds); a store laid out
    by a newer release is refused, naming `where`, before anything changes."""
    with db.write() as conn:
        db.lock(conn, "create_all")
        check_store_version(conn, where)
        Base.metadata.create_all(conn)
        add_missing_columns(conn)
        db.dialect.install_append_only_guard(conn, audit_log.name, APPEND_ONLY)
        record_store_version(conn)
    db.dialect.widen_kinds(db.engine, SYSTEM_KINDS_CHECK)  # after the columns: SQLite's rebuild copies every one


def stored_schema(conn: Connection) -> int | None:
    """The `STORE_SCHEMA` a store records, 1 for a store made before it was recorded, None for an empty database."""
    names = set(inspect(conn).get_table_names())
    if "store_meta" not in names:
        return 1 if "systems" in names else None
    value = conn.execute(select(store_meta.c.value).where(store_meta.c.key == "schema")).scalar()
    return int(value) if value is not None else 1


def check_store_version(conn: Connection, where: object) -> None:
    """Refuse, before anything is created or altered, a store that a newer release has laid out."""
    found = stored_schema(conn)
    if found is not None and found > STORE_SCHEMA:
        raise FreshStackError(
            f"{where}: this store was laid out by a newer freshstack-hf (store schema {found}; this release knows "
            f"up to {STORE_SCHEMA}). Upgrade freshstack-hf on this machine (pip install -U 'freshstack-hf"
            "[leaderboard]') before opening it; nothing was changed"
        )


def record_store_version(conn: Connection) -> None:
    """Record that the store now has this release's layout (after `migrate` migrated it)."""
    done = conn.execute(update(store_meta).where(store_meta.c.key == "schema").values(value=str(STORE_SCHEMA))).rowcount
    if not done:
        conn.execute(insert(store_meta).values(key="schema", value=str(STORE_SCHEMA)))


def add_missing_columns(conn: Connection) -> None:
    """`ALTER TABLE ... ADD COLUMN` for every column of `ADDED_COLUMNS` the store lacks, then its fill (SQLite and
    PostgreSQL alike, in the caller's transaction)."""
    inspector = inspect(conn)
    for table, name, fill in ADDED_COLUMNS:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        if name in present:
            continue
        column = table.c[name]
        kind = column.type.compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {name} {kind}")
        filled = fill(conn) if fill is not None else 0
        log.warning("store: added the column %s.%s (%d existing rows filled)", table.name, name, filled)


class KindsCheck:
    """The CHECK on `table.kind` that the dialect widens (`Dialect.widen_kinds`): which kinds it allows now, and
    what an older store's becomes."""

    def __init__(self, table: Table, kinds: tuple[str, ...]) -> None:
        self.table, self.kinds = table, kinds

    def missing(self, declared: str) -> bool:
        """Whether a store declaring `declared` (its CHECK, or its whole table) refuses a current kind."""
        return not all(f"'{kind}'" in declared for kind in self.kinds)

    def allowed(self, held: Iterable[Any]) -> tuple[str, ...]:
        """The current kinds, then the other kinds the rows hold (sorted), so no stored row breaks the CHECK."""
        return (*self.kinds, *sorted({str(k) for k in held} - set(self.kinds)))

    def condition(self, kinds: tuple[str, ...]) -> str:
        return kind_check(kinds)


SYSTEM_KINDS_CHECK = KindsCheck(systems, SYSTEM_KINDS)
