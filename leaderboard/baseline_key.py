"""What every baseline row shares, whatever its track: a dedupe key hashed from its configuration, and the summary
a baseline computation returns per row.

The key is known before any work (method, parameters, model fingerprint, dataset revision, store schema), so a
restart finds every row stored and loads no model; a new dataset revision or model gets rows of its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leaderboard.schema import SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class BaselineRow:
    method: str
    name: str
    system_id: int
    created: bool


def config_hash(config: Mapping[str, Any], revision: str, prefix: str = "baseline:") -> str:
    """A baseline row's dedupe key: its configuration on this dataset revision and store schema."""
    blob = json.dumps({**config, "dataset_revision": revision, "schema": SCHEMA_VERSION}, sort_keys=True)
    return prefix + hashlib.sha256(blob.encode()).hexdigest()[:48]
