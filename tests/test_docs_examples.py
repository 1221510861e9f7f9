"""Every runnable block of the docs (README.md and docs/**/*.md), run as a reader would run it.

One test per block (its id is the page and the line of its fence). The blocks of a page run in order in one
sandbox folder holding what the pages say they need: a copy of the demo's repo `freshstack` and its BM25 run
`demo-out/runs/bm25.trec` (from the session's one real `freshstack-hf demo` build, `demo_build`), and links to this
project's `scripts/` and `tests/`. Shell blocks run in bash with the project's `freshstack-hf` and `python` first on
PATH; Python blocks run in one namespace per page, in the sandbox. An output block after a block is compared with
what it printed (tests/docs_pages.py has the rule). A block marked `*Needs ...*` in the page is not run: its
`freshstack-hf` commands are parsed by the real parser and its Python compiled, then it is reported as skipped with
the page's own reason. A block marked `*Serves ...*` runs until the address it prints answers, and is stopped when
the page is done (or another block of the page serves); a page that serves gets a free port in place of 7860, in
its blocks and outputs alike.

Running a block needs the demo build (minutes on 2 cores, shared with tests/test_demo_cli.py), so those tests are
`slow`; the marked blocks, and the pages that need nothing built (extend.md, concepts.md), are not.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from docs_pages import (
    NEEDS_NOTHING_BUILT,
    ROOT,
    Block,
    output_matches,
    page_name,
    pages,
    read_page,
    shell_commands,
)

PORT = "7860"  # the port the pages serve on; a free one replaces it where a page serves
BLOCK_TIMEOUT = 600
SERVE_TIMEOUT = 240


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@dataclass
class Server:
    """A serving block's process (its own process group) and what it printed so far."""

    proc: subprocess.Popen
    out: list[str] = field(default_factory=list)

    def drain(self) -> None:
        threading.Thread(target=lambda: self.out.extend(iter(self.proc.stdout.readline, "")), daemon=True).start()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=20)


class PageRun:
    """One page's blocks, run in order in one sandbox; a block asked for runs the earlier ones first."""

    def __init__(self, path: Path, sandbox: Path) -> None:
        self.name, self.sandbox = page_name(path), sandbox
        self.document = read_page(path)
        self.examples = list(self.document.examples())
        self.port = _free_port() if any(e.parsed.serves for e in self.examples) else PORT
        self.document.namespace["__evaluate__"] = self.evaluate
        self.done: dict[int, BaseException | None] = {}
        self.servers: list[Server] = []
        # the page is done after its last block that runs here (a last block the page marks as not runnable is
        # skipped before its run is asked for, so the run closes on the block before it)
        self.last = max((i for i, e in enumerate(self.examples) if not e.parsed.needs), default=-1)
        self.env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "PYTHONUNBUFFERED": "1",
            "FRESHSTACK_DATA_DIR": str(sandbox / ".board-data"),
            "HF_HOME": str(sandbox / ".hf"),
        }

    # ---- order ----------------------------------------------------------------------------------------------
    def run_through(self, index: int) -> None:
        """Run every block up to `index` not run yet; an earlier block's failure is raised as such."""
        for i in range(index + 1):
            example = self.examples[i]
            if i in self.done or example.parsed.needs:
                continue
            try:
                example.evaluate()
                self.done[i] = None
            except BaseException as exc:
                self.done[i] = exc
                if i < index:
                    raise AssertionError(f"an earlier block of the page failed: {example.parsed.where}") from exc
                raise

    # ---- evaluators -----------------------------------------------------------------------------------------
    def ported(self, text: str) -> str:
        return re.sub(rf"\b{PORT}\b", self.port, text) if self.port != PORT else text

    def evaluate(self, block: Block) -> str | None:
        if block.serves:
            printed = self.serve(block)
        elif block.lang == "bash":
            printed = self.shell(block)
        else:
            printed = self.python(block)
        if block.output is None:
            return None
        diff = output_matches(self.ported(block.output), printed)
        return None if diff is None else f"{block.where}: the output differs from the page's block\n{diff}"

    def shell(self, block: Block) -> str:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", self.ported(block.source)],
            cwd=self.sandbox,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT,
        )
        printed = done.stdout[-3000:] + done.stderr[-3000:]
        assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{printed}"
        return done.stdout

    def python(self, block: Block) -> str:
        out = io.StringIO()
        code = compile(self.ported(block.source), block.where, "exec")
        with contextlib.chdir(self.sandbox), contextlib.redirect_stdout(out):
            exec(code, self.document.namespace)
        return out.getvalue()

    def serve(self, block: Block) -> str:
        self.stop_servers()  # one board at a time on the page's port
        proc = subprocess.Popen(
            ["bash", "-c", self.ported(block.source)],
            cwd=self.sandbox,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # what it printed, in order, until its address answered
            text=True,
            start_new_session=True,  # its own process group: stopped whole, children included
        )
        server = Server(proc)
        self.servers.append(server)
        server.drain()
        address = re.compile(rf"http://127\.0\.0\.1:{self.port}/?")
        deadline = time.monotonic() + SERVE_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                time.sleep(0.5)  # let the readers finish
                break
            printed = "".join(server.out)
            if (found := address.search(printed)) and _answers(found[0]):
                return printed[: printed.find("\n", found.end()) + 1 or None]  # what came later races the check
            time.sleep(0.5)
        tail = "".join(server.out)[-3000:]
        raise AssertionError(f"{block.where}: no answer at http://127.0.0.1:{self.port}/ (exit {proc.poll()})\n{tail}")

    # ---- end --------------------------------------------------------------------------------------------------
    def stop_servers(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers.clear()

    def close(self) -> None:
        self.stop_servers()
        if teardown := PAGE_TEARDOWN.get(self.name):
            teardown()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status == 200
    except OSError:
        return False


def _unregister_recipes() -> None:
    """extend.md registers a method, a measure family and a transport in this process: take them back out."""
    from freshstack_hf.baselines.registry import METHODS, unregister_method
    from freshstack_hf.llm.registry import unregister
    from freshstack_hf.metrics import FAMILIES, unregister_family

    if "bm25_top10" in METHODS:
        unregister_method("bm25_top10")
    if "first_rel" in FAMILIES:
        unregister_family("first_rel")
    unregister("anthropic")


PAGE_TEARDOWN: dict[str, Callable[[], None]] = {"docs/extend.md": _unregister_recipes}


# ---- the sandboxes --------------------------------------------------------------------------------------------


def fill_sandbox(sandbox: Path, demo: Path | None) -> Path:
    """The folder a page's blocks run in: the demo's repo, its runs and work files (when the page needs them, not
    its board's store), and links to this project's scripts/ and tests/."""
    sandbox.mkdir(parents=True, exist_ok=True)
    for name in ("scripts", "tests"):
        (sandbox / name).symlink_to(ROOT / name, target_is_directory=True)
    if demo is not None:
        shutil.copytree(demo / "freshstack", sandbox / "freshstack")
        for part in ("runs", "work"):
            shutil.copytree(demo / "demo-out" / part, sandbox / "demo-out" / part)
    return sandbox


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory, request) -> Iterator[dict[str, PageRun]]:
    """Each page's run, made on first use and closed (servers stopped, registrations undone) at the session's end
    if its last block did not close it first."""
    runs: dict[str, PageRun] = {}
    yield runs
    for run in runs.values():
        run.close()


