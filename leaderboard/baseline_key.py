"""What every baseline row shares, whatever its track: a dedupe key hashed from its configuration, the summary
a baseline computation returns per row, and how a missing row is queued for a worker.

The key is known before any work (method, parameters, model fingerprint, dataset revision, store schema), so a
restart finds every row stored and loads no model; a new dataset revision or model gets rows of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from leaderboard.store.audit import board_entry
from leaderboard.store.records import SCHEMA_VERSION, JobState, SystemState
from leaderboard.store.store import Store


@dataclass(frozen=True, slots=True)
class BaselineRow:
    """One baseline row as a computation or a start left it: `created` by this call, its `status` in the store."""

    method: str
    name: str
    system_id: int
    created: bool
    status: str = SystemState.SCORED


def config_hash(config: Mapping[str, Any], revision: str, prefix: str = "baseline:") -> str:
    """A baseline row's dedupe key: its configuration on this dataset revision and store schema."""
    blob = json.dumps({**config, "dataset_revision": revision, "schema": SCHEMA_VERSION}, sort_keys=True)
    return prefix + hashlib.sha256(blob.encode()).hexdigest()[:48]


def queue_row(
    store: Store,
    method: str,
    *,
    name: str,
    kind: str,
    content_hash: str,
    description: str,
    job: tuple[str, Mapping[str, Any]],
    size: int | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> BaselineRow:
    """Make sure a worker will compute this row: store it queued with `job` when it is missing; leave it when it
    is scored, or when a job of it is queued or running (whoever queued it); queue a failed row again, with its
    failed job (the answer baseline's judge, say, without computing its citation scores twice)."""
    audit = board_entry("baseline", "queued", f"baseline '{name}' queued for a worker")
    system, created = store.add_system(
        name=name, kind=kind, content_hash=content_hash, description=description, size=size, job=job, audit=audit
    )
    if created:
        say(f"queued {name} as system #{system.id} for a worker")
        return BaselineRow(method, system.name, system.id, True, SystemState.QUEUED)
    if system.status == SystemState.SCORED:
        return BaselineRow(method, system.name, system.id, False, SystemState.SCORED)
    history = store.queue.list_jobs(system_id=system.id)
    again = (history[-1].kind, history[-1].payload) if history and history[-1].state == JobState.FAILED else job
    queued = store.queue.enqueue_unless_pending(system.id, *again)
    if queued is None:
        say(f"{system.name} is already {system.status} (system #{system.id})")
        return BaselineRow(method, system.name, system.id, False, system.status)
    said = f": {system.error.splitlines()[0]}" if system.error else ""
    say(f"queued {system.name} again (system #{system.id} was {system.status}{said})")
    return BaselineRow(method, system.name, system.id, False, SystemState.QUEUED)
