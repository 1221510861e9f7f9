"""`make test`'s order of work (tests/scheduling.py): the longest units first, the docs examples by page, and the
units that need the demo held back while it is built."""

from __future__ import annotations

import json
import textwrap

from scheduling import DEMO_BUILD, DURATIONS, Order, measured, needs_the_demo, unit_of


def test_a_docs_example_goes_out_with_its_page_and_any_other_test_with_its_file():
    assert unit_of("tests/test_docs_examples.py::test_block[docs/evaluate.md:42]") == (
        "tests/test_docs_examples.py::docs/evaluate.md"
    )
    assert unit_of("tests/test_docs_examples.py::test_block[README.md:35]") == "tests/test_docs_examples.py::README.md"
    assert unit_of("tests/test_cli.py::test_x[a::b]") == "tests/test_cli.py"
    assert needs_the_demo("tests/test_docs_examples.py::README.md")
    assert needs_the_demo("tests/test_docs_site.py")
    assert not needs_the_demo("tests/test_docs_examples.py::docs/extend.md")  # runs in an empty sandbox
    assert not needs_the_demo("tests/test_embargo_leak.py")


def test_the_longest_goes_first_and_the_demo_s_units_wait_behind_its_build():
    order = Order({DEMO_BUILD: 100, "tests/test_docs_site.py": 300, "tests/a.py": 60})
    queue = {
        "tests/test_docs_site.py": 14,
        "tests/test_docs_examples.py::README.md": 9,
        "tests/a.py": 3,
        "tests/b.py": 50,  # not measured: a second a test
        "tests/c.py": 2,
    }
    handed = []
    while queue:
        unit = order.next(queue)
        handed.append(unit)
        del queue[unit]
    # the longest unit needing the demo starts it; then 110 s of other work go out (a, b) before README may
    assert handed == [
        "tests/test_docs_site.py",
        "tests/a.py",
        "tests/b.py",
        "tests/test_docs_examples.py::README.md",
        "tests/c.py",
    ]


def test_with_two_other_workers_the_demo_s_units_wait_for_twice_the_build():
    order = Order({DEMO_BUILD: 100, "tests/test_docs_site.py": 300, "tests/a.py": 120, "tests/b.py": 90}, others=2)
    queue = {"tests/test_docs_site.py": 1, "tests/test_demo_cli.py": 100, "tests/a.py": 1, "tests/b.py": 1}
    handed = []
    while queue:
        unit = order.next(queue)
        handed.append(unit)
        del queue[unit]
    assert handed == ["tests/test_docs_site.py", "tests/a.py", "tests/b.py", "tests/test_demo_cli.py"]
    assert order.since_demo == 210  # past 2 x 100 only after b: one worker alone would have let demo_cli go after a


def test_with_only_demo_units_left_they_still_go_out():
    order = Order({DEMO_BUILD: 1000})
    queue = {"tests/test_demo_cli.py": 5, "tests/test_docs_site.py": 9}
    assert order.next(queue) == "tests/test_docs_site.py"
    del queue["tests/test_docs_site.py"]
    assert order.next(queue) == "tests/test_demo_cli.py"  # nothing else to hand out while the demo builds


def test_the_seconds_are_read_per_unit_from_a_junit_report(tmp_path):
    report = tmp_path / "run.xml"
    report.write_text(
        textwrap.dedent("""\
        <testsuites><testsuite name="pytest">
          <testcase classname="tests.test_docs_examples" name="test_block[README.md:35]" time="180.4"/>
          <testcase classname="tests.test_docs_examples" name="test_block[README.md:60]" time="2.2"/>
          <testcase classname="tests.test_docs_examples" name="test_block[docs/load.md:10]" time="5.0"/>
          <testcase classname="tests.test_cli" name="test_one" time="0.3"/>
          <testcase classname="tests.test_cli" name="test_two" time="0.9"/>
          <testcase classname="tests.test_quick" name="test_one" time="0.2"/>
        </testsuite></testsuites>
        """)
    )
    assert measured(report) == {
        "tests/test_docs_examples.py::README.md": 183,
        "tests/test_docs_examples.py::docs/load.md": 5,
        "tests/test_cli.py": 1,
    }


def test_every_measured_unit_is_one_the_suite_still_has():
    """A renamed or removed file would keep a stale weight and leave its successor unmeasured."""
    root = DURATIONS.parent.parent
    for unit in set(json.loads(DURATIONS.read_text())) - {DEMO_BUILD}:
        file, _, page = unit.partition("::")
        assert (root / file).is_file(), unit
        assert not page or (root / page).is_file(), unit
