"""A command's wall time and its own peak RSS, as the kernel counts them, for the benches that measure processes.

The peak is read by a small launcher that starts the command and waits for it with `os.wait4`: a child forked
from a bench's (large) process would report the bench's size as its own peak, since Linux carries the high-water
mark across fork and exec, and `RUSAGE_CHILDREN` would report the largest child the bench ever had.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

_LAUNCH = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"wall": time.perf_counter() - start, "peak_kb": usage.ru_maxrss}, out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured(args: list[str], env: dict[str, str] | None = None, runs: int = 1) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of one process run to its end; raises with its stderr's tail if it
    fails. With `runs` > 1, the command runs that many times: the median wall time, the largest peak and the last
    stdout (a figure judged against a goal is a median, so one stall of a shared machine does not decide it)."""
    if runs > 1:
        taken = [measured(args, env) for _ in range(runs)]
        return statistics.median(t[0] for t in taken), max(t[1] for t in taken), taken[-1][2]
    with tempfile.TemporaryDirectory() as tmp:
        figures, out, err = Path(tmp) / "figures.json", Path(tmp) / "out", Path(tmp) / "err"
        with out.open("w") as stdout, err.open("w") as stderr:
            done = subprocess.run([sys.executable, "-c", _LAUNCH, str(figures), *map(str, args)], stdout=stdout,
                                  stderr=stderr, stdin=subprocess.DEVNULL, env=env or OFFLINE)  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"{' '.join(map(str, args[:3]))} failed: {err.read_text().strip()[-400:]}")
        taken = json.loads(figures.read_text())
        return taken["wall"], taken["peak_kb"] / 1024, out.read_text()
