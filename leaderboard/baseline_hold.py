"""A test-only hook that holds baseline jobs back: `FRESHSTACK_TEST_HOLD_BASELINES=PATH`.

With the variable set, every baseline job (the retrieval rows and the answer baseline) waits in the worker's job
process until PATH exists, then computes as usual. A test can then look at a freshly started leaderboard while
its baselines are certainly still queued or running, and release them by creating the file, instead of hoping
that a computation is slow enough on the machine of the day. Nothing else reads it; never set it on a real
deployment (a missing file would hold the baselines for up to `HOLD_LIMIT_SECONDS`).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

HOLD_ENV = "FRESHSTACK_TEST_HOLD_BASELINES"
HOLD_LIMIT_SECONDS = 600.0  # a test that forgot to release its baselines still ends


def hold_for_tests(poll_seconds: float = 0.1) -> float:
    """Wait while `HOLD_ENV` names a file that does not exist yet; returns the seconds waited (0 when unset)."""
    path = os.environ.get(HOLD_ENV)
    if not path:
        return 0.0
    log.warning("%s is set: this baseline job waits for %s (test only)", HOLD_ENV, path)
    start = time.monotonic()
    while not Path(path).exists() and time.monotonic() - start < HOLD_LIMIT_SECONDS:
        time.sleep(poll_seconds)
    return time.monotonic() - start
