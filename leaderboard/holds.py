"""Test-only holds that catch the board at a chosen point, instead of hoping a machine is slow enough that day.

* `FRESHSTACK_TEST_HOLD_BASELINES=PATH`: every baseline job (the retrieval rows and the answer baseline) waits in
  the worker's job process until PATH exists, then computes as usual. A test can look at a freshly started
  leaderboard while its baselines are certainly still queued or running, and release them by creating the file.
* `FRESHSTACK_TEST_PAUSE=POINT=PATH`: the process stops at `POINT` (`add_system`: a submission's transaction,
  its blobs and scores written, not yet committed; `finish_job`: a job's results the same; `table`: a render of
  the Leaderboard table, the `/table` API's, as it starts), creates PATH to say so and waits there, so a test can
  kill it in the middle of a write and check that nothing half-written stays, or see a second read start while
  the first is held (each call reaching `POINT` creates PATH again, once the test has removed it).

Nothing else reads them; never set them on a real deployment (a hold lasts up to `HOLD_LIMIT_SECONDS`).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

HOLD_ENV = "FRESHSTACK_TEST_HOLD_BASELINES"
PAUSE_ENV = "FRESHSTACK_TEST_PAUSE"
HOLD_LIMIT_SECONDS = 600.0  # a test that forgot to release its hold still ends


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


def pause_for_tests(point: str) -> None:
    """Stop here when `PAUSE_ENV` names `point`: say so by creating its file, then wait to be killed."""
    name, _, path = os.environ.get(PAUSE_ENV, "").partition("=")
    if name != point or not path:
        return
    log.warning("%s is set: paused at %s until killed (test only)", PAUSE_ENV, point)
    Path(path).touch()
    time.sleep(HOLD_LIMIT_SECONDS)
