"""Runs every `benchmarks/bench_*.py` module's `main()` in turn (or those named on the command line).

Usage: `python -m benchmarks [NAME ...]`, e.g. `python -m benchmarks eval bm25`. Each section runs in a fresh
process, so no section's timings carry the heap, imports or garbage-collector load an earlier one left (the
evaluator's ratio read 19x after five sections in one process and 24x alone). Each section's process, once done,
writes its figures and goals to `bench-out/<section>.json` (`benchmarks.figures`; `make figures` copies them to the
docs). Ends with the table of every goal judged on the way (`benchmarks.goals`).

The project's modules are compiled to bytecode first, as `pip install` leaves an installed package and as any
first run leaves a checkout: where `PYTHONDONTWRITEBYTECODE` is set (this workplace sets it), every process would
otherwise compile them again, 0.08 s of each command timed (a release-size `evaluate`: 0.89 s against 0.81 s).
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchmarks
from benchmarks import goals

PACKAGES = ("freshstack_hf", "leaderboard", "loaders", "scripts", "benchmarks")


def compile_bytecode() -> None:
    """Each package's `__pycache__` written (`compileall` writes whatever `PYTHONDONTWRITEBYTECODE` says)."""
    import compileall

    root = Path(benchmarks.__file__).resolve().parent.parent
    for package in PACKAGES:
        if (root / package).is_dir():
            compileall.compile_dir(root / package, quiet=1)


def main(argv: list[str]) -> int:
    names = sorted(
        m.name[len("bench_") :] for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    wanted = argv or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    failed: list[str] = []
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        verdicts = Path(tmp) / "goals.jsonl"
        env = {**os.environ, goals.GOALS_FILE: str(verdicts)}
        for name in wanted:
            print(f"\n=== bench {name} ===", flush=True)
            start = time.perf_counter()
            code = f"import benchmarks.bench_{name} as b; b.main(); import benchmarks.figures as f; f.write({name!r})"
            if subprocess.run([sys.executable, "-c", code], env=env).returncode != 0:
                failed.append(name)
            print(f"(bench {name} took {time.perf_counter() - start:.1f} s)", flush=True)
        judged = goals.read_judged(verdicts)
    if judged:
        print(f"\n=== goals ===\n{goals.table(judged)}", flush=True)
    if failed:
        print(f"benchmark(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