def page_run(page: Path, runs: dict[str, PageRun], request: pytest.FixtureRequest, tmp_path_factory) -> PageRun:
    name = page_name(page)
    if name not in runs:
        demo = None if name in NEEDS_NOTHING_BUILT else request.getfixturevalue("demo_build")
        sandbox = fill_sandbox(tmp_path_factory.mktemp(re.sub(r"\W+", "-", name)), demo)
        runs[name] = PageRun(page, sandbox)
    return runs[name]


def _params() -> list[Any]:
    params = []
    for page in pages():
        for index, example in enumerate(read_page(page).examples()):
            block: Block = example.parsed
            slow = not block.needs and page_name(page) not in NEEDS_NOTHING_BUILT
            params.append(pytest.param(page, index, id=block.where, marks=[pytest.mark.slow] if slow else []))
    return params


@pytest.mark.parametrize(("page", "index"), _params())
def test_block(page: Path, index: int, page_runs, request, tmp_path_factory, freshstack_main) -> None:
    block: Block = list(read_page(page).examples())[index].parsed
    if block.needs:
        check_without_running(block)
        pytest.skip(f"{block.where}: not run, the page says: {block.needs} (its commands parse)")
    run = page_run(page, page_runs, request, tmp_path_factory)
    try:
        run.run_through(index)
    finally:
        if index >= run.last:
            run.close()  # its boards stopped now, not at the session's end: a board left serving computes on


def check_without_running(block: Block) -> None:
    """A block the page marks as not runnable here still names real options: each `freshstack-hf` command parses
    with the console script's own parser, and Python compiles."""
    from freshstack_hf.cli.main import build_parser

    if block.lang == "python":
        compile(block.source, block.where, "exec")
        return
    parser = build_parser()
    for words in shell_commands(block.source):
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(words)
        except SystemExit as exc:
            if exc.code:  # `--help` exits 0
                command = f"freshstack-hf {shlex.join(words)}"
                raise AssertionError(f"{block.where}: `{command}` does not parse: {err.getvalue()}") from None
