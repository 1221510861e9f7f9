"""The board the README serves finishes the job (issue 46): who scores what, said at start and on the About tab; the
old worker flags kept or refused; the README's board opening the demo's store; and, in a real headless Chromium, the
board started exactly as README.md's "Serve the leaderboard" block says taking a model on its Submit tab and showing
its scored row, with no other command (its own worker, the default, scores it)."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from browser_checks import TABLE_TEXT, assert_reads_well, headless_chromium, require_chromium, screenshot
from docs_pages import ROOT, blocks, shell_commands
from ports import free_port
from synthetic_repo import build_small_repo

from freshstack_hf.cli import demo
from freshstack_hf.cli.main import build_parser, main
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
from leaderboard.cli import serve_board
from leaderboard.defaults import scoring_plan
from leaderboard.tracks.retrieval.tabs.about_tab import about

HERE = "models, rerankers and baselines are scored by a worker in this process"
SHARED = "models, rerankers and baselines are scored by the workers sharing the store"
# Whether the table on screen has the model's row as scored: type "submitted model", not "(queued)" or "(running)".
SCORED_ROW = """([selector, name]) => [...document.querySelector(selector).querySelectorAll('.virtual-row[role=row]')]
    .map(row => [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.innerText.trim()))
    .some(cells => cells.includes(name) && cells.includes('submitted model'))"""


def parsed(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve_board.add_arguments(parser)
    return parser.parse_args(["--dataset", "freshstack", *words])


def test_a_worker_runs_in_the_board_unless_told_not_to_and_the_old_flags_keep_their_meaning():
    assert not parsed().no_worker  # the default: a worker in the board's process, every job kind
    assert parsed("--no-worker").no_worker
    assert parsed("--no-baseline-worker").no_worker  # it always meant: no worker in this process
    assert not parsed("--worker").no_worker  # now the default: accepted, changes nothing


def test_asking_for_a_worker_and_for_none_is_refused_with_exit_2(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["leaderboard", "--dataset", "freshstack", "--worker", "--no-worker"])
    assert stopped.value.code == 2
    assert "--no-worker: not allowed with argument --worker" in capsys.readouterr().err


def test_the_about_tab_says_who_scores_the_models():
    assert scoring_plan(True) == HERE and scoring_plan(False).startswith(SHARED)
    assert "freshstack-hf worker --store URL" in scoring_plan(False)
    here, elsewhere = (about(["pylibs"], 20, 10, "local-0", False, worker_here=w) for w in (True, False))
    assert HERE in " ".join(here.split()) and SHARED not in " ".join(here.split())
    assert SHARED in " ".join(elsewhere.split()) and HERE not in " ".join(elsewhere.split())


def readme_board() -> str:
    """The shell command of README.md's serving block."""
    (block,) = [b for b in blocks(ROOT / "README.md") if b.serves]
    return block.source.strip()


def test_the_readme_board_is_the_demo_s_board():
    """The README's board opens the store the demo's board wrote (`demo.board_store` of its default `--out`), and
    the demo prints the same command among its next steps."""
    (words,) = list(shell_commands(readme_board()))
    args = build_parser().parse_args(words)
    out = Path(build_parser().parse_args(["demo"]).out)
    assert args.command == "leaderboard" and args.store == demo.board_store(out) == "sqlite:///demo-out/leaderboard.db"
    assert not args.no_worker


def test_the_demo_says_how_to_reopen_its_board(capsys, tmp_path):
    demo.next_steps(Path("freshstack"), Path("demo-out"), Path("demo-out/runs/bm25.trec"), serving=False)
    said = capsys.readouterr().out
    assert "freshstack-hf leaderboard --dataset freshstack --store sqlite:///demo-out/leaderboard.db" in said


@pytest.mark.slow
def test_the_readme_board_scores_a_model_submitted_on_its_submit_tab(tmp_path):
    """Acceptance (issue 46): README.md's serving command, run as it is (a free port for 7860) from a folder that
    holds a dataset repo `freshstack` (a small one, so it runs in minutes), with the data dir and caches in the
    test's folder; the packaged MiniLM submitted on the Submit tab in Chromium; its row turns from queued to scored
    on the open page, by the board's own worker, with no other command."""
    require_chromium()
    from playwright.sync_api import expect

    build_small_repo(tmp_path / "freshstack", queries=3, docs=60, doc_chars=120)
    port = free_port()
    command = re.sub(r"\b7860\b", str(port), readme_board())
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FRESHSTACK_")},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",  # as after `make demo`
        "FRESHSTACK_DATA_DIR": str(tmp_path / "data"),
        "FRESHSTACK_CACHE": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    log = tmp_path / "board.log"
    with log.open("w", encoding="utf-8") as printed:
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=tmp_path, env=env, stdout=printed, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the README's board did not answer within 240 s"
            time.sleep(0.5)
        assert f"worker: {HERE}" in log.read_text()  # said at start
        assert (tmp_path / "demo-out" / "leaderboard.db").is_file()  # the store the README names

        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.get_by_role("tab", name="About").click()
            expect(page.get_by_text(re.compile("scored by a worker in this process"))).to_be_visible()
            page.get_by_role("tab", name="Submit").click()
            page.get_by_label("Model (Hub id org/name)").fill(DEFAULT_DENSE_MODEL)
            page.get_by_role("button", name="Submit model").click()
            expect(page.locator("#submit-outcome")).to_contain_text("queued", timeout=60_000)
            page.get_by_role("tab", name="Leaderboard").click()
            table = page.locator("#leaderboard-table")
            expect(table).to_contain_text(DEFAULT_DENSE_MODEL, timeout=60_000)
            # The page itself follows the row (its Computing line checks the store): no reload, no other command.
            page.wait_for_function(SCORED_ROW, arg=["#leaderboard-table", DEFAULT_DENSE_MODEL], timeout=900_000)
            headers, *rows = page.evaluate(TABLE_TEXT, "#leaderboard-table")
            shown = {r[headers.index("system")]: dict(zip(headers, r, strict=True)) for r in rows}
            row = shown[DEFAULT_DENSE_MODEL]
            assert row["type"] == "submitted model", row
            assert 0 < float(row["average α-nDCG@10"]) <= 1.5, row
            assert_reads_well(page, "the README's board")
            screenshot(page, tmp_path / "readme-board.png")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
