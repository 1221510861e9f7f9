"""Runs every `benchmarks/bench_*.py` module's `main()` in turn (or those named on the command line).

Usage: `python -m benchmarks [NAME ...]`, e.g. `python -m benchmarks eval bm25`. Ends with the table of every
goal judged on the way (`benchmarks.goals`).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks
from benchmarks import goals


def main(argv: list[str]) -> int:
    names = sorted(
        m.name[len("bench_") :] for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    wanted = argv or names
    unknown = [n for n in wanted if n not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    for name in wanted:
        print(f"\n=== bench {name} ===", flush=True)
        start = time.perf_counter()
        importlib.import_module(f"benchmarks.bench_{name}").main()
        print(f"(bench {name} took {time.perf_counter() - start:.1f} s)", flush=True)
    if goals.JUDGED:
        print(f"\n=== goals ===\n{goals.table()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
