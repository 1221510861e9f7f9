"""How `make test` hands the test files to pytest-xdist's workers: the longest first.

A file's tests stay on one worker (its module fixtures are built once), but xdist's own `loadfile` hands out the
files with the most tests first, which are the quick unit files. The long end-to-end files (a board, a worker and a
browser each) then come last, and the run ends with one worker finishing one of them while the other has nothing
left to do. Here each unit goes out by the seconds it took in a measured run (`tests/durations.json`), longest
first, so the last units are the short ones and both workers finish together.

Two refinements:

- the docs examples are one unit per page, not one for the whole file: a page's blocks run in order in one sandbox,
  but pages are independent, and together they are the longest file;
- the demo build (`demo_build` in conftest.py) is made once per run by whichever worker asks first, and the other
  waits on its lock: units that need it are held back until the first of them has had time to build it, and the
  other worker takes long units that do not need it meanwhile.

Refresh the measured seconds after a change that moves them a lot (a new end-to-end file, a page that serves a
board): `.venv/bin/pytest -n auto --dist loadfile --junitxml=run.xml` and `python tests/scheduling.py run.xml`.
The demo build's own seconds (`"demo build"`) are kept as they were: a report counts them in whichever test asked for
the demo first (the `setup` line of the slowest durations names it). A unit missing from the file counts one second
a test, so a new file is never starved, only placed roughly.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_pages import NEEDS_NOTHING_BUILT
from xdist.scheduler import LoadFileScheduling

DURATIONS = Path(__file__).with_name("durations.json")
DOCS_EXAMPLES = "tests/test_docs_examples.py"
# Units that wait on the demo build: the docs pages that run in the demo's sandbox, the demo's own tests, and the
# docs site's (its demo page and its score page).
NEEDS_THE_DEMO = ("tests/test_demo_cli.py", "tests/test_docs_site.py", f"{DOCS_EXAMPLES}::")
BUILDS_NOTHING = tuple(f"{DOCS_EXAMPLES}::{page}" for page in sorted(NEEDS_NOTHING_BUILT))
DEMO_BUILD = "demo build"  # the key under which durations.json keeps the build's own seconds


def unit_of(nodeid: str) -> str:
    """The unit a test goes out in: its file, or for a docs example its page (`...::docs/evaluate.md`)."""
    file, _, test = nodeid.partition("::")
    if file == DOCS_EXAMPLES and "[" in test:
        where = test[test.index("[") + 1 : test.rindex("]")]  # the block's `page:line`
        return f"{file}::{where.rsplit(':', 1)[0]}"
    return file


def needs_the_demo(unit: str) -> bool:
    return unit.startswith(NEEDS_THE_DEMO) and not unit.startswith(BUILDS_NOTHING)


@dataclass
class Order:
    """Which unit goes out next: the longest left, save that the units needing the demo wait behind the first of
    them until the other workers have been handed as many measured seconds of other work each as the demo's build
    takes."""

    seconds: dict[str, float]
    others: int = 1  # the workers that do not build the demo
    demo_started: bool = False
    since_demo: float = 0.0  # seconds of work without the demo handed out since the demo's first unit went

    def weight(self, unit: str, tests: int) -> float:
        return self.seconds.get(unit, float(tests))

    def next(self, queue: dict[str, int]) -> str:
        """`queue`: each unit left and its number of tests."""
        by_length = sorted(queue, key=lambda unit: self.weight(unit, queue[unit]), reverse=True)
        demo_units = [unit for unit in by_length if needs_the_demo(unit)]
        if demo_units and not self.demo_started:
            self.demo_started = True  # its worker builds the demo
            return demo_units[0]
        building = self.since_demo < self.seconds.get(DEMO_BUILD, 0.0) * self.others
        for unit in by_length:
            if not needs_the_demo(unit):
                self.since_demo += self.weight(unit, queue[unit])
                return unit
            if not building:
                return unit
        return by_length[0]  # only units needing the demo are left: they wait for it wherever they run


class LongestFirst(LoadFileScheduling):
    """`--dist loadfile` in `Order`, with the docs examples split by page."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self.order = Order(json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {})

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node: Any) -> None:
        self.order.others = max(1, len(self.nodes) - 1)
        unit = self.order.next({unit: len(tests) for unit, tests in self.workqueue.items()})
        self.workqueue.move_to_end(unit, last=False)  # the base class hands out the queue's first unit
        super()._assign_work_unit(node)


def measured(junit: Path) -> dict[str, float]:
    """Seconds per unit in a junit report, setup and teardown included (pytest's `time` of a test case is its three
    phases), rounded to a second."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).iter("testcase"):
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        nodeid = f"{file}::{case.get('name')}"
        seconds[unit_of(nodeid)] += float(case.get("time") or 0)
    return {unit: round(s) for unit, s in sorted(seconds.items(), key=lambda kv: -kv[1]) if round(s) > 0}


if __name__ == "__main__":
    kept = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    fresh = measured(Path(sys.argv[1]))
    fresh[DEMO_BUILD] = kept.get(DEMO_BUILD, 0)
    DURATIONS.write_text(json.dumps(fresh, indent=1) + "\n")
    print(f"wrote {DURATIONS}: {len(fresh)} units, {sum(fresh.values()):.0f} s")
