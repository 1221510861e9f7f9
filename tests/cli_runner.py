"""The installed `freshstack-hf` console script, run in a subprocess as a user would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXE = Path(sys.executable).with_name("freshstack-hf")


def cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout)
