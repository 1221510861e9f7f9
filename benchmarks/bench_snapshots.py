"""The cost of a second snapshot: LLM calls and wall time, against the first and against building it from scratch.

The topic is the tests' (tests/snapshot_topic.py): the project's Laravel dump fixture and a git repository of
docs whose second commit changes, moves, deletes and adds files. Both snapshots are built against the tests'
local OpenAI-compatible server (the real `openai` client over HTTP; every request counted), so the calls are
the requests an endpoint would bill. Three builds: the first snapshot, the second on top of it (sharing the
cache and memos), and the second alone in a fresh folder (what it would cost without the first).

Run: `python -m benchmarks snapshots`.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from benchmarks.figures import figure

TESTS = Path(__file__).resolve().parent.parent / "tests"


def _build(definition: Path, out: Path, date: str, server) -> tuple[int, float]:
    from freshstack_hf.cli.main import main

    before = server.requests
    start = time.perf_counter()
    code = main(["build", str(definition), "--out", str(out), "--snapshot", date, "--quiet", "--json"])
    assert code == 0, f"build of snapshot {date} failed"
    return server.requests - before, time.perf_counter() - start


def main() -> None:
    import contextlib
    import io
    import os

    sys.path.insert(0, str(TESTS))
    from llm_server import FakeOpenAI
    from snapshot_topic import NEW, OLD, make_history, write_definition

    os.environ.setdefault("FRESHSTACK_LLM_BACKOFF", "0.01")
    with tempfile.TemporaryDirectory(prefix="bench-snapshots-") as tmp, FakeOpenAI() as server:
        root = Path(tmp)
        make_history(root)
        definition = write_definition(root, server.base_url)
        with contextlib.redirect_stdout(io.StringIO()):
            first = _build(definition, root / "freshstack", OLD, server)
            second = _build(definition, root / "freshstack", NEW, server)
            alone = _build(definition, root / "alone" / "freshstack", NEW, server)
    print(f"{'build':<44} {'LLM calls':>10} {'wall s':>8}")
    rows = (
        (f"first snapshot ({OLD})", first),
        (f"second snapshot ({NEW}), after the first", second),
        (f"second snapshot ({NEW}) from scratch", alone),
    )
    for key, (label, (calls, seconds)) in zip(("first", "second", "scratch"), rows, strict=True):
        print(f"{label:<44} {calls:>10} {seconds:>8.2f}")
        figure(f"{key}_calls", calls, "calls", "d", f"LLM calls: {label}")
        figure(f"{key}_s", seconds, "s", ".2f", f"wall time: {label}")
    figure("ratio_calls", second[0] / alone[0], "x", ".2f", "the second snapshot's calls after the first / scratch")
    print(
        f"second snapshot after the first: {second[0] / alone[0]:.2f}x the calls of building it from scratch "
        f"({alone[0] - second[0]} saved), {second[1] / alone[1]:.2f}x the wall time; "
        f"{second[0] / first[0]:.2f}x the first snapshot's calls"
    )


if __name__ == "__main__":
    main()
