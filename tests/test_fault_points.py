"""The test-only fault points (`leaderboard.fault_points`): read from the environment once, when the module is first
imported, into a frozen object; inert unless a test variable is set. The kill, restart and concurrency tests
(`test_board_restarts`, `test_board_concurrency`, `test_leaderboard_serving`) use them through the environment of
the board process they start."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from leaderboard import fault_points
from leaderboard.fault_points import HOLD_ENV, PAUSE_ENV, POINTS, FaultPoints

ROOT = Path(__file__).resolve().parents[1]


def test_nothing_is_armed_unless_a_test_variable_is_set(tmp_path):
    assert FaultPoints.from_env({}) == FaultPoints() == FaultPoints.from_env({HOLD_ENV: "", PAUSE_ENV: ""})
    for malformed in ("table", "table=", "=somewhere"):  # a point needs both its name and its file
        assert FaultPoints.from_env({PAUSE_ENV: malformed}) == FaultPoints()
    inert = FaultPoints()
    started = time.monotonic()
    assert inert.hold_baselines() == 0.0
    inert.pause("table")
    assert time.monotonic() - started < 1.0

    armed = FaultPoints.from_env({HOLD_ENV: str(tmp_path / "go"), PAUSE_ENV: f"finish_job={tmp_path / 'here'}"})
    assert armed == FaultPoints(tmp_path / "go", "finish_job", tmp_path / "here")
    armed.pause("table")  # another point than the armed one passes at once
    assert not (tmp_path / "here").exists()
    with pytest.raises(dataclasses.FrozenInstanceError):
        armed.pause_at = "table"  # type: ignore[misc]


def test_a_hold_waits_for_its_file(tmp_path):
    release = tmp_path / "release"
    threading.Timer(0.3, release.touch).start()
    waited = FaultPoints(hold_until=release).hold_baselines(poll_seconds=0.02)
    assert 0.25 <= waited < 5 and release.exists()


def test_the_environment_is_read_once_when_the_module_is_imported(tmp_path, monkeypatch):
    assert POINTS == FaultPoints.from_env(os.environ) == FaultPoints()  # the test process arms nothing
    paused = tmp_path / "paused"
    monkeypatch.setenv(PAUSE_ENV, f"table={paused}")  # set after the import: nothing reads it again
    monkeypatch.setenv(HOLD_ENV, str(tmp_path / "never"))
    fault_points.POINTS.pause("table")
    assert fault_points.POINTS.hold_baselines() == 0.0 and not paused.exists()

    # A process started with the variable is paused at the point even after its environment lost it.
    script = (
        "import os\nfrom leaderboard.fault_points import POINTS\n"
        f"del os.environ[{PAUSE_ENV!r}]\nPOINTS.pause('add_system')\n"
    )
    env = {**os.environ, PAUSE_ENV: f"add_system={paused}", "PYTHONPATH": str(ROOT)}
    env.pop(HOLD_ENV)
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not paused.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert paused.exists() and proc.poll() is None  # it says it paused, and waits there to be killed
    finally:
        proc.kill()
        proc.wait()
