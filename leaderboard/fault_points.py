"""Test-only fault points: where the restart, kill and concurrency tests catch the board at a chosen moment, instead
of hoping a machine is slow enough that day.

* `FRESHSTACK_TEST_HOLD_BASELINES=PATH`: every baseline job (the retrieval rows and the answer baseline) waits in
  the worker's job process until PATH exists, then computes as usual. A test can look at a freshly started
  leaderboard while its baselines are certainly still queued or running, and release them by creating the file.
* `FRESHSTACK_TEST_PAUSE=POINT=PATH`: the process stops at `POINT` (`add_system`: a submission's transaction,
  its blobs, scores and audit row written, not yet committed; `submitted`: a submission committed, its outcome not
  yet returned, where its audit row was once written after the commit; `finish_job`: a job's results the same;
  `table`: a render of the Leaderboard table, the `/table` API's, as it starts), creates PATH to say so and waits
  there, so a test can kill it in the middle of a write and check that nothing half-written stays, or see a
  second read start while the first is held (each call reaching `POINT` creates PATH again, once the test has
  removed it).

The environment is read once, when this module is first imported (the tests set the variables on the process they
start), into `POINTS`, a frozen `FaultPoints`: a point costs one attribute test on every call, and nothing can arm
one later in a running board. With neither variable set every point is inert. Never set them on a real deployment
(a hold lasts up to `HOLD_LIMIT_SECONDS`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

HOLD_ENV = "FRESHSTACK_TEST_HOLD_BASELINES"
PAUSE_ENV = "FRESHSTACK_TEST_PAUSE"
HOLD_LIMIT_SECONDS = 600.0  # a test that forgot to release its hold still ends
PausePoint = Literal["add_system", "submitted", "finish_job", "table"]


@dataclass(frozen=True, slots=True)
class FaultPoints:
    """The armed points of one process: the file baseline jobs wait for, and the point to pause at with the file
    that says it paused. The default is every point inert."""

    hold_until: Path | None = None
    pause_at: str | None = None
    pause_file: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FaultPoints:
        """The points `env` arms (`HOLD_ENV`, `PAUSE_ENV`); an empty or malformed value arms nothing."""
        hold = env.get(HOLD_ENV) or ""
        point, _, pause = (env.get(PAUSE_ENV) or "").partition("=")
        armed = bool(point and pause)
        return cls(Path(hold) if hold else None, point if armed else None, Path(pause) if armed else None)

    def hold_baselines(self, poll_seconds: float = 0.1) -> float:
        """Wait while the hold file does not exist yet; returns the seconds waited (0 when no hold is armed)."""
        if self.hold_until is None:
            return 0.0
        log.warning("%s is set: this baseline job waits for %s (test only)", HOLD_ENV, self.hold_until)
        start = time.monotonic()
        while not self.hold_until.exists() and time.monotonic() - start < HOLD_LIMIT_SECONDS:
            time.sleep(poll_seconds)
        return time.monotonic() - start

    def pause(self, point: PausePoint) -> None:
        """Stop here when the pause is armed at `point`: say so by creating its file, then wait to be killed."""
        if point != self.pause_at or self.pause_file is None:
            return
        log.warning("%s is set: paused at %s until killed (test only)", PAUSE_ENV, point)
        self.pause_file.touch()
        time.sleep(HOLD_LIMIT_SECONDS)


POINTS = FaultPoints.from_env(os.environ)
